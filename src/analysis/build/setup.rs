//! Which setup each result file was measured on (GPU model, host/process layout, NCCL
//! version, backend, as its headers record them), so that `analyze` never pools the curves of
//! two different clusters into one without saying so.
//!
//! A file's setup is the text of what its headers record (`GPU NVIDIA H100 80GB HBM3; 2 hosts, 16
//! processes; NCCL 2.22.3`). Two files differ when both record something and the texts differ;
//! a file that records nothing (a CSV without a backend column) cannot differ from anything,
//! so it joins the one recorded setup of its curve, or stays apart as `setup not recorded`
//! when the curve has several.

use std::collections::{BTreeMap, BTreeSet};

/// Setup text per file, keyed as the readers name files (`path.display()`); the command
/// reads them from the files' headers.
pub type Setups = BTreeMap<String, String>;

/// The label of a file that records no setup.
pub const UNRECORDED: &str = "setup not recorded";

/// The setup group of each file of one curve: `None` for all when they agree (or record
/// nothing), else each file's setup text, with unrecorded files joining the only recorded
/// setup or, among several, [`UNRECORDED`].
pub fn groups<'a>(
    files: impl Iterator<Item = &'a str>,
    setups: &Setups,
) -> BTreeMap<String, Option<String>> {
    let files: BTreeMap<String, String> = files
        .map(|f| (f.to_string(), setups.get(f).cloned().unwrap_or_default()))
        .collect();
    let recorded: BTreeSet<&String> = files.values().filter(|s| !s.is_empty()).collect();
    if recorded.len() <= 1 {
        return files.into_keys().map(|f| (f, None)).collect();
    }
    files
        .into_iter()
        .map(|(f, s)| {
            let s = if s.is_empty() {
                UNRECORDED.to_string()
            } else {
                s
            };
            (f, Some(s))
        })
        .collect()
}

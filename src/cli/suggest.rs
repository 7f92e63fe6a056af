//! Help for a mistyped command: `allreduce`, `all-reduce` (NCCL's own spelling), `All_Reduce`,
//! `alltoal` and `analyse` each name the command meant; `all_reduce_perf` (the nccl-tests
//! binary name) is that collective; a program named `foo_perf` that is no collective's says so.
//!
//! Names are compared after folding case and `-` to `_`, by Jaro-Winkler similarity
//! (`strsim`, the measure clap's own suggestions use), so one dropped, doubled or swapped
//! letter still finds its command while unrelated words get no guess.

use crate::core::collective::Collective;
use crate::core::error::Error;
use std::ffi::OsString;
use std::path::Path;

/// How alike two folded names must be to suggest one for the other.
const SIMILAR: f64 = 0.85;

/// `name` lowercased, with `-` read as `_`.
fn fold(name: &str) -> String {
    name.to_lowercase().replace('-', "_")
}

/// The command of `known` nearest to `typed`, if any is near enough.
pub(super) fn nearest<'a>(typed: &str, known: &[&'a str]) -> Option<&'a str> {
    let typed = fold(typed);
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(&typed, &fold(k)), *k))
        .filter(|(score, _)| *score >= SIMILAR)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// A program name ending in `_perf` whose stem is no collective: one usage line, with the
/// nearest collective's binary name when one is near.
pub(super) fn check_program(program: &OsString) -> Result<(), Error> {
    let Some(name) = Path::new(program).file_name().and_then(|n| n.to_str()) else {
        return Ok(());
    };
    let name = name.strip_suffix(".exe").unwrap_or(name);
    let Some(stem) = name.strip_suffix("_perf") else {
        return Ok(());
    };
    let names = Collective::ALL.map(Collective::name);
    if names.contains(&stem) {
        return Ok(());
    }
    let hint = nearest(stem, &names)
        .map(|c| format!("; did you mean {c}_perf?"))
        .unwrap_or_default();
    Err(Error::Usage(format!(
        "unknown collective '{stem}' (from program name {name}){hint} (collectives: {})",
        names.join(", ")
    )))
}

/// Rewrites `ncclbench <collective>_perf ...` to `ncclbench <collective> ...`, and turns a
/// mistyped subcommand with a near match into one usage line. `commands` are the known
/// subcommand names. Anything else is left for clap to judge.
pub(super) fn check_subcommand(
    argv: &[OsString],
    commands: &[&str],
) -> Result<Option<Vec<OsString>>, Error> {
    let Some(typed) = argv.get(1).and_then(|a| a.to_str()) else {
        return Ok(None);
    };
    if typed.starts_with('-') || commands.contains(&typed) {
        return Ok(None);
    }
    if let Some(stem) = typed.strip_suffix("_perf") {
        if Collective::ALL.iter().any(|c| c.name() == stem) {
            let mut rewritten = argv.to_vec();
            rewritten[1] = stem.into();
            return Ok(Some(rewritten));
        }
    }
    match nearest(typed.strip_suffix("_perf").unwrap_or(typed), commands) {
        Some(meant) => Err(Error::Usage(format!(
            "unknown command '{typed}': did you mean {meant}? (see --help)"
        ))),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["all_reduce", "all_gather", "alltoall", "analyze", "accept"];

    #[test]
    fn near_misses_find_their_command_and_strangers_none() {
        for (typed, meant) in [
            ("allreduce", "all_reduce"),
            ("all-reduce", "all_reduce"),
            ("All_Reduce", "all_reduce"),
            ("ALL-GATHER", "all_gather"),
            ("alltoal", "alltoall"),
            ("analyse", "analyze"),
            ("acept", "accept"),
        ] {
            assert_eq!(nearest(typed, KNOWN), Some(meant), "{typed}");
        }
        for stranger in ["bogus", "foo", "x", "plot"] {
            assert_eq!(nearest(stranger, KNOWN), None, "{stranger}");
        }
    }
}

//! The `NCCL_TESTS_*` variables a run reads, as the plan guard compares them across the
//! processes of a job, and the check of the split variables every run makes (a single
//! process included, so a typo never passes silently).
//!
//! Compared by value: the split (`_SPLIT_MASK`, `_SPLIT`: a process with another colour rule
//! joins another communicator), `_MIN_BW` (the job's verdict) and alltoallv's
//! `_PRINT_SUMMARY`. alltoallv's traffic (`_MATRIX_FILE`, `_MATRIX_SCALE`, `_SPREAD`) is
//! compared as the traffic read from them ([`traffic`]: a digest of the matrix's contents, so
//! one file at two paths agrees and two files at one path do not). Not compared:
//! `NCCL_TESTS_DEVICE`, each process's own first device (launch scripts set it per process).

use crate::bench::job::split;
use crate::core::collective::Traffic;
use crate::core::error::Error;

/// The variables compared by value.
pub const COMPARED: [&str; 4] = [
    "NCCL_TESTS_SPLIT_MASK",
    "NCCL_TESTS_SPLIT",
    "NCCL_TESTS_MIN_BW",
    "NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY",
];

/// `NAME=value`, or `NAME unset`, of each compared variable (one line each, tabs removed).
pub fn compared() -> Vec<(&'static str, String)> {
    COMPARED
        .iter()
        .map(|&name| {
            let v = match std::env::var_os(name) {
                None => "unset".to_string(),
                Some(v) => format!("{:?}", v.to_string_lossy().replace(['\t', '\n'], " ")),
            };
            (name, v)
        })
        .collect()
}

/// The split variables' check: one line naming the variable and what is wrong.
pub fn check_split() -> Result<(), Error> {
    let var = |k: &str| std::env::var(k).ok();
    split::check(
        var("NCCL_TESTS_SPLIT_MASK").as_deref(),
        var("NCCL_TESTS_SPLIT").as_deref(),
    )
    .map_err(Error::Usage)
}

/// alltoallv's traffic as (summary, digest of everything that decides the calls).
pub fn traffic(t: &Traffic) -> (String, u64) {
    match t {
        Traffic::Generated { spread } => {
            let s = format!("generated, spread {spread}");
            let d = super::guard::digest(&s);
            (s, d)
        }
        Traffic::Matrix(m) => {
            let mut h = super::guard::digest(&format!("matrix {}", m.dim));
            for src in 0..m.dim {
                for dst in 0..m.dim {
                    h = super::guard::digest_more(h, &m.bytes(src, dst).to_le_bytes());
                }
            }
            (format!("a {0}x{0} matrix (scale {1})", m.dim, m.scale), h)
        }
    }
}

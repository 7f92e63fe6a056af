//! Deterministic random mutation of every sample (byte flips, truncations, line shuffles,
//! duplications and deletions) with a fixed-seed PRNG: every reader, with and without format
//! detection, must return (rows or an error) without panicking, and the rows it returns must
//! keep the [`InputRow`] promises. The cargo-fuzz targets in `fuzz/` explore further.

use super::*;
use crate::analysis::read::{read_str, read_str_as, Format};

/// SplitMix64: small, fixed-seed, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Bytes that matter to the parsers, to flip into the input.
const INTERESTING: &[u8] = b"0123456789 \t\r\n#,.-+eE\"{}[]:/N/A\xc3\xff";

/// One random edit of `data`.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    if data.is_empty() {
        data.push(INTERESTING[rng.below(INTERESTING.len())]);
        return;
    }
    let lines =
        |d: &Vec<u8>| -> Vec<Vec<u8>> { d.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
    match rng.below(6) {
        0 => {
            let at = rng.below(data.len());
            data[at] = INTERESTING[rng.below(INTERESTING.len())];
        }
        1 => {
            let at = rng.below(data.len());
            data[at] = (rng.next() & 0xff) as u8;
        }
        2 => data.truncate(rng.below(data.len())),
        3 | 4 => {
            let mut ls = lines(data);
            let (a, b) = (rng.below(ls.len()), rng.below(ls.len()));
            if rng.below(2) == 0 {
                ls.swap(a, b);
            } else if rng.below(2) == 0 {
                let copy = ls[a].clone();
                ls.insert(b, copy);
            } else {
                ls.remove(a);
            }
            *data = ls.join(&b'\n');
        }
        _ => {
            // Splice a piece of the file into another place (fragments, repeated headers).
            let from = rng.below(data.len());
            let len = rng.below((data.len() - from).min(200) + 1);
            let piece = data[from..from + len].to_vec();
            let at = rng.below(data.len() + 1);
            data.splice(at..at, piece);
        }
    }
}

/// Rows a reader returns are usable: positive finite latency, a known line.
fn check(set: &ReadSet) {
    for r in &set.rows {
        assert!(r.time_us.is_finite() && r.time_us > 0.0, "{r:?}");
        assert!(r.source.line >= 1, "{r:?}");
    }
    for s in &set.skipped {
        assert!(!s.reason.is_empty() && s.source.line >= 1, "{s:?}");
    }
}

#[test]
fn mutated_samples_never_panic_the_readers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/analysis");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("samples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 15, "samples missing from {}", dir.display());
    let mut rng = Rng(0x5eed_2026);
    let mut parsed = 0;
    for file in &files {
        let original = std::fs::read(file).expect("sample");
        for _ in 0..250 {
            let mut data = original.clone();
            for _ in 0..=rng.below(4) {
                mutate(&mut rng, &mut data);
            }
            let text = String::from_utf8_lossy(&data);
            if let Ok(set) = read_str("mutant", &text) {
                check(&set);
                parsed += 1;
            }
            for format in [Format::Csv, Format::Json, Format::Text] {
                if let Ok(set) = read_str_as("mutant", &text, format) {
                    check(&set);
                }
            }
        }
    }
    // Most mutants still hold readable rows: the test exercises the parsers, not just the
    // format detection.
    assert!(parsed > files.len() * 100, "only {parsed} mutants parsed");
}

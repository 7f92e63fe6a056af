//! `ncclbench accept --make-profile RUN`: an acceptance profile from a healthy run's results.
//!
//! Per collective the run measured, out-of-place rows are used, of one dtype (`float` when
//! the run has it, else the most common one), op `sum` (or `none`/empty for collectives
//! without an op) and root 0 or -1; 0-byte rows (divided collectives at tiny sizes) are left
//! out, since a sweep cannot start at 0. Each size's busbw and time is the median over all its
//! samples (cycles, runs, files). Then:
//! * `[[busbw]]`: the plateau is the 3 largest sizes (fewer if fewer); `min_bytes` is the
//!   smallest of them and `min_gbs` the median of their medians less the margin, rounded down
//!   to 3 significant digits;
//! * `[[latency]]`: the 3 smallest sizes; `max_bytes` is the largest of them and `max_us` the
//!   median of their medians plus the margin, rounded up to 3 significant digits.
//!
//! The result parses back with [`super::profile::parse`] into exactly those numbers.

use crate::analysis::input::InputRow;
use crate::analysis::read::read_files;
use crate::core::collective::Collective;
use crate::core::error::Error;
use crate::core::stats::median;
use crate::result::Placement;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// How many sizes make the plateau and the latency range.
const SIZES: usize = 3;

/// One collective's usable rows, keyed by the collective's place in [`Collective::ALL`] so
/// that the profile lists them in table order.
type ByCollective<'a> = BTreeMap<usize, (Collective, Vec<&'a InputRow>)>;

/// A profile (TOML text) from a healthy run's result files (any format `read_files` reads).
pub fn make_profile(paths: &[PathBuf], name: &str, margin_pct: f64) -> Result<String, Error> {
    check_request(paths, name, margin_pct)?;
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let shown = shown.join(", ");
    let set = read_files(paths)?;
    // Thresholds come only from tables that name their collective: one that `analyze` infers
    // from the table's evidence is left out here like an unnamed one.
    let inferred: std::collections::BTreeSet<(&str, &str)> = set
        .inferred
        .iter()
        .filter_map(|i| Some((i.source.file.as_str(), i.collective.as_deref()?)))
        .collect();
    let named: Vec<InputRow> = set
        .rows
        .iter()
        .filter(|r| r.placement == Placement::OutOfPlace)
        .map(|r| {
            let mut r = r.clone();
            let guessed = r
                .collective
                .as_deref()
                .is_some_and(|c| inferred.contains(&(r.source.file.as_str(), c)));
            if guessed {
                r.collective = None;
            }
            r
        })
        .collect();
    let out_of_place: Vec<&InputRow> = named.iter().collect();
    let unnamed = out_of_place
        .iter()
        .filter(|r| r.collective.is_none())
        .count();
    let by_collective = by_collective(&out_of_place)?;
    if by_collective.is_empty() {
        return Err(nothing_usable(&shown, unnamed));
    }
    let curves: Vec<Curve> = by_collective
        .into_values()
        .map(|(collective, rows)| Curve::new(collective, &rows))
        .collect();
    let baseline = absolute(paths)?;

    let mut out = String::new();
    write_head(&mut out, &shown, margin_pct, unnamed, set.skipped.len());
    write_profile(&mut out, name, &shown, &curves);
    write_suite(&mut out, &curves);
    for curve in &curves {
        curve.write_checks(&mut out, margin_pct);
    }
    write_baseline(&mut out, &baseline);
    Ok(out)
}

/// Refuses a margin outside 0..100 %, an empty name and no input before any file is read.
fn check_request(paths: &[PathBuf], name: &str, margin_pct: f64) -> Result<(), Error> {
    if !(0.0..100.0).contains(&margin_pct) {
        return Err(Error::usage(format!(
            "profile margin must be at least 0 and below 100 percent, not {margin_pct}"
        )));
    }
    if name.trim().is_empty() {
        return Err(Error::usage("profile name is empty"));
    }
    if paths.is_empty() {
        return Err(Error::usage("no result files to make a profile from"));
    }
    Ok(())
}

/// The out-of-place rows a profile can be made from (op sum or none, root 0 or -1, above 0
/// bytes), per collective. A row naming no known collective is an error.
fn by_collective<'a>(out_of_place: &[&'a InputRow]) -> Result<ByCollective<'a>, Error> {
    let mut by_collective = ByCollective::new();
    for row in out_of_place.iter().copied() {
        let Some(name) = &row.collective else {
            continue;
        };
        let Some(collective) = Collective::parse(name) else {
            return Err(Error::usage(format!(
                "{}:{}: unknown collective '{name}'",
                row.source.file, row.source.line
            )));
        };
        let usable_op = matches!(row.op.as_str(), "sum" | "none" | "");
        if usable_op && matches!(row.root, 0 | -1) && row.bytes > 0 {
            let order = Collective::ALL.iter().position(|c| *c == collective);
            by_collective
                .entry(order.unwrap_or(usize::MAX))
                .or_insert_with(|| (collective, Vec::new()))
                .1
                .push(row);
        }
    }
    Ok(by_collective)
}

/// The error for input without a usable row; it names the likely cause when rows lacked
/// their collective's name.
fn nothing_usable(shown: &str, unnamed: usize) -> Error {
    let why = if unnamed > 0 {
        " (the rows do not say which collective they measured: nccl-tests names it only \
         in a `# Collective test starting:` line; use ncclbench --csv or -J output)"
    } else {
        ""
    };
    Error::usage(format!(
        "{shown}: no out-of-place rows above 0 bytes with op sum (or none) at root 0 or -1 to make a profile from{why}"
    ))
}

/// The input paths made absolute, so that the profile's baseline still finds them when it
/// is read from another directory.
fn absolute(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    paths
        .iter()
        .map(|p| {
            std::path::absolute(p)
                .map_err(|e| Error::usage(format!("{}: cannot make absolute: {e}", p.display())))
        })
        .collect()
}

/// The comment block at the top: where the numbers come from, how they were made, and what
/// input was left out.
fn write_head(w: &mut String, shown: &str, margin_pct: f64, unnamed: usize, skipped: usize) {
    let _ = writeln!(
        w,
        "# Made by `ncclbench accept --make-profile` from a healthy run:"
    );
    let _ = writeln!(w, "#   {shown}");
    let _ = writeln!(
        w,
        "# busbw floors: median busbw of the {SIZES} largest sizes less {margin_pct}%, rounded down;"
    );
    let _ = writeln!(
        w,
        "# latency ceilings: median time of the {SIZES} smallest sizes plus {margin_pct}%, rounded up"
    );
    let _ = writeln!(
        w,
        "# (3 significant digits; per size the median over all samples of out-of-place rows)."
    );
    let _ = writeln!(
        w,
        "# These numbers describe that run, not a guarantee: review them before judging other runs."
    );
    if unnamed > 0 {
        let _ = writeln!(
            w,
            "# {unnamed} out-of-place rows were left out: their file does not name the collective."
        );
    }
    if skipped > 0 {
        let _ = writeln!(
            w,
            "# {skipped} lines of the input could not be read and were left out."
        );
    }
}

/// The `[profile]` table; `ranks` only when every used row ran on the same number of ranks.
fn write_profile(w: &mut String, name: &str, shown: &str, curves: &[Curve]) {
    let mut ranks = curves.iter().flat_map(|c| c.rows.iter()).map(|r| r.nranks);
    let first = ranks.next().flatten();
    let ranks = first.filter(|_| ranks.all(|n| n == first));
    let date = chrono::Local::now().format("%Y-%m-%d");
    let _ = writeln!(w, "\n[profile]");
    let _ = writeln!(w, "name = {}", quoted(name));
    let _ = writeln!(
        w,
        "description = {}",
        quoted(&format!("made from {shown} on {date}"))
    );
    let _ = writeln!(w, "typical = false");
    if let Some(n) = ranks {
        let _ = writeln!(w, "ranks = {n}");
    }
}

/// The `[suite]` table: the collectives measured, swept over the sizes the run measured.
fn write_suite(w: &mut String, curves: &[Curve]) {
    let sizes = || curves.iter().flat_map(|c| c.rows.iter()).map(|r| r.bytes);
    let (perf_min, perf_max) = (sizes().min().unwrap_or(1), sizes().max().unwrap_or(1));
    let _ = writeln!(w, "\n[suite]");
    let names: Vec<String> = curves.iter().map(|c| quoted(c.collective.name())).collect();
    let _ = writeln!(w, "collectives = [{}]", names.join(", "));
    let _ = writeln!(w, "perf_min_bytes = {}", size_text(perf_min));
    let _ = writeln!(w, "perf_max_bytes = {}", size_text(perf_max));
}

/// The `[baseline]` table: the run itself, so that later runs are also compared with it.
fn write_baseline(w: &mut String, baseline: &[PathBuf]) {
    let paths: Vec<String> = baseline
        .iter()
        .map(|p| quoted(&p.display().to_string()))
        .collect();
    let _ = writeln!(w, "\n[baseline]");
    let _ = writeln!(w, "paths = [{}]", paths.join(", "));
    let _ = writeln!(w, "threshold_pct = 5");
}

/// One collective's rows, reduced to a median per size.
struct Curve<'a> {
    collective: Collective,
    dtype: String,
    rows: Vec<&'a InputRow>,
    /// bytes -> (median busbw GB/s, median time us, samples).
    sizes: Vec<(u64, Option<f64>, Option<f64>, usize)>,
}

impl<'a> Curve<'a> {
    /// Picks the dtype (`float` when present, else the most common, ties by name) and takes
    /// per-size medians of its rows.
    fn new(collective: Collective, rows: &[&'a InputRow]) -> Curve<'a> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for r in rows {
            *counts.entry(r.dtype.as_str()).or_default() += 1;
        }
        let dtype = if counts.contains_key("float") {
            "float"
        } else {
            let best = counts.values().copied().max().unwrap_or(0);
            counts
                .iter()
                .find(|(_, n)| **n == best)
                .map_or("", |(d, _)| *d)
        }
        .to_string();
        let rows: Vec<&InputRow> = rows.iter().copied().filter(|r| r.dtype == dtype).collect();
        let mut by_size: BTreeMap<u64, (Vec<f64>, Vec<f64>, usize)> = BTreeMap::new();
        for r in &rows {
            let entry = by_size.entry(r.bytes).or_default();
            entry.0.extend(Some(r.busbw_gbs).filter(|v| v.is_finite()));
            entry.1.extend(Some(r.time_us).filter(|v| v.is_finite()));
            entry.2 += 1;
        }
        let sizes = by_size
            .into_iter()
            .map(|(bytes, (busbw, time, n))| (bytes, median(busbw), median(time), n))
            .collect();
        Curve {
            collective,
            dtype,
            rows,
            sizes,
        }
    }

    /// Writes the `[[busbw]]` and `[[latency]]` tables, or a comment saying why one is absent.
    fn write_checks(&self, w: &mut String, margin_pct: f64) {
        let name = self.collective.name();
        let n = self.sizes.len().min(SIZES);
        let samples: usize = self.sizes.iter().map(|s| s.3).sum();
        let _ = writeln!(
            w,
            "\n# {name}: {} rows of dtype {}, {} sizes {}..{} bytes",
            samples,
            self.dtype,
            self.sizes.len(),
            self.sizes[0].0,
            self.sizes[self.sizes.len() - 1].0
        );
        let plateau = &self.sizes[self.sizes.len() - n..];
        let medians: Vec<f64> = plateau.iter().filter_map(|s| s.1).collect();
        let floor = median(medians.clone())
            .map(|m| round_sig(m * (1.0 - margin_pct / 100.0), false))
            .filter(|v| v.is_finite() && *v > 0.0);
        match floor {
            Some(min_gbs) => {
                let _ = writeln!(w, "# plateau busbw medians (GB/s): {}", list(&medians));
                let _ = writeln!(w, "[[busbw]]");
                let _ = writeln!(w, "collective = {}", quoted(name));
                let _ = writeln!(w, "min_bytes = {}", size_text(plateau[0].0));
                let _ = writeln!(w, "min_gbs = {min_gbs:?}");
            }
            None => {
                let _ = writeln!(
                    w,
                    "# no [[busbw]] check: the plateau busbw is not above 0 ({})",
                    list(&medians)
                );
            }
        }
        let small = &self.sizes[..n];
        let medians: Vec<f64> = small.iter().filter_map(|s| s.2).collect();
        let ceiling = median(medians.clone())
            .map(|m| round_sig(m * (1.0 + margin_pct / 100.0), true))
            .filter(|v| v.is_finite() && *v > 0.0);
        match ceiling {
            Some(max_us) => {
                let _ = writeln!(w, "\n# small-size time medians (us): {}", list(&medians));
                let _ = writeln!(w, "[[latency]]");
                let _ = writeln!(w, "collective = {}", quoted(name));
                let _ = writeln!(w, "max_bytes = {}", size_text(small[n - 1].0));
                let _ = writeln!(w, "max_us = {max_us:?}");
            }
            None => {
                let _ = writeln!(
                    w,
                    "# no [[latency]] check: the small-size time is not above 0 ({})",
                    list(&medians)
                );
            }
        }
    }
}

/// `x` rounded down (or up) to 3 significant digits; values within 1e-9 (relative) of a
/// 3-digit number are that number, so `0.17 * 0.9` gives `0.153`, not `0.152`.
fn round_sig(x: f64, up: bool) -> f64 {
    if !x.is_finite() || x <= 0.0 {
        return x;
    }
    let scaled = |e: i32| {
        if e <= 2 {
            x * 10f64.powi(2 - e)
        } else {
            x / 10f64.powi(e - 2)
        }
    };
    let mut e = x.log10().floor() as i32;
    if scaled(e) >= 1000.0 {
        e += 1;
    } else if scaled(e) < 100.0 {
        e -= 1;
    }
    let v = scaled(e);
    let near = v.round();
    let digits = if (v - near).abs() <= 1e-9 * v {
        near
    } else if up {
        v.ceil()
    } else {
        v.floor()
    };
    if e <= 2 {
        digits / 10f64.powi(2 - e)
    } else {
        digits * 10f64.powi(e - 2)
    }
}

/// A size as the profile writes it: `"8G"`, `"4M"`, `"1K"` when exact, else bytes (a TOML
/// integer while it fits one, else a string).
fn size_text(bytes: u64) -> String {
    let text = crate::core::units::size_arg(bytes);
    if text.bytes().all(|b| b.is_ascii_digit()) && i64::try_from(bytes).is_ok() {
        text
    } else {
        format!("\"{text}\"")
    }
}

/// A TOML basic string.
fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Numbers for a comment line.
/// The medians behind a threshold, for the comment above it (4 significant digits: the
/// thresholds themselves carry the exact rounding).
fn list(values: &[f64]) -> String {
    let shown: Vec<String> = values
        .iter()
        .map(|v| {
            let digits = 3 - v.abs().log10().floor().clamp(-12.0, 3.0) as i32;
            format!("{v:.*}", digits.max(0) as usize)
        })
        .collect();
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accept::profile::{parse, Baseline, BusbwCheck, LatencyCheck, Profile};
    use std::path::Path;

    const HEAD: &str =
        "cycle,collective,dtype,op,root,nranks,placement,bytes,count,time_us,algbw_gbs,busbw_gbs,wrong\n";

    /// One CSV record; the tuple is (collective, dtype, op, root).
    fn rec(
        cycle: u32,
        (coll, dtype, op, root): (&str, &str, &str, i64),
        placement: &str,
        bytes: u64,
        time: f64,
        busbw: f64,
    ) -> String {
        format!(
            "{cycle},{coll},{dtype},{op},{root},8,{placement},{bytes},1,{time},{busbw},{busbw},0\n"
        )
    }

    /// The message of a usage error (anything else fails the test).
    fn usage(result: Result<String, Error>) -> String {
        match result {
            Err(Error::Usage(msg)) => msg,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    /// Parses made text back; it must be a valid profile.
    fn reparse(text: &str) -> Profile {
        parse(text, "made", None).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// all_reduce float/sum rows over 7 sizes x 3 samples (cycles 0 and 1 in one file, a third
    /// sample in another), all_gather int32 rows, and rows that must be left out: in-place,
    /// another (more common) dtype, op max, a 0-byte row, and a broadcast at root 1.
    fn write_run(dir: &Path) -> Vec<PathBuf> {
        type Size = (u64, [f64; 3], [f64; 3]);
        let all_reduce: [Size; 7] = [
            (8, [10.0, 12.0, 11.0], [0.001; 3]),
            (64, [12.0, 13.0, 11.0], [0.01; 3]),
            (512, [15.0, 14.0, 16.0], [0.06; 3]),
            (1 << 20, [50.0; 3], [40.0; 3]),
            (16 << 20, [90.0; 3], [300.0, 310.0, 305.0]),
            (256 << 20, [1200.0; 3], [400.0, 390.0, 410.0]),
            (1 << 30, [4500.0; 3], [420.0, 415.0, 425.0]),
        ];
        let (mut a, mut b) = (HEAD.to_string(), HEAD.to_string());
        for (bytes, time, busbw) in all_reduce {
            for cycle in 0..2 {
                let (t, bw) = (time[cycle], busbw[cycle]);
                let c = cycle as u32;
                a += &rec(
                    c,
                    ("all_reduce", "float", "sum", -1),
                    "out_of_place",
                    bytes,
                    t,
                    bw,
                );
                a += &rec(
                    c,
                    ("all_reduce", "float", "sum", -1),
                    "in_place",
                    bytes,
                    1e6,
                    1.0,
                );
                // Twice: int32 is the most common dtype, yet float is preferred.
                for _ in 0..2 {
                    a += &rec(
                        c,
                        ("all_reduce", "int32", "sum", -1),
                        "out_of_place",
                        bytes,
                        1e6,
                        1.0,
                    );
                }
                a += &rec(
                    c,
                    ("all_reduce", "float", "max", -1),
                    "out_of_place",
                    bytes,
                    1e6,
                    1.0,
                );
            }
            b += &rec(
                0,
                ("all_reduce", "float", "sum", -1),
                "out_of_place",
                bytes,
                time[2],
                busbw[2],
            );
        }
        for (bytes, time, busbw) in [(1024, 20.0, 1.0), (4096, 22.0, 3.0)] {
            b += &rec(
                0,
                ("all_gather", "int32", "none", -1),
                "out_of_place",
                bytes,
                time,
                busbw,
            );
        }
        b += &rec(
            0,
            ("all_gather", "half", "none", -1),
            "out_of_place",
            4096,
            1.0,
            100.0,
        );
        b += &rec(
            0,
            ("all_reduce", "float", "sum", -1),
            "out_of_place",
            0,
            1.0,
            0.0,
        );
        b += &rec(
            0,
            ("broadcast", "float", "none", 1),
            "out_of_place",
            4096,
            1.0,
            100.0,
        );
        let paths = vec![dir.join("a.csv"), dir.join("b.csv")];
        std::fs::write(&paths[0], a).unwrap();
        std::fs::write(&paths[1], b).unwrap();
        paths
    }

    /// Thresholds from synthetic CSV: per-size medians over cycles and files, plateau and
    /// latency over 3 sizes (2 when the collective has 2), margins applied and rounded to 3
    /// significant digits, left-out rows ignored; the text parses back into those numbers.
    #[test]
    fn csv_run_gives_expected_thresholds_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let paths = write_run(dir.path());
        let text = make_profile(&paths, "lab-a", 7.0).unwrap();
        let p = reparse(&text);
        assert_eq!(p.name, "lab-a");
        assert!(!p.typical);
        assert_eq!(p.ranks, Some(8));
        assert!(p.description.starts_with("made from "), "{}", p.description);
        assert!(p.description.contains("a.csv"));
        assert!(text.starts_with("# Made by `ncclbench accept --make-profile`"));
        assert!(text.contains("less 7%"));
        assert_eq!(
            p.suite.collectives,
            [Collective::AllReduce, Collective::AllGather]
        );
        assert_eq!(
            (p.suite.perf_min_bytes, p.suite.perf_max_bytes),
            (8, 1 << 30)
        );
        // Plateau medians 305, 400, 420 -> 400 x 0.93 = 372; all_gather 1, 3 -> 2 x 0.93.
        assert_eq!(
            p.busbw,
            [
                BusbwCheck {
                    collective: Collective::AllReduce,
                    min_bytes: 16 << 20,
                    max_bytes: None,
                    min_gbs: 372.0,
                    typical_gbs: None,
                },
                BusbwCheck {
                    collective: Collective::AllGather,
                    min_bytes: 1024,
                    max_bytes: None,
                    min_gbs: 1.86,
                    typical_gbs: None,
                }
            ]
        );
        // Small-size medians 11, 12, 15 -> 12 x 1.07 = 12.84 -> 12.9; all_gather 21 x 1.07.
        assert_eq!(
            p.latency,
            [
                LatencyCheck {
                    collective: Collective::AllReduce,
                    min_bytes: 0,
                    max_bytes: 512,
                    max_us: 12.9,
                    typical_us: None,
                },
                LatencyCheck {
                    collective: Collective::AllGather,
                    min_bytes: 0,
                    max_bytes: 4096,
                    max_us: 22.5,
                    typical_us: None,
                }
            ]
        );
        assert_eq!(
            p.baseline,
            Some(Baseline {
                paths: paths.clone(),
                threshold_pct: 5.0
            })
        );
        // A margin of 0 keeps the medians themselves.
        let p = reparse(&make_profile(&paths, "x", 0.0).unwrap());
        assert_eq!((p.busbw[0].min_gbs, p.latency[0].max_us), (400.0, 12.0));
    }

    /// nccl-tests text (3 cycles of reduce_scatter in half, 3 sizes): dtype other than float
    /// is taken when there is no float; the directory form of the input works too.
    #[test]
    fn nccl_tests_text_run() {
        let dir = tempfile::tempdir().unwrap();
        let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/analysis/nccltests_2.19.6_cycles.txt");
        std::fs::copy(&sample, dir.path().join("run.txt")).unwrap();
        let text = make_profile(&[dir.path().to_path_buf()], "rs", 10.0).unwrap();
        let p = reparse(&text);
        assert_eq!(p.suite.collectives, [Collective::ReduceScatter]);
        assert_eq!(p.ranks, Some(8));
        assert_eq!(
            (p.suite.perf_min_bytes, p.suite.perf_max_bytes),
            (1024, 16384)
        );
        // busbw medians 0.04, 0.17, 0.59 -> 0.17 x 0.9 = 0.153.
        assert_eq!((p.busbw[0].min_bytes, p.busbw[0].min_gbs), (1024, 0.153));
        // time medians 20.75, 21.5, 24.25 -> 21.5 x 1.1 = 23.65 -> 23.7.
        assert_eq!((p.latency[0].max_bytes, p.latency[0].max_us), (16384, 23.7));
        assert!(text.contains("dtype half"), "{text}");
    }

    /// Bad margins, names and inputs are usage errors.
    #[test]
    fn bad_input_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let paths = write_run(dir.path());
        for margin in [-1.0, 100.0, f64::NAN] {
            let msg = usage(make_profile(&paths, "x", margin));
            assert!(
                msg.starts_with("profile margin must be at least 0 and below 100"),
                "{msg}"
            );
        }
        assert_eq!(
            usage(make_profile(&paths, " ", 5.0)),
            "profile name is empty"
        );
        assert_eq!(
            usage(make_profile(&[], "x", 5.0)),
            "no result files to make a profile from"
        );
        let in_place = dir.path().join("in_place.csv");
        let only = rec(
            0,
            ("all_reduce", "float", "sum", -1),
            "in_place",
            8,
            1.0,
            1.0,
        );
        std::fs::write(&in_place, format!("{HEAD}{only}")).unwrap();
        let msg = usage(make_profile(std::slice::from_ref(&in_place), "x", 5.0));
        assert_eq!(
            msg,
            format!(
                "{}: no out-of-place rows above 0 bytes with op sum (or none) at root 0 or -1 to make a profile from",
                in_place.display()
            )
        );
        let unnamed = dir.path().join("unnamed.txt");
        let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/analysis/nccltests_2.19.6_cycles.txt");
        let text = std::fs::read_to_string(sample).unwrap();
        let text = text.replace("# Collective test starting: reduce_scatter_perf\n", "");
        std::fs::write(&unnamed, text).unwrap();
        let msg = usage(make_profile(&[unnamed], "x", 5.0));
        assert!(msg.contains("do not say which collective"), "{msg}");
    }

    /// Rounding to 3 significant digits, down for floors and up for ceilings, at every scale.
    #[test]
    fn three_significant_digits() {
        let cases = [
            (412.37, false, 412.0),
            (412.37, true, 413.0),
            (0.0012345, true, 0.00124),
            (0.0012345, false, 0.00123),
            (123456.0, false, 123000.0),
            (999.95, true, 1000.0),
            (999.95, false, 999.0),
            (1000.0, false, 1000.0),
            (0.17 * 0.9, false, 0.153),
            (12.0 * 1.1, true, 13.2),
            (5.0, true, 5.0),
        ];
        for (x, up, want) in cases {
            assert_eq!(round_sig(x, up), want, "round_sig({x}, {up})");
        }
        assert_eq!(size_text(8 << 30), "\"8G\"");
        assert_eq!(size_text(3 << 20), "\"3M\"");
        assert_eq!(size_text(1536), "1536");
        assert_eq!(size_text(0), "0");
    }
}

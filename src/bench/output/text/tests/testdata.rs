//! Column-position check against a real published nccl-tests log: every data line, column
//! header and bandwidth footer of `015_nccltests_2.29.2_h100x8_single_node.txt` is rebuilt from
//! its parsed numbers with our formatting and must equal the original byte for byte.
//! Skipped (with a message) when the shared fixtures are not present.

use super::super::header::{column_header, Columns};
use super::super::{body, preamble};
use crate::bench::output::format::c_g;
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::{Measurement, RowKey};

/// The fixture, from the real fixtures beside the repository.
fn fixture() -> Option<String> {
    let path = crate::core::real_fixtures::path("015_nccltests_2.29.2_h100x8_single_node.txt")?;
    Some(std::fs::read_to_string(path).unwrap())
}

/// Rebuilds one data line from its whitespace-separated fields.
fn reformat(line: &str, collective: Collective) -> String {
    let f: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(f.len(), 13, "unexpected data line {line:?}");
    let key = RowKey {
        cycle: 0,
        collective,
        dtype: DataType::parse(f[2]).unwrap(),
        op: RedOp::parse(f[3]).unwrap_or(RedOp::Sum),
        root: f[4].parse::<usize>().ok(),
        nranks: 8,
        bytes: f[0].parse().unwrap(),
        count: f[1].parse().unwrap(),
    };
    let m = |i: usize| Measurement {
        time_us: f[i].parse().unwrap(),
        cputime_us: 0.0,
        algbw_gbs: f[i + 1].parse().unwrap(),
        busbw_gbs: f[i + 2].parse().unwrap(),
        wrong: f[i + 3].parse().ok(),
        iter: None,
        tuning: None,
        groups: Vec::new(),
    };
    let cols = Columns::default();
    preamble(&key) + &body(cols, &m(5)) + &body(cols, &m(9))
}

#[test]
fn every_data_line_of_a_real_log_is_reproduced_from_its_numbers() {
    let Some(text) = fixture() else { return };
    let mut collective = None;
    let mut checked = 0;
    for line in text.lines() {
        if let Some(prog) = line.strip_prefix("# Collective test starting: ") {
            collective = Collective::parse(prog);
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            assert_eq!(reformat(line, collective.unwrap()), line);
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} data lines found");
}

#[test]
fn column_header_equals_the_real_logs_header() {
    let Some(text) = fixture() else { return };
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("out-of-place"))
        .unwrap();
    let ours = column_header(Columns::default());
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours, lines[at - 1..at + 3]);
}

#[test]
fn bandwidth_footers_are_reproduced_from_their_numbers() {
    let Some(text) = fixture() else { return };
    let prefix = "# Avg bus bandwidth    : ";
    let footers: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert!(!footers.is_empty());
    for line in footers {
        let value: f64 = line[prefix.len()..].trim().parse().unwrap();
        assert_eq!(format!("{prefix}{} ", c_g(value)), line);
    }
}

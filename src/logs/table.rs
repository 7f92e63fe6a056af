//! Rows of the init-time tuning-model table (TUNING subsystem): comm rank 0 prints it
//! in blocks of up to three algorithms, each block a header row of algorithm names, a
//! protocol row (always nine cells, even in the PAT-only block, so it is not used), a
//! `Max NThreads` row and five function rows of `latency/bandwidth` cells.
//!
//! Rows are read one at a time; the parser keeps each thread's current block header and
//! pairs the cells of a function row with algorithms x [LL, LL128, Simple] from it, so other
//! threads' lines inside a table do not disturb it.

use super::names::{Algo, Func};
use super::scan::Cursor;

/// One table row.
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    /// `  Algorithm   |   Tree   |   Ring   | ...`: the block's algorithms (1-3).
    Header(Vec<Algo>),
    /// `  Protocol    |` or ` Max NThreads |`: nothing to keep.
    Other,
    /// `    AllReduce |  8.0/ 37.9 | ...`: (latency us, bandwidth GB/s) per cell.
    Func(Func, Vec<(f64, f64)>),
    /// The pre-2.18 one-block layout (`Latency/AlgBw |`), which is out of scope.
    Old,
}

/// Reads a table row; `None` when the message is not one.
pub fn parse(msg: &[u8]) -> Option<Row> {
    let bar = memchr::memchr(b'|', msg)?;
    let label = msg[..bar].trim_ascii();
    let cells = msg[bar + 1..]
        .split(|&b| b == b'|')
        .map(<[u8]>::trim_ascii)
        .filter(|c| !c.is_empty());
    match label {
        b"Algorithm" => {
            let algos: Option<Vec<Algo>> = cells.map(Algo::parse).collect();
            algos
                .filter(|a| !a.is_empty() && a.len() <= 3)
                .map(Row::Header)
        }
        b"Protocol" | b"Max NThreads" => Some(Row::Other),
        b"Latency/AlgBw" => Some(Row::Old),
        _ => {
            let func = Func::parse(label).filter(|f| Func::TABLE_ROWS.contains(f))?;
            let mut out = Vec::with_capacity(9);
            for cell in cells.take(9) {
                let slash = memchr::memchr(b'/', cell)?;
                let lat = Cursor::new(cell[..slash].trim_ascii()).float()?;
                let bw = Cursor::new(cell[slash + 1..].trim_ascii()).float()?;
                out.push((lat, bw));
            }
            Some(Row::Func(func, out))
        }
    }
}

#[test]
fn table_rows_parse_and_foreign_bars_do_not() {
    assert_eq!(
        parse(b"  Algorithm   |                             PAT                  |"),
        Some(Row::Header(vec![Algo::Pat]))
    );
    assert_eq!(
        parse(b"  Algorithm   |   CollNetChain  |   NVLS   |    NVLSTree    |"),
        Some(Row::Header(vec![
            Algo::CollNetChain,
            Algo::Nvls,
            Algo::NvlsTree
        ]))
    );
    assert_eq!(
        parse(b"  Protocol    |             LL |          LL128 |"),
        Some(Row::Other)
    );
    assert_eq!(
        parse(b"     AllReduce |     8.0/  37.9 |  1234567.5/   0.0 |"),
        Some(Row::Func(
            Func::AllReduce,
            vec![(8.0, 37.9), (1234567.5, 0.0)]
        ))
    );
    assert_eq!(
        parse(b"threadThresholds 8/8/64 | 16/8/64 | 512 | 512"),
        None
    );
    assert_eq!(parse(b"     AllReduce |     8.0 |"), None);
    assert_eq!(parse(b"          Send |     8.0/1.0 |"), None);
    assert_eq!(parse(b"  Algorithm   |   Foo   |"), None);
    assert_eq!(parse(b"Latency/AlgBw |  Tree/LL |"), Some(Row::Old));
}

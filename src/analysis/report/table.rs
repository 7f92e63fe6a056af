//! The report's tables as plain cells, defined once: the curve summary, and per curve its
//! regimes, switch points and anomalies. The text, markdown and HTML renderers only add row and
//! divider syntax, so a column changes in one place and every format shows the same numbers.

use crate::analysis::curve::{Analysis, CurveReport, Regime};
use crate::analysis::units;

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// A table of already formatted cells.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    /// Column titles.
    pub headers: Vec<&'static str>,
    /// Alignment per column.
    pub align: Vec<Align>,
    /// Rows of cells, one per header.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with `(title, alignment)` columns.
    fn new(columns: &[(&'static str, Align)]) -> Table {
        Table {
            headers: columns.iter().map(|c| c.0).collect(),
            align: columns.iter().map(|c| c.1).collect(),
            rows: Vec::new(),
        }
    }
}

use Align::{Left, Right};

/// Whether the summary shows the efficiency column: with `--peak-gbs`, or when a curve has it.
pub(crate) fn shows_efficiency(analysis: &Analysis) -> bool {
    analysis.peak_gbs.is_some() || analysis.curves.iter().any(|c| c.efficiency_pct.is_some())
}

/// One row per curve: key, latency floor, measured and fitted plateau, half-performance and
/// 90% sizes, number of regimes, and the efficiency when known.
pub(crate) fn summary(analysis: &Analysis) -> Table {
    let efficiency = shows_efficiency(analysis);
    let mut columns = vec![
        ("collective", Left),
        ("dtype", Left),
        ("op", Left),
        ("ranks", Right),
        ("placement", Left),
        ("lat(us)", Right),
        ("busbw(GB/s)", Right),
        ("fit(GB/s)", Right),
        ("half-perf", Right),
        ("90%", Right),
        ("regimes", Right),
    ];
    if efficiency {
        columns.push(("eff", Right));
    }
    let mut table = Table::new(&columns);
    for c in &analysis.curves {
        let mut row = vec![
            collective_cell(c),
            c.dtype.clone(),
            c.op.clone(),
            units::nranks(c.nranks),
            c.placement.clone(),
            units::us(c.latency_floor_us.unwrap_or(f64::NAN)),
            units::gbs(c.plateau_busbw_gbs),
            fit_cell(c),
            units::size_f(c.half_perf_bytes.unwrap_or(f64::NAN)),
            units::opt_size(c.sat90_bytes),
            c.regimes.len().to_string(),
        ];
        if efficiency {
            row.push(units::opt_pct(c.efficiency_pct));
        }
        table.rows.push(row);
    }
    table
}

/// The fitted plateau, marked when it extrapolates beyond every measured busbw of its regime
/// (the measured column is then the number to quote).
fn fit_cell(c: &CurveReport) -> String {
    let fit = units::gbs(c.plateau_busbw_fit_gbs);
    if c.plateau_fit_extrapolates {
        format!("{fit} (extrapolated)")
    } else {
        fit
    }
}

/// The collective cell: the name, marked when it was inferred rather than read, and the setup
/// when files of different setups were kept apart.
pub(crate) fn collective_cell(c: &CurveReport) -> String {
    let mut s = c.collective.clone();
    if c.collective_basis.is_some() {
        s.push_str(" (inferred)");
    }
    if let Some(setup) = &c.setup {
        s.push_str(&format!(" [{setup}]"));
    }
    s
}

/// Whether a curve has details worth a section: regimes, switch points, anomalies or notes.
pub(crate) fn has_details(c: &CurveReport) -> bool {
    !c.regimes.is_empty()
        || !c.switch_points.is_empty()
        || !c.anomalies.is_empty()
        || !c.notes.is_empty()
        || c.collective_basis.is_some()
}

/// Why the curve's numbers are missing or qualified, and how its collective was inferred.
pub(crate) fn notes(c: &CurveReport) -> Vec<String> {
    c.collective_basis
        .iter()
        .map(|b| format!("collective: {b}"))
        .chain(c.notes.iter().cloned())
        .collect()
}

/// NCCL's choices seen among the regime's points (`Tree/LL`, or several joined by `, `);
/// empty without annotations.
pub(crate) fn regime_tuning(c: &CurveReport, r: &Regime) -> String {
    let mut seen: Vec<String> = Vec::new();
    let inside = c
        .points
        .iter()
        .filter(|p| p.bytes >= r.from_bytes && p.bytes <= r.to_bytes);
    for label in inside.filter_map(|p| p.tuning.as_ref().map(units::tuning)) {
        if !seen.contains(&label) {
            seen.push(label);
        }
    }
    seen.join(", ")
}

/// Measured over NCCL's model time in a regime: the median of `time / model` over its points
/// that carry a model time (`--tuning` on NCCL 2.20-2.23), `None` without any.
pub(crate) fn regime_model_ratio(c: &CurveReport, r: &Regime) -> Option<f64> {
    let mut ratios: Vec<f64> = c
        .points
        .iter()
        .filter(|p| p.bytes >= r.from_bytes && p.bytes <= r.to_bytes)
        .filter_map(|p| {
            let model = p.tuning.as_ref()?.model_time_us?;
            Some(p.time_us / model).filter(|x| x.is_finite())
        })
        .collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    Some(if n % 2 == 1 {
        ratios[n / 2]
    } else {
        (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0
    })
}

/// The fitted regimes: size range, alpha, algbw, busbw, fit error, points, NCCL's choice when
/// annotated, and measured over NCCL's model time when the log had model times (each column
/// is left out otherwise).
pub(crate) fn regimes(c: &CurveReport) -> Table {
    let tunings: Vec<String> = c.regimes.iter().map(|r| regime_tuning(c, r)).collect();
    let with_tuning = tunings.iter().any(|t| !t.is_empty());
    let models: Vec<Option<f64>> = c.regimes.iter().map(|r| regime_model_ratio(c, r)).collect();
    let with_model = models.iter().any(Option::is_some);
    let mut columns = vec![
        ("regime", Right),
        ("sizes", Left),
        ("alpha(us)", Right),
        ("algbw(GB/s)", Right),
        ("busbw(GB/s)", Right),
        ("fit err", Right),
        ("points", Right),
    ];
    if with_tuning {
        columns.push(("tuning", Left));
    }
    if with_model {
        columns.push(("time/model", Right));
    }
    let mut table = Table::new(&columns);
    for (i, ((r, tuning), model)) in c.regimes.iter().zip(tunings).zip(models).enumerate() {
        let mut row = vec![
            (i + 1).to_string(),
            units::size_range(r.from_bytes, r.to_bytes),
            units::us(r.alpha_us),
            units::gbs(r.algbw_gbs),
            units::gbs(r.busbw_gbs),
            units::rel_err(r.rms_rel_err),
            r.points.to_string(),
        ];
        if with_tuning {
            row.push(tuning);
        }
        if with_model {
            row.push(model.map_or_else(|| "-".into(), |m| format!("{m:.2}x")));
        }
        table.rows.push(row);
    }
    table
}

/// The switch points: size, measured time jump, and the tuning change when annotated.
pub(crate) fn switch_points(c: &CurveReport) -> Table {
    let mut table = Table::new(&[("switch", Right), ("time jump", Right), ("tuning", Left)]);
    for s in &c.switch_points {
        table.rows.push(vec![
            units::size(s.bytes),
            units::jump(s.time_jump),
            s.tuning_change
                .clone()
                .unwrap_or_else(|| units::NONE.into()),
        ]);
    }
    table
}

/// The anomalies: kind, size and the one-line detail.
pub(crate) fn anomalies(c: &CurveReport) -> Table {
    let mut table = Table::new(&[("anomaly", Left), ("size", Right), ("detail", Left)]);
    for a in &c.anomalies {
        table
            .rows
            .push(vec![a.kind.clone(), units::size(a.bytes), a.detail.clone()]);
    }
    table
}

/// How many skipped reasons the reports list before summarising the rest as a count.
pub(crate) const SKIPPED_SHOWN: usize = 5;

/// The first [`SKIPPED_SHOWN`] skipped rows as `file:line: reason`, and how many more exist
/// (by the skipped count, which may exceed the reasons a reader kept).
pub(crate) fn skipped(analysis: &Analysis) -> (Vec<String>, usize) {
    let shown: Vec<String> = analysis
        .skipped
        .iter()
        .take(SKIPPED_SHOWN)
        .map(|s| format!("{}:{}: {}", s.source.file, s.source.line, s.reason))
        .collect();
    let total = analysis.rows_skipped.max(analysis.skipped.len());
    let more = total.saturating_sub(shown.len());
    (shown, more)
}

/// The closing count line: `rows read N, skipped M`.
pub(crate) fn counts(analysis: &Analysis) -> String {
    format!(
        "rows read {}, skipped {}",
        analysis.rows_read, analysis.rows_skipped
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testdata;

    #[test]
    fn the_regime_table_compares_measured_time_with_nccl_model_time_when_present() {
        let mut c = testdata::all_reduce();
        let plain = regimes(&c);
        assert!(!plain.headers.contains(&"time/model"));
        // NCCL's model says half the measured time in every point of the first regime.
        let first = c.regimes[0].clone();
        for p in &mut c.points {
            if p.bytes <= first.to_bytes {
                if let Some(t) = p.tuning.as_mut() {
                    t.model_time_us = Some(p.time_us / 2.0);
                }
            }
        }
        assert_eq!(regime_model_ratio(&c, &first), Some(2.0));
        assert_eq!(regime_model_ratio(&c, &c.regimes[1].clone()), None);
        let t = regimes(&c);
        let col = t.headers.iter().position(|n| *n == "time/model").unwrap();
        assert_eq!(t.rows[0][col], "2.00x");
        assert_eq!(t.rows[1][col], "-");
    }
}

//! One collective's rows of a healthy run reduced to a median per size, and the busbw floors
//! and latency ceilings written from them.

use super::text::{list, quoted, round_sig, size_text};
use super::SIZES;
use crate::analysis::input::InputRow;
use crate::core::collective::Collective;
use crate::core::stats::median;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One collective's rows, reduced to a median per size.
pub(super) struct Curve<'a> {
    pub(super) collective: Collective,
    pub(super) dtype: String,
    pub(super) rows: Vec<&'a InputRow>,
    /// bytes -> (median busbw GB/s, median time us, samples).
    pub(super) sizes: Vec<(u64, Option<f64>, Option<f64>, usize)>,
}

impl<'a> Curve<'a> {
    /// Picks the dtype (`float` when present, else the most common, ties by name) and takes
    /// per-size medians of its rows.
    pub(super) fn new(collective: Collective, rows: &[&'a InputRow]) -> Curve<'a> {
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
    pub(super) fn write_checks(&self, w: &mut String, margin_pct: f64) {
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

//! One formatting function per reported number, shared by every report format and the plots,
//! so the terminal table, markdown, HTML and chart labels cannot drift apart. Non-finite values
//! (an undefined fit) print as `-`, never as `NaN`.

use crate::analysis::curve::CurveReport;
use crate::analysis::input::Tuning;

/// What every formatter prints for an undefined number.
pub(crate) const NONE: &str = "-";

/// A size in bytes with a 1024-based suffix (`64K`, `1.5K`, `17.7M`).
pub(crate) fn size(bytes: u64) -> String {
    crate::core::units::compact_bytes(bytes)
}

/// [`size`] for a fractional byte count (the half-performance size); `-` when not finite or
/// negative.
pub(crate) fn size_f(bytes: f64) -> String {
    crate::core::units::compact_bytes_f(bytes).unwrap_or_else(|| NONE.to_string())
}

/// An optional size (the 90% size); `-` when absent.
pub(crate) fn opt_size(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| NONE.to_string(), size)
}

/// A size range `8B..64K`.
pub(crate) fn size_range(from: u64, to: u64) -> String {
    format!("{}..{}", size(from), size(to))
}

/// `value` with `decimals` decimals, or `-` when not finite.
fn fixed(value: f64, decimals: usize) -> String {
    if value.is_finite() {
        format!("{value:.decimals$}")
    } else {
        NONE.to_string()
    }
}

/// A time in microseconds (latency floor, alpha): two decimals.
pub(crate) fn us(value: f64) -> String {
    fixed(value, 2)
}

/// A bandwidth in GB/s: two decimals, as nccl-tests prints them; below 0.1 GB/s three
/// significant digits instead, so a tiny bandwidth does not read as zero.
pub(crate) fn gbs(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude > 0.0 && magnitude < 0.1 {
        let decimals = (2.0 - magnitude.log10().floor()).min(20.0) as usize;
        fixed(value, decimals)
    } else {
        fixed(value, 2)
    }
}

/// A percentage already scaled to 0..100 (efficiency): one decimal and `%`.
pub(crate) fn pct(value: f64) -> String {
    if value.is_finite() {
        format!("{value:.1}%")
    } else {
        NONE.to_string()
    }
}

/// An optional percentage; `-` when absent.
pub(crate) fn opt_pct(value: Option<f64>) -> String {
    value.map_or_else(|| NONE.to_string(), pct)
}

/// A relative error (0.012 = 1.2%), as a percentage.
pub(crate) fn rel_err(value: f64) -> String {
    pct(value * 100.0)
}

/// A signed relative change (0.08 = `+8.0%`).
pub(crate) fn jump(value: f64) -> String {
    if value.is_finite() {
        format!("{:+.1}%", value * 100.0)
    } else {
        NONE.to_string()
    }
}

/// The busbw factor (`1.75`), up to four decimals without trailing zeros.
pub(crate) fn factor(value: f64) -> String {
    if !value.is_finite() {
        return NONE.to_string();
    }
    let s = format!("{value:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Ranks, `?` when unknown (0).
pub(crate) fn nranks(n: usize) -> String {
    if n == 0 {
        "?".to_string()
    } else {
        n.to_string()
    }
}

/// NCCL's choice as `algorithm/protocol` (`Ring/LL128`).
pub(crate) fn tuning(t: &Tuning) -> String {
    format!("{}/{}", t.algo, t.proto)
}

/// The curve key in words: `all_reduce float sum, 8 ranks, out_of_place` (an empty op, as
/// hypercube prints, is left out).
pub(crate) fn key_label(c: &CurveReport) -> String {
    let mut head = vec![c.collective.as_str(), c.dtype.as_str()];
    if !c.op.is_empty() {
        head.push(c.op.as_str());
    }
    let mut label = format!(
        "{}, {} ranks, {}",
        head.join(" "),
        nranks(c.nranks),
        c.placement
    );
    if let Some(setup) = &c.setup {
        label.push_str(&format!(" [{setup}]"));
    }
    label
}

/// A filesystem-safe file stem for the curve: `all_reduce-float-sum-n8-out_of_place`. Every
/// character outside `[A-Za-z0-9_+]` becomes `_`, parts are cut to 40 characters and empty
/// parts are left out, so the stem never holds a path separator, a dot or a leading dash.
pub(crate) fn slug(c: &CurveReport) -> String {
    let ranks = format!("n{}", c.nranks);
    [
        c.collective.as_str(),
        c.dtype.as_str(),
        c.op.as_str(),
        &ranks,
        c.placement.as_str(),
    ]
    .iter()
    .map(|part| slug_part(part))
    .filter(|part| !part.is_empty())
    .collect::<Vec<_>>()
    .join("-")
}

/// One sanitised slug component.
fn slug_part(part: &str) -> String {
    part.chars()
        .take(40)
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '_' || ch == '+' {
                ch
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_1024_based_suffixes_and_three_digits() {
        let cases = [
            (0, "0B"),
            (8, "8B"),
            (1000, "1000B"),
            (1024, "1K"),
            (1536, "1.5K"),
            (65536, "64K"),
            (1 << 20, "1M"),
            (181_248, "177K"),
            (3 << 30, "3G"),
            (18_560_000, "17.7M"),
            (u64::MAX, "16E"),
        ];
        for (bytes, want) in cases {
            assert_eq!(size(bytes), want, "{bytes} bytes");
        }
    }

    #[test]
    fn undefined_numbers_print_as_a_dash() {
        assert_eq!(size_f(f64::NAN), "-");
        assert_eq!(size_f(-1.0), "-");
        assert_eq!(us(f64::INFINITY), "-");
        assert_eq!(gbs(f64::NAN), "-");
        assert_eq!(pct(f64::NAN), "-");
        assert_eq!(jump(f64::NAN), "-");
        assert_eq!(factor(f64::NAN), "-");
        assert_eq!(opt_size(None), "-");
        assert_eq!(opt_pct(None), "-");
    }

    #[test]
    fn numbers_have_fixed_decimals() {
        assert_eq!(us(12.345), "12.35");
        assert_eq!(gbs(345.0), "345.00");
        assert_eq!(gbs(0.0), "0.00");
        assert_eq!(gbs(0.1), "0.10");
        assert_eq!(gbs(0.0017), "0.00170");
        assert_eq!(gbs(0.012345), "0.0123");
        assert_eq!(gbs(1e-300), "0.00000000000000000000");
        assert_eq!(pct(87.26), "87.3%");
        assert_eq!(rel_err(0.0123), "1.2%");
        assert_eq!(jump(0.08), "+8.0%");
        assert_eq!(jump(-0.125), "-12.5%");
        assert_eq!(factor(1.75), "1.75");
        assert_eq!(factor(1.0), "1");
        assert_eq!(factor(0.875), "0.875");
        assert_eq!(size_range(8, 65536), "8B..64K");
    }
}

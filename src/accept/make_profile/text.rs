//! How a made profile writes its numbers: thresholds rounded to 3 significant digits, sizes in
//! the flags' units where exact, TOML strings, and the medians behind a threshold.

/// `x` rounded down (or up) to 3 significant digits; values within 1e-9 (relative) of a
/// 3-digit number are that number, so `0.17 * 0.9` gives `0.153`, not `0.152`.
pub(super) fn round_sig(x: f64, up: bool) -> f64 {
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
pub(super) fn size_text(bytes: u64) -> String {
    let text = crate::core::units::size_arg(bytes);
    if text.bytes().all(|b| b.is_ascii_digit()) && i64::try_from(bytes).is_ok() {
        text
    } else {
        format!("\"{text}\"")
    }
}

/// A TOML basic string.
pub(super) fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Numbers for a comment line.
/// The medians behind a threshold, for the comment above it (4 significant digits: the
/// thresholds themselves carry the exact rounding).
pub(super) fn list(values: &[f64]) -> String {
    let shown: Vec<String> = values
        .iter()
        .map(|v| {
            let digits = 3 - v.abs().log10().floor().clamp(-12.0, 3.0) as i32;
            format!("{v:.*}", digits.max(0) as usize)
        })
        .collect();
    shown.join(", ")
}

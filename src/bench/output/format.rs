//! C `printf`-compatible number formatting for the nccl-tests text layout: the fixed-width
//! field rule of nccl-tests 2.19.6 ([`float_str`]), C's `%g` ([`c_g`]), and C's `%.Nf` /
//! `%.Ne` spellings ([`c_fixed`], [`c_exp`]).
//!
//! Rust's `{:.N}` and `{:.Ne}` round the exact binary value half-to-even, as glibc's `printf`
//! does, so only the spellings differ: C writes `nan`/`inf` and a signed exponent of at least
//! two digits (`1.2e+07`), Rust writes `NaN`/`inf` and `1.2e7`.

/// The C spelling of a non-finite value (`nan`, `-nan`, `inf`, `-inf`), or `None` when finite.
fn non_finite(value: f64) -> Option<&'static str> {
    match (
        value.is_nan(),
        value.is_infinite(),
        value.is_sign_negative(),
    ) {
        (true, _, false) => Some("nan"),
        (true, _, true) => Some("-nan"),
        (_, true, false) => Some("inf"),
        (_, true, true) => Some("-inf"),
        _ => None,
    }
}

/// C's `%.{prec}f`.
pub fn c_fixed(value: f64, prec: usize) -> String {
    match non_finite(value) {
        Some(s) => s.to_string(),
        None => format!("{value:.prec$}"),
    }
}

/// Rewrites Rust's exponent suffix (`e7`, `e-5`) as C's (`e+07`, `e-05`).
fn c_exponent(rust: &str) -> String {
    match rust.split_once('e') {
        Some((mantissa, exp)) => {
            let exp: i32 = exp.parse().unwrap_or(0);
            let sign = if exp < 0 { '-' } else { '+' };
            format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
        }
        None => rust.to_string(),
    }
}

/// C's `%.{prec}e`.
pub fn c_exp(value: f64, prec: usize) -> String {
    match non_finite(value) {
        Some(s) => s.to_string(),
        None => c_exponent(&format!("{value:.prec$e}")),
    }
}

/// Right-aligns `s` in `width` columns (C's `%*s`); longer strings are kept whole.
fn pad(s: &str, width: usize) -> String {
    format!("{s:>width$}")
}

/// nccl-tests 2.19.6 `getFloatStr`: the value in exactly `width` columns, with as many of two,
/// one or zero decimals as fit, else in exponent form (`%.1e` for width >= 7, `%.0e` below),
/// cut to `width` characters as C's `snprintf` into a `width + 1` buffer would.
pub fn float_str(value: f64, width: usize) -> String {
    for prec in [2, 1, 0] {
        let s = pad(&c_fixed(value, prec), width);
        if s.len() <= width {
            return s;
        }
    }
    let prec = if width >= 7 { 1 } else { 0 };
    let mut s = pad(&c_exp(value, prec), width);
    s.truncate(width);
    s
}

/// Removes trailing zeros after a decimal point, and the point itself when nothing follows.
fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C's `%g` (precision 6): six significant digits, trailing zeros removed, exponent form when
/// the decimal exponent is below -4 or at least 6.
pub fn c_g(value: f64) -> String {
    const PRECISION: i32 = 6;
    if let Some(s) = non_finite(value) {
        return s.to_string();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // The exponent after rounding to six significant digits decides the form.
    let sci = format!("{value:.prec$e}", prec = (PRECISION - 1) as usize);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..PRECISION).contains(&exp) {
        c_exponent(&format!("{}e{exp}", strip_zeros(mantissa)))
    } else {
        let decimals = (PRECISION - 1 - exp) as usize;
        strip_zeros(&format!("{value:.decimals$}")).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_str_matches_every_reference_example_at_width_7() {
        assert_eq!(float_str(12.345, 7), "  12.35");
        assert_eq!(float_str(1234.56, 7), "1234.56");
        assert_eq!(float_str(12345.6, 7), "12345.6");
        assert_eq!(float_str(158070.4, 7), " 158070");
        assert_eq!(float_str(1234567.0, 7), "1234567");
        assert_eq!(float_str(1.2e7, 7), "1.2e+07");
    }

    #[test]
    fn float_str_matches_every_reference_example_at_width_6() {
        assert_eq!(float_str(0.0, 6), "  0.00");
        assert_eq!(float_str(999.99, 6), "999.99");
        assert_eq!(float_str(1000.0, 6), "1000.0");
        assert_eq!(float_str(12345.6, 6), " 12346");
        assert_eq!(float_str(1e6, 6), " 1e+06");
    }

    #[test]
    fn float_str_switches_form_where_rounding_changes_the_length() {
        // 999.996 rounds to 1000.00 (7 chars) at two decimals, so one decimal is used.
        assert_eq!(float_str(999.996, 6), "1000.0");
        assert_eq!(float_str(99999.96, 7), " 100000");
    }

    #[test]
    fn float_str_cuts_overlong_exponent_forms_like_snprintf() {
        assert_eq!(float_str(1.25e100, 7), "1.2e+10");
        assert_eq!(float_str(-1.2e7, 7), "-1.2e+0");
    }

    #[test]
    fn float_str_spells_non_finite_values_as_c() {
        assert_eq!(float_str(f64::NAN, 6), "   nan");
        assert_eq!(float_str(f64::INFINITY, 7), "    inf");
        assert_eq!(float_str(f64::NEG_INFINITY, 6), "  -inf");
    }

    #[test]
    fn fixed_and_exponent_ties_round_half_to_even_like_glibc() {
        assert_eq!(c_fixed(0.125, 2), "0.12");
        assert_eq!(c_fixed(0.375, 2), "0.38");
        assert_eq!(c_fixed(2.5, 0), "2");
        assert_eq!(c_exp(1.25e7, 1), "1.2e+07");
        assert_eq!(c_exp(2.5e6, 0), "2e+06");
        assert_eq!(c_exp(2.5e-5, 0), "3e-05"); // 2.5e-5 is stored slightly above the tie
    }

    #[test]
    fn c_g_matches_printf_percent_g() {
        assert_eq!(c_g(0.0), "0");
        assert_eq!(c_g(437.957), "437.957");
        assert_eq!(c_g(95.30091234), "95.3009");
        assert_eq!(c_g(1234567.0), "1.23457e+06");
        assert_eq!(c_g(0.0001), "0.0001");
        assert_eq!(c_g(0.00001), "1e-05");
        assert_eq!(c_g(100000.0), "100000");
        assert_eq!(c_g(999999.5), "1e+06");
        assert_eq!(c_g(12.0), "12");
        assert_eq!(c_g(-2.5), "-2.5");
        assert_eq!(c_g(1.5e-300), "1.5e-300");
    }

    #[test]
    fn c_g_spells_non_finite_values_as_c() {
        assert_eq!(c_g(f64::NAN), "nan");
        assert_eq!(c_g(-f64::NAN), "-nan");
        assert_eq!(c_g(f64::INFINITY), "inf");
    }
}

//! `NCCL_TESTS_SPLIT_MASK` and `NCCL_TESTS_SPLIT`: the colour of a process, with nccl-tests'
//! semantics. Processes of one colour form one communicator (`MPI_Comm_split(world, color,
//! rank)`), each with its own unique id; bandwidth is reported per group.
//!
//! Stricter than nccl-tests, which reads the longest number it can and takes anything else as
//! "no split": a value that is not wholly a mask or an operator and a number (`zz`, `FOO 2`,
//! `MOD 2x`) is refused, as is a division or modulo by zero, so a typo cannot silently run
//! one unsplit job. An empty value is the same as an unset one.

/// The colour of world rank `rank` from the two variables (the mask wins, as in nccl-tests).
/// Both unset (or empty) means no split (colour 0). The error is one line naming the variable.
pub fn color(rank: usize, mask: Option<&str>, split: Option<&str>) -> Result<usize, String> {
    fn set(v: Option<&str>) -> Option<&str> {
        v.filter(|v| !v.trim().is_empty())
    }
    if let Some(m) = set(mask) {
        let t = m.trim();
        let digits = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "NCCL_TESTS_SPLIT_MASK={m:?} is not a hexadecimal mask (nccl-tests reads it \
                 as hex: 7, 0x7; colour = rank AND mask)"
            ));
        }
        let v = u64::from_str_radix(digits, 16)
            .map_err(|_| format!("NCCL_TESTS_SPLIT_MASK={m:?} is out of range"))?;
        return Ok((rank as u64 & v) as usize);
    }
    let Some(s) = set(split) else { return Ok(0) };
    let lower = s.trim_start().to_ascii_lowercase();
    const OPS: [(&str, char); 8] = [
        ("and", '&'),
        ("&", '&'),
        ("or", '|'),
        ("|", '|'),
        ("mod", '%'),
        ("%", '%'),
        ("div", '/'),
        ("/", '/'),
    ];
    let form = "expected an operator (AND/&, OR/|, MOD/%, DIV//) and a number, e.g. MOD 2";
    let Some((rest, op)) = OPS
        .iter()
        .find_map(|(p, op)| lower.strip_prefix(p).map(|r| (r, *op)))
    else {
        return Err(format!("NCCL_TESTS_SPLIT={s:?} is not a split: {form}"));
    };
    let v = c_number(rest.trim())
        .ok_or_else(|| format!("NCCL_TESTS_SPLIT={s:?}: the value is not a number ({form})"))?;
    let r = rank as u64;
    let c = match op {
        '&' => r & v,
        '|' => r | v,
        '%' => r
            .checked_rem(v)
            .ok_or_else(|| format!("NCCL_TESTS_SPLIT={s:?} divides by zero"))?,
        _ => r
            .checked_div(v)
            .ok_or_else(|| format!("NCCL_TESTS_SPLIT={s:?} divides by zero"))?,
    };
    Ok(c as usize)
}

/// Whether the two variables are valid (the colour of every rank is then defined).
pub fn check(mask: Option<&str>, split: Option<&str>) -> Result<(), String> {
    color(0, mask, split).map(|_| ())
}

/// A whole C-style unsigned number (`0b` binary, `0x` hex, leading-0 octal, decimal).
fn c_number(t: &str) -> Option<u64> {
    let (digits, radix) = if let Some(b) = t.strip_prefix("0b") {
        (b, 2)
    } else if let Some(h) = t.strip_prefix("0x") {
        (h, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::color;

    #[test]
    fn mask_is_hex_and_wins() {
        assert_eq!(color(5, Some("1"), Some("MOD 4")), Ok(1));
        assert_eq!(color(7, Some("0x6"), None), Ok(6));
        assert_eq!(color(17, Some("10"), None), Ok(16));
        assert_eq!(color(7, Some(" 0X3 "), None), Ok(3));
    }

    #[test]
    fn split_operators_and_numbers() {
        assert_eq!(color(6, None, Some("MOD 4")), Ok(2));
        assert_eq!(color(6, None, Some("%0b11")), Ok(0));
        assert_eq!(color(9, None, Some("div 0x4")), Ok(2));
        assert_eq!(color(9, None, Some("/ 010")), Ok(1));
        assert_eq!(color(4, None, Some("or 1")), Ok(5));
        assert_eq!(color(7, None, Some("&2")), Ok(2));
        assert_eq!(color(7, None, None), Ok(0));
        assert_eq!(color(7, Some(" "), Some("")), Ok(0));
        assert!(color(7, None, Some("mod 0")).is_err());
    }

    #[test]
    fn malformed_values_are_refused() {
        for (mask, split) in [
            (Some("zz"), None),
            (Some("0x"), None),
            (Some("7 junk"), None),
            (None, Some("zz")),
            (None, Some("FOO 2")),
            (None, Some("xor 2")),
            (None, Some("MOD 2x")),
            (None, Some("MOD")),
        ] {
            let e = color(3, mask, split).unwrap_err();
            assert!(e.starts_with("NCCL_TESTS_SPLIT"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}

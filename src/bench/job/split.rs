//! `NCCL_TESTS_SPLIT_MASK` and `NCCL_TESTS_SPLIT`: the colour of a process, with nccl-tests'
//! semantics. Processes of one colour form one communicator (`MPI_Comm_split(world, color,
//! rank)`), each with its own unique id; bandwidth is reported per group.

/// The colour of world rank `rank` from the two variables (the mask wins, as in nccl-tests).
/// `None` for both unset means no split (colour 0). A division or modulo by zero, which
/// nccl-tests does not guard, is an error here.
pub fn color(rank: usize, mask: Option<&str>, split: Option<&str>) -> Result<usize, String> {
    if let Some(m) = mask {
        let t = m.trim();
        let t = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        // strtoul(..., 16): the longest hex prefix; none is 0.
        let digits: String = t.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
        let v = if digits.is_empty() {
            0
        } else {
            u64::from_str_radix(&digits, 16)
                .map_err(|_| format!("NCCL_TESTS_SPLIT_MASK={m:?} is out of range"))?
        };
        return Ok((rank as u64 & v) as usize);
    }
    let Some(s) = split else { return Ok(0) };
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
    let Some((rest, op)) = OPS
        .iter()
        .find_map(|(p, op)| lower.strip_prefix(p).map(|r| (r, *op)))
    else {
        return Ok(0);
    };
    let v = c_number(rest.trim_start())
        .ok_or_else(|| format!("NCCL_TESTS_SPLIT={s:?}: the value is not a number"))?;
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

/// A C-style unsigned number (`0b` binary, `0x` hex, leading-0 octal, decimal), longest prefix.
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
    let d: String = digits.chars().take_while(|c| c.is_digit(radix)).collect();
    if d.is_empty() {
        return if radix == 8 { Some(0) } else { None };
    }
    u64::from_str_radix(&d, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::color;

    #[test]
    fn mask_is_hex_and_wins() {
        assert_eq!(color(5, Some("1"), Some("MOD 4")), Ok(1));
        assert_eq!(color(7, Some("0x6"), None), Ok(6));
        assert_eq!(color(17, Some("10"), None), Ok(16));
    }

    #[test]
    fn split_operators_and_numbers() {
        assert_eq!(color(6, None, Some("MOD 4")), Ok(2));
        assert_eq!(color(6, None, Some("%0b11")), Ok(0));
        assert_eq!(color(9, None, Some("div 0x4")), Ok(2));
        assert_eq!(color(9, None, Some("/ 010")), Ok(1));
        assert_eq!(color(4, None, Some("or 1")), Ok(5));
        assert_eq!(color(7, None, Some("&2")), Ok(2));
        assert_eq!(color(7, None, Some("xor 2")), Ok(0));
        assert_eq!(color(7, None, None), Ok(0));
        assert!(color(7, None, Some("mod 0")).is_err());
    }
}

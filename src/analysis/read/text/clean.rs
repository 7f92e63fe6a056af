//! Cleaning one physical line of captured output before the table parser sees it: the CR of
//! CRLF files, `srun --label` prefixes (`3: `), Open MPI `--tag-output` prefixes
//! (`[1,0]<stdout>:`, anywhere in the line), and NCCL debug messages
//! (`host:pid:tid [dev] NCCL INFO ...`), which may start in the middle of a data line when
//! NCCL printed while nccl-tests was writing a row. What remains is a fragment of the table.

/// The table text of `line`, given the host names of the device lines seen so far (they tell
/// where a host name glued to a number begins).
pub(super) fn clean(line: &str, hosts: &[String]) -> String {
    let line = line.trim_end_matches('\r');
    let line = strip_srun_label(line);
    let untagged = strip_mpi_tags(line);
    match log_start(&untagged, hosts) {
        Some(at) => untagged[..at].to_string(),
        None => untagged,
    }
}

/// `srun --label` puts `N: ` before every line.
fn strip_srun_label(line: &str) -> &str {
    let trimmed = line.trim_start();
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && trimmed[digits..].starts_with(": ") {
        &trimmed[digits + 2..]
    } else {
        line
    }
}

/// Length of an Open MPI tag (`[1,0]<stdout>:` or `<stderr>:`) at the start of `s`, if any.
fn mpi_tag_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix('[')?;
    let a = rest.bytes().take_while(u8::is_ascii_digit).count();
    let rest = rest[a..].strip_prefix(',')?;
    let b = rest.bytes().take_while(u8::is_ascii_digit).count();
    let rest = rest[b..].strip_prefix(']')?;
    let after = rest
        .strip_prefix("<stdout>:")
        .or_else(|| rest.strip_prefix("<stderr>:"))?;
    (a > 0 && b > 0).then(|| s.len() - after.len())
}

/// `line` with every Open MPI tag replaced by a space (a tag separates two writes).
fn strip_mpi_tags(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('[') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        match mpi_tag_len(tail) {
            Some(len) => {
                out.push(' ');
                rest = &tail[len..];
            }
            None => {
                out.push('[');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Where an NCCL debug message (`host:pid:tid [dev] ...`) starts in `line`, if it has one.
fn log_start(line: &str, hosts: &[String]) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(rel) = line[from..].find(" [") {
        let space = from + rel;
        from = space + 2;
        let digits = bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 || bytes.get(from + digits) != Some(&b']') {
            continue;
        }
        let token_start = line[..space]
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        if let Some(prefix) = glued_prefix(&line[token_start..space], hosts) {
            return Some(token_start + prefix);
        }
    }
    None
}

/// For a token `DATAhost:pid:tid`, the length of the table text glued before the host name
/// (usually 0); `None` when the token is not `host:pid:tid`.
fn glued_prefix(token: &str, hosts: &[String]) -> Option<usize> {
    let mut parts = token.rsplitn(3, ':');
    let tid = parts.next()?;
    let pid = parts.next()?;
    let head = parts.next()?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(tid) || !all_digits(pid) || head.is_empty() {
        return None;
    }
    if head.starts_with(|c: char| c.is_ascii_alphabetic()) && !head.starts_with("N/A") {
        return Some(0); // the usual case: the message starts a line, or follows a space
    }
    if let Some(host) = hosts
        .iter()
        .filter(|h| !h.is_empty() && head.ends_with(h.as_str()))
        .max_by_key(|h| h.len())
    {
        return Some(head.len() - host.len());
    }
    if head.starts_with("N/A") {
        return Some(3);
    }
    // Unknown host: the glued text is a number (`-1`, `0`, `12.5`).
    Some(
        head.bytes()
            .take_while(|b| b.is_ascii_digit() || matches!(b, b'.' | b'+' | b'-'))
            .count(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glued_log_is_cut_at_the_known_host() {
        let hosts = vec!["mew0".to_string()];
        let line = "     8388608       2097152     float     sum      -1mew0:64904:64904 [1] NCCL INFO AllReduce: opCount 0";
        assert_eq!(
            clean(line, &hosts),
            "     8388608       2097152     float     sum      -1"
        );
        // Without the host list the number is still told apart from the host.
        assert_eq!(
            clean("    83.33  100.66      0node1:1:2 [0] NCCL INFO x", &[]),
            "    83.33  100.66      0"
        );
        assert_eq!(
            clean("node1:1:2 [0] NCCL INFO Launch mode Parallel\r", &[]),
            ""
        );
        // Multi-byte white space before the host does not split a character.
        assert_eq!(clean("7\u{85}h:1:2 [0] NCCL INFO x", &[]), "7\u{85}");
        assert_eq!(clean("7\u{3000}h:1:2 [0] NCCL INFO x", &[]), "7\u{3000}");
    }

    #[test]
    fn mpi_tags_and_srun_labels_go() {
        let line = "[1,0]<stdout>:           8             2     float     sum      -1[1,0]<stdout>:    85.70    0.00";
        let cleaned = clean(line, &[]);
        assert_eq!(
            cleaned.split_whitespace().collect::<Vec<_>>(),
            ["8", "2", "float", "sum", "-1", "85.70", "0.00"]
        );
        assert_eq!(
            clean("[1,3]<stderr>:host-a:28:28 [3] NCCL WARN oops", &[]),
            " "
        );
        assert_eq!(clean("0: # nThread 1", &[]), "# nThread 1");
        // Device lines keep their PCI brackets.
        let dev = "#  Rank  0 Group  0 Pid   6899 on h device  0 [0000:04:00] NVIDIA H100";
        assert_eq!(clean(dev, &[]), dev);
        let legacy = "#   Rank  0 Pid 1 on h device  0 [0x00] A100";
        assert_eq!(clean(legacy, &[]), legacy);
    }
}

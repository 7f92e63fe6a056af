//! Host lists in Slurm's compressed form (`node[01-03,07],gpu5`), for `--exclude=`: hosts whose
//! names differ only in their last run of digits share one bracket, consecutive numbers become
//! a range, and zero-padded numbers keep their width (`node01`..`node03` is `node[01-03]`, and
//! `node9,node10` is `node[9-10]`).

/// `name` split at its last run of digits: (prefix, digits, suffix); `None` without digits.
fn split(name: &str) -> Option<(&str, &str, &str)> {
    let end = name.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = name[..end]
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    Some((&name[..start], &name[start..end], &name[end..]))
}

/// The Slurm hostlist expression of `hosts` (duplicates dropped, in first-seen order).
pub fn compress(hosts: &[String]) -> String {
    // A group: (prefix, suffix, padded width or 0) and its numbers as written; a name without
    // digits stands alone.
    type Key = (String, String, usize);
    let mut entries: Vec<Result<(Key, Vec<String>), String>> = Vec::new();
    for h in hosts {
        match split(h) {
            Some((p, d, s)) => {
                let width = if d.len() > 1 && d.starts_with('0') {
                    d.len()
                } else {
                    0
                };
                let key = (p.to_string(), s.to_string(), width);
                match entries
                    .iter_mut()
                    .find_map(|e| e.as_mut().ok().filter(|(k, _)| *k == key))
                {
                    Some((_, v)) => v.push(d.to_string()),
                    None => entries.push(Ok((key, vec![d.to_string()]))),
                }
            }
            None => {
                if !entries.iter().any(|e| e.as_ref().err() == Some(h)) {
                    entries.push(Err(h.clone()));
                }
            }
        }
    }
    let parts: Vec<String> = entries
        .into_iter()
        .map(|e| match e {
            Err(plain) => plain,
            Ok(((prefix, suffix, _), nums)) => group(&prefix, &suffix, nums),
        })
        .collect();
    parts.join(",")
}

/// One bracket: `prefix[1-3,7]suffix`, or the plain name for a single number.
fn group(prefix: &str, suffix: &str, mut nums: Vec<String>) -> String {
    let value = |d: &String| d.parse::<u128>().unwrap_or(u128::MAX);
    nums.sort_by_key(value);
    nums.dedup();
    if nums.len() == 1 {
        return format!("{prefix}{}{suffix}", nums[0]);
    }
    let mut ranges: Vec<String> = Vec::new();
    let mut i = 0;
    while i < nums.len() {
        let mut j = i;
        while j + 1 < nums.len() && value(&nums[j + 1]) == value(&nums[j]).saturating_add(1) {
            j += 1;
        }
        ranges.push(if j > i {
            format!("{}-{}", nums[i], nums[j])
        } else {
            nums[i].clone()
        });
        i = j + 1;
    }
    format!("{prefix}[{}]{suffix}", ranges.join(","))
}

#[cfg(test)]
mod tests {
    use super::compress;

    fn c(v: &[&str]) -> String {
        compress(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn ranges_padding_suffixes_and_plain_names() {
        assert_eq!(
            c(&["node01", "node02", "node03", "node07"]),
            "node[01-03,07]"
        );
        assert_eq!(c(&["node9", "node10"]), "node[9-10]");
        assert_eq!(c(&["host1", "host7"]), "host[1,7]");
        assert_eq!(c(&["gpu5"]), "gpu5");
        assert_eq!(c(&["a1.x", "a2.x", "b"]), "a[1-2].x,b");
        assert_eq!(c(&["login", "login", "n3", "n3"]), "login,n3");
        assert_eq!(c(&[]), "");
    }
}

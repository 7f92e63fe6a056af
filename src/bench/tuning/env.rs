//! The NCCL_DEBUG* environment of a `--tuning` run, set before the library is loaded (NCCL
//! reads it once): level INFO, the subsystems the join needs added to the user's, and a
//! per-process debug file in the run's output directory (`%h` host, `%p` pid: NCCL has no rank
//! placeholder), so NCCL's lines never reach stdout. Conflicting user settings give `#` header
//! notes.

use std::path::{Path, PathBuf};

/// Subsystems the join needs: INIT (communicators, version), ENV, GRAPH, TUNING (decisions),
/// COLL (one line per call with opCount).
pub const SUBSYS: [&str; 5] = ["INIT", "ENV", "GRAPH", "TUNING", "COLL"];

/// Our debug file name, in the output directory.
pub const FILE_NAME: &str = "nccl-debug.%h.%p.log";

/// What to set, and what to tell the user.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DebugEnv {
    /// Variables to set, `(name, value)`.
    pub set: Vec<(String, String)>,
    /// The `NCCL_DEBUG_FILE` pattern in force (ours or the user's).
    pub file_pattern: String,
    /// Header notes (each starting with `#`).
    pub notes: Vec<String>,
}

/// Works out the variables from the current values (`get`) and the output directory.
pub fn plan(get: impl Fn(&str) -> Option<String>, out_dir: &Path) -> DebugEnv {
    let mut env = DebugEnv::default();
    let level = get("NCCL_DEBUG").unwrap_or_default();
    match level.trim().to_ascii_uppercase().as_str() {
        "INFO" | "TRACE" => {}
        "" => env.set.push(("NCCL_DEBUG".into(), "INFO".into())),
        other => {
            env.notes.push(format!(
                "# --tuning: NCCL_DEBUG={other} replaced by INFO (decision lines are INFO lines)"
            ));
            env.set.push(("NCCL_DEBUG".into(), "INFO".into()));
        }
    }
    let wanted = SUBSYS.join(",");
    match get("NCCL_DEBUG_SUBSYS").filter(|s| !s.trim().is_empty()) {
        None => env.set.push(("NCCL_DEBUG_SUBSYS".into(), wanted)),
        Some(user) if user.trim_start().starts_with('^') => {
            env.notes.push(format!(
                "# --tuning: NCCL_DEBUG_SUBSYS={user} (an exclusion list) replaced by {wanted}"
            ));
            env.set.push(("NCCL_DEBUG_SUBSYS".into(), wanted));
        }
        Some(user) => {
            let have: Vec<String> = user
                .split(',')
                .map(|s| s.trim().to_ascii_uppercase())
                .filter(|s| !s.is_empty())
                .collect();
            if !have.iter().any(|s| s == "ALL") {
                let missing: Vec<&str> = SUBSYS
                    .iter()
                    .copied()
                    .filter(|s| !have.iter().any(|h| h == s))
                    .collect();
                if !missing.is_empty() {
                    let value = format!("{},{}", user.trim(), missing.join(","));
                    env.set.push(("NCCL_DEBUG_SUBSYS".into(), value));
                }
            }
        }
    }
    let ours = out_dir.join(FILE_NAME).display().to_string();
    match get("NCCL_DEBUG_FILE").filter(|s| !s.trim().is_empty()) {
        Some(user) => {
            env.notes.push(format!(
                "# --tuning: NCCL_DEBUG_FILE={user} is set; reading that file instead of {ours}"
            ));
            env.file_pattern = user;
        }
        None => {
            env.set.push(("NCCL_DEBUG_FILE".into(), ours.clone()));
            env.file_pattern = ours;
        }
    }
    env
}

/// The output directory of a run: that of `--csv`, else `--json`, else the current one;
/// absolute, so the file does not depend on where NCCL resolves it.
pub fn out_dir(csv: Option<&Path>, json: Option<&Path>) -> PathBuf {
    let dir = csv
        .or(json)
        .and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    if dir.is_absolute() {
        return dir;
    }
    std::env::current_dir().map(|c| c.join(&dir)).unwrap_or(dir)
}

/// NCCL's expansion of a debug-file pattern: `%h` host (cut at the first `.`, `%` and `/`
/// mapped to `-` as 2.29+ does), `%p` pid, `%%` a percent sign, anything else as is.
pub fn expand(pattern: &str, host: &str, pid: u32) -> PathBuf {
    let host = host
        .split('.')
        .next()
        .unwrap_or_default()
        .replace(['%', '/'], "-");
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(&host),
            Some('p') => out.push_str(&pid.to_string()),
            Some('%') => out.push('%'),
            Some(o) => {
                out.push('%');
                out.push(o);
            }
            None => out.push('%'),
        }
    }
    PathBuf::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn plan_with(vars: &[(&str, &str)]) -> DebugEnv {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        plan(|k| m.get(k).cloned(), Path::new("/out"))
    }

    fn value<'a>(e: &'a DebugEnv, k: &str) -> Option<&'a str> {
        e.set.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn an_empty_environment_gets_info_our_subsystems_and_a_per_process_file() {
        let e = plan_with(&[]);
        assert_eq!(value(&e, "NCCL_DEBUG"), Some("INFO"));
        assert_eq!(
            value(&e, "NCCL_DEBUG_SUBSYS"),
            Some("INIT,ENV,GRAPH,TUNING,COLL")
        );
        assert_eq!(
            value(&e, "NCCL_DEBUG_FILE"),
            Some("/out/nccl-debug.%h.%p.log")
        );
        assert!(e.notes.is_empty());
    }

    #[test]
    fn user_settings_are_kept_extended_or_replaced_with_a_note() {
        let e = plan_with(&[
            ("NCCL_DEBUG", "WARN"),
            ("NCCL_DEBUG_SUBSYS", "NET,tuning"),
            ("NCCL_DEBUG_FILE", "/logs/n.%p"),
        ]);
        assert_eq!(value(&e, "NCCL_DEBUG"), Some("INFO"));
        assert_eq!(
            value(&e, "NCCL_DEBUG_SUBSYS"),
            Some("NET,tuning,INIT,ENV,GRAPH,COLL")
        );
        assert_eq!(value(&e, "NCCL_DEBUG_FILE"), None);
        assert_eq!(e.file_pattern, "/logs/n.%p");
        assert_eq!(e.notes.len(), 2, "{:?}", e.notes);
        assert!(e.notes.iter().all(|n| n.starts_with("# --tuning: ")));
        let e = plan_with(&[("NCCL_DEBUG", "info"), ("NCCL_DEBUG_SUBSYS", "ALL")]);
        assert_eq!(
            (value(&e, "NCCL_DEBUG"), value(&e, "NCCL_DEBUG_SUBSYS")),
            (None, None)
        );
        let e = plan_with(&[("NCCL_DEBUG_SUBSYS", "^COLL")]);
        assert_eq!(
            value(&e, "NCCL_DEBUG_SUBSYS"),
            Some("INIT,ENV,GRAPH,TUNING,COLL")
        );
        assert_eq!(e.notes.len(), 1);
    }

    #[test]
    fn patterns_expand_like_nccl() {
        assert_eq!(
            expand("/d/x.%h.%p.%%.%q%", "node1.example", 42),
            PathBuf::from("/d/x.node1.42.%.%q%")
        );
        assert_eq!(
            out_dir(Some(Path::new("/a/b.csv")), None),
            PathBuf::from("/a")
        );
        assert!(out_dir(Some(Path::new("b.csv")), None).is_absolute());
    }
}

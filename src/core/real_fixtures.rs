//! Real published nccl-tests outputs and NCCL logs in `../shared/fixtures/real`, beside the
//! repository and never copied into it, for the tests that read them. A fresh clone lacks
//! them: a test then says it skipped, except under `CI=true`, where a missing fixture fails
//! the test (CI provides them, so a test cannot pass there without checking anything).

use std::path::{Path, PathBuf};

/// `../shared/fixtures/real/<rel>` (the folder itself for `""`), when present; otherwise
/// `None` after printing that the calling test skipped. Panics under `CI=true` instead.
pub fn path(rel: &str) -> Option<PathBuf> {
    find(rel, std::env::var("CI").is_ok_and(|v| v == "true"))
}

/// [`path`], with whether this is CI given.
fn find(rel: &str, ci: bool) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/real")
        .join(rel);
    if path.exists() {
        return Some(path);
    }
    if ci {
        panic!(
            "{} is absent (CI=true: the real fixtures are required)",
            path.display()
        );
    }
    eprintln!("skipped: {} is absent", path.display());
    None
}

#[cfg(test)]
mod tests {
    use super::find;

    #[test]
    fn an_absent_fixture_is_skipped_off_ci() {
        assert_eq!(find("no-such-fixture.txt", false), None);
    }

    #[test]
    #[should_panic(expected = "CI=true: the real fixtures are required")]
    fn an_absent_fixture_fails_on_ci() {
        find("no-such-fixture.txt", true);
    }
}

//! Golden files: a command's output compared with the committed expected text, which
//! `UPDATE_GOLDEN=1` rewrites (after an intended change; review the diff before committing).

use std::path::Path;

/// Asserts that `got` is the text of the golden file `path` (`what` names it in a failure);
/// with `UPDATE_GOLDEN` set, writes `got` there first.
pub fn check(path: &Path, got: &str, what: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, got).unwrap();
    }
    let want = std::fs::read_to_string(path).expect("golden file (UPDATE_GOLDEN=1 writes it)");
    assert_eq!(
        got, want,
        "{what} changed; review and UPDATE_GOLDEN=1 if intended"
    );
}

//! Where the `python3` on `PATH` imports packages from, which is where the NCCL of PyTorch
//! users lives (the nvidia-nccl-cu12 / -cu13 wheels, or older torch builds' own copy). Asked
//! of python itself, because virtual environments, `--user` installs, conda and distribution
//! layouts each put site-packages somewhere else. Bounded by a timeout: a missing, broken or
//! slow python only ends this step of the search, never the run.

use std::ffi::OsStr;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long python may take to answer. A cold interpreter behind a pyenv shim answers in a
/// fraction of a second; seconds mean something is wrong with it.
pub const TIMEOUT: Duration = Duration::from_secs(3);

/// Prints python's import path (in import order, which is the order PyTorch would find its
/// `nvidia` packages in), then the site directories that are not on it, one per line. Written
/// with plain newlines: a `\` line continuation would strip the indentation Python needs.
const SCRIPT: &str = "import site, sys
seen = []
dirs = list(sys.path) + list(getattr(site, 'getsitepackages', lambda: [])())
dirs.append(site.getusersitepackages())
for d in dirs:
    if d and d not in seen:
        seen.append(d)
        print(d)
";

/// The site directories of the `python3` on `PATH`, asked once per process (a run searches
/// for its library more than once, and the answer cannot change).
pub fn site_dirs() -> Result<Vec<PathBuf>, String> {
    static DIRS: OnceLock<Result<Vec<PathBuf>, String>> = OnceLock::new();
    DIRS.get_or_init(|| query(OsStr::new("python3"), TIMEOUT))
        .clone()
}

/// Runs `program -c SCRIPT` and returns the absolute directories it printed, or why not.
pub fn query(program: &OsStr, timeout: Duration) -> Result<Vec<PathBuf>, String> {
    let shown = program.to_string_lossy();
    let mut child = Command::new(program)
        .args(["-c", SCRIPT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("no {shown} on PATH"),
            _ => format!("cannot run {shown}: {e}"),
        })?;
    // Read on the side, so a long answer cannot fill the pipe and stall the child.
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{shown} did not answer within {} s",
                    timeout.as_secs_f64()
                ));
            }
            Err(e) => return Err(format!("waiting for {shown}: {e}")),
        }
    };
    let text = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("{shown} failed ({status})"));
    }
    // Relative entries ("" is the current directory) would make the result depend on where
    // ncclbench was started.
    Ok(text
        .lines()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &std::path::Path, body: &str) -> PathBuf {
        let path = dir.join("python3");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn absolute_directories_are_kept_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let py = script(
            dir.path(),
            "printf '\\n/a/site-packages\\nrelative\\n/b/dist-packages\\n'",
        );
        assert_eq!(
            query(py.as_os_str(), TIMEOUT).unwrap(),
            [
                PathBuf::from("/a/site-packages"),
                PathBuf::from("/b/dist-packages")
            ]
        );
    }

    #[test]
    fn a_slow_python_is_given_up_on_within_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let py = script(dir.path(), "exec sleep 30");
        let start = Instant::now();
        let err = query(py.as_os_str(), Duration::from_millis(300)).unwrap_err();
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        assert!(err.contains("did not answer within 0.3 s"), "{err}");
    }

    /// The real `python3` of this machine (not a stub), in a fresh virtual environment: the
    /// script must run and name the environment's site-packages, where pip puts the wheels.
    #[test]
    fn the_real_python3_names_a_virtual_environments_site_packages() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        let made = Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(&venv)
            .status()
            .expect("python3 on PATH (the tests need the machine's real python3)");
        assert!(made.success(), "python3 -m venv: {made}");
        let dirs = query(venv.join("bin/python3").as_os_str(), TIMEOUT).unwrap();
        let venv = venv.canonicalize().unwrap();
        let inside = |d: &PathBuf| {
            d.ends_with("site-packages") && d.canonicalize().is_ok_and(|d| d.starts_with(&venv))
        };
        assert!(dirs.iter().any(inside), "{dirs:?}");
    }

    #[test]
    fn a_missing_or_failing_python_says_so() {
        let missing = query(OsStr::new("/nonexistent/python3"), TIMEOUT).unwrap_err();
        assert_eq!(missing, "no /nonexistent/python3 on PATH");
        let dir = tempfile::tempdir().unwrap();
        let py = script(dir.path(), "exit 3");
        let failed = query(py.as_os_str(), TIMEOUT).unwrap_err();
        assert!(failed.contains("failed (exit status: 3)"), "{failed}");
    }
}

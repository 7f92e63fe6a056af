//! Facts about the machine this process runs on: its host name (short, as nccl-tests prints
//! and hashes it, and full) and the memory the kernel says is available. One copy here so the
//! backends, the job setup, the environment record and the acceptance suite agree.
//!
//! Two sources of the name remain on purpose. The host backend, the MPI job and the local-rank
//! hash read `/proc/sys/kernel/hostname` and fall back to `$HOSTNAME`, then `localhost`; the
//! NCCL backend's failure lines, the `%h` of `NCCL_DEBUG_FILE` that tuning expands, and the
//! environment record and redactor ask gethostname(2) as nccl-tests does, with `localhost`
//! only when the call fails. On Linux both give the same name; they differ only when /proc is
//! missing or the name is empty, and each caller keeps what it printed before.

/// `name` up to its first '.', as nccl-tests cuts the host name it prints and hashes.
pub fn short(name: &str) -> &str {
    name.split('.').next().unwrap_or_default()
}

/// The kernel's host name from `/proc/sys/kernel/hostname`, trimmed; `None` when unreadable
/// or empty.
fn kernel_hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The short host name from /proc, else `$HOSTNAME`, else `localhost`.
pub fn short_hostname() -> String {
    let full = kernel_hostname()
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "localhost".to_string());
    short(&full).to_string()
}

/// The host name as the system has it (possibly with its domain); empty when /proc has none,
/// so a redactor given it adds no name.
pub fn full_hostname() -> String {
    kernel_hostname().unwrap_or_default()
}

/// The short host name from gethostname(2), as nccl-tests prefixes its failure lines;
/// `localhost` when the call fails.
pub fn gethostname_short() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    short(&String::from_utf8_lossy(&buf[..end])).to_string()
}

/// `MemAvailable` from /proc/meminfo, in bytes; `None` when unreadable or absent.
pub fn mem_available() -> Option<u64> {
    mem_available_in(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemAvailable` of a /proc/meminfo text (given in KiB), in bytes.
fn mem_available_in(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_cuts_at_the_first_dot() {
        assert_eq!(short("node7.cluster.example"), "node7");
        assert_eq!(short("node7"), "node7");
        assert_eq!(short(""), "");
    }

    #[test]
    fn the_names_agree_with_the_system() {
        let s = short_hostname();
        assert!(!s.is_empty() && !s.contains('.'));
        if let Some(full) = kernel_hostname() {
            assert_eq!(full_hostname(), full);
            assert_eq!(s, short(&full));
            assert_eq!(gethostname_short(), s);
        }
    }

    #[test]
    fn mem_available_reads_kib_as_bytes() {
        let text = "MemTotal:       16000 kB\nMemAvailable:    2048 kB\n";
        assert_eq!(mem_available_in(text), Some(2048 * 1024));
        assert_eq!(mem_available_in("MemTotal: 1 kB\n"), None);
        assert_eq!(mem_available_in("MemAvailable: x kB\n"), None);
    }
}

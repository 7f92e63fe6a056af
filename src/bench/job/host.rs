//! Host identity for local ranks, as nccl-tests: a djb2-style hash (start 5381, `h*33 ^ byte`)
//! of the short host name followed by `/proc/sys/kernel/random/boot_id`. A process's local
//! rank is the number of lower world ranks whose hash equals its own (so two containers with
//! one host name but different kernels count apart, and one host counts together).

/// The hash of `name` + `boot_id`.
pub fn hash(name: &str, boot_id: &str) -> u64 {
    name.bytes()
        .chain(boot_id.bytes())
        .fold(5381u64, |h, b| h.wrapping_mul(33) ^ u64::from(b))
}

/// This host's hash.
pub fn this_host() -> u64 {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    hash(&crate::core::host::short_hostname(), boot.trim())
}

/// The local rank of world rank `rank` given every rank's host hash.
pub fn local_rank(hashes: &[u64], rank: usize) -> usize {
    let mine = hashes.get(rank).copied();
    hashes[..rank.min(hashes.len())]
        .iter()
        .filter(|h| Some(**h) == mine)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_rank_counts_lower_ranks_of_the_same_host() {
        let (a, b) = (hash("node1", "x"), hash("node2", "x"));
        assert_ne!(a, b);
        assert_ne!(hash("node1", "x"), hash("node1", "y"));
        let hs = [a, b, a, a, b];
        let got: Vec<usize> = (0..5).map(|r| local_rank(&hs, r)).collect();
        assert_eq!(got, [0, 0, 1, 2, 1]);
    }
}

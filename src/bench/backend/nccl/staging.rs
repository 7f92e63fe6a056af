//! The host bytes the NCCL backend copies through for host fills and inspections
//! (`--verify host`): one buffer kept for the backend's life and handed out again, grown only
//! when a larger range is asked for and never cleared, since every fill writes and every read
//! overwrites the bytes it is given. Clearing it per call zero-filled up to the whole buffer
//! size (8 GiB at the largest sizes) twice per verified call. Host verification asks for at
//! most `verify::HOST_CHUNK_BYTES` at a time, which bounds its size.

/// A reusable host buffer.
#[derive(Debug, Default)]
pub(super) struct Staging {
    bytes: Vec<u8>,
}

impl Staging {
    /// `len` bytes, holding whatever the previous user left in them.
    pub(super) fn take(&mut self, len: usize) -> &mut [u8] {
        if self.bytes.len() < len {
            // Zeroed once, when it grows; never again.
            self.bytes.resize(len, 0);
        }
        &mut self.bytes[..len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_is_reused_without_reallocating_or_clearing() {
        let mut s = Staging::default();
        let first = s.take(1 << 20);
        first.fill(7);
        let at = first.as_ptr();
        for len in [1 << 20, 4096, 1, 1 << 20] {
            let again = s.take(len);
            assert_eq!(again.len(), len);
            assert_eq!(again.as_ptr(), at, "reallocated for {len} bytes");
            assert!(again.iter().all(|&b| b == 7), "cleared for {len} bytes");
        }
    }

    #[test]
    fn it_grows_for_a_larger_range() {
        let mut s = Staging::default();
        s.take(16).fill(1);
        let big = s.take(64);
        assert_eq!(big.len(), 64);
        assert_eq!(&big[..16], &[1; 16], "the old bytes are kept");
    }
}

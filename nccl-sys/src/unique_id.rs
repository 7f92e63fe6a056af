//! `ncclUniqueId` as plain bytes, the form ranks exchange (threads, or processes over MPI).

use crate::bindings::{ncclUniqueId, NCCL_UNIQUE_ID_BYTES};

/// Number of bytes in an NCCL unique id.
pub const UNIQUE_ID_BYTES: usize = NCCL_UNIQUE_ID_BYTES as usize;

/// An `ncclUniqueId` as bytes, to hand to the other ranks (threads, or processes over MPI).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct UniqueId(pub [u8; UNIQUE_ID_BYTES]);

impl UniqueId {
    /// The id's bytes.
    pub fn as_bytes(&self) -> &[u8; UNIQUE_ID_BYTES] {
        &self.0
    }

    /// The C struct to pass to `ncclCommInitRank`.
    pub fn to_raw(&self) -> ncclUniqueId {
        let mut raw = ncclUniqueId::default();
        for (dst, src) in raw.internal.iter_mut().zip(self.0) {
            *dst = src as std::ffi::c_char;
        }
        raw
    }

    /// The bytes of a C `ncclUniqueId`.
    pub fn from_raw(raw: &ncclUniqueId) -> Self {
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (dst, src) in bytes.iter_mut().zip(raw.internal) {
            *dst = src as u8;
        }
        Self(bytes)
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UniqueId(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_ids_round_trip_through_the_c_struct() {
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i * 37 % 256) as u8;
        }
        let id = UniqueId(bytes);
        assert_eq!(UniqueId::from_raw(&id.to_raw()), id);
        assert!(format!("{id:?}").starts_with("UniqueId(00254a6f"));
    }
}

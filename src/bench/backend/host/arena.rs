//! The ranks' buffers, and the only `unsafe` code of the host backend.
//!
//! Every rank owns a send and a receive allocation (zero-filled, 8-byte aligned). The worker
//! threads read and write all of them at once through raw pointers; that is sound because of
//! the execution protocol in [`super::exec`]: within one barrier-delimited phase of a call, the
//! plan ([`super::plan`]) gives every thread byte ranges that no other thread writes (checked
//! for every collective by the race tests), and the barriers order one phase's writes before
//! the next phase's (and the next call's) reads. Outside calls, the backend holds the only
//! reference and accesses the bytes through `&mut self`.

use super::plan::Loc;
use crate::bench::backend::Buf;
use crate::core::error::Error;
use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// One zero-filled allocation.
struct Region {
    ptr: NonNull<u8>,
    bytes: usize,
}

impl Region {
    fn zeroed(bytes: usize) -> Result<Region, Error> {
        if bytes == 0 {
            return Ok(Region {
                ptr: NonNull::<u64>::dangling().cast(),
                bytes,
            });
        }
        let layout = layout(bytes)?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::Backend(format!("host backend: cannot allocate {bytes} bytes"))
        })?;
        Ok(Region { ptr, bytes })
    }
}

fn layout(bytes: usize) -> Result<Layout, Error> {
    Layout::from_size_align(bytes, 8)
        .map_err(|_| Error::Backend(format!("host backend: cannot allocate {bytes} bytes")))
}

impl Drop for Region {
    fn drop(&mut self) {
        if self.bytes > 0 {
            if let Ok(layout) = layout(self.bytes) {
                // SAFETY: allocated in `zeroed` with this very layout, freed once.
                unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) };
            }
        }
    }
}

/// Every rank's send and receive allocation.
pub(super) struct Arena {
    /// `[send, recv]` per rank.
    ranks: Vec<[Region; 2]>,
}

// SAFETY: the arena owns plain bytes; concurrent access follows the protocol in the module doc,
// and the raw accessors are `unsafe fn`s whose callers uphold it.
unsafe impl Send for Arena {}
// SAFETY: as above.
unsafe impl Sync for Arena {}

fn slot(buf: Buf) -> usize {
    match buf {
        Buf::Send => 0,
        Buf::Recv => 1,
    }
}

fn out_of_bounds(rank: usize, buf: Buf, offset: usize, len: usize, size: usize) -> Error {
    Error::Backend(format!(
        "host backend: bytes {offset}..{offset}+{len} of rank {rank}'s {buf:?} buffer are \
         outside its {size} bytes"
    ))
}

impl Arena {
    /// Zero-filled allocations of the given sizes for `nranks` ranks.
    pub(super) fn new(nranks: usize, send_bytes: usize, recv_bytes: usize) -> Result<Arena, Error> {
        let ranks = (0..nranks)
            .map(|_| Ok([Region::zeroed(send_bytes)?, Region::zeroed(recv_bytes)?]))
            .collect::<Result<_, Error>>()?;
        Ok(Arena { ranks })
    }

    /// Size in bytes of one allocation (0 for a rank that does not exist).
    pub(super) fn len(&self, rank: usize, buf: Buf) -> usize {
        self.ranks.get(rank).map_or(0, |r| r[slot(buf)].bytes)
    }

    /// Start of `len` bytes at `offset`, or an error when they are not all inside.
    fn span(&self, rank: usize, buf: Buf, offset: usize, len: usize) -> Result<*mut u8, Error> {
        let size = self.len(rank, buf);
        match offset.checked_add(len) {
            Some(end) if end <= size => {
                let region = &self.ranks[rank][slot(buf)];
                // SAFETY: offset <= size, so the result stays inside (or one past) the region.
                Ok(unsafe { region.ptr.as_ptr().add(offset) })
            }
            _ => Err(out_of_bounds(rank, buf, offset, len, size)),
        }
    }

    /// Exclusive access to bytes of one allocation, for filling and inspecting while idle.
    pub(super) fn bytes_mut(
        &mut self,
        rank: usize,
        buf: Buf,
        offset: usize,
        len: usize,
    ) -> Result<&mut [u8], Error> {
        let p = self.span(rank, buf, offset, len)?;
        // SAFETY: in bounds, and `&mut self` excludes every other access for the borrow's life.
        Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
    }

    /// Shared view of `len` bytes at `loc`.
    ///
    /// # Safety
    /// No thread may write these bytes while the returned slice lives.
    pub(super) unsafe fn read(&self, loc: Loc, len: usize) -> Result<&[u8], Error> {
        let p = self.span(loc.rank, loc.buf, loc.offset, len)?;
        // SAFETY: in bounds; the caller excludes concurrent writes.
        Ok(unsafe { std::slice::from_raw_parts(p, len) })
    }

    /// Copies `data` (which must not point into the arena) to `loc`.
    ///
    /// # Safety
    /// No other thread may read or write the destination bytes during the call.
    pub(super) unsafe fn write(&self, loc: Loc, data: &[u8]) -> Result<(), Error> {
        let p = self.span(loc.rank, loc.buf, loc.offset, data.len())?;
        // SAFETY: in bounds; `data` is caller memory outside the arena, so no overlap; the
        // caller excludes concurrent access to the destination.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        Ok(())
    }

    /// Copies `len` bytes from `src` to `dst`; the two may overlap (memmove).
    ///
    /// # Safety
    /// No other thread may write the source or read or write the destination during the call.
    pub(super) unsafe fn copy(&self, src: Loc, dst: Loc, len: usize) -> Result<(), Error> {
        let s = self.span(src.rank, src.buf, src.offset, len)?;
        let d = self.span(dst.rank, dst.buf, dst.offset, len)?;
        if s != d {
            // SAFETY: both in bounds; `copy` allows overlap; the caller excludes races.
            unsafe { std::ptr::copy(s, d, len) };
        }
        Ok(())
    }
}

//! One block's pieces: where a block is cut, each piece scanned and parsed on its own (its
//! own learned shapes and sources, its records into memory reused from block to block), and
//! the pieces' records moved to the end of the file's, in order.

use super::fast;
use super::intern::Interner;
use super::json::{parse, Parsed};
use super::split::{scan, Found};
use super::tally::Tally;
use crate::analysis::inspector::record::Record;
use crate::analysis::inspector::Arena;
use memchr::memmem;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Bytes per piece parsed by one task.
const PIECE: usize = 512 << 10;

/// What one piece held.
pub(super) struct PieceOut<'a> {
    pub(super) tally: Tally<'a>,
    /// The shapes learned, the piece's start's and its own.
    pub(super) shapes: fast::Shapes<'a>,
    /// Bytes of the piece consumed (less than its length: an object open at its end).
    pub(super) consumed: usize,
}

/// Scans and parses one piece whose first byte is at `base` in `file`, its records into
/// `records` (an empty vector whose memory is reused), starting from the shapes `shapes`
/// (learned from the same file).
pub(super) fn piece<'a>(
    bytes: &[u8],
    base: u64,
    file: &Arc<PathBuf>,
    records: Vec<Record<'a>>,
    arena: &'a Arena,
    mut shapes: fast::Shapes<'a>,
) -> PieceOut<'a> {
    let mut tally = Tally::default();
    tally.records = records;
    // Record objects are at least 200 bytes (header, section and the required fields).
    tally.records.reserve(bytes.len() / 200);
    // Shared by the fast path and serde's, which take turns; so is the tally.
    let sources = RefCell::new(Interner::new(arena));
    let tally = RefCell::new(tally);
    let add = |at: usize, parsed: Parsed<'a>| {
        let mut tally = tally.borrow_mut();
        match parsed {
            Parsed::Record(r, verbose) => tally.record(r, verbose),
            Parsed::OtherKind(kind) => tally.other_kind(kind),
            Parsed::Skip(reason) => tally.skip(base + at as u64, reason),
        }
    };
    // The fast path builds a record read along a shape where the tally keeps it: a record is
    // large, and each move of it on the way to the piece's records was a copy of its own.
    let consumed = scan(
        bytes,
        |text| {
            let mut parsed = None;
            let len = shapes.record_into(
                text,
                file,
                &mut sources.borrow_mut(),
                &mut tally.borrow_mut(),
                &mut parsed,
            )?;
            if let Some(parsed) = parsed {
                add(text.as_ptr() as usize - bytes.as_ptr() as usize, parsed);
            }
            Some((len, ()))
        },
        |found| match found {
            Found::Read { .. } => {}
            Found::Object { at, text } => add(at, parse(text, file, &mut sources.borrow_mut())),
            Found::Garbage { at, reason } => tally.borrow_mut().skip(base + at as u64, reason),
        },
    );
    let tally = tally.into_inner();
    PieceOut {
        tally,
        consumed,
        shapes,
    }
}

/// Where the pieces of `data` start.
pub(super) fn cuts(data: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    let mut at = PIECE;
    while at < data.len() {
        match memmem::find(&data[at..], b"\n{") {
            Some(k) => {
                starts.push(at + k + 1);
                at += k + 1 + PIECE;
            }
            None => break,
        }
    }
    starts
}

/// Moves the records of `pieces` to the end of `to`, in order, each piece into its own part of
/// `to`'s memory on its own thread: the move is mostly faulting in that memory, and done on
/// one thread it held the other cores idle between blocks. The pieces are left empty, their
/// memory kept for the next block's.
pub(super) fn append<'a>(to: &mut Vec<Record<'a>>, pieces: &mut [Vec<Record<'a>>]) {
    let total: usize = pieces.iter().map(Vec::len).sum();
    to.reserve(total);
    let len = to.len();
    let mut rest = &mut to.spare_capacity_mut()[..total];
    let mut jobs = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(piece.len());
        jobs.push(Mutex::new(Some((part, piece))));
        rest = tail;
    }
    crate::core::parallel::map(&jobs, |job| {
        let mut job = job.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (part, piece) = job.take().expect("each piece is moved once");
        // One copy of the whole piece: record by record, it was a call to the C library's
        // `memcpy` per record.
        // SAFETY: `part` has room for exactly `piece.len()` records and does not overlap
        // `piece`; the records are moved out of `piece` (its length is set to zero without
        // dropping them), so each is owned once, by `part`.
        unsafe {
            std::ptr::copy_nonoverlapping(piece.as_ptr(), part.as_mut_ptr().cast(), piece.len());
            piece.set_len(0);
        }
    });
    // Every job ran (a panic in one would have unwound past this point): each wrote all of
    // its part, and the parts cover the `total` slots after `len`.
    // SAFETY: those slots are initialised records, so `len + total` elements are.
    unsafe { to.set_len(len + total) }
}

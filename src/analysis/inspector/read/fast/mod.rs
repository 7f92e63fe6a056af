//! The plugin's record objects read in one pass without serde: the common case (keys and
//! strings of printable ASCII without escapes, unsigned integers, plain decimals) is walked by
//! hand into the same [`Raw`] the serde path builds, and anything else gives up (`None`) so the
//! serde path reads the object and has the last word, errors and their wording included.
//!
//! So the fast path must never accept what serde would read differently. It takes only
//! well-formed JSON (the grammar is checked in skipped values too), gives up on a known field
//! written twice inside a section (serde's derive refuses that), on a value of a type serde's
//! struct would not take, on escapes, control or non-ASCII bytes in strings, on negative
//! numbers, exponents and integers too large for their field, and on nesting deeper than
//! [`cursor::MAX_DEPTH`]. Sections other than the known four are skipped as serde skips
//! them, the first unknown section's name kept. Decimals parse to the correctly rounded
//! `f64`, as serde_json's `float_roundtrip` does: exactly `digits / 10^k` while both are
//! exact in `f64`, else the standard library's (correctly rounding) parser. Tests hold the
//! two paths equal on mutated records. [`cursor`] holds the grammar; this module, the
//! record's sections and their fields; [`shape`], the faster reading of a record along the
//! shape of one read before (what it reads is what this module would).

mod cursor;
mod shape;

use super::json::{Header, Meta, Perf, Raw, TraceTs};
use cursor::{ascii, Cursor};
use serde::de::IgnoredAny;
pub(super) use shape::Shapes;
use shape::{Mark, Slot};

/// Reads the object at the start of `text` (`text[0] == b'{'`); its length and its content, or
/// `None` where serde must decide.
pub(super) fn raw(text: &[u8]) -> Option<(usize, Raw<'_>)> {
    object(&mut Cursor::new(text))
}

/// [`raw`], noting in `marks` where each value lay (for [`shape`]); `marks` comes back in any
/// case for its memory to be reused.
pub(super) fn raw_marked(text: &[u8], marks: Vec<Mark>) -> (Option<(usize, Raw<'_>)>, Vec<Mark>) {
    let mut c = Cursor::learning(text, marks);
    let read = object(&mut c);
    (read, c.into_marks())
}

fn object<'a>(c: &mut Cursor<'a>) -> Option<(usize, Raw<'a>)> {
    let mut raw = Raw::default();
    c.members(|c, key| {
        match key {
            b"header" => {
                c.begin(Slot::Header);
                raw.header = Some(c.section(header)?);
            }
            b"metadata" => {
                c.begin(Slot::Meta);
                raw.metadata = Some(c.section(meta)?);
            }
            b"coll_perf" => {
                c.begin(Slot::Coll);
                raw.coll = Some(c.section(perf)?);
            }
            b"p2p_perf" => {
                c.begin(Slot::P2p);
                raw.p2p = Some(c.section(perf)?);
            }
            other => {
                // The section's name is kept, which a shape does not replay.
                c.begin(Slot::Never);
                if raw.other.is_none() {
                    raw.other = Some(ascii(other).to_string());
                }
                c.skip(1)?;
            }
        }
        Some(())
    })?;
    Some((c.at(), raw))
}

/// Marks field `bit` as seen; `None` when it was (serde refuses a duplicate field).
fn once(seen: &mut u32, bit: u32) -> Option<()> {
    if *seen & bit != 0 {
        return None;
    }
    *seen |= bit;
    Some(())
}

/// Stores the value read for field `bit` in `slot`, once.
fn put<T>(seen: &mut u32, bit: u32, slot: &mut T, value: Option<T>) -> Option<()> {
    once(seen, bit)?;
    *slot = value?;
    Some(())
}

fn header<'a>(c: &mut Cursor<'a>) -> Option<Header<'a>> {
    let (mut h, mut seen) = (Header::default(), 0);
    c.members(|c, key| {
        match key {
            b"id" => put(&mut seen, 1, &mut h.id, c.slot(Slot::Id, Cursor::opt_str))?,
            b"comm_name" => put(
                &mut seen,
                2,
                &mut h.comm_name,
                c.slot(Slot::CommName, Cursor::opt_str),
            )?,
            b"rank" => put(
                &mut seen,
                4,
                &mut h.rank,
                c.slot(Slot::Rank, Cursor::opt_u32),
            )?,
            b"n_ranks" => put(
                &mut seen,
                8,
                &mut h.n_ranks,
                c.slot(Slot::NRanks, Cursor::opt_u32),
            )?,
            b"nnodes" => put(
                &mut seen,
                16,
                &mut h.nnodes,
                c.slot(Slot::NNodes, Cursor::opt_u32),
            )?,
            _ => c.slot(Slot::Skip2, |c| c.skip(2))?,
        }
        Some(())
    })?;
    Some(h)
}

fn meta<'a>(c: &mut Cursor<'a>) -> Option<Meta<'a>> {
    let (mut m, mut seen) = (Meta::default(), 0);
    c.members(|c, key| {
        match key {
            b"inspector_output_format_version" => put(
                &mut seen,
                1,
                &mut m.inspector_output_format_version,
                c.slot(Slot::Version, Cursor::opt_str),
            )?,
            b"dump_timestamp_us" => put(
                &mut seen,
                2,
                &mut m.dump_timestamp_us,
                c.slot(Slot::Timestamp, Cursor::opt_u64),
            )?,
            b"hostname" => put(
                &mut seen,
                4,
                &mut m.hostname,
                c.slot(Slot::Host, Cursor::opt_str),
            )?,
            b"pid" => put(&mut seen, 8, &mut m.pid, c.slot(Slot::Pid, Cursor::opt_u32))?,
            _ => c.slot(Slot::Skip2, |c| c.skip(2))?,
        }
        Some(())
    })?;
    Some(m)
}

fn perf<'a>(c: &mut Cursor<'a>) -> Option<Perf<'a>> {
    let (mut p, mut seen) = (Perf::default(), 0);
    c.members(|c, key| {
        match key {
            b"coll" | b"p2p" => put(
                &mut seen,
                1,
                &mut p.coll,
                c.slot(Slot::Name, Cursor::opt_str),
            )?,
            b"coll_sn" | b"p2p_sn" => put(
                &mut seen,
                2,
                &mut p.coll_sn,
                c.slot(Slot::Seq, Cursor::opt_u64),
            )?,
            b"p2p_peer" => put(
                &mut seen,
                4,
                &mut p.p2p_peer,
                c.slot(Slot::Peer, Cursor::opt_u32),
            )?,
            b"coll_msg_size_bytes" | b"p2p_msg_size_bytes" => put(
                &mut seen,
                8,
                &mut p.coll_msg_size_bytes,
                c.slot(Slot::Bytes, Cursor::opt_u64),
            )?,
            b"coll_exec_time_us" | b"p2p_exec_time_us" => put(
                &mut seen,
                16,
                &mut p.coll_exec_time_us,
                c.slot(Slot::Time, Cursor::opt_f64),
            )?,
            b"coll_timing_source" | b"p2p_timing_source" => put(
                &mut seen,
                32,
                &mut p.coll_timing_source,
                c.slot(Slot::Timing, Cursor::opt_str),
            )?,
            b"coll_algobw_gbs" | b"p2p_algobw_gbs" => put(
                &mut seen,
                64,
                &mut p.coll_algobw_gbs,
                c.slot(Slot::AlgBw, Cursor::bandwidth),
            )?,
            b"coll_busbw_gbs" | b"p2p_busbw_gbs" => put(
                &mut seen,
                128,
                &mut p.coll_busbw_gbs,
                c.slot(Slot::BusBw, Cursor::bandwidth),
            )?,
            b"event_trace_sn" => {
                // Verbose records are rare enough to be read field by field.
                c.begin(Slot::Never);
                once(&mut seen, 256)?;
                p.event_trace_sn = if c.null()? {
                    None
                } else {
                    c.skip(2)?;
                    Some(IgnoredAny)
                };
            }
            b"event_trace_ts" => {
                c.begin(Slot::Never);
                once(&mut seen, 512)?;
                p.event_trace_ts = if c.null()? {
                    None
                } else {
                    Some(c.object(2, trace_ts)?)
                };
            }
            _ => c.slot(Slot::Skip2, |c| c.skip(2))?,
        }
        Some(())
    })?;
    Some(p)
}

fn trace_ts(c: &mut Cursor<'_>) -> Option<TraceTs> {
    let (mut t, mut seen) = (TraceTs::default(), 0);
    c.members(|c, key| {
        match key {
            b"coll_start_ts" | b"p2p_start_ts" => {
                put(&mut seen, 1, &mut t.coll_start_ts, c.opt_u64())?
            }
            _ => c.skip(3)?,
        }
        Some(())
    })?;
    Some(t)
}

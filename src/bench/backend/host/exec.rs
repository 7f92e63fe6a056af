//! Runs one call on one rank's worker thread: check, plan, then the phases between barriers.
//!
//! Every worker runs the same deterministic check and gets the same number of phases, so all
//! of them meet at the same barriers (or all skip the call). One barrier precedes the first
//! phase (so no read of this call races with a write of the previous one) and one follows
//! every phase; staged phases add one between their reads and their writes. This file is the
//! only caller of the arena's `unsafe` accessors, and each call relies on that protocol.

use super::arena::Arena;
use super::barrier::Barrier;
use super::plan::{self, Loc, Op};
use crate::bench::backend::Call;
use crate::core::error::Error;
use crate::core::reduce::reduce;

/// Bytes reduced at a time: small enough to stay in cache while every rank's chunk is folded
/// in and the result is written out; a multiple of every element size.
const CHUNK: usize = 32 << 10;

/// A worker's reusable buffers.
#[derive(Default)]
pub(super) struct Scratch {
    /// Inputs set aside by a staged phase.
    stage: Vec<u8>,
    /// One reduced chunk.
    acc: Vec<u8>,
}

/// Executes `rank`'s part of `call`. A failure after the check breaks the barrier, so the other
/// workers stop instead of waiting for this one.
pub(super) fn run(
    rank: usize,
    nranks: usize,
    call: &Call,
    arena: &Arena,
    barrier: &Barrier,
    scratch: &mut Scratch,
) -> Result<(), Error> {
    plan::check(call, nranks, |r, b| arena.len(r, b))?;
    let phases = plan::phases(call, rank, nranks);
    if phases.is_empty() {
        return Ok(());
    }
    let direct = plan::direct_ok(call, nranks);
    let result = run_phases(call, &phases, direct, arena, barrier, scratch);
    if result.is_err() {
        barrier.break_all();
    }
    result
}

fn sync(barrier: &Barrier) -> Result<(), Error> {
    barrier
        .wait()
        .map_err(|_| Error::Backend("host backend stopped after a worker failure".into()))
}

fn run_phases(
    call: &Call,
    phases: &[Vec<Op>],
    direct: bool,
    arena: &Arena,
    barrier: &Barrier,
    scratch: &mut Scratch,
) -> Result<(), Error> {
    sync(barrier)?;
    for ops in phases {
        if direct {
            for op in ops {
                run_direct(call, op, arena, &mut scratch.acc)?;
            }
        } else {
            stage(call, ops, arena, &mut scratch.stage)?;
            sync(barrier)?;
            unstage(call, ops, arena, scratch)?;
        }
        sync(barrier)?;
    }
    Ok(())
}

/// Runs one op in place. Within the phase no other thread writes what it reads or touches what
/// it writes; a reduce whose destination coincides with one of its own sources reads each chunk
/// before writing it.
fn run_direct(call: &Call, op: &Op, arena: &Arena, acc: &mut Vec<u8>) -> Result<(), Error> {
    match op {
        // SAFETY: the plan protocol (module doc) excludes other threads' access; memmove
        // handles this op's own overlap.
        Op::Copy { src, dst, bytes } => unsafe { arena.copy(*src, *dst, *bytes) },
        Op::Reduce { src, dst, elems } => {
            let total = elems * call.dtype.size();
            let mut done = 0;
            while done < total {
                let len = CHUNK.min(total - done);
                acc.resize(len, 0);
                let inputs = src
                    .iter()
                    // SAFETY: no thread writes these bytes until this thread writes the chunk
                    // below, after the slices are dropped.
                    .map(|l| unsafe { arena.read(l.add(done), len) })
                    .collect::<Result<Vec<_>, _>>()?;
                reduce(call.dtype, call.op, &inputs, &mut acc[..len]);
                drop(inputs);
                write_all(arena, dst, done, &acc[..len])?;
                done += len;
            }
            Ok(())
        }
    }
}

fn write_all(arena: &Arena, dst: &[Loc], at: usize, data: &[u8]) -> Result<(), Error> {
    for d in dst {
        // SAFETY: only this thread touches the destination in this phase, and `data` is this
        // thread's scratch memory.
        unsafe { arena.write(d.add(at), data)? };
    }
    Ok(())
}

/// Copies every input of the phase's ops aside (staged phase, before the barrier).
fn stage(call: &Call, ops: &[Op], arena: &Arena, stage: &mut Vec<u8>) -> Result<(), Error> {
    stage.clear();
    let mut take = |l: Loc, len: usize| {
        // SAFETY: in the read half of a staged phase no thread writes the arena.
        let bytes = unsafe { arena.read(l, len)? };
        stage.extend_from_slice(bytes);
        Ok::<(), Error>(())
    };
    for op in ops {
        match op {
            Op::Copy { src, bytes, .. } => take(*src, *bytes)?,
            Op::Reduce { src, elems, .. } => {
                for l in src {
                    take(*l, elems * call.dtype.size())?;
                }
            }
        }
    }
    Ok(())
}

/// Writes the results of the phase's ops from the staged inputs (after the barrier).
fn unstage(call: &Call, ops: &[Op], arena: &Arena, scratch: &mut Scratch) -> Result<(), Error> {
    let (stage, acc) = (&scratch.stage, &mut scratch.acc);
    let mut at = 0;
    for op in ops {
        match op {
            Op::Copy { dst, bytes, .. } => {
                write_all(arena, std::slice::from_ref(dst), 0, &stage[at..at + bytes])?;
                at += bytes;
            }
            Op::Reduce { src, dst, elems } => {
                let total = elems * call.dtype.size();
                let inputs: Vec<&[u8]> = (0..src.len())
                    .map(|j| &stage[at + j * total..at + (j + 1) * total])
                    .collect();
                let mut done = 0;
                while done < total {
                    let len = CHUNK.min(total - done);
                    acc.resize(len, 0);
                    let chunk: Vec<&[u8]> = inputs.iter().map(|s| &s[done..done + len]).collect();
                    reduce(call.dtype, call.op, &chunk, &mut acc[..len]);
                    write_all(arena, dst, done, &acc[..len])?;
                    done += len;
                }
                at += src.len() * total;
            }
        }
    }
    Ok(())
}

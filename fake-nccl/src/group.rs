//! `ncclGroupStart`/`ncclGroupEnd`: a per-thread depth; ops issued inside are held and placed
//! on their streams (one batch per stream, in issue order) at the outermost end. A call made
//! outside any group is a group of its own, as in NCCL.
//!
//! From NCCL 2.28 a window registered inside a group gets its handle at the outermost end
//! ([`write_at_end`]), not at the call.
//!
//! Two failures surface at the group's end, as NCCL reports them: an init refused once every
//! rank has joined (two ranks on one GPU), held by [`defer`] while the init call itself
//! succeeds; and a send to self without a receive from self in the same group, or the reverse
//! (NCCL pairs them when it schedules the group and refuses the group with ncclInvalidUsage).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use crate::engine::{place_batch, progress, Kind, Op};
use crate::state::*;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static PENDING: RefCell<Vec<(u64, Op)>> = const { RefCell::new(Vec::new()) };
    static DEFERRED: RefCell<Option<NcclError>> = const { RefCell::new(None) };
    static HANDLES: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
}

/// The calling thread's group depth.
pub fn depth() -> u32 {
    DEPTH.with(Cell::get)
}

/// Holds `op` for `stream` until the outermost group end.
pub fn hold(stream: u64, op: Op) {
    PENDING.with(|p| p.borrow_mut().push((stream, op)));
}

/// Keeps the first error of a call inside the group for the outermost `ncclGroupEnd`.
pub fn defer(e: NcclError) {
    DEFERRED.with(|d| {
        d.borrow_mut().get_or_insert(e);
    });
}

/// Holds a handle NCCL writes only at the outermost group end (a window registered inside a
/// group, from 2.28): `out` must stay valid until then, as NCCL requires.
pub fn write_at_end(out: *mut *mut std::ffi::c_void, h: *mut std::ffi::c_void) {
    HANDLES.with(|p| p.borrow_mut().push((out as usize, h as usize)));
}

/// Writes the handles held by [`write_at_end`].
fn write_handles() {
    for (out, h) in HANDLES.with(|p| std::mem::take(&mut *p.borrow_mut())) {
        // SAFETY: a non-NULL out-pointer the caller keeps valid until the group's end (NCCL's
        // contract for handles written there).
        unsafe { (out as *mut *mut std::ffi::c_void).write_unaligned(h as *mut std::ffi::c_void) };
    }
}

/// NCCL's refusal of a group whose sends to self and receives from self do not pair up.
fn check_self_p2p(ops: &[(u64, Op)]) -> Result<(), NcclError> {
    // Per comm: self sends minus self receives.
    let mut balance: HashMap<u64, i64> = HashMap::new();
    for (_, op) in ops {
        if op.peer == op.rank as i32 {
            match op.kind {
                Kind::Send => *balance.entry(op.comm).or_default() += 1,
                Kind::Recv => *balance.entry(op.comm).or_default() -= 1,
                _ => {}
            }
        }
    }
    if balance.values().any(|&b| b > 0) {
        return nccl_err(
            NCCL_INVALID_USAGE,
            "Trying to send to self without a matching recv",
        );
    }
    if balance.values().any(|&b| b < 0) {
        return nccl_err(
            NCCL_INVALID_USAGE,
            "Trying to recv to self without a matching send",
        );
    }
    Ok(())
}

/// Places ops issued together: one batch per stream, streams in first-use order. A group
/// NCCL would refuse places nothing.
pub fn place_all(st: &mut State, ops: Vec<(u64, Op)>) -> Result<(), NcclError> {
    check_self_p2p(&ops)?;
    let mut batches: Vec<(u64, Vec<Op>)> = Vec::new();
    for (stream, op) in ops {
        crate::debuglog::on_launch(st, &op);
        match batches.iter_mut().find(|(s, _)| *s == stream) {
            Some((_, b)) => b.push(op),
            None => batches.push((stream, vec![op])),
        }
    }
    for (stream, ops) in batches {
        place_batch(st, stream, ops);
    }
    progress(st);
    Ok(())
}

/// `ncclGroupStart()`.
#[no_mangle]
pub extern "C" fn ncclGroupStart() -> NcclResult {
    nccl_guard(|| {
        crate::trace::line("ncclGroupStart", &[("group", depth().to_string())]);
        DEPTH.with(|d| d.set(d.get() + 1));
        Ok(())
    })
}

/// `ncclGroupEnd()`: ncclInvalidUsage without a matching start; at the outermost end, a
/// deferred init failure, or the refusal of the group's ops.
#[no_mangle]
pub extern "C" fn ncclGroupEnd() -> NcclResult {
    nccl_guard(|| {
        crate::trace::line("ncclGroupEnd", &[("group", depth().to_string())]);
        if depth() == 0 {
            return nccl_err(NCCL_INVALID_USAGE, "ncclGroupEnd without ncclGroupStart");
        }
        DEPTH.with(|d| d.set(d.get() - 1));
        if depth() == 0 {
            write_handles();
            let ops = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
            if let Some(e) = DEFERRED.with(|d| d.borrow_mut().take()) {
                return Err(e);
            }
            let mut st = crate::split::check_at_group_end(state())?;
            place_all(&mut st, ops)?;
        }
        Ok(())
    })
}

//! `ncclGroupStart`/`ncclGroupEnd`: a per-thread depth; ops issued inside are held and placed
//! on their streams (one batch per stream, in issue order) at the outermost end.

use std::cell::{Cell, RefCell};

use crate::engine::{place_batch, progress, Op};
use crate::state::*;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static PENDING: RefCell<Vec<(u64, Op)>> = const { RefCell::new(Vec::new()) };
}

/// The calling thread's group depth.
pub fn depth() -> u32 {
    DEPTH.with(Cell::get)
}

/// Holds `op` for `stream` until the outermost group end.
pub fn hold(stream: u64, op: Op) {
    PENDING.with(|p| p.borrow_mut().push((stream, op)));
}

/// Places ops issued together: one batch per stream, streams in first-use order.
pub fn place_all(st: &mut State, ops: Vec<(u64, Op)>) {
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

/// `ncclGroupEnd()`: ncclInvalidUsage without a matching start.
#[no_mangle]
pub extern "C" fn ncclGroupEnd() -> NcclResult {
    nccl_guard(|| {
        crate::trace::line("ncclGroupEnd", &[("group", depth().to_string())]);
        if depth() == 0 {
            return nccl_err(NCCL_INVALID_USAGE, "ncclGroupEnd without ncclGroupStart");
        }
        DEPTH.with(|d| d.set(d.get() - 1));
        if depth() == 0 {
            let ops = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
            let mut st = state();
            place_all(&mut st, ops);
        }
        Ok(())
    })
}

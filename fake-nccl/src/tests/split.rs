//! `ncclCommSplit`: colours, keys, NCCL_SPLIT_NOCOLOR, the group rule, a rank that never
//! calls, version gating, and the new communicators working.

use super::nccl::{allreduce_all, per_rank_alloc};
use super::*;
use crate::config::set_version_override;
use crate::split::{ncclCommSplit, NOCOLOR};
use crate::state::*;
use std::ffi::c_int;

fn count_rank(c: Ptr) -> (c_int, c_int) {
    let (mut n, mut r) = (0, 0);
    assert_eq!(ncclCommCount(c, &mut n), 0);
    assert_eq!(ncclCommUserRank(c, &mut r), 0);
    (n, r)
}

/// `ncclCommSplit` with the handle written to `out`, a valid place for it.
fn split_into(
    comm: Ptr,
    color: c_int,
    key: c_int,
    out: &mut Ptr,
    config: *mut std::ffi::c_void,
) -> NcclResult {
    // SAFETY: `out` is a live handle slot; `config` is NULL in every call here.
    unsafe { ncclCommSplit(comm, color, key, out, config) }
}

/// Splits 4 ranks with these colours and keys inside one group.
fn split(rs: &[Rank], colors: [c_int; 4], keys: [c_int; 4]) -> Vec<Ptr> {
    let mut out = vec![std::ptr::null_mut(); 4];
    grouped(rs, |r, k| {
        split_into(
            k.comm,
            colors[r],
            keys[r],
            &mut out[r],
            std::ptr::null_mut(),
        )
    });
    out
}

#[test]
fn colours_group_ranks_ordered_by_key_and_nocolor_gets_null() {
    let rs = ranks(4);
    let new = split(&rs, [1, 0, 1, NOCOLOR], [5, 0, 2, 0]);
    assert!(new[3].is_null(), "NCCL_SPLIT_NOCOLOR: no communicator");
    assert_eq!(count_rank(new[0]), (2, 1), "key 5 after key 2");
    assert_eq!(count_rank(new[2]), (2, 0));
    assert_eq!(count_rank(new[1]), (1, 0));
    // The two-rank communicator reduces across exactly its members.
    let b = per_rank_alloc(&rs, 16, 3);
    let pair = [
        Rank {
            ctx: rs[0].ctx,
            comm: new[0],
            stream: rs[0].stream,
        },
        Rank {
            ctx: rs[2].ctx,
            comm: new[2],
            stream: rs[2].stream,
        },
    ];
    allreduce_all(&pair, &[b[0], b[2]], 4);
    sync_all(&pair);
    assert_eq!(as_i32(&d2h(b[2], 16)), vec![6; 4]);
    for c in [new[0], new[1], new[2]] {
        assert_eq!(ncclCommDestroy(c), 0);
    }
    destroy(rs);
}

#[test]
fn the_group_rule_a_missing_rank_bad_colours_and_old_versions_are_refused() {
    let rs = ranks(4);
    let mut out: Ptr = std::ptr::null_mut();
    rs[0].on();
    // Ungrouped from a thread that owns every rank: real NCCL would deadlock.
    assert_eq!(
        split_into(rs[0].comm, 0, 0, &mut out, std::ptr::null_mut()),
        NCCL_INVALID_USAGE
    );
    assert!(last_error().contains("would deadlock"), "{}", last_error());
    // Three of four ranks call: nobody else can, NCCL would hang in ncclGroupEnd.
    let mut three = [std::ptr::null_mut(); 4];
    assert_eq!(ncclGroupStart(), 0);
    for r in 1..4 {
        assert_eq!(
            split_into(rs[r].comm, 0, 0, &mut three[r], std::ptr::null_mut()),
            0
        );
    }
    assert_eq!(ncclGroupEnd(), NCCL_INVALID_USAGE);
    assert!(last_error().contains("[0]"), "{}", last_error());
    // Its handles are not usable while the split is incomplete.
    let mut n = 0;
    assert_eq!(ncclCommCount(three[1], &mut n), NCCL_INVALID_USAGE);
    assert!(last_error().contains("not ready"), "{}", last_error());
    // A negative colour other than NCCL_SPLIT_NOCOLOR.
    assert_eq!(ncclGroupStart(), 0);
    assert_eq!(
        split_into(rs[0].comm, -2, 0, &mut out, std::ptr::null_mut()),
        NCCL_INVALID_ARGUMENT
    );
    assert_eq!(ncclGroupEnd(), 0);
    set_version_override(Some(21700));
    assert_eq!(ncclGroupStart(), 0);
    assert_eq!(
        split_into(rs[0].comm, 0, 0, &mut out, std::ptr::null_mut()),
        NCCL_INVALID_USAGE
    );
    assert!(last_error().contains("2.18.0"), "{}", last_error());
    assert_eq!(ncclGroupEnd(), 0);
    set_version_override(None);
    destroy(rs);
}

//! Freeing registered memory: refused until the registration is undone (the communicator
//! would otherwise deregister freed memory at destroy), and traced with the live comms.

use super::*;
use crate::register::*;
use crate::state::{CUDA_ERROR_INVALID_VALUE, NCCL_INVALID_USAGE};

#[test]
fn registered_memory_is_freed_only_after_deregistration() {
    let rs = ranks(1);
    rs[0].on();
    let mut buf: Ptr = std::ptr::null_mut();
    assert_eq!(unsafe { ncclMemAlloc(&mut buf, 4096) }, 0);
    let mut dev = 0;
    assert_eq!(unsafe { cuMemAlloc_v2(&mut dev, 4096) }, 0);
    let (mut h, mut g) = (std::ptr::null_mut(), std::ptr::null_mut());
    assert_eq!(ncclCommRegister(rs[0].comm, buf, 4096, &mut h), 0);
    assert_eq!(ncclCommRegister(rs[0].comm, ptr(dev), 4096, &mut g), 0);
    assert_eq!(ncclMemFree(buf), NCCL_INVALID_USAGE);
    assert!(
        last_error().contains("still registered"),
        "{}",
        last_error()
    );
    assert_eq!(unsafe { cuMemFree_v2(dev) }, CUDA_ERROR_INVALID_VALUE);
    assert_eq!(ncclCommDeregister(rs[0].comm, h), 0);
    assert_eq!(ncclCommDeregister(rs[0].comm, g), 0);
    let lines = crate::trace::capture(|| assert_eq!(ncclMemFree(buf), 0));
    assert_eq!(unsafe { cuMemFree_v2(dev) }, 0);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("ncclMemFree\tdev=0\tptr=a"),
        "{lines:?}"
    );
    // Other test threads may hold comms on device 0 too: at least this one is alive.
    let live: usize = lines[0].split("\tlive_comms=").nth(1).unwrap()[..1]
        .parse()
        .unwrap();
    assert!(
        live >= 1 && lines[0].ends_with("\tregistered=0"),
        "{lines:?}"
    );
    destroy(rs);
}

/// From NCCL 2.28 a window registered inside a group gets its handle at the group's end (a
/// caller that stored it right after the call stored NULL); before, at the call. NULL or a
/// handle of nothing is refused on deregistration.
#[test]
fn a_window_registered_in_a_group_gets_its_handle_at_the_end_from_2_28() {
    use crate::state::NCCL_INVALID_ARGUMENT;
    for (version, at_call) in [(22703, true), (22800, false), (23203, false)] {
        crate::config::set_version_override(Some(version));
        let rs = ranks(1);
        rs[0].on();
        let b = alloc(4096);
        let mut win: Ptr = std::ptr::null_mut();
        assert_eq!(ncclGroupStart(), 0);
        assert_eq!(
            ncclCommWindowRegister(rs[0].comm, ptr(b), 4096, &mut win, 1),
            0
        );
        assert_eq!(!win.is_null(), at_call, "version {version}");
        assert_eq!(ncclGroupEnd(), 0);
        assert!(!win.is_null(), "version {version}");
        let null = std::ptr::null_mut();
        assert_eq!(
            ncclCommWindowDeregister(rs[0].comm, null),
            NCCL_INVALID_ARGUMENT
        );
        assert_eq!(ncclCommWindowDeregister(rs[0].comm, win), 0);
        assert_eq!(
            ncclCommWindowDeregister(rs[0].comm, win),
            NCCL_INVALID_ARGUMENT
        );
        destroy(rs);
        crate::config::set_version_override(None);
    }
}

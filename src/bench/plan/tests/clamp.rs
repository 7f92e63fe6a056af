//! nccl-tests' clamp of `-e` to device memory.

use crate::bench::plan::clamp_max_bytes;

const GIB: u64 = 1 << 30;

#[test]
fn an_80gb_h100_clamps_to_nccl_tests_published_value() {
    // cudaDeviceProp.totalGlobalMem of an H100 80GB HBM3: 4 GiB reserve, / 3 when checking.
    let mem = 85_017_624_576;
    assert_eq!(clamp_max_bytes(8 * GIB, mem, true), None);
    assert_eq!(clamp_max_bytes(64 * GIB, mem, true), Some(26_549_638_485));
    assert_eq!(
        clamp_max_bytes(64 * GIB, mem, false),
        Some((mem - 5 * GIB) / 2)
    );
}

#[test]
fn the_reserve_grows_one_gib_per_16_gib_up_to_4() {
    // 16 GiB: ceil(1) = 1 GiB reserve; 17 GiB: 2 GiB; 200 GiB: capped at 4 GiB.
    assert_eq!(clamp_max_bytes(u64::MAX, 16 * GIB, false), Some(7 * GIB));
    assert_eq!(clamp_max_bytes(u64::MAX, 17 * GIB, false), Some(7 * GIB));
    assert_eq!(
        clamp_max_bytes(u64::MAX, 200 * GIB, true),
        Some(195 * GIB / 3)
    );
    // Tiny devices leave nothing rather than underflowing.
    assert_eq!(clamp_max_bytes(8, GIB, true), Some(0));
}

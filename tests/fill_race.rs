//! Verification fills must reach the device before the collective reads them. fake-nccl lands
//! a pageable `cuMemcpyHtoD` as late as the driver allows (on the legacy stream, which a
//! non-blocking stream does not wait for), so a fill that is not ordered before the launch
//! shows as wrong elements under `-c`; every mode below must verify clean.

use crate::support::bin::{ncclbench, run};
use crate::support::fake_nccl::fake_env;

fn verifies(args: &str) {
    let mut cmd = ncclbench();
    fake_env(&mut cmd).args(args.split_whitespace());
    let r = run(&mut cmd);
    assert_eq!(r.code, Some(0), "`{args}`:\n{}\n{}", r.out, r.err);
    assert!(
        r.out.contains("# Out of bounds values : 0 OK"),
        "`{args}`:\n{}",
        r.out
    );
}

#[test]
fn fills_land_before_the_collective_on_every_stream_kind() {
    for mode in [
        "",
        "-y 1",
        "-R 1",
        "-R 2",
        "-G 2",
        "-t 2 -g 1",
        "--timer device",
    ] {
        for coll in ["all_reduce", "all_gather", "broadcast", "sendrecv"] {
            verifies(&format!(
                "{coll} --backend nccl -g 2 -b 1K -e 16K -f 4 -n 2 -w 1 -c 2 {mode}"
            ));
        }
    }
}

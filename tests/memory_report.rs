//! `-M 1` reports, per phase, the largest change of any one device's free memory, as
//! nccl-tests does (not the change of the largest usage, which hides a busier device): here
//! device 0 holds two ranks' buffers while device 1, with one rank, starts with 4000 MiB held
//! by another process (FAKE_CUDA_MEM_BUSY_MIB).

use crate::support::bin::{ncclbench, run};
use crate::support::fake_nccl::fake_env;

/// The `User-Allocated` amount of a `-M 1` run, in bytes as printed (`4.19 MB`).
fn user_allocated(args: &str, busy: &str) -> f64 {
    let mut cmd = ncclbench();
    fake_env(&mut cmd).args(args.split_whitespace());
    cmd.env("FAKE_CUDA_MEM_BUSY_MIB", busy);
    let r = run(&mut cmd);
    assert_eq!(r.code, Some(0), "`{args}`:\n{}\n{}", r.out, r.err);
    let line = (r.out.lines())
        .find(|l| l.starts_with("# GPU memory usage"))
        .unwrap_or_else(|| panic!("no memory line:\n{}", r.out));
    let after = line.split("User-Allocated ").nth(1).expect(line);
    let mut words = after.split_whitespace();
    let value: f64 = words.next().and_then(|v| v.parse().ok()).expect(line);
    let scale = match words.next() {
        Some("B") => 1.0,
        Some("KB") => 1e3,
        Some("MB") => 1e6,
        Some("GB") => 1e9,
        _ => panic!("unit in {line}"),
    };
    value * scale
}

#[test]
fn memory_report_takes_the_largest_change_of_one_device() {
    let common = "all_reduce --backend nccl -b 8M -e 8M -n 1 -w 0 -c 0 -M 1";
    let one = user_allocated(&format!("{common} -g 1"), "0");
    let shared = user_allocated(&format!("{common} -g 3 --devices 0,0,1"), "0,4000");
    assert!(one > 0.0);
    let ratio = shared / one;
    assert!(
        (1.9..2.1).contains(&ratio),
        "device 0 allocated two ranks' buffers: {shared} vs {one} for one"
    );
}

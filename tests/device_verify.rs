//! Device verification end to end through the binary on fake-nccl: `-c` fills and checks run
//! as the kernels of `kernels/verify.ptx`, which the fake executes with the host build of the
//! same source, in stream order. Every collective with `-d all -o all -c 1` verifies clean on
//! the device path, a corrupted element is counted exactly through it, `--verify host` and
//! `device` agree, and the header names which ran.

use crate::support::fake_nccl::{run_fake as run, table_rows as rows};
use ncclbench::core::collective::Collective;

const DEVICE: &str = "# verify: device (";

#[test]
fn every_collective_verifies_every_type_and_op_on_the_device() {
    for coll in Collective::ALL {
        let g = if coll.needs_power_of_two_ranks() {
            4
        } else {
            3
        };
        let args = format!(
            "{} --backend nccl -g {g} -b 4 -e 40K -f 32 -d all -o all -c 1 -w 0 -n 1",
            coll.name()
        );
        let r = run(&args, &[]);
        assert_eq!(r.code, Some(0), "`{args}`:\n{}\n{}", r.out, r.err);
        assert!(
            r.out.contains(DEVICE),
            "`{args}` did not verify on the device:\n{}",
            r.out
        );
        assert!(
            r.out.contains("# Out of bounds values : 0 OK"),
            "`{args}`:\n{}",
            r.out
        );
        // Every data type and (reducing collectives) every op got rows.
        let rows = rows(&r.out);
        let per_size = if coll.iterates_ops() { 12 * 6 } else { 12 };
        assert!(rows.len() >= 2 * per_size, "`{args}`: {} rows", rows.len());
    }
}

#[test]
fn a_corrupted_element_is_counted_exactly_through_the_device_path() {
    // FAKE_NCCL_CORRUPT_AT=N corrupts one element of op N (ops count per communicator, and
    // p2p-based collectives make several per call), so every N up to the last op of the run
    // is tried: the device and host checkers must count the same, and some N must be caught.
    for coll in Collective::ALL {
        let mut caught = 0;
        for n in 0..10 {
            let mut wrong = Vec::new();
            for verify in ["device", "host"] {
                let args = format!(
                    "{} --backend nccl -g 2 -b 4K -e 4K -w 0 -n 1 -c 1 --verify {verify}",
                    coll.name()
                );
                let r = run(&args, &[("FAKE_NCCL_CORRUPT_AT", &n.to_string())]);
                let ok = matches!(r.code, Some(0 | 7));
                assert!(ok, "`{args}`:\n{}\n{}", r.out, r.err);
                let want = format!("# verify: {verify} (");
                assert!(r.out.contains(&want), "`{args}`:\n{}", r.out);
                // The summary line totals #wrong over every row and placement.
                let total = r
                    .out
                    .lines()
                    .find_map(|l| l.strip_prefix("# Out of bounds values : "))
                    .and_then(|t| t.split_whitespace().next())
                    .and_then(|t| t.parse::<u64>().ok())
                    .unwrap_or_else(|| panic!("`{args}`: no summary:\n{}", r.out));
                wrong.push((total, r.code));
            }
            let name = coll.name();
            assert_eq!(wrong[0], wrong[1], "{name} op {n}: device vs host");
            // The fake corrupts one element per op it hits (sendrecv: a send and a recv).
            assert!(wrong[0].0 <= 2, "{name} op {n}: {wrong:?}");
            caught += wrong[0].0;
        }
        assert!(caught > 0, "{}: no corruption was counted", coll.name());
    }
    // all_reduce's op numbering is known: op 2 is the out-of-place verification launch.
    let r = run(
        "all_reduce --backend nccl -g 2 -b 4K -e 4K -w 0 -n 1 -c 1 --verify device",
        &[("FAKE_NCCL_CORRUPT_AT", "2")],
    );
    assert_eq!(r.code, Some(7), "{}\n{}", r.out, r.err);
    assert_eq!(rows(&r.out)[0][8], "1", "{}", r.out);
}

/// `--verify host` at a size over one host chunk (64 MiB, not a multiple of it): a clean run
/// verifies, and one corrupted element is exactly one wrong element, so every chunk was
/// filled and compared at its own place.
#[test]
fn host_verification_counts_exactly_over_more_than_one_chunk() {
    let args = "all_reduce --backend nccl -g 1 -b 72M -e 72M -w 0 -n 1 -c 1 --verify host";
    let r = run(args, &[]);
    assert_eq!(r.code, Some(0), "`{args}`:\n{}\n{}", r.out, r.err);
    assert!(r.out.contains("# verify: host ("), "{}", r.out);
    assert!(r.out.contains("# Out of bounds values : 0 OK"), "{}", r.out);
    // Op 2 is the out-of-place verification launch (as in the device-path test above).
    let r = run(args, &[("FAKE_NCCL_CORRUPT_AT", "2")]);
    assert_eq!(r.code, Some(7), "`{args}`:\n{}\n{}", r.out, r.err);
    let row = &rows(&r.out)[0];
    assert_eq!(row[0], (72u64 << 20).to_string(), "{}", r.out);
    assert_eq!(row[8], "1", "out-of-place #wrong:\n{}", r.out);
    assert!(
        r.out.contains("# Out of bounds values : 1 FAILED"),
        "{}",
        r.out
    );
}

#[test]
fn the_header_says_where_verification_ran_and_device_is_refused_off_the_gpu() {
    let r = run(
        "all_reduce --backend nccl -g 2 -b 1K -e 1K -n 1 -w 0 --verify host",
        &[],
    );
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(
        r.out.contains("# verify: host (--verify host)"),
        "{}",
        r.out
    );
    let r = run("all_reduce --backend host -g 2 -b 1K -e 1K -n 1 -w 0", &[]);
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(
        r.out.contains("# verify: host (buffers in host memory)"),
        "{}",
        r.out
    );
    let r = run(
        "all_reduce --backend host -g 2 -b 1K -e 1K --verify device",
        &[],
    );
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    assert!(
        r.err.contains("--verify device needs the NCCL backend"),
        "{}",
        r.err
    );
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
}

#[test]
fn auto_falls_back_to_the_host_when_the_device_cannot_jit_the_kernels_and_device_refuses() {
    // A compute capability 6.0 device cannot run PTX for sm_70: the driver's JIT refuses it.
    let envs = [("FAKE_CUDA_CC", "6.0")];
    let r = run(
        "all_reduce --backend nccl -g 2 -b 1K -e 1K -n 1 -w 0",
        &envs,
    );
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(
        r.out.contains(
            "# verify: host (the device kernels do not load on device 0: cuModuleLoadData"
        ),
        "{}",
        r.out
    );
    assert!(r.out.contains("# Out of bounds values : 0 OK"), "{}", r.out);
    let r = run(
        "all_reduce --backend nccl -g 2 -b 1K -e 1K --verify device",
        &envs,
    );
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    assert!(
        r.err
            .contains("--verify device: the verification kernels do not load"),
        "{}",
        r.err
    );
}

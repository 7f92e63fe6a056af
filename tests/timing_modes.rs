//! Every timing mode of nccl-tests runs on the host backend with verified data and sensible
//! numbers: per-iteration statistics (-I/-K), graph capture and replay (-G), blocking modes
//! (-z 1..3) with aggregation (-m), cputime (-C), unaligned buffers (-u), cycles (-N), several
//! verification runs (-c), and the -a reductions.

use crate::support::run::run_host;

fn assert_verified(args: &str) -> ncclbench::bench::runner::Outcome {
    let out = run_host(args).unwrap_or_else(|e| panic!("{args}: {e}"));
    assert!(!out.rows.is_empty(), "{args}");
    for r in &out.rows {
        assert_eq!(r.out_of_place.wrong, Some(0), "{args}: {:?}", r.key);
        for m in [&r.out_of_place, &r.in_place] {
            assert!(
                m.time_us.is_finite() && m.time_us > 0.0,
                "{args}: time {}",
                m.time_us
            );
            assert!(m.cputime_us.is_finite() && m.cputime_us >= 0.0, "{args}");
        }
    }
    out
}

#[test]
fn per_iteration_statistics_cover_every_iteration_and_skip_the_first_k() {
    let out = assert_verified("all_reduce -g 2 -b 1K -e 4K -f 4 -n 7 -I 1 -K 2");
    for r in &out.rows {
        for m in [&r.out_of_place, &r.in_place] {
            let s = m.iter.as_ref().expect("-I gives statistics");
            assert_eq!((s.times_us.len(), s.skipped), (7, 2));
            assert!(
                s.min_us <= s.p50_us && s.p50_us <= s.p99_us && s.p99_us <= s.max_us,
                "{s:?}"
            );
            assert!(s.times_us.iter().all(|t| *t > 0.0));
        }
    }
}

#[test]
fn per_iteration_statistics_work_with_blocking_iterations() {
    let out = assert_verified("reduce_scatter -g 2 -b 4K -e 4K -n 5 -z 3 -I 1");
    assert_eq!(
        out.rows[0]
            .out_of_place
            .iter
            .as_ref()
            .unwrap()
            .times_us
            .len(),
        5
    );
}

#[test]
fn graph_capture_and_replay_verifies() {
    assert_verified("all_gather -g 4 -b 1K -e 16K -f 4 -n 3 -G 2");
}

#[test]
fn blocking_modes_with_aggregation_verify() {
    for z in 0..=3 {
        for m in [1, 3] {
            assert_verified(&format!(
                "alltoall -g 3 -b 1K -e 4K -f 4 -n 3 -m {m} -z {z}"
            ));
        }
    }
}

#[test]
fn unaligned_buffers_rotation_and_several_checks_verify() {
    for coll in ["all_reduce", "scatter", "gather", "sendrecv", "hypercube"] {
        assert_verified(&format!(
            "{coll} -g 4 -b 8 -e 64K -f 8 -n 5 -u 3 -c 3 -d half"
        ));
    }
}

#[test]
fn every_time_reduction_and_cputime_mode_runs() {
    for a in 0..=3 {
        assert_verified(&format!("broadcast -g 2 -b 1K -e 1K -a {a} -C 1 -r 1"));
    }
}

#[test]
fn cycles_repeat_the_whole_sweep_with_their_number() {
    let out = assert_verified("reduce -g 2 -b 1K -e 2K -f 2 -N 3 -o all -d int8");
    assert_eq!(out.rows.len(), 3 * 6 * 2, "3 cycles x 6 ops x 2 sizes");
    assert_eq!(out.rows.iter().map(|r| r.key.cycle).max(), Some(2));
    assert_eq!(out.rows[0].key.cycle, 0);
}

#[test]
fn bandwidths_follow_the_collective_formulas() {
    let out = assert_verified("all_reduce -g 4 -b 1M -e 1M");
    let m = &out.rows[0].out_of_place;
    let algbw = 1048576.0 / (m.time_us * 1e-6) / 1e9;
    assert!((m.algbw_gbs - algbw).abs() < 1e-9 * algbw.max(1.0));
    assert!(
        (m.busbw_gbs - algbw * 1.5).abs() < 1e-9 * algbw.max(1.0),
        "2(n-1)/n = 1.5 for 4 ranks"
    );
}

#[test]
fn device_timer_verifies_in_every_loop_shape() {
    assert_verified("all_reduce -g 2 -b 1K -e 64K -f 8 -n 4 --timer device");
    assert_verified("all_gather -g 2 -b 1K -e 16K -f 4 -n 3 -G 2 --timer device");
    let out = assert_verified("reduce_scatter -g 2 -b 4K -e 4K -n 5 -I 1 --timer device");
    let s = out.rows[0]
        .out_of_place
        .iter
        .as_ref()
        .expect("-I statistics");
    assert_eq!(s.times_us.len(), 5);
}

/// The point of `--timer device`: a slow enqueue (here 150 ms per launch, far above what the
/// host backend needs to run a 1 KiB all_reduce) is in the default time and not in the
/// device-timed one, because the loop runs only after it is fully queued.
#[test]
fn device_timer_leaves_the_enqueue_cost_out() {
    use crate::support::fault::{Fault, Faulty};
    use std::time::Duration;
    let slow = Fault::SlowLaunch(Duration::from_millis(150));
    let time = |args: &str| {
        let cfg = crate::support::run::config(args);
        let host = ncclbench::bench::backend::host::HostBackend::new(cfg.local_ranks()).unwrap();
        let mut b = Faulty::new(host, slow);
        let out = crate::support::run::run_with(&cfg, &mut b).expect(args);
        out.rows[0].out_of_place.time_us
    };
    let host_us = time("all_reduce -g 2 -b 1K -e 1K -n 3 -w 0 -c 0");
    let device_us = time("all_reduce -g 2 -b 1K -e 1K -n 3 -w 0 -c 0 --timer device");
    assert!(
        host_us >= 150_000.0,
        "host timer includes the enqueue: {host_us} us"
    );
    assert!(
        device_us < 75_000.0,
        "device timer excludes the enqueue: {device_us} us (host timer: {host_us} us)"
    );
}

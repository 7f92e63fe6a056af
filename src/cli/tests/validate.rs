//! Tests of the range and combination checks: each bad value is a one-line usage error (exit
//! status 2) that names the flag and the value.

use super::super::*;
use super::{run, usage};
use crate::config::RootChoice;
use crate::core::error::exit;
use crate::result::Step;

/// Runs `ncclbench all_reduce <flags>` and expects a usage error mentioning every `needle`.
fn rejects(flags: &[&str], needles: &[&str]) {
    let mut words = vec!["ncclbench", "all_reduce"];
    words.extend_from_slice(flags);
    let msg = usage(&words);
    for needle in needles {
        assert!(
            msg.contains(needle),
            "{flags:?}: {needle:?} missing from {msg:?}"
        );
    }
}

#[test]
fn min_above_max_is_the_nccl_tests_message() {
    rejects(
        &["-b", "2K", "-e", "1K"],
        &["invalid sizes for 'minbytes' and 'maxbytes': 2048 > 1024"],
    );
}

#[test]
fn sweeps_that_never_advance_are_rejected() {
    rejects(
        &["-b", "0", "-f", "2"],
        &["-b/--minbytes", "'0'", "never advance"],
    );
    rejects(&["-i", "0"], &["-i/--stepbytes", "'0'", "never advance"]);
    // The same zero is fine where it does not stall the sweep.
    let c = run(&["ncclbench", "all_reduce", "-b", "0", "-e", "8", "-i", "4"]);
    assert_eq!((c.min_bytes, c.step), (0, Step::Bytes(4)));
    assert_eq!(
        run(&["ncclbench", "all_reduce", "-i", "0", "-f", "2"]).step,
        Step::Factor(2)
    );
}

#[test]
fn counts_that_must_be_positive_reject_zero_and_negatives() {
    for (flag, long) in [("-f", "stepfactor"), ("-n", "iters"), ("-m", "agg_iters")] {
        for value in ["0", "-1"] {
            rejects(&[flag, value], &[long, &format!("'{value}'"), "at least 1"]);
        }
    }
    for (flag, long) in [("-t", "nthreads"), ("-g", "ngpus")] {
        rejects(&[flag, "0"], &[long, "'0'", "between 1 and 2147483647"]);
    }
}

#[test]
fn local_rank_count_must_fit_an_int() {
    rejects(
        &["-t", "65536", "-g", "65536"],
        &["-t 65536 x -g 65536", "2147483647"],
    );
    let c = run(&["ncclbench", "all_reduce", "-t", "4", "-g", "2"]);
    assert_eq!(c.local_ranks(), 8);
}

#[test]
fn counts_that_may_be_zero_reject_negatives() {
    for (flag, long) in [
        ("-G", "cudagraph"),
        ("-c", "check"),
        ("-T", "timeout"),
        ("-w", "warmup_iters"),
        ("-N", "run_cycles"),
    ] {
        rejects(
            &[flag, "-1"],
            &[&format!("{flag}/--{long}"), "'-1'", "at least 0"],
        );
    }
}

#[test]
fn values_beyond_the_field_type_are_rejected_not_wrapped() {
    rejects(
        &["-u", "-1"],
        &["-u/--unalign", "'-1'", "between 0 and 2147483647"],
    );
    rejects(&["-u", "0x80000000"], &["-u/--unalign", "'2147483648'"]);
    rejects(
        &["-n", "4294967296"],
        &["-n/--iters", "'4294967296'", "at most 4294967295"],
    );
    rejects(&["-x", "0x80000000"], &["-x/--cta_policy", "'2147483648'"]);
}

#[test]
fn modes_outside_their_range_are_rejected() {
    rejects(&["-z", "4"], &["-z/--blocking", "'4'", "between 0 and 3"]);
    rejects(&["-z", "-1"], &["-z/--blocking", "'-1'"]);
    rejects(&["-a", "4"], &["-a/--average", "'4'", "between 0 and 3"]);
    rejects(
        &["-R", "3"],
        &["-R/--local_register", "'3'", "between 0 and 2"],
    );
}

#[test]
fn switches_accept_only_zero_and_one() {
    for (flag, long) in [
        ("-p", "parallel_init"),
        ("-y", "stream_null"),
        ("-C", "report_cputime"),
        ("-S", "report_timestamps"),
        ("-M", "memory"),
        ("-I", "per_iter_timing"),
    ] {
        rejects(
            &[flag, "2"],
            &[&format!("{flag}/--{long}"), "'2'", "0 or 1"],
        );
    }
}

#[test]
fn per_iter_skip_must_leave_an_iteration_and_needs_per_iter_timing() {
    rejects(
        &["-I", "1", "-n", "5", "-K", "5"],
        &["-K/--per_iter_skip", "'5'", "0 and 4"],
    );
    rejects(&["-I", "1", "-K", "-1"], &["-K/--per_iter_skip", "'-1'"]);
    rejects(&["-K", "2"], &["-K/--per_iter_skip", "'2'", "-I 1"]);
    assert_eq!(
        run(&["ncclbench", "all_reduce", "-K", "0"]).per_iter_skip,
        0
    );
}

#[test]
fn roots_are_ranks_or_minus_one() {
    rejects(&["-r", "-2"], &["-r/--root", "'-2'", "-1"]);
    assert_eq!(
        run(&["ncclbench", "reduce", "-r", "-1"]).root,
        RootChoice::All
    );
    // Too large a root is only known to be wrong once MPI has said how many ranks there are.
    assert_eq!(
        run(&["ncclbench", "reduce", "-r", "99"]).root,
        RootChoice::One(99)
    );
}

#[test]
fn cta_policy_minus_one_means_unset() {
    assert_eq!(
        run(&["ncclbench", "all_reduce", "-x", "-1"]).cta_policy,
        None
    );
    assert_eq!(
        run(&["ncclbench", "all_reduce", "-x", "0"]).cta_policy,
        Some(0)
    );
    rejects(&["-x", "-2"], &["-x/--cta_policy", "'-2'"]);
}

#[test]
fn cuda_graphs_exclude_blocking_mode_3_and_per_iteration_timing() {
    rejects(
        &["-z", "3", "-G", "1"],
        &["-z 3 cannot be combined with -G (CUDA graph)"],
    );
    rejects(&["-I", "1", "-G", "2"], &["-I 1", "-G (CUDA graph)"]);
    let c = run(&["ncclbench", "all_reduce", "-z", "3", "-G", "0", "-I", "1"]);
    assert_eq!((c.blocking, c.graph, c.per_iter), (3, 0, true));
}

#[test]
fn json_file_may_be_given_once() {
    rejects(
        &["-J", "a.json", "--json", "b.json"],
        &["-J/--output_file", "--json"],
    );
}

#[test]
fn usage_errors_exit_with_status_two() {
    let err = parse(&tests::argv(&["ncclbench", "all_reduce", "-n", "0"])).unwrap_err();
    assert_eq!(err.exit_code(), exit::USAGE);
    let err = parse(&tests::argv(&["ncclbench", "all_reduce", "--nope"])).unwrap_err();
    assert_eq!(err.exit_code(), exit::USAGE);
}

//! Tests of the command line as a whole: defaults, every flag's spellings, program-name
//! dispatch; and the helpers the other test files share.

mod device_flags;
mod help;
mod validate;

use super::*;
use crate::config::{BackendChoice, RootChoice, TimeReduce, Timer};
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::Step;
use std::path::PathBuf;
use std::time::Duration;

pub(super) fn argv(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// Parses `words` and expects a run configuration.
pub(super) fn run(words: &[&str]) -> RunConfig {
    match parse(&argv(words)) {
        Ok(Command::Run(config)) => config,
        other => panic!("{words:?} gave {other:?}"),
    }
}

/// Parses `words` and expects a usage error; returns its message, checked to be one line.
pub(super) fn usage(words: &[&str]) -> String {
    match parse(&argv(words)) {
        Err(Error::Usage(msg)) => {
            assert!(!msg.contains('\n'), "{words:?}: multi-line message {msg:?}");
            assert!(
                !msg.contains('\u{1b}'),
                "{words:?}: ANSI escapes in {msg:?}"
            );
            assert!(!msg.is_empty());
            msg
        }
        other => panic!("{words:?} gave {other:?}, not a usage error"),
    }
}

/// nccl-tests' defaults, for `ncclbench all_reduce` with nothing else.
fn defaults(argv: &[&str]) -> RunConfig {
    RunConfig {
        collective: Collective::AllReduce,
        nthreads: 1,
        ngpus: 1,
        min_bytes: 32 << 20,
        max_bytes: 32 << 20,
        step: Step::Bytes(1 << 20),
        iters: 20,
        agg_iters: 1,
        warmup_iters: 1,
        cycles: Some(1),
        parallel_init: false,
        check: 1,
        dtypes: vec![DataType::Float],
        ops: vec![RedOp::Sum],
        root: RootChoice::One(0),
        blocking: 0,
        stream_null: false,
        timeout: None,
        graph: 0,
        report_cputime: false,
        report_timestamps: false,
        average: TimeReduce::Mean,
        local_register: 0,
        cta_policy: None,
        device_cta_count: 16,
        memory_report: false,
        unalign: 0,
        per_iter: false,
        per_iter_skip: 0,
        backend: BackendChoice::Auto,
        csv: None,
        json: None,
        prom: None,
        nccl_lib: None,
        devices: None,
        timer: Timer::Host,
        verify: crate::config::Verify::Auto,
        redact: false,
        per_group: false,
        tuning: Default::default(),
        alltoallv: Default::default(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn every_default_is_nccl_tests_default() {
    let words = ["ncclbench", "all_reduce"];
    assert_eq!(run(&words), defaults(&words));
}

pub(super) type Edit = fn(&mut RunConfig);

/// Each flag: short letter, long name, a non-default value, flags it needs, and the change it
/// makes to the defaults.
pub(super) const FLAGS: &[(char, &str, &str, &[&str], Edit)] = &[
    ('t', "nthreads", "2", &[], |c| c.nthreads = 2),
    ('g', "ngpus", "4", &[], |c| c.ngpus = 4),
    ('b', "minbytes", "8", &[], |c| c.min_bytes = 8),
    ('e', "maxbytes", "1G", &[], |c| c.max_bytes = 1 << 30),
    ('i', "stepbytes", "8K", &[], |c| c.step = Step::Bytes(8192)),
    ('f', "stepfactor", "2", &[], |c| c.step = Step::Factor(2)),
    ('n', "iters", "5", &[], |c| c.iters = 5),
    ('m', "agg_iters", "3", &[], |c| c.agg_iters = 3),
    ('w', "warmup_iters", "0", &[], |c| c.warmup_iters = 0),
    ('N', "run_cycles", "0", &[], |c| c.cycles = None),
    ('p', "parallel_init", "1", &[], |c| c.parallel_init = true),
    ('c', "check", "0", &[], |c| c.check = 0),
    ('o', "op", "max", &[], |c| c.ops = vec![RedOp::Max]),
    ('d', "datatype", "half", &[], |c| {
        c.dtypes = vec![DataType::Half]
    }),
    ('r', "root", "-1", &[], |c| c.root = RootChoice::All),
    ('z', "blocking", "2", &[], |c| c.blocking = 2),
    ('y', "stream_null", "1", &[], |c| c.stream_null = true),
    ('T', "timeout", "30", &[], |c| {
        c.timeout = Some(Duration::from_secs(30))
    }),
    ('G', "cudagraph", "4", &[], |c| c.graph = 4),
    ('C', "report_cputime", "1", &[], |c| c.report_cputime = true),
    ('S', "report_timestamps", "1", &[], |c| {
        c.report_timestamps = true
    }),
    ('J', "output_file", "out.json", &[], |c| {
        c.json = Some(PathBuf::from("out.json"))
    }),
    ('a', "average", "3", &[], |c| c.average = TimeReduce::Max),
    ('R', "local_register", "2", &[], |c| c.local_register = 2),
    ('x', "cta_policy", "1", &[], |c| c.cta_policy = Some(1)),
    ('D', "device_implementation", "0", &[], |_| {}),
    ('V', "device_cta_count", "0x20", &[], |c| {
        c.device_cta_count = 32
    }),
    ('M', "memory", "1", &[], |c| c.memory_report = true),
    ('u', "unalign", "3", &[], |c| c.unalign = 3),
    ('I', "per_iter_timing", "1", &[], |c| c.per_iter = true),
    ('K', "per_iter_skip", "2", &["-I", "1"], |c| {
        c.per_iter = true;
        c.per_iter_skip = 2
    }),
];

#[test]
fn every_flag_reads_the_same_in_all_four_spellings() {
    for &(short, long, value, needs, edit) in FLAGS {
        let spellings = [
            vec![format!("-{short}"), value.to_string()],
            vec![format!("-{short}{value}")],
            vec![format!("--{long}"), value.to_string()],
            vec![format!("--{long}={value}")],
        ];
        for spelling in spellings {
            let mut words = vec!["ncclbench".to_string(), "all_reduce".to_string()];
            words.extend(spelling);
            words.extend(needs.iter().map(|s| s.to_string()));
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let mut want = defaults(&words);
            edit(&mut want);
            assert_eq!(run(&words), want, "{words:?}");
        }
    }
}

#[test]
fn long_only_flags_set_backend_and_output_files() {
    let words = [
        "ncclbench",
        "sendrecv",
        "--backend",
        "host",
        "--csv=r.csv",
        "--json",
        "r.json",
    ];
    let c = run(&words);
    assert_eq!(c.collective, Collective::SendRecv);
    assert_eq!(
        c.backend,
        BackendChoice::Use(crate::result::BackendKind::Host)
    );
    assert_eq!(c.csv, Some(PathBuf::from("r.csv")));
    assert_eq!(c.json, Some(PathBuf::from("r.json")));
    assert_eq!(
        run(&["ncclbench", "reduce", "--backend=nccl"]).backend,
        BackendChoice::Use(crate::result::BackendKind::Nccl)
    );
}

#[test]
fn sizes_and_integers_take_nccl_tests_spellings() {
    let c = run(&[
        "ncclbench",
        "all_gather",
        "-b",
        "1.5K",
        "-e",
        "128MB",
        "-i",
        "1e3",
    ]);
    assert_eq!(
        (c.min_bytes, c.max_bytes, c.step),
        (1536, 128 << 20, Step::Bytes(1000))
    );
    let c = run(&[
        "ncclbench",
        "all_gather",
        "-b",
        "0.5M",
        "-e",
        "1GB",
        "-f",
        "0x2",
    ]);
    assert_eq!(
        (c.min_bytes, c.max_bytes, c.step),
        (512 << 10, 1 << 30, Step::Factor(2))
    );
    assert_eq!(run(&["ncclbench", "broadcast", "-n", "010"]).iters, 8);
    assert_eq!(run(&["ncclbench", "broadcast", "-n", "0x10"]).iters, 16);
}

#[test]
fn a_repeated_flag_overrides_the_earlier_one_as_with_getopt() {
    let c = run(&["ncclbench", "all_reduce", "-n", "5", "-n", "7", "--iters=9"]);
    assert_eq!(c.iters, 9);
}

#[test]
fn unambiguous_long_prefixes_work_as_with_getopt_long() {
    let c = run(&["ncclbench", "all_reduce", "--minb", "8", "--op", "min"]);
    assert_eq!((c.min_bytes, c.ops.clone()), (8, vec![RedOp::Min]));
    let msg = usage(&["ncclbench", "all_reduce", "--re", "1"]);
    assert!(msg.contains("--re"), "{msg}");
}

#[test]
fn all_expands_in_nccl_tests_order() {
    let c = run(&["ncclbench", "all_reduce", "-o", "all", "-d", "all"]);
    assert_eq!(c.ops, RedOp::ALL.to_vec());
    assert_eq!(c.dtypes, DataType::ALL.to_vec());
}

#[test]
fn perf_program_names_select_the_collective() {
    let c = run(&["/usr/bin/all_reduce_perf", "-b", "8"]);
    assert_eq!((c.collective, c.min_bytes), (Collective::AllReduce, 8));
    assert_eq!(c.argv, ["/usr/bin/all_reduce_perf", "-b", "8"]);
    assert_eq!(
        run(&["./reduce_scatter_perf"]).collective,
        Collective::ReduceScatter
    );
    assert_eq!(
        run(&["alltoall_perf.exe", "-g", "2"]).collective,
        Collective::AllToAll
    );
    for c in Collective::ALL {
        assert_eq!(run(&[&c.perf_name()]).collective, c);
    }
}

#[test]
fn other_program_names_say_which_collective_they_named() {
    let msg = usage(&["/usr/local/bin/foo_perf", "gather"]);
    assert!(
        msg.starts_with("unknown collective 'foo' (from program name foo_perf)"),
        "{msg}"
    );
    let msg = usage(&["allreduce_perf", "-b", "8"]);
    assert!(msg.contains("did you mean all_reduce_perf?"), "{msg}");
    // Any other program name is ncclbench.
    assert_eq!(
        run(&["ncclbench-dev", "gather"]).collective,
        Collective::Gather
    );
    let msg = usage(&["/opt/ncclbench"]);
    assert!(
        msg.contains("collective") && msg.contains("hypercube"),
        "{msg}"
    );
}

#[test]
fn perf_names_are_subcommands_and_typos_get_the_nearest_command() {
    let c = run(&["ncclbench", "all_reduce_perf", "-b", "8"]);
    assert_eq!((c.collective, c.min_bytes), (Collective::AllReduce, 8));
    for (typed, meant) in [
        ("allreduce", "all_reduce"),
        ("all-reduce", "all_reduce"),
        ("All_Reduce", "all_reduce"),
        ("alltoal", "alltoall"),
        ("analyse", "analyze"),
    ] {
        let msg = usage(&["ncclbench", typed, "-b", "8"]);
        assert_eq!(
            msg,
            format!("unknown command '{typed}': did you mean {meant}? (see --help)")
        );
    }
    // No near command: clap's own one line.
    let msg = usage(&["ncclbench", "bogus"]);
    assert!(
        msg.contains("'bogus'") && msg.ends_with("(see --help)"),
        "{msg}"
    );
}

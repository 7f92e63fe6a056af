//! Tests of what clap itself produces: help and version text, its errors reduced to one line,
//! and the consistency of the clap definition.

use super::super::*;
use super::{argv, usage, FLAGS};

#[test]
fn clap_errors_become_one_line_naming_the_culprit() {
    for (words, culprit) in [
        (&["ncclbench", "all_reduce", "--foo", "1"][..], "--foo"),
        (&["ncclbench", "all_reduce", "-q", "1"], "-q"),
        (&["ncclbench", "all_reduce", "stray"], "stray"),
        (&["all_reduce_perf", "stray"], "stray"),
        (&["ncclbench", "all_reduce", "-b"], "--minbytes"),
        (&["ncclbench", "all_reduce", "-b", "1T"], "1T"),
        (&["ncclbench", "all_reduce", "-n", "abc"], "abc"),
        (&["ncclbench", "all_reduce", "-f", "1.5"], "integer"),
        (&["ncclbench", "all_reduce", "--backend", "gpu"], "nccl"),
        (&["ncclbench", "all_reduce", "-j", "16"], "-j"),
        (&["ncclbench", "allreduce"], "allreduce"),
    ] {
        let msg = usage(words);
        assert!(msg.contains(culprit), "{words:?}: {msg}");
        assert!(msg.ends_with("(see --help)"), "{msg}");
        assert!(!msg.starts_with("error:"), "{msg}");
    }
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let msg = usage(&["ncclbench", "all_reduce", "-o", "add"]);
    assert!(msg.contains("'add'") && msg.contains("--op"), "{msg}");
    assert!(
        msg.contains("sum, prod, max, min, avg, mulsum, all"),
        "{msg}"
    );
    let msg = usage(&["ncclbench", "all_reduce", "-d", "fp32"]);
    assert!(
        msg.contains("'fp32'") && msg.contains("--datatype"),
        "{msg}"
    );
    assert!(msg.contains("bfloat16, f8e4m3, f8e5m2, all"), "{msg}");
}

#[test]
fn help_lists_the_collectives_and_every_flag_with_its_default() {
    let Ok(Command::Help(top)) = parse(&argv(&["ncclbench", "--help"])) else {
        panic!("--help is not help")
    };
    for c in Collective::ALL {
        assert!(top.contains(c.name()), "{} missing from:\n{top}", c.name());
    }
    let Ok(Command::Help(sub)) = parse(&argv(&["all_reduce_perf", "-h"])) else {
        panic!("-h is not help")
    };
    assert!(sub.contains("all_reduce_perf"), "{sub}");
    assert!(!sub.contains('\u{1b}'));
    for &(short, long, ..) in FLAGS {
        let line = sub
            .lines()
            .find(|l| l.contains(&format!("-{short}, --{long} ")))
            .unwrap_or_else(|| panic!("-{short} missing from:\n{sub}"));
        if short != 'J' && short != 'x' {
            assert!(line.contains("[default: "), "{line}");
        }
    }
    assert!(sub.contains("[default: 32M]") && sub.contains("[default: auto]"));
}

#[test]
fn version_is_reported_as_text() {
    let Ok(Command::Version(v)) = parse(&argv(&["ncclbench", "--version"])) else {
        panic!("--version is not a version request")
    };
    assert!(v.contains(env!("CARGO_PKG_VERSION")), "{v}");
}

#[test]
fn clap_definition_is_consistent() {
    super::command().debug_assert();
}

#[test]
fn odd_argv_is_an_error_not_a_panic() {
    assert!(matches!(parse(&[]), Err(Error::Usage(_))));
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        let bad = OsString::from_vec(vec![b'8', 0xff]);
        let words = [
            OsString::from("all_reduce_perf"),
            OsString::from("-b"),
            bad.clone(),
        ];
        assert!(matches!(parse(&words), Err(Error::Usage(m)) if !m.contains('\n')));
        // Paths need not be UTF-8; the stored argv is a lossy copy.
        let words = [OsString::from("all_reduce_perf"), OsString::from("-J"), bad];
        let Ok(Command::Run(c)) = parse(&words) else {
            panic!("a non-UTF-8 JSON path was refused")
        };
        assert_eq!(c.argv[2], "8\u{fffd}");
    }
}

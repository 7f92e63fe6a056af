//! Tests of parsing: every key read, the documented example, and each validation message.

use super::super::*;
use super::{usage, HEAD};
use crate::core::units::parse_size;

/// Every `[suite]` key is read; sizes as strings mean what `-b`/`-e` mean, integers are
/// bytes; collectives keep the listed order.
#[test]
fn suite_keys_and_sizes() {
    let text = format!(
        "{HEAD}[suite]\ncollectives = [\"all_gather\", \"all_reduce_perf\"]\n\
         correctness_min_bytes = 16\ncorrectness_max_bytes = \"0.5M\"\ncorrectness_step_factor = 8\n\
         perf_min_bytes = \"1K\"\nperf_max_bytes = \"4GB\"\nperf_step_factor = 4\n\
         iters = 50\nwarmup_iters = 0\ntimeout_s = 60\n\
         [[busbw]]\ncollective = \"all_gather\"\nmin_bytes = \"1G\"\nmin_gbs = 0.5\n"
    );
    let p = parse(&text, "s.toml", None).unwrap();
    assert_eq!(
        p.suite,
        Suite {
            collectives: vec![Collective::AllGather, Collective::AllReduce],
            correctness_min_bytes: 16,
            correctness_max_bytes: parse_size("0.5M").unwrap(),
            correctness_step_factor: 8,
            perf_min_bytes: 1024,
            perf_max_bytes: 4 << 30,
            perf_step_factor: 4,
            iters: 50,
            warmup_iters: 0,
            timeout_s: 60,
        }
    );
    assert_eq!(p.busbw[0].max_bytes, None);
    assert_eq!(p.busbw[0].typical_gbs, None);
    assert!(!p.typical);
    assert_eq!(p.description, "");
}

/// The example layout in `profiles/README.md` is a valid profile with the numbers it shows.
#[test]
fn documented_example_parses() {
    let readme = include_str!("../../../../profiles/README.md");
    let start = readme.find("```toml\n").unwrap() + "```toml\n".len();
    let example = &readme[start..start + readme[start..].find("```").unwrap()];
    let p = parse(example, "README", None).unwrap();
    assert_eq!(p.name, "h100-nvswitch");
    assert_eq!(
        p.suite,
        Suite {
            collectives: vec![Collective::AllReduce, Collective::AllGather],
            ..Suite::default()
        }
    );
    assert_eq!((p.busbw[0].min_gbs, p.latency[0].max_us), (350.0, 20.0));
    assert_eq!(
        p.baseline.unwrap().paths,
        [PathBuf::from("healthy/performance")]
    );
}

/// Each validation rule gives its one-line message, with the line where toml has one.
#[test]
fn validation_errors_say_what_and_where() {
    let busbw = "[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = \"1G\"\nmin_gbs = 1\n";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{HEAD}colour = 1\n"),
            "profile t.toml: line 3 (`colour = 1`): unknown field `colour`, expected one of",
        ),
        (
            format!("{HEAD}[suite]\nsize = 1\n"),
            "profile t.toml: line 4 (`size = 1`): unknown field `size`",
        ),
        (
            format!("{HEAD}[extra]\n"),
            "profile t.toml: line 3 (`[extra]`): unknown field `extra`",
        ),
        (
            format!("{HEAD}[suite]\ncollectives = [\"allreduce\"]\n"),
            "profile t.toml: line 4 (`collectives = [\"allreduce\"]`): unknown collective 'allreduce' (valid: all_reduce, all_gather, broadcast, reduce_scatter, reduce, alltoall, scatter, sendrecv, hypercube, gather, alltoallv)",
        ),
        (
            format!("{HEAD}[suite]\nperf_max_bytes = \"8T\"\n"),
            "profile t.toml: line 4 (`perf_max_bytes = \"8T\"`): unknown suffix 'T' in size '8T'",
        ),
        (
            format!("{HEAD}[suite]\nperf_max_bytes = -8\n"),
            "profile t.toml: line 4 (`perf_max_bytes = -8`): size -8 is negative",
        ),
        (
            format!("{HEAD}[suite]\nperf_max_bytes = 1.5\n"),
            "profile t.toml: line 4 (`perf_max_bytes = 1.5`): invalid type: floating point `1.5`, expected a size",
        ),
        (
            format!("{HEAD}[suite]\nperf_min_bytes = \"1M\"\nperf_max_bytes = \"1K\"\n"),
            "profile t.toml: line 5 (`perf_max_bytes = \"1K\"`): suite.perf_min_bytes (1048576) is above suite.perf_max_bytes (1024)",
        ),
        (
            format!("{HEAD}[suite]\ncorrectness_min_bytes = \"32M\"\n"),
            "profile t.toml: line 4 (`correctness_min_bytes = \"32M\"`): suite.correctness_min_bytes (33554432) is above suite.correctness_max_bytes (16777216)",
        ),
        (
            format!("{HEAD}[suite]\nperf_min_bytes = 0\n"),
            "profile t.toml: line 4 (`perf_min_bytes = 0`): suite.perf_min_bytes is 0: a sweep that multiplies its size would never advance",
        ),
        (
            format!("{HEAD}[suite]\ncorrectness_min_bytes = \"0\"\n"),
            "profile t.toml: line 4 (`correctness_min_bytes = \"0\"`): suite.correctness_min_bytes is 0",
        ),
        (
            format!("{HEAD}[suite]\nperf_step_factor = 1\n"),
            "profile t.toml: line 4 (`perf_step_factor = 1`): must be an integer >= 2, not 1",
        ),
        (
            format!("{HEAD}[suite]\ncorrectness_step_factor = 0\n"),
            "profile t.toml: line 4 (`correctness_step_factor = 0`): must be an integer >= 2, not 0",
        ),
        (
            format!("{HEAD}[suite]\niters = 0\n"),
            "profile t.toml: line 4 (`iters = 0`): must be an integer in 1..=4294967295, not 0",
        ),
        (
            format!("{HEAD}[suite]\ntimeout_s = 0\n"),
            "profile t.toml: line 4 (`timeout_s = 0`): must be an integer >= 1, not 0",
        ),
        (
            format!("{HEAD}[suite]\ncollectives = []\n"),
            "profile t.toml: line 4 (`collectives = []`): suite.collectives is empty",
        ),
        (
            format!("{HEAD}[suite]\ncollectives = [\"reduce\", \"reduce\"]\n"),
            "profile t.toml: line 4 (`collectives = [\"reduce\", \"reduce\"]`): suite.collectives lists reduce twice",
        ),
        (
            format!("{HEAD}[suite]\ncollectives = [\"all_gather\"]\n{busbw}"),
            "profile t.toml: line 6 (`collective = \"all_reduce\"`): [[busbw]] names all_reduce, which is not in suite.collectives",
        ),
        (
            format!("{HEAD}[[latency]]\ncollective = \"all_reduce\"\nmin_bytes = 64\nmax_bytes = 8\nmax_us = 5\n"),
            "profile t.toml: line 6 (`max_bytes = 8`): [[latency]] min_bytes (64) is above max_bytes (8)",
        ),
        (
            format!("{HEAD}[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = \"2G\"\nmax_bytes = \"1G\"\nmin_gbs = 5\n"),
            "profile t.toml: line 6 (`max_bytes = \"1G\"`): [[busbw]] min_bytes (2147483648) is above max_bytes (1073741824)",
        ),
        (
            format!("{HEAD}[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = \"16G\"\nmin_gbs = 5\n"),
            "profile t.toml: line 5 (`min_bytes = \"16G\"`): [[busbw]] range 17179869184.. bytes lies outside the sweep 8..8589934592 bytes",
        ),
        (
            format!("{HEAD}[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = 8\nmin_gbs = 0\n"),
            "profile t.toml: line 6 (`min_gbs = 0`): threshold must be a finite number > 0, not 0",
        ),
        (
            format!("{HEAD}[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = 8\nmin_gbs = nan\n"),
            "profile t.toml: line 6 (`min_gbs = nan`): threshold must be a finite number > 0, not NaN",
        ),
        (
            format!("{HEAD}[[latency]]\ncollective = \"all_reduce\"\nmax_bytes = 8\nmax_us = -inf\n"),
            "profile t.toml: line 6 (`max_us = -inf`): threshold must be a finite number > 0, not -inf",
        ),
        (
            format!("{HEAD}{busbw}typical_gbs = [480, 350]\n"),
            "profile t.toml: line 7 (`typical_gbs = [480, 350]`): typical range [480, 350] has its low end above its high end",
        ),
        (
            format!("{HEAD}{busbw}typical_gbs = [1, 2, 3]\n"),
            "profile t.toml: line 7 (`typical_gbs = [1, 2, 3]`): a typical range is [low, high], not 3 numbers",
        ),
        (
            format!("{HEAD}[[latency]]\ncollective = \"all_reduce\"\nmax_us = 5\n"),
            "profile t.toml: line 3 (`[[latency]]`): missing field `max_bytes`",
        ),
        (
            format!("{HEAD}[baseline]\npaths = []\n"),
            "profile t.toml: line 4 (`paths = []`): [baseline] paths is empty",
        ),
        (
            format!("{HEAD}[baseline]\npaths = [\"x\"]\nthreshold_pct = 0\n"),
            "profile t.toml: line 5 (`threshold_pct = 0`): threshold must be a finite number > 0, not 0",
        ),
        (
            "[profile]\ndescription = \"no name\"\n".to_string(),
            "profile t.toml: missing [profile] name",
        ),
        ("[suite]\niters = 3\n".to_string(), "profile t.toml: missing [profile] name"),
        (
            "[profile]\nname = \" \"\n".to_string(),
            "profile t.toml: line 2 (`name = \" \"`): [profile] name is empty",
        ),
        (
            format!("{HEAD}ranks = 0\n"),
            "profile t.toml: line 3 (`ranks = 0`): must be an integer in 1..=4294967295, not 0",
        ),
        (
            "[profile\nname = 1\n".to_string(),
            "profile t.toml: line 1 (`[profile`): ",
        ),
    ];
    for (text, expected) in cases {
        let msg = usage(parse(&text, "t.toml", None));
        assert!(
            msg.starts_with(expected),
            "for\n{text}\nexpected: {expected}\n     got: {msg}"
        );
        assert!(!msg.contains('\n'), "{msg}");
    }
}

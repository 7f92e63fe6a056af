//! Keeps the documentation in step with the binary: the README's two commands (a benchmark
//! run whose flags `--help` lists and which runs, and the test script CI runs), and
//! docs/reference.md, which must name every long flag that `ncclbench <collective> --help` and
//! each subcommand's `--help` list, in that command's section, and no flag the binary lacks.

use crate::support::bin::{ncclbench, root, run};
use std::collections::{BTreeMap, BTreeSet};

/// The long flags of the option lines of a `--help` text (`  -b, --minbytes <SIZE>  ...`).
fn help_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l
                .strip_prefix('-')
                .filter(|r| !r.starts_with('-'))
                .map_or(l, |r| r.get(3..).unwrap_or(""));
            let name = l.strip_prefix("--")?;
            let end = name
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .unwrap_or(name.len());
            Some(name[..end].to_string())
        })
        .filter(|f| !f.is_empty())
        .collect()
}

/// Every `--flag` written in `text`, except inside a link anchor (`#--timer-device`) or a
/// longer word.
fn named_flags(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("--") {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '#' || c == '_') {
            continue;
        }
        let name = &text[i + 2..];
        let end = name
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(name.len());
        if name.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.insert(name[..end].to_string());
        }
    }
    out
}

/// The text under a heading line of `doc` (exactly `heading`), up to the next heading.
fn section<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let start = doc.find(&format!("\n{heading}\n"))? + heading.len() + 2;
    let rest = &doc[start..];
    Some(&rest[..rest.find("\n#").unwrap_or(rest.len())])
}

fn help_of(args: &[&str]) -> String {
    let r = run(ncclbench().args(args).arg("--help"));
    assert_eq!(r.code, Some(0), "{args:?} --help: {}", r.err);
    r.out
}

/// Subcommands of `ncclbench --help`, each with whether it is a collective (`..._perf)`).
fn commands() -> BTreeMap<String, bool> {
    let help = help_of(&[]);
    let list = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    list.lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let name = words.next()?;
            (name != "help").then(|| (name.to_string(), l.trim_end().ends_with("_perf)")))
        })
        .collect()
}

#[test]
fn reference_md_names_every_flag_of_every_command_and_no_other() {
    let doc = std::fs::read_to_string(root().join("docs/reference.md")).unwrap();
    let commands = commands();
    assert!(
        commands.values().filter(|c| **c).count() >= 11,
        "{commands:?}"
    );
    assert!(commands.len() >= 17, "{commands:?}");
    let mut problems = Vec::new();
    let mut every = BTreeSet::from(["help".to_string(), "version".to_string()]);
    for (name, collective) in &commands {
        let heading = if *collective {
            "### `ncclbench <collective>`".to_string()
        } else {
            format!("### `ncclbench {name}`")
        };
        let Some(text) = section(&doc, &heading) else {
            problems.push(format!("no section `{heading}` for `ncclbench {name}`"));
            continue;
        };
        let mut helped = help_flags(&help_of(&[name]));
        every.extend(helped.iter().cloned());
        helped.remove("help");
        let written = named_flags(text);
        for f in helped.difference(&written) {
            problems.push(format!(
                "`ncclbench {name} --help` lists --{f}; `{heading}` does not"
            ));
        }
        for f in written.difference(&helped) {
            problems.push(format!(
                "`{heading}` names --{f}; `ncclbench {name} --help` does not"
            ));
        }
    }
    for f in named_flags(&doc).difference(&every) {
        problems.push(format!(
            "docs/reference.md names --{f}, which no command has"
        ));
    }
    problems.dedup();
    assert!(
        problems.is_empty(),
        "docs/reference.md and --help differ:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_flag_readers_see_what_they_should() {
    let help = "Options:\n  -b, --minbytes <SIZE>  First size (see --maxbytes)\n\
        \x20     --csv <FILE>\n  -h, --help  Print\n";
    assert_eq!(
        help_flags(help),
        BTreeSet::from(["minbytes", "csv", "help"].map(String::from))
    );
    let text = "`--csv FILE`, (`--json`) [x](#--timer-device) a--b --no-\n--prom";
    assert_eq!(
        named_flags(text),
        BTreeSet::from(["csv", "json", "no-", "prom"].map(String::from))
    );
}

/// The indented command lines of the README's "Two commands" section.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let text = section(&readme, "## Two commands").expect("README.md: no `## Two commands`");
    text.lines()
        .filter_map(|l| l.strip_prefix("    "))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_benchmark_command_uses_listed_flags_and_runs() {
    let commands = readme_commands();
    assert_eq!(
        commands.len(),
        2,
        "README.md: two commands expected: {commands:?}"
    );
    let args: Vec<&str> = commands[0]
        .strip_prefix("cargo run --release -- ")
        .expect("the first command is `cargo run --release -- ...`")
        .split_whitespace()
        .collect();
    let help = help_of(&[args[0]]);
    for flag in args.iter().filter(|a| a.starts_with('-')) {
        let listed = help.lines().any(|l| {
            l.trim_start().starts_with(&format!("{flag},")) || l.contains(&format!(" {flag} "))
        });
        assert!(
            listed,
            "README.md's `{flag}` is not in `ncclbench {} --help`",
            args[0]
        );
    }
    // The same command, with the sweep ended at 64 KiB so that it stays quick on a debug
    // build: the collective, every flag and every other value as the README gives them.
    let e = args
        .iter()
        .position(|a| *a == "-e")
        .expect("the README's command has -e");
    let mut quick: Vec<&str> = args.clone();
    quick[e + 1] = "64K";
    let r = run(ncclbench().args(&quick));
    assert_eq!(r.code, Some(0), "{quick:?}: {}", r.err);
    assert!(r.out.contains("# Avg bus bandwidth"), "{}", r.out);
    assert!(
        r.out.lines().any(|l| l.trim_start().starts_with("65536 ")),
        "{}",
        r.out
    );
}

#[test]
fn the_readme_test_command_is_the_script_ci_runs() {
    let commands = readme_commands();
    let script = root().join(&commands[1]);
    let meta = std::fs::metadata(&script).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    use std::os::unix::fs::PermissionsExt;
    assert!(
        meta.permissions().mode() & 0o111 != 0,
        "{} is not executable",
        commands[1]
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == commands[1]),
        ".ci/run does not run {}",
        commands[1]
    );
}

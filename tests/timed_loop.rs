//! The timed loop against nccl-tests 2.19.6's `BenchTime`/`startColl`/`completeColl`: no CUDA
//! event created while timing (`-I`), `-C` with `-G` divided by iterations x aggregation only,
//! the `-c` check of a `-G` run done on a graph replay, and `-z` applied to every launch (the
//! warm-up, the untimed launch and the check too). Call orders are read from a recording
//! wrapper around the host backend; the NCCL path runs on fake-nccl.

use crate::support::bin::{ncclbench, Run};
use crate::support::fake_nccl::fake_env;
use crate::support::run::{config, Capture};
use ncclbench::bench::backend::forward::Forward;
use ncclbench::bench::backend::host::HostBackend;
use ncclbench::bench::backend::{Backend, Call, GraphId};
use ncclbench::bench::job::bootstrap::{Bootstrap, SingleProcess};
use ncclbench::bench::observe::{Observer, OpKey};
use ncclbench::bench::plan;
use ncclbench::bench::runner::{Outcome, Runner};
use ncclbench::config::TimeReduce;
use ncclbench::core::error::Error;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// What the runner did, in order: `L <phase>` per launch, `wait`, `barrier`, `capture`,
/// `end capture`, `replay`.
type Log = Rc<RefCell<Vec<String>>>;

/// The host backend, logging waits and graph calls; each replay costs the host `replay_cost`.
struct Recording {
    inner: HostBackend,
    log: Log,
    replay_cost: Duration,
}

impl Forward for Recording {
    fn inner(&self) -> &dyn Backend {
        &self.inner
    }
    fn inner_mut(&mut self) -> &mut dyn Backend {
        &mut self.inner
    }
    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        self.log.borrow_mut().push("wait".into());
        self.inner.wait(deadline)
    }
    fn begin_capture(&mut self) -> Result<(), Error> {
        self.log.borrow_mut().push("capture".into());
        self.inner.begin_capture()
    }
    fn end_capture(&mut self) -> Result<GraphId, Error> {
        self.log.borrow_mut().push("end capture".into());
        self.inner.end_capture()
    }
    fn launch_graph(&mut self, graph: GraphId) -> Result<(), Error> {
        self.log.borrow_mut().push("replay".into());
        std::thread::sleep(self.replay_cost);
        self.inner.launch_graph(graph)
    }
    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        self.inner.launch(call)
    }
}

/// One process, logging its barriers.
struct Boot(Log);

impl Bootstrap for Boot {
    fn world_rank(&self) -> usize {
        0
    }
    fn world_size(&self) -> usize {
        1
    }
    fn barrier(&mut self) -> Result<(), Error> {
        self.0.borrow_mut().push("barrier".into());
        Ok(())
    }
    fn reduce_time(&mut self, local_us: f64, how: TimeReduce) -> Result<f64, Error> {
        SingleProcess.reduce_time(local_us, how)
    }
    fn sum_u64(&mut self, local: u64) -> Result<u64, Error> {
        Ok(local)
    }
    fn max_u64(&mut self, local: u64) -> Result<u64, Error> {
        Ok(local)
    }
    fn max_f64s(&mut self, local: &[f64]) -> Result<Vec<f64>, Error> {
        Ok(local.to_vec())
    }
    fn min_u64s(&mut self, local: &[u64]) -> Result<Vec<u64>, Error> {
        Ok(local.to_vec())
    }
    fn gather_lines(&mut self, local: &[String]) -> Result<Vec<String>, Error> {
        Ok(local.to_vec())
    }
}

/// Logs each launch with its phase (the runner tells the observer right after the launch).
struct Phases(Log);

impl Observer for Phases {
    fn call(&mut self, op: &OpKey) {
        self.0.borrow_mut().push(format!("L {}", op.phase.name()));
    }
}

/// Runs `args` on a recording host backend; the outcome and the log.
fn recorded(args: &str, replay_cost: Duration) -> (Outcome, Vec<String>) {
    let cfg = config(args);
    let log = Log::default();
    let mut backend = Recording {
        inner: HostBackend::new(cfg.local_ranks()).unwrap(),
        log: log.clone(),
        replay_cost,
    };
    let info = Backend::info(&backend).clone();
    let (plan, _) =
        plan::build(&cfg, &info, |d, o| Backend::supports(&backend, d, o)).expect("valid plan");
    let mut boot = Boot(log.clone());
    let mut sink = Capture::default();
    let mut phases = Phases(log.clone());
    let out = Runner::new(&cfg, &plan, &mut backend, &mut boot, &mut sink)
        .with_observer(&mut phases)
        .run(None, None)
        .unwrap_or_else(|e| panic!("{args}: {e}"));
    let log = log.borrow().clone();
    (out, log)
}

/// What follows each launch of `phase` up to the next launch (or capture call).
fn after_each(log: &[String], phase: &str) -> Vec<Vec<String>> {
    let tag = format!("L {phase}");
    log.iter()
        .enumerate()
        .filter(|(_, l)| **l == tag)
        .map(|(i, _)| {
            log[i + 1..]
                .iter()
                .take_while(|l| !l.starts_with("L ") && !l.contains("capture"))
                .cloned()
                .collect()
        })
        .collect()
}

#[test]
fn blocking_1_waits_and_barriers_after_every_launch_of_every_phase() {
    // nccl-tests' startColl waits after every launch when -z is set (then barriers for -z 1),
    // and the warm-up, the untimed launch, the timed loop and the check all launch through it.
    let (_, log) = recorded(
        "all_reduce -g 2 -b 1K -e 2K -n 3 -w 2 -c 1 -z 1",
        Duration::ZERO,
    );
    for phase in ["warmup", "untimed", "timed", "verify"] {
        let after = after_each(&log, phase);
        assert!(!after.is_empty(), "no {phase} launch in {log:?}");
        for a in &after {
            assert!(
                a.starts_with(&["wait".to_string(), "barrier".to_string()]),
                "-z 1, {phase}: a launch followed by {a:?}"
            );
        }
    }
}

/// How often `entry` occurs in `log`.
fn count(log: &[String], entry: &str) -> usize {
    log.iter().filter(|l| *l == entry).count()
}

#[test]
fn blocking_2_waits_after_every_launch_and_adds_no_barrier() {
    let args = "all_reduce -g 2 -b 1K -e 1K -n 3 -w 2 -c 1";
    let (_, plain) = recorded(args, Duration::ZERO);
    let (_, log) = recorded(&format!("{args} -z 2"), Duration::ZERO);
    for phase in ["warmup", "untimed", "timed", "verify"] {
        for a in after_each(&log, phase) {
            assert_eq!(
                a.first().map(String::as_str),
                Some("wait"),
                "{phase}: {a:?}"
            );
        }
    }
    assert_eq!(count(&log, "barrier"), count(&plain, "barrier"));
}

#[test]
fn blocking_1_adds_one_barrier_per_launch() {
    let args = "all_reduce -g 2 -b 1K -e 2K -n 3 -w 2 -c 1";
    let (_, plain) = recorded(args, Duration::ZERO);
    let (_, log) = recorded(&format!("{args} -z 1"), Duration::ZERO);
    let launches = log.iter().filter(|l| l.starts_with("L ")).count();
    assert_eq!(
        count(&log, "barrier"),
        count(&plain, "barrier") + launches,
        "{log:?}"
    );
}

#[test]
fn blocking_1_with_aggregation_still_waits_and_barriers_per_launch() {
    // Inside the -m group the per-launch wait finds the previous group's launches (nccl-tests
    // code reading); the barrier after each launch is there either way.
    let (_, log) = recorded(
        "all_reduce -g 2 -b 1K -e 1K -n 2 -m 3 -w 1 -z 1",
        Duration::ZERO,
    );
    let after = after_each(&log, "timed");
    assert_eq!(after.len(), 2 * 2 * 3, "two placements of n x m launches");
    for a in &after {
        assert!(
            a.starts_with(&["wait".to_string(), "barrier".to_string()]),
            "{a:?}"
        );
    }
}

#[test]
fn nothing_is_waited_for_while_a_graph_is_captured() {
    // A capturing stream cannot be queried; under capture nothing runs, so -z waits for
    // nothing there. The replay is waited for.
    let (_, log) = recorded(
        "all_reduce -g 2 -b 1K -e 1K -n 2 -w 1 -c 1 -z 1 -G 2",
        Duration::ZERO,
    );
    let mut capturing = false;
    for l in &log {
        match l.as_str() {
            "capture" => capturing = true,
            "end capture" => capturing = false,
            "wait" | "barrier" => assert!(!capturing, "{l} under capture: {log:?}"),
            _ => {}
        }
    }
}

#[test]
fn graph_mode_checks_the_data_of_a_replayed_graph() {
    // nccl-tests captures the -c launch too and replays it once, so the check covers what the
    // graph computes.
    let (out, log) = recorded(
        "all_reduce -g 2 -b 1K -e 1K -n 2 -w 0 -c 1 -G 3",
        Duration::ZERO,
    );
    assert_eq!(out.rows[0].out_of_place.wrong, Some(0));
    let verify = log.iter().position(|l| l == "L verify").expect("a check");
    let before: Vec<&str> = log[..verify]
        .iter()
        .rev()
        .take(1)
        .map(String::as_str)
        .collect();
    assert_eq!(before, ["capture"], "{log:?}");
    let rest: Vec<&str> = log[verify + 1..]
        .iter()
        .take(3)
        .map(String::as_str)
        .collect();
    assert_eq!(rest, ["end capture", "replay", "wait"], "{log:?}");
}

#[test]
fn cputime_with_graphs_is_divided_by_iterations_and_aggregation_only() {
    // nccl-tests: cputime = host time of the -G replays / (n x m); only the time column is
    // further divided by -G. Each replay here costs the host at least 5 ms.
    let cost = Duration::from_millis(5);
    let (g, n) = (4.0, 2.0);
    let (out, _) = recorded("all_reduce -g 1 -b 1K -e 1K -n 2 -w 0 -c 0 -G 4 -C 1", cost);
    let m = &out.rows[0].out_of_place;
    let floor_us = g * cost.as_secs_f64() * 1e6 / n;
    assert!(
        m.cputime_us >= floor_us,
        "cputime {} us < {floor_us} us (G replays of 5 ms over n = 2)",
        m.cputime_us
    );
    // The replays' host time is nearly all of the loop's time, so the time column (divided by
    // -G too) is about cputime / G; dividing cputime by -G as well would make it <= time.
    assert!(
        m.cputime_us > 2.0 * m.time_us,
        "time is per replay, cputime per iteration: {m:?}"
    );
}

/// Runs `ncclbench <args> --backend nccl` on the fake.
fn fake(args: &str, envs: &[(&str, &str)]) -> Run {
    let mut cmd = ncclbench();
    fake_env(&mut cmd);
    cmd.args(args.split_whitespace())
        .arg("--backend")
        .arg("nccl");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    crate::support::bin::run(&mut cmd)
}

#[test]
fn graph_only_corruption_is_reported_by_the_check_of_a_graph_run() {
    let hook = [("FAKE_NCCL_CORRUPT_IN_GRAPH", "1")];
    let args = "all_reduce -g 2 -b 1K -e 4K -f 4 -n 2 -w 1 -c 1";
    let stream = fake(args, &hook);
    assert_eq!(stream.code, Some(0), "{}{}", stream.out, stream.err);
    assert!(stream.out.contains("# Out of bounds values : 0 OK"));
    let graph = fake(&format!("{args} -G 2"), &hook);
    assert_eq!(graph.code, Some(7), "{}{}", graph.out, graph.err);
    let line = graph
        .out
        .lines()
        .find(|l| l.starts_with("# Out of bounds values : "))
        .unwrap_or_else(|| panic!("no footer:\n{}", graph.out));
    assert!(
        line.ends_with("FAILED") && !line.contains(" 0 FAILED"),
        "the replayed check sees the fault: {line}\n{}",
        graph.out
    );
}

#[test]
fn per_iteration_events_are_created_before_the_timed_loop() {
    // -I records an event per iteration on every rank; creating them as the loop runs would
    // time cuEventCreate. The fake's trace counts live events at every call: it must not
    // change across the timed launches of one measurement.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace");
    let n = 20;
    let args = format!("all_reduce -g 2 -b 1K -e 4K -f 4 -n {n} -w 0 -c 0 -I 1");
    let r = fake(&args, &[("FAKE_NCCL_TRACE", path.to_str().unwrap())]);
    assert_eq!(r.code, Some(0), "{}{}", r.out, r.err);
    let trace = std::fs::read_to_string(&path).unwrap();
    let events: Vec<usize> = trace
        .lines()
        .filter(|l| l.starts_with("ncclAllReduce\trank=0\t"))
        .map(|l| l.rsplit_once("\tevents=").unwrap().1.parse().unwrap())
        .collect();
    // Per measurement: the untimed launch, then the n timed ones; 2 sizes x 2 placements.
    assert_eq!(events.len(), 4 * (1 + n), "{trace}");
    for (k, m) in events.chunks(1 + n).enumerate() {
        let timed = &m[1..];
        assert!(
            timed.iter().all(|&e| e == timed[0]),
            "measurement {k}: live events across the timed launches {timed:?}"
        );
    }
    // Reused from one measurement to the next: the same count every time.
    let per_measurement: Vec<usize> = events.chunks(1 + n).map(|m| m[1]).collect();
    assert!(
        per_measurement.windows(2).all(|w| w[0] == w[1]),
        "{per_measurement:?}"
    );
}

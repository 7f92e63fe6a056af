//! The search order against an invented machine: which candidates exist, which are broken,
//! what python answers, and a record of what the search asked for, in order.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use super::*;

/// A machine with the given environment, python answer and library files.
#[derive(Default)]
struct Machine {
    vars: HashMap<&'static str, &'static str>,
    python: Option<Result<Vec<PathBuf>, String>>,
    /// Candidates that exist: `true` loads, `false` is broken.
    present: HashMap<String, bool>,
    asked: RefCell<Vec<String>>,
    python_runs: Cell<usize>,
}

impl Machine {
    fn with(mut self, target: &str, loads: bool) -> Self {
        self.present.insert(target.to_owned(), loads);
        self
    }
    fn var(mut self, name: &'static str, value: &'static str) -> Self {
        self.vars.insert(name, value);
        self
    }
    fn python(mut self, answer: Result<&[&str], &str>) -> Self {
        self.python = Some(
            answer
                .map(|dirs| dirs.iter().map(PathBuf::from).collect())
                .map_err(str::to_owned),
        );
        self
    }
}

impl Probe for Machine {
    type Lib = String;

    fn var(&self, name: &str) -> Option<OsString> {
        self.vars.get(name).map(OsString::from)
    }

    fn site_dirs(&self) -> Result<Vec<PathBuf>, String> {
        self.python_runs.set(self.python_runs.get() + 1);
        self.python
            .clone()
            .unwrap_or_else(|| Err("no python3 on PATH".into()))
    }

    fn load(&self, target: &Target) -> Result<String, Miss> {
        let name = target.to_string();
        self.asked.borrow_mut().push(name.clone());
        match self.present.get(&name) {
            Some(true) => Ok(name),
            Some(false) => Err(Miss::Broken(LoadError::Open {
                library: name,
                reason: "broken".into(),
            })),
            None => Err(Miss::Absent),
        }
    }
}

const WHEEL: &str = "/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2";

fn found(m: &Machine, cli: Option<&str>) -> (String, Step) {
    let (lib, found) = search(m, cli.map(Path::new)).expect("a library");
    assert_eq!(lib, found.target.to_string());
    (lib, found.step)
}

#[test]
fn every_step_is_asked_in_order_and_the_error_lists_each() {
    let m = Machine::default()
        .var("CONDA_PREFIX", "/opt/conda")
        .python(Ok(&[
            "/usr/lib/python3/dist-packages",
            "/home/u/.local/site",
        ]));
    let err = search(&m, None).unwrap_err();
    assert_eq!(
        *m.asked.borrow(),
        [
            "libnccl.so.2",
            "libnccl.so",
            "/opt/conda/lib/libnccl.so.2",
            "/usr/local/cuda/lib64/libnccl.so.2",
            "/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            "/home/u/.local/site/nvidia/nccl/lib/libnccl.so.2",
            "/usr/lib/python3/dist-packages/torch/lib/libnccl.so.2",
            "/home/u/.local/site/torch/lib/libnccl.so.2",
        ]
    );
    let LoadError::NotFound { tried } = err else {
        panic!("expected NotFound, got {err:?}")
    };
    assert_eq!(
        tried,
        [
            "the dynamic loader: no libnccl.so.2 or libnccl.so",
            "$CONDA_PREFIX/lib: no /opt/conda/lib/libnccl.so.2",
            "/usr/local/cuda/lib64: no /usr/local/cuda/lib64/libnccl.so.2",
            "python3's nvidia-nccl wheel: no nvidia/nccl/lib/libnccl.so.2 in \
             /usr/lib/python3/dist-packages, /home/u/.local/site",
            "python3's torch: no torch/lib/libnccl.so.2 in /usr/lib/python3/dist-packages, \
             /home/u/.local/site",
        ]
    );
}

#[test]
fn the_first_candidate_that_exists_wins_and_later_steps_are_not_asked() {
    let m = Machine::default()
        .with("libnccl.so.2", true)
        .with("/usr/local/cuda/lib64/libnccl.so.2", true)
        .python(Ok(&["/venv/lib/python3.11/site-packages"]));
    assert_eq!(
        found(&m, None),
        ("libnccl.so.2".into(), Step::DynamicLoader)
    );
    assert_eq!(m.python_runs.get(), 0, "python is only asked when needed");

    let m = Machine::default()
        .var("CONDA_PREFIX", "/opt/conda")
        .with("/opt/conda/lib/libnccl.so.2", true)
        .with("/usr/local/cuda/lib64/libnccl.so.2", true);
    assert_eq!(found(&m, None).1, Step::CondaPrefix);

    let m = Machine::default()
        .with("/usr/local/cuda/lib64/libnccl.so.2", true)
        .with(WHEEL, true)
        .python(Ok(&["/venv/lib/python3.11/site-packages"]));
    assert_eq!(found(&m, None).1, Step::CudaToolkit);
}

#[test]
fn python_wheels_come_before_torch_in_every_site_directory() {
    let torch_first_dir = "/a/site-packages/torch/lib/libnccl.so.2";
    let m = Machine::default()
        .with(torch_first_dir, true)
        .with("/b/site-packages/nvidia/nccl/lib/libnccl.so.2", true)
        .python(Ok(&["/a/site-packages", "/b/site-packages"]));
    assert_eq!(
        found(&m, None),
        (
            "/b/site-packages/nvidia/nccl/lib/libnccl.so.2".into(),
            Step::PythonWheel
        )
    );
    let m = Machine::default()
        .with(torch_first_dir, true)
        .python(Ok(&["/a/site-packages", "/b/site-packages"]));
    assert_eq!(found(&m, None), (torch_first_dir.into(), Step::PythonTorch));
}

#[test]
fn an_explicit_library_is_the_only_candidate_even_when_it_fails() {
    let m = Machine::default()
        .var(LIB_ENV, "/opt/env/libnccl.so.2")
        .with("/opt/cli/libnccl.so.2", true)
        .with("/opt/env/libnccl.so.2", true)
        .with("libnccl.so.2", true);
    assert_eq!(
        found(&m, Some("/opt/cli/libnccl.so.2")),
        ("/opt/cli/libnccl.so.2".into(), Step::CommandLine)
    );
    assert_eq!(found(&m, None).1, Step::Environment);

    let m = Machine::default()
        .var(LIB_ENV, "/opt/missing/libnccl.so.2")
        .with("libnccl.so.2", true)
        .with(WHEEL, true)
        .python(Ok(&["/venv/lib/python3.11/site-packages"]));
    let err = search(&m, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "NCCLBENCH_NCCL_LIB /opt/missing/libnccl.so.2 cannot be used: no such file"
    );
    let err = search(
        &m.with("/opt/bad/libnccl.so.2", false),
        Some(Path::new("/opt/bad/libnccl.so.2")),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--nccl-lib /opt/bad/libnccl.so.2 cannot be used: cannot load /opt/bad/libnccl.so.2: broken"
    );
}

#[test]
fn an_empty_environment_value_is_unset() {
    let m = Machine::default().var(LIB_ENV, "").with("libnccl.so", true);
    assert_eq!(found(&m, None), ("libnccl.so".into(), Step::DynamicLoader));
}

#[test]
fn a_broken_find_stops_the_search_naming_its_step() {
    let m = Machine::default()
        .with("/usr/local/cuda/lib64/libnccl.so.2", false)
        .with(WHEEL, true)
        .python(Ok(&["/venv/lib/python3.11/site-packages"]));
    match search(&m, None) {
        Err(LoadError::Broken { step, error }) => {
            assert_eq!(step, Step::CudaToolkit);
            assert!(error.to_string().contains("broken"), "{error}");
        }
        other => panic!("expected Broken, got {other:?}"),
    }
    assert_eq!(m.python_runs.get(), 0);
}

#[test]
fn no_python_or_a_silent_one_ends_only_its_own_step() {
    let m = Machine::default();
    let LoadError::NotFound { tried } = search(&m, None).unwrap_err() else {
        panic!("expected NotFound")
    };
    assert_eq!(tried[1], "$CONDA_PREFIX/lib: CONDA_PREFIX is unset");
    assert_eq!(
        tried.last().unwrap(),
        "python3's packages: no python3 on PATH"
    );
    assert_eq!(tried.len(), 4);

    let m = Machine::default().python(Ok(&[]));
    let LoadError::NotFound { tried } = search(&m, None).unwrap_err() else {
        panic!("expected NotFound")
    };
    assert_eq!(
        tried[3..],
        [
            "python3's nvidia-nccl wheel: python3 printed no site directory",
            "python3's torch: python3 printed no site directory"
        ]
    );
}

#[test]
fn steps_have_distinct_keys_and_labels_in_search_order() {
    let keys: std::collections::HashSet<_> = Step::ORDER.iter().map(|s| s.key()).collect();
    assert_eq!(keys.len(), Step::ORDER.len());
    assert_eq!(Step::ORDER[0].label(), "--nccl-lib");
    assert_eq!(Step::PythonWheel.key(), "python_nvidia_nccl");
}

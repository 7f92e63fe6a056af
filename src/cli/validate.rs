//! Turns the parsed flags ([`BenchArgs`]) into a validated [`RunConfig`]: range checks of each
//! flag and the checks that involve several flags.
//!
//! Where nccl-tests warns and carries on (or loops forever), this is an error: one line that
//! names the flag and the value, returned as [`Error::Usage`] (exit status 2).

use super::args::{BenchArgs, DeviceList, TimerArg};
use crate::config::{BackendChoice, RootChoice, RunConfig, TimeReduce, Timer, TuningOptions};
use crate::core::collective::Collective;
use crate::core::error::Error;
use crate::result::{BackendKind, Step};
use std::time::Duration;

/// A flag as messages name it: `-z/--blocking`.
#[derive(Clone, Copy)]
struct Flag(char, &'static str);

impl Flag {
    fn name(self) -> String {
        format!("-{}/--{}", self.0, self.1)
    }

    /// The usage error for value `v` of this flag.
    fn bad(self, v: impl std::fmt::Display, why: &str) -> Error {
        Error::usage(format!("invalid value '{v}' for {}: {why}", self.name()))
    }

    /// `v` as a `T`, required to lie in `lo..=hi` (`hi` is also capped by `T`'s range).
    fn ranged<T: TryFrom<i64>>(self, v: i64, lo: i64, hi: i64) -> Result<T, Error> {
        let fits = (lo..=hi).contains(&v);
        match T::try_from(v) {
            Ok(t) if fits => Ok(t),
            _ => Err(self.bad(
                v,
                &format!("must be between {lo} and {}", hi.min(max_of::<T>())),
            )),
        }
    }

    /// `v >= lo`, as a `T`.
    fn at_least<T: TryFrom<i64>>(self, v: i64, lo: i64) -> Result<T, Error> {
        match T::try_from(v) {
            Ok(t) if v >= lo => Ok(t),
            _ if v < lo => Err(self.bad(v, &format!("must be at least {lo}"))),
            _ => Err(self.bad(v, &format!("must be at most {}", max_of::<T>()))),
        }
    }

    /// A 0/1 switch.
    fn switch(self, v: i64) -> Result<bool, Error> {
        match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.bad(v, "must be 0 or 1")),
        }
    }
}

/// The largest of the integer types' maxima that converts to `T`: the upper bound to print for
/// the targets used here (u8, i32, u32, u64, usize).
fn max_of<T: TryFrom<i64>>() -> i64 {
    [u8::MAX as i64, i32::MAX as i64, u32::MAX as i64, i64::MAX]
        .into_iter()
        .take_while(|&m| T::try_from(m).is_ok())
        .last()
        .unwrap_or(0)
}

/// Checks every flag of a `collective` run and builds its configuration; `argv` is stored as given.
pub(crate) fn run_config(
    collective: Collective,
    a: BenchArgs,
    argv: Vec<String>,
) -> Result<RunConfig, Error> {
    let iters: u32 = Flag('n', "iters").at_least(a.iters, 1)?;
    let per_iter = Flag('I', "per_iter_timing").switch(a.per_iter_timing)?;
    let graph: u32 = Flag('G', "cudagraph").at_least(a.cudagraph, 0)?;
    let blocking: u8 = Flag('z', "blocking").ranged(a.blocking, 0, 3)?;
    let (nthreads, ngpus) = local_ranks(a.nthreads, a.ngpus)?;
    if blocking == 3 && graph > 0 {
        return Err(Error::usage("-z 3 cannot be combined with -G (CUDA graph)"));
    }
    if per_iter && graph > 0 {
        return Err(Error::usage(
            "-I 1 (per-iteration timing) cannot be combined with -G (CUDA graph)",
        ));
    }
    if a.timer == TimerArg::Device && blocking != 0 {
        return Err(Error::usage(
            "--timer device cannot be combined with -z (blocking waits inside the timed loop \
             would wait on work held behind the timer's gate)",
        ));
    }
    let json = match (a.output_file, a.json) {
        (Some(_), Some(_)) => {
            return Err(Error::usage(
                "-J/--output_file and --json both name the JSON output file; give only one",
            ))
        }
        (j, k) => j.or(k),
    };

    Ok(RunConfig {
        collective,
        nthreads,
        ngpus,
        min_bytes: a.minbytes,
        max_bytes: a.maxbytes,
        step: sweep_step(a.minbytes, a.maxbytes, a.stepbytes, a.stepfactor)?,
        iters,
        agg_iters: Flag('m', "agg_iters").at_least(a.agg_iters, 1)?,
        warmup_iters: Flag('w', "warmup_iters").at_least(a.warmup_iters, 0)?,
        cycles: match Flag('N', "run_cycles").at_least(a.run_cycles, 0)? {
            0 => None,
            n => Some(n),
        },
        parallel_init: Flag('p', "parallel_init").switch(a.parallel_init)?,
        check: Flag('c', "check").at_least(a.check, 0)?,
        dtypes: a.datatype.0,
        ops: a.op.0,
        root: match a.root {
            -1 => RootChoice::All,
            r if r < -1 => {
                let why = "must be a rank (>= 0) or -1 for every root";
                return Err(Flag('r', "root").bad(r, why));
            }
            r => RootChoice::One(Flag('r', "root").at_least(r, 0)?),
        },
        blocking,
        stream_null: Flag('y', "stream_null").switch(a.stream_null)?,
        timeout: match Flag('T', "timeout").at_least::<u64>(a.timeout, 0)? {
            0 => None,
            s => Some(Duration::from_secs(s)),
        },
        graph,
        report_cputime: Flag('C', "report_cputime").switch(a.report_cputime)?,
        report_timestamps: Flag('S', "report_timestamps").switch(a.report_timestamps)?,
        average: match Flag('a', "average").ranged::<u8>(a.average, 0, 3)? {
            0 => TimeReduce::Rank0,
            1 => TimeReduce::Mean,
            2 => TimeReduce::Min,
            _ => TimeReduce::Max,
        },
        local_register: Flag('R', "local_register").ranged(a.local_register, 0, 2)?,
        cta_policy: match a.cta_policy {
            None | Some(-1) => None,
            Some(p) if p < -1 => {
                let why = "must be a policy (>= 0) or -1 for unset";
                return Err(Flag('x', "cta_policy").bad(p, why));
            }
            Some(p) => Some(Flag('x', "cta_policy").at_least(p, 0)?),
        },
        device_cta_count: device_flags(a.device_implementation, a.device_cta_count)?,
        memory_report: Flag('M', "memory").switch(a.memory)?,
        // An int in nccl-tests; the cap keeps padding arithmetic (8 x u bytes) far from overflow.
        unalign: Flag('u', "unalign").ranged(a.unalign, 0, i64::from(i32::MAX))?,
        per_iter,
        per_iter_skip: skip_count(a.per_iter_skip, iters, per_iter)?,
        backend: a.backend,
        csv: a.csv,
        json,
        prom: a.prom,
        nccl_lib: a.nccl_lib,
        devices: devices(a.devices, nthreads * ngpus)?,
        timer: match a.timer {
            TimerArg::Host => Timer::Host,
            TimerArg::Device => Timer::Device,
        },
        verify: a.verify,
        redact: a.redact,
        per_group: a.per_group,
        tuning: tuning_options(a.tuning, a.show_algo, a.nvtx, a.backend)?,
        alltoallv: Default::default(),
        argv,
    })
}

/// `--tuning`, `--show-algo` (which implies it) and `--nvtx`; NCCL's log needs NCCL.
fn tuning_options(
    tuning: bool,
    show_algo: bool,
    nvtx: bool,
    backend: BackendChoice,
) -> Result<TuningOptions, Error> {
    let capture = tuning || show_algo;
    if capture && backend == BackendChoice::Use(BackendKind::Host) {
        return Err(Error::usage(
            "--tuning and --show-algo read NCCL's debug log; the host backend has no NCCL",
        ));
    }
    Ok(TuningOptions {
        capture,
        show_algo,
        nvtx,
    })
}

/// `--devices`: one ordinal per local rank (`-t` x `-g`).
fn devices(list: Option<DeviceList>, local: usize) -> Result<Option<Vec<usize>>, Error> {
    match list {
        Some(DeviceList(d)) if d.len() != local => Err(Error::usage(format!(
            "--devices lists {} device(s) but this process drives {local} rank(s) (-t x -g); \
             give one device per rank",
            d.len()
        ))),
        other => Ok(other.map(|DeviceList(d)| d)),
    }
}

/// `-t` and `-g`; their product (the ranks of this process) must fit NCCL's `int` rank count.
fn local_ranks(nthreads: i64, ngpus: i64) -> Result<(usize, usize), Error> {
    let limit = i64::from(i32::MAX);
    let t: usize = Flag('t', "nthreads").ranged(nthreads, 1, limit)?;
    let g: usize = Flag('g', "ngpus").ranged(ngpus, 1, limit)?;
    if nthreads.saturating_mul(ngpus) > limit {
        return Err(Error::usage(format!(
            "-t {nthreads} x -g {ngpus} ranks is more than NCCL's limit of {limit}"
        )));
    }
    Ok((t, g))
}

/// The size sweep (`-b -e -i -f`): non-empty, and advancing at every step.
fn sweep_step(min: u64, max: u64, step_bytes: u64, factor: i64) -> Result<Step, Error> {
    let factor: u64 = Flag('f', "stepfactor").at_least(factor, 1)?;
    if min > max {
        return Err(Error::usage(format!(
            "invalid sizes for 'minbytes' and 'maxbytes': {min} > {max}"
        )));
    }
    if factor > 1 {
        if min == 0 {
            let why = format!("with -f {factor} the sweep would never advance (0 x {factor} = 0)");
            return Err(Flag('b', "minbytes").bad(0, &why));
        }
        Ok(Step::Factor(factor))
    } else if step_bytes == 0 {
        let why = "with -f 1 the sweep adds -i bytes per step and would never advance";
        Err(Flag('i', "stepbytes").bad(0, why))
    } else {
        Ok(Step::Bytes(step_bytes))
    }
}

/// `-K`: leaves at least one of the `-n` iterations, and only means something with `-I 1`.
fn skip_count(skip: i64, iters: u32, per_iter: bool) -> Result<u32, Error> {
    let flag = Flag('K', "per_iter_skip");
    let last = i64::from(iters) - 1;
    if !(0..=last).contains(&skip) {
        let why = format!("must be between 0 and {last} (below -n {iters})");
        return Err(flag.bad(skip, &why));
    }
    if skip > 0 && !per_iter {
        return Err(flag.bad(skip, "needs -I 1 (per-iteration timing)"));
    }
    flag.ranged(skip, 0, last)
}

/// `-D` and `-V`: `-D 0` (NCCL's own collectives) is all ncclbench runs, so a script passing
/// nccl-tests' default works unchanged; a device-API implementation is refused rather than
/// silently measuring something else. `-V` is checked to nccl-tests' range 1..=128.
fn device_flags(implementation: i64, ctas: i64) -> Result<u32, Error> {
    if implementation != 0 {
        return Err(Flag('D', "device_implementation").bad(
            implementation,
            "ncclbench has no device-API kernels yet; only 0 (NCCL's own collectives) runs",
        ));
    }
    Flag('V', "device_cta_count").ranged(ctas, 1, 128)
}

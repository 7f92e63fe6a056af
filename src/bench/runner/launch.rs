//! How the runner issues calls, as nccl-tests' `startColl` and `completeColl` do: every launch
//! (warm-up, untimed, timed, check) goes through [`Runner::start_coll`], which applies `-z`
//! (a wait after the launch, then a barrier for `-z 1`), and a phase ends with
//! [`Runner::complete_coll`], which waits unless every single launch already did. The call
//! itself is built in a buffer kept from launch to launch, so the timed loop allocates and
//! formats nothing per launch.

use super::{Phase, Runner};
use crate::bench::backend::{Call, GraphId};
use crate::bench::observe::OpKey;
use crate::bench::plan::Sweep;
use crate::core::collective::Shape;
use crate::core::error::Error;
use crate::result::Placement;
use std::time::Instant;

/// What a phase's waits are called in a `-T` timeout message.
fn wait_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Warmup => "warm-up",
        Phase::Untimed => "untimed launch",
        Phase::Timed => "blocking launch",
        Phase::Verify => "verification",
    }
}

impl Runner<'_> {
    /// One launch of `phase` (nccl-tests' `startColl`): with `-z` set it is waited for (and
    /// `-z 1` adds a barrier), inside an `-m` group too, where the wait finds the launches
    /// before the group. Under graph capture nothing runs and a capturing queue cannot be
    /// queried, so there is nothing to wait for.
    pub(super) fn start_coll(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
        k: u64,
        phase: Phase,
    ) -> Result<(), Error> {
        self.launch(sweep, shape, placement, k, phase)?;
        if self.cfg.blocking != 0 && !self.capturing {
            self.wait(sweep, shape, placement, wait_name(phase))?;
            if self.cfg.blocking == 1 {
                self.boot.barrier()?;
            }
        }
        Ok(())
    }

    /// The end of a phase (nccl-tests' `completeColl`): waits for every queue, except where
    /// `-z` already waited for each single launch (`-m` 1).
    pub(super) fn complete_coll(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
        what: &str,
    ) -> Result<(), Error> {
        if self.cfg.blocking != 0 && self.cfg.agg_iters <= 1 {
            return Ok(());
        }
        self.wait(sweep, shape, placement, what)
    }

    /// Byte offset of launch `k` of a measurement: buffer rotation over `-e` in steps of the
    /// call's footprint (nccl-tests, against cache effects), plus the `-u` misalignment.
    pub(super) fn base_offset(
        &self,
        shape: &Shape,
        dtype: crate::core::dtype::DataType,
        k: u64,
    ) -> usize {
        let unalign = self.cfg.unalign * dtype.size();
        if shape.bytes == 0 {
            return unalign;
        }
        let slots = (self.cfg.max_bytes / shape.bytes as u64).max(1);
        (k % slots) as usize * shape.bytes + unalign
    }

    /// Writes launch `k`'s arguments into `call`, reusing its per-rank vector.
    fn build_call(
        &self,
        call: &mut Call,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
        k: u64,
    ) {
        let info = self.backend.info();
        let base = self.base_offset(shape, sweep.dtype, k);
        call.coll = self.plan.collective;
        call.dtype = sweep.dtype;
        call.op = sweep.op;
        call.root = sweep.root.unwrap_or(0);
        call.count = shape.count;
        call.ranks.clear();
        call.ranks.extend((0..info.local_ranks).map(|i| {
            crate::bench::backend::rank_args(
                self.plan.collective,
                shape,
                sweep.dtype,
                info.first_rank + i,
                placement,
                base,
            )
        }));
    }

    /// Enqueues launch `k` and tells the observer.
    fn launch(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
        k: u64,
        phase: Phase,
    ) -> Result<(), Error> {
        let mut call = self.scratch.take().unwrap_or_else(|| Call {
            coll: self.plan.collective,
            dtype: sweep.dtype,
            op: sweep.op,
            root: 0,
            count: 0,
            traffic: self.plan.traffic.clone(),
            ranks: Vec::with_capacity(self.backend.info().local_ranks),
        });
        self.build_call(&mut call, sweep, shape, placement, k);
        let launched = self.backend.launch(&call);
        if launched.is_ok() {
            self.observe(&call, placement, phase);
        }
        self.scratch = Some(call);
        launched
    }

    /// Numbers the call within the communicator and its launch group, for the observer.
    fn observe(&mut self, call: &Call, placement: Placement, phase: Phase) {
        if !self.grouped {
            self.groups += 1;
        }
        if let Some(o) = self.observer.as_mut() {
            o.call(&OpKey {
                collective: call.coll,
                dtype: call.dtype,
                op: call.op,
                root: call.root,
                count: call.count as u64,
                bytes: (call.count * call.dtype.size()) as u64,
                placement,
                phase,
                seq: self.seq,
                group: self.groups - 1,
            });
        }
        self.seq += 1;
    }

    /// Opens an `-m` aggregation group.
    pub(super) fn group_start(&mut self) -> Result<(), Error> {
        self.backend.group_start()?;
        self.grouped = true;
        self.groups += 1;
        Ok(())
    }

    /// Closes the `-m` aggregation group.
    pub(super) fn group_end(&mut self) -> Result<(), Error> {
        self.grouped = false;
        self.backend.group_end()
    }

    /// Starts capturing launches into a graph (`-G`).
    pub(super) fn begin_capture(&mut self) -> Result<(), Error> {
        self.backend.begin_capture()?;
        self.capturing = true;
        Ok(())
    }

    /// Ends the capture; the graph of what was launched since.
    pub(super) fn end_capture(&mut self) -> Result<GraphId, Error> {
        self.capturing = false;
        self.backend.end_capture()
    }

    /// Tells the observer that a phase of one size and placement starts.
    pub(super) fn range_push(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
        phase: Phase,
    ) {
        if let Some(o) = self.observer.as_mut() {
            let name = format!(
                "{} {} {} {} B {} {}",
                self.plan.collective,
                sweep.dtype,
                sweep.op,
                shape.bytes,
                placement.name(),
                phase.name()
            );
            o.range_push(&name);
        }
    }

    /// Tells the observer that the phase ended.
    pub(super) fn range_pop(&mut self) {
        if let Some(o) = self.observer.as_mut() {
            o.range_pop();
        }
    }

    /// Waits for every local queue under the `-T` deadline, naming the case on timeout.
    /// The backend's own detail (which ranks were stuck) is kept after the case.
    pub(super) fn wait(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
        phase: &str,
    ) -> Result<(), Error> {
        let deadline = self.cfg.timeout.map(|t| Instant::now() + t);
        self.backend.wait(deadline).map_err(|e| match e {
            Error::Timeout { seconds, what } => Error::Timeout {
                seconds: self.cfg.timeout.map_or(seconds, |t| t.as_secs()),
                what: format!(
                    "{} {} {}{} B {} ({phase}){}{what}",
                    self.plan.collective,
                    sweep.dtype,
                    if self.plan.collective.iterates_ops() {
                        format!("{} ", sweep.op)
                    } else {
                        String::new()
                    },
                    shape.bytes,
                    placement.name(),
                    if what.is_empty() { "" } else { ": " },
                ),
            },
            other => other,
        })
    }
}

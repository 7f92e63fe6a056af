//! Sub-communicators of the NCCL backend (`ncclbench locate`): every local rank's
//! communicator split by colour in one group (`ncclCommSplit`, NCCL 2.18+; a config of NULL
//! inherits the parent's), ranks keyed by their global rank so each group keeps the job's
//! order. Libraries without `ncclCommSplit` get new communicators from a unique id per colour,
//! which only works when every rank of the job is in this process (ids would otherwise have to
//! cross processes). Each colour becomes a backend of its own, with its own streams.

use super::error::{cuda_err, nccl_err};
use super::memory::MemoryUse;
use super::{NcclBackend, Rank};
use crate::bench::backend::{Backend, BackendInfo, Split};
use crate::bench::cuda::Stream;
use crate::core::error::Error;
use nccl_sys::bindings::ncclComm_t;

/// `NCCL_SPLIT_NOCOLOR`.
const NOCOLOR: i32 = nccl_sys::bindings::NCCL_SPLIT_NOCOLOR;

fn int(v: usize, what: &str) -> Result<i32, Error> {
    i32::try_from(v).map_err(|_| Error::usage(format!("{what} {v} is too large for NCCL")))
}

impl NcclBackend {
    /// [`Backend::split`] for NCCL.
    pub(super) fn split_ranks(&mut self, colors: &[Option<usize>]) -> Result<Split, Error> {
        if colors.len() != self.ranks.len() {
            return Err(Error::Backend(format!(
                "nccl backend: {} colours for {} local ranks",
                colors.len(),
                self.ranks.len()
            )));
        }
        let comms = match self.caps.split {
            Some(split) => self.split_comms(split, colors)?,
            None if self.info.nranks == self.ranks.len() => self.comms_from_ids(colors)?,
            None => {
                return Err(Error::usage(format!(
                    "locate across processes needs ncclCommSplit (NCCL 2.18 or newer); this is \
                     NCCL {}",
                    self.nccl.version_string()
                )))
            }
        };
        let mut out = Split::new();
        let mut palette: Vec<usize> = colors.iter().flatten().copied().collect();
        palette.sort_unstable();
        palette.dedup();
        for color in palette {
            let locals: Vec<usize> = (0..colors.len())
                .filter(|&i| colors[i] == Some(color))
                .collect();
            out.push((
                color,
                Box::new(self.child(&locals, &comms)?) as Box<dyn Backend>,
            ));
        }
        Ok(out)
    }

    /// `ncclCommSplit` of every local rank in one group; NULL for a rank without a colour.
    fn split_comms(
        &self,
        split: nccl_sys::bindings::PFN_ncclCommSplit,
        colors: &[Option<usize>],
    ) -> Result<Vec<ncclComm_t>, Error> {
        let mut out = vec![std::ptr::null_mut(); self.ranks.len()];
        let mut args = Vec::with_capacity(self.ranks.len());
        for (r, c) in self.ranks.iter().zip(colors) {
            let color = match c {
                Some(c) => int(*c, "colour")?,
                None => NOCOLOR,
            };
            args.push((color, int(r.global, "rank")?));
        }
        self.grouped("ncclCommSplit", |i, r| {
            let (color, key) = args[i];
            // SAFETY: a live communicator and an out-pointer into `out`, which outlives the
            // group; NULL config inherits the parent's.
            unsafe { split(r.comm, color, key, &mut out[i], std::ptr::null_mut()) }
        })?;
        Ok(out)
    }

    /// New communicators from one unique id per colour (every rank of the job is local).
    fn comms_from_ids(&self, colors: &[Option<usize>]) -> Result<Vec<ncclComm_t>, Error> {
        let mut ids = std::collections::BTreeMap::new();
        let mut place = vec![(0, 0); colors.len()];
        for (i, c) in colors.iter().enumerate() {
            if let Some(c) = c {
                let members: Vec<usize> = (0..colors.len())
                    .filter(|&j| colors[j] == Some(*c))
                    .collect();
                let rank = members.iter().position(|&j| j == i).unwrap_or(0);
                place[i] = (members.len(), rank);
                if !ids.contains_key(c) {
                    ids.insert(*c, self.nccl.get_unique_id().map_err(nccl_err)?.to_raw());
                }
            }
        }
        let mut out = vec![std::ptr::null_mut(); self.ranks.len()];
        let init = self.nccl.api().ncclCommInitRank;
        self.grouped("ncclCommInitRank", |i, _| match colors[i] {
            // SAFETY: an out-pointer into `out`; the id is this colour's; the rank's device is
            // current.
            Some(c) => unsafe { init(&mut out[i], place[i].0 as i32, ids[&c], place[i].1 as i32) },
            None => 0,
        })?;
        Ok(out)
    }

    /// Runs `call` for every local rank (with its device current) inside one NCCL group.
    fn grouped(
        &self,
        name: &'static str,
        mut call: impl FnMut(usize, &Rank) -> nccl_sys::bindings::ncclResult_t,
    ) -> Result<(), Error> {
        let api = self.nccl.api();
        // SAFETY: no arguments.
        self.nccl
            .check("ncclGroupStart", unsafe { (api.ncclGroupStart)() })
            .map_err(nccl_err)?;
        let mut first = None;
        for (i, r) in self.ranks.iter().enumerate() {
            if let Err(e) = r.context.set_current() {
                first.get_or_insert(cuda_err(e));
                break;
            }
            if let Err(e) = self.nccl.check(name, call(i, r)) {
                first.get_or_insert(nccl_err(e));
                break;
            }
        }
        // SAFETY: closes the group above (also after an error).
        let end = self
            .nccl
            .check("ncclGroupEnd", unsafe { (api.ncclGroupEnd)() });
        if let Some(e) = first {
            return Err(e);
        }
        end.map_err(nccl_err)
    }

    /// The backend of one colour: the local ranks `locals` on their new communicators, each
    /// with a new stream.
    fn child(&self, locals: &[usize], comms: &[ncclComm_t]) -> Result<NcclBackend, Error> {
        let api = self.nccl.api();
        let mut ranks = Vec::with_capacity(locals.len());
        let mut devices = Vec::with_capacity(locals.len());
        let mut nranks = 0;
        for &i in locals {
            let parent = &self.ranks[i];
            let (mut n, mut r) = (0, 0);
            // SAFETY: a communicator the split or init just made; plain out-parameters.
            self.nccl
                .check("ncclCommCount", unsafe {
                    (api.ncclCommCount)(comms[i], &mut n)
                })
                .map_err(nccl_err)?;
            // SAFETY: as above.
            self.nccl
                .check("ncclCommUserRank", unsafe {
                    (api.ncclCommUserRank)(comms[i], &mut r)
                })
                .map_err(nccl_err)?;
            nranks = n.max(0) as usize;
            ranks.push(Rank {
                global: r.max(0) as usize,
                device: parent.device,
                context: parent.context.clone(),
                stream: Stream::new(&parent.context, true).map_err(cuda_err)?,
                comm: comms[i],
                send: None,
                recv: None,
                registrations: Vec::new(),
                kernels: None,
            });
            if let Some(d) = self.devices.get(i) {
                let mut d = d.clone();
                d.rank = r.max(0) as usize;
                devices.push(d);
            }
        }
        let info = BackendInfo {
            nranks,
            first_rank: ranks.first().map_or(0, |r| r.global),
            local_ranks: ranks.len(),
            header_lines: Vec::new(),
            ..self.info.clone()
        };
        Ok(NcclBackend::new(
            self.nccl.clone(),
            info,
            devices,
            ranks,
            self.caps,
            0,
            MemoryUse::default(),
        ))
    }
}

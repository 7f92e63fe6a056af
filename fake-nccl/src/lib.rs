//! fake-nccl: a test double of libcuda and libnccl, on host memory, for ncclbench's tests.
//! Never shipped. Built as a cdylib, it is loaded as `libcuda.so.1` and `libnccl.so.2`
//! (symlinks made by `tests/support/fake_nccl.rs`) and exports, with C ABI and the documented
//! C signatures, every driver entry point ncclbench resolves plus `cuMemHostAlloc`,
//! `cuMemHostGetDevicePointer_v2`, `cuMemFreeHost`, `cuCtxGetCurrent`, and NCCL's required
//! and optional entry points (nccl-sys/src/api.rs). It is self-contained (std, `half`, and
//! `ncclbench-kernels`, the host build of the verification kernels' CUDA source, which
//! [`module`] runs when ncclbench launches them) so it stays an independent oracle of
//! ncclbench's Rust code and builds in seconds.
//!
//! Model: `FAKE_CUDA_DEVICES` devices (4), `FAKE_CUDA_MEM_GIB` each (16), compute capability
//! `FAKE_CUDA_CC` (9.0); NCCL version `FAKE_NCCL_VERSION` (23203), which gates dtypes, ops and
//! entry points as the real releases do. Streams are queues run by one global progress
//! function; a collective runs when every rank's op is at the head of its stream.
//!
//! Communicators span processes as NCCL's do: the id `ncclGetUniqueId` makes names a
//! rendezvous directory ([`rendezvous`]: under `FAKE_NCCL_RENDEZVOUS_DIR`, else `/dev/shm`,
//! else the temporary directory), so `ncclCommInitRank` in N processes with that id forms one
//! communicator; each rank's member file there says which process holds it. A matched call
//! whose ranks live in several processes is matched by the same key (collective k; send a->b
//! number j with recv number j): each process sends its ranks' parts (shape, hooks, input
//! bytes) over a Unix socket ([`link`], [`wire`]) to the process of the call's lowest rank,
//! which computes the call with the same function one process uses and sends each other rank
//! its result ([`xproc`]); waiting is a blocked wait on a condition variable that a
//! delivered message signals, never a poll of files. A host is `FAKE_NCCL_HOST` when set (a
//! test's stand-in for another machine), else the host name and boot id; two ranks of one
//! host on one device index are refused as in one process. The last rank to leave removes
//! the directory; one left by a killed job is removed when a later id's directory is made.
//! All processes of a job must run on one machine (the sockets are local). See the
//! modules: [`cuda_api`], [`memory`], [`copy`] (when copies land), [`stream`], [`event`],
//! [`graph`],
//! [`op`] (a rank's op), [`engine`] (matching), [`exec`] and [`reduce`] (results), [`comm`], [`gpu_sharing`], [`init`], [`group`],
//! [`nccl_coll`] (argument checks), [`nccl_calls`], [`premulsum`], [`register`], [`split`]
//! (`ncclCommSplit`), [`rendezvous`], [`members`], [`xproc`], [`link`] and [`wire`] (across
//! processes),
//! [`hooks`] (fault hooks), [`trace`], [`module`] (PTX modules), [`launch`] (kernel
//! launches), [`debuglog`] (`NCCL_DEBUG` lines).
//!
//! A broken GPU node: `FAKE_CUDA_INIT_ERROR=CODE` makes `cuInit` return CODE (802 system not
//! ready, 803/804 driver mismatch, 999, or 100 for no device; see [`cuda_api::init_error`]).
//! A poisoned context: `FAKE_CUDA_STICKY_ERROR=N` ([`sticky`]).
//!
//! Strictness, since the double exists to catch ncclbench bugs: every buffer range must lie in
//! one device allocation of the comm's device; a communication call outside a group from a
//! thread owning several ranks of the communicator is ncclInvalidUsage; partners that disagree
//! on a call's shape get ncclInvalidUsage as their asynchronous error; a send or recv to self
//! without its partner in the same group is ncclInvalidUsage (an ungrouped call is a group of
//! its own); two ranks on one device are refused at init ("Duplicate GPU detected" before 2.30,
//! from 2.30 unless `NCCL_MULTI_RANK_GPU_ENABLE` is non-zero); a synchronous copy from pageable
//! memory lands lazily on the legacy stream, which non-blocking streams do not wait for; memory
//! still registered with a communicator cannot be freed; nothing unwinds into C.
//!
//! # Trace format (`FAKE_NCCL_TRACE=PATH`)
//!
//! One line per NCCL API call, appended and flushed under a lock; tab-separated, the first
//! field the C name, then `key=value` fields:
//!
//! ```text
//! ncclAllReduce<TAB>rank=0<TAB>nranks=2<TAB>dev=0<TAB>send=a3+128<TAB>recv=a4+128<TAB>count=8
//!     <TAB>dtype=7<TAB>op=0<TAB>root=-1<TAB>peer=-1<TAB>stream=s2<TAB>group=1
//! ```
//!
//! (one line; `<TAB>` is a tab character).
//!
//! * communication calls (`ncclAllReduce`, `ncclBroadcast`, `ncclReduce`, `ncclAllGather`,
//!   `ncclReduceScatter`, `ncclAlltoAll`, `ncclGather`, `ncclScatter`, `ncclSend`, `ncclRecv`):
//!   the fields above. Pointers are `a<id>+<byte offset>` (device allocations numbered from 0
//!   in allocation order per process, `cuMemAlloc` and `ncclMemAlloc` alike), `host` for any
//!   other address (cuMemHostAlloc memory included), `null` for NULL; ncclSend's buffer is
//!   `send` (recv=null), ncclRecv's is `recv` (send=null). `op` is the code, `premulsum(<scalar
//!   as f64>)` for a PreMulSum op, `-1` for calls without one; `root`/`peer` are `-1` where the
//!   call has none. `stream` is `s<id>` or `null`. `group` is the group depth at the call.
//!   A last field `events=<n>` counts the CUDA events alive in the process at the call.
//!   rank/nranks/dev are `-1` for an invalid comm. Calls are traced before validation, so a
//!   refused call appears too.
//! * `ncclGroupStart` / `ncclGroupEnd`: `group=<depth before the call>`.
//! * `ncclCommInitRank`: `rank nranks dev config=none group`; `ncclCommInitRankConfig`:
//!   `rank nranks dev cta_policy=<int|undef> group` (`config=none` for a NULL config);
//!   `ncclCommInitAll`: `ndev devs=<d,d,..> config=none group`.
//! * `ncclCommFinalize`, `ncclCommDestroy`, `ncclCommAbort`: `rank nranks dev group`.
//! * `ncclCommRegister`: `rank nranks dev buff size group`; `ncclCommWindowRegister` adds
//!   `flags` before `group`; `ncclCommDeregister` and `ncclCommWindowDeregister`: `rank nranks
//!   dev handle live group` (`handle` is `null` or the value in hex, `live` 1 when it names a
//!   live registration of that comm, 0 when the call is refused).
//! * `ncclMemAlloc`: `dev size`; `ncclMemFree`: `dev ptr live_comms registered` (`dev` of the
//!   allocation, `-1` if none; `live_comms`: communicators alive on that device;
//!   `registered`: live registrations of it).
//! * `ncclRedOpCreatePreMulSum`: `rank nranks dev dtype residence scalar op group`.
//! * `ncclCommSplit`: `rank nranks dev` (of the parent) `color key config group` (`config` is
//!   the CTAPolicy as for init, `none` for a NULL config).
#![allow(clippy::missing_safety_doc)] // every export's contract is its C documentation

pub mod comm;
pub mod config;
pub mod copy;
pub mod cuda_api;
pub mod debuglog;
pub mod engine;
pub mod event;
pub mod exec;
pub mod fp8;
pub mod gpu_sharing;
pub mod graph;
pub mod group;
pub mod hooks;
pub mod init;
pub mod launch;
pub mod link;
pub mod members;
pub mod memory;
pub mod module;
pub mod nccl_api;
pub mod nccl_calls;
pub mod nccl_coll;
pub mod op;
pub mod premulsum;
pub mod reduce;
pub mod register;
pub mod rendezvous;
pub mod split;
pub mod state;
pub mod sticky;
pub mod stream;
pub mod trace;
pub mod wire;
pub mod xproc;

#[cfg(test)]
mod tests;

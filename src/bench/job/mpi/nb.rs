//! Nonblocking MPI calls on byte buffers, completed by polling under a deadline.
//!
//! Every collective of the MPI backend and every bootstrap step is an `MPI_I*` call whose
//! request is tested until it completes or the `-T` deadline passes, so a peer that never
//! arrives cannot hang this process inside MPI. The buffers travel with the requests: on a
//! timeout they are leaked, never freed, because MPI may still write into them (the process
//! exits shortly after, through the hang diagnosis). This file is the only `unsafe` code of
//! the MPI module; each call hands MPI pointers into `Vec`s that outlive the request.

use crate::core::error::Error;
use mpi::ffi;
use std::os::raw::{c_int, c_void};
use std::time::Instant;

/// A raw communicator handle (world or split group), owned elsewhere.
#[derive(Clone, Copy)]
pub(crate) struct Comm(pub ffi::MPI_Comm);

/// The element types the bootstrap reduces.
#[derive(Clone, Copy)]
pub(crate) enum Ty {
    /// Bytes.
    Byte,
    /// `u64`.
    U64,
    /// `f64`.
    F64,
}

/// The reductions the bootstrap needs.
#[derive(Clone, Copy)]
pub(crate) enum Red {
    /// `MPI_SUM`.
    Sum,
    /// `MPI_MIN`.
    Min,
    /// `MPI_MAX`.
    Max,
}

fn dtype(t: Ty) -> ffi::MPI_Datatype {
    // SAFETY: reading constants that MPI initialised.
    unsafe {
        match t {
            Ty::Byte => ffi::RSMPI_UINT8_T,
            Ty::U64 => ffi::RSMPI_UINT64_T,
            Ty::F64 => ffi::RSMPI_DOUBLE,
        }
    }
}

fn redop(r: Red) -> ffi::MPI_Op {
    // SAFETY: as above.
    unsafe {
        match r {
            Red::Sum => ffi::RSMPI_SUM,
            Red::Min => ffi::RSMPI_MIN,
            Red::Max => ffi::RSMPI_MAX,
        }
    }
}

/// A count as MPI's `int`.
pub(crate) fn int(n: usize) -> Result<c_int, Error> {
    c_int::try_from(n).map_err(|_| {
        Error::Backend(format!(
            "mpi backend: {n} elements exceed MPI's int count (2 GiB per call)"
        ))
    })
}

fn check(rc: c_int, what: &str) -> Result<(), Error> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::Backend(format!("{what} failed (MPI error {rc})")))
    }
}

/// One posted request plus the buffers it uses.
pub(crate) struct Posted {
    req: ffi::MPI_Request,
    what: &'static str,
}

/// A wait that passed its deadline; the request and its buffers were leaked.
#[derive(Debug)]
pub(crate) struct Stuck {
    /// The MPI call that did not complete.
    pub what: &'static str,
}

/// Tests the requests until all complete, or returns [`Stuck`] once `deadline` passes (then
/// `bufs` is leaked). On success the buffers come back.
pub(crate) fn complete(
    posted: Vec<Posted>,
    bufs: Vec<Vec<u8>>,
    deadline: Option<Instant>,
) -> Result<Result<Vec<Vec<u8>>, Stuck>, Error> {
    let mut spins = 0u32;
    for mut p in posted {
        loop {
            let mut flag: c_int = 0;
            // SAFETY: `p.req` is a live request from one of the posting functions below.
            let rc = unsafe { ffi::MPI_Test(&mut p.req, &mut flag, ffi::RSMPI_STATUS_IGNORE) };
            check(rc, "MPI_Test")?;
            if flag != 0 {
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                std::mem::forget(bufs);
                return Ok(Err(Stuck { what: p.what }));
            }
            spins = spins.saturating_add(1);
            if spins > 1000 {
                // Oversubscribed runs (more ranks than cores) need the core back.
                std::thread::yield_now();
            }
        }
    }
    Ok(Ok(bufs))
}

/// Tests `p` once; `true` once it has completed (MPI then resets the handle).
pub(crate) fn test(p: &mut Posted) -> Result<bool, Error> {
    let mut flag: c_int = 0;
    // SAFETY: `p.req` is a live request from one of the posting functions below, or the null
    // request MPI leaves after completion (which tests as complete).
    let rc = unsafe { ffi::MPI_Test(&mut p.req, &mut flag, ffi::RSMPI_STATUS_IGNORE) };
    check(rc, "MPI_Test")?;
    Ok(flag != 0)
}

/// `MPI_Comm_split` of `c`, blocking and collective over `c`: the ranks of one `color` form a
/// new communicator ordered by `key`; `None` (`MPI_UNDEFINED`) joins none.
pub(crate) fn split(c: Comm, color: Option<usize>, key: usize) -> Result<Option<Comm>, Error> {
    // SAFETY: reading a constant that MPI initialised.
    let undefined = unsafe { ffi::RSMPI_UNDEFINED };
    let color = match color {
        Some(v) => int(v)?,
        None => undefined,
    };
    // SAFETY: as above.
    let mut out = unsafe { ffi::RSMPI_COMM_NULL };
    // SAFETY: `c` is a live communicator; `out` receives the new handle.
    let rc = unsafe { ffi::MPI_Comm_split(c.0, color, int(key)?, &mut out) };
    check(rc, "MPI_Comm_split")?;
    // SAFETY: as above.
    let null = unsafe { ffi::RSMPI_COMM_NULL };
    Ok((out != null).then_some(Comm(out)))
}

/// `MPI_Comm_free` of a communicator made by [`split`].
pub(crate) fn free(mut c: Comm) {
    // SAFETY: a communicator this process made and no longer uses.
    unsafe { ffi::MPI_Comm_free(&mut c.0) };
}

/// The number of ranks of `c` and this process's rank in it.
pub(crate) fn size_rank(c: Comm) -> Result<(usize, usize), Error> {
    let (mut size, mut rank): (c_int, c_int) = (0, 0);
    // SAFETY: a live communicator; plain integer out-parameters.
    check(
        unsafe { ffi::MPI_Comm_size(c.0, &mut size) },
        "MPI_Comm_size",
    )?;
    // SAFETY: as above.
    check(
        unsafe { ffi::MPI_Comm_rank(c.0, &mut rank) },
        "MPI_Comm_rank",
    )?;
    Ok((size.max(0) as usize, rank.max(0) as usize))
}

/// `MPI_Abort` of the world with `code`: the launcher ends every process. Never returns.
pub(crate) fn abort(c: Comm, code: u8) -> ! {
    // SAFETY: aborting takes no buffers.
    unsafe { ffi::MPI_Abort(c.0, c_int::from(code)) };
    std::process::exit(i32::from(code))
}

/// `MPI_Finalize`, for a process that ends itself without unwinding (the others' finalize
/// waits for it, so a process leaving this way leaves after every process stopped using MPI).
pub(crate) fn finalize() {
    // SAFETY: called once, by a process that makes no MPI call after it (it exits).
    unsafe { ffi::MPI_Finalize() };
}

type PostFn<'a> = dyn FnOnce(*mut ffi::MPI_Request) -> c_int + 'a;

fn post(what: &'static str, f: Box<PostFn<'_>>) -> Result<Posted, Error> {
    // SAFETY: MPI_REQUEST_NULL is a constant; the closure writes the real handle.
    let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
    check(f(&mut req), what)?;
    Ok(Posted { req, what })
}

fn cp(b: &[u8]) -> *const c_void {
    b.as_ptr().cast()
}

fn mp(b: &mut [u8]) -> *mut c_void {
    b.as_mut_ptr().cast()
}

/// `MPI_Iallgather` of `send` (every rank the same length) into `recv`.
pub(crate) fn allgather(c: Comm, send: &[u8], recv: &mut [u8]) -> Result<Posted, Error> {
    let n = int(send.len())?;
    let (s, r, t) = (cp(send), mp(recv), dtype(Ty::Byte));
    // SAFETY: both buffers outlive the request (the caller passes them to `complete`).
    post(
        "MPI_Iallgather",
        Box::new(move |q| unsafe { ffi::MPI_Iallgather(s, n, t, r, n, t, c.0, q) }),
    )
}

/// `MPI_Igather` of `send` to `root` (`recv` used on the root only).
pub(crate) fn gather(c: Comm, send: &[u8], recv: &mut [u8], root: usize) -> Result<Posted, Error> {
    let (n, root) = (int(send.len())?, int(root)?);
    let (s, r, t) = (cp(send), mp(recv), dtype(Ty::Byte));
    // SAFETY: as in `allgather`.
    post(
        "MPI_Igather",
        Box::new(move |q| unsafe { ffi::MPI_Igather(s, n, t, r, n, t, root, c.0, q) }),
    )
}

/// `MPI_Iscatter` of the root's `send` in blocks of `recv.len()`.
pub(crate) fn scatter(c: Comm, send: &[u8], recv: &mut [u8], root: usize) -> Result<Posted, Error> {
    let (n, root) = (int(recv.len())?, int(root)?);
    let (s, r, t) = (cp(send), mp(recv), dtype(Ty::Byte));
    // SAFETY: as in `allgather`.
    post(
        "MPI_Iscatter",
        Box::new(move |q| unsafe { ffi::MPI_Iscatter(s, n, t, r, n, t, root, c.0, q) }),
    )
}

/// `MPI_Ialltoall` in blocks of `block` bytes.
pub(crate) fn alltoall(
    c: Comm,
    send: &[u8],
    recv: &mut [u8],
    block: usize,
) -> Result<Posted, Error> {
    let n = int(block)?;
    let (s, r, t) = (cp(send), mp(recv), dtype(Ty::Byte));
    // SAFETY: as in `allgather`.
    post(
        "MPI_Ialltoall",
        Box::new(move |q| unsafe { ffi::MPI_Ialltoall(s, n, t, r, n, t, c.0, q) }),
    )
}

/// `MPI_Ibcast` of `buf` from `root`.
pub(crate) fn bcast(c: Comm, buf: &mut [u8], root: usize) -> Result<Posted, Error> {
    let (n, root) = (int(buf.len())?, int(root)?);
    let (b, t) = (mp(buf), dtype(Ty::Byte));
    // SAFETY: as in `allgather`.
    post(
        "MPI_Ibcast",
        Box::new(move |q| unsafe { ffi::MPI_Ibcast(b, n, t, root, c.0, q) }),
    )
}

/// `MPI_Isend` of `buf` to `peer`.
pub(crate) fn send(c: Comm, buf: &[u8], peer: usize, tag: i32) -> Result<Posted, Error> {
    let (n, peer) = (int(buf.len())?, int(peer)?);
    let (b, t) = (cp(buf), dtype(Ty::Byte));
    // SAFETY: as in `allgather`.
    post(
        "MPI_Isend",
        Box::new(move |q| unsafe { ffi::MPI_Isend(b, n, t, peer, tag, c.0, q) }),
    )
}

/// `MPI_Irecv` into `buf` from `peer`.
pub(crate) fn recv(c: Comm, buf: &mut [u8], peer: usize, tag: i32) -> Result<Posted, Error> {
    let (n, peer) = (int(buf.len())?, int(peer)?);
    let (b, t) = (mp(buf), dtype(Ty::Byte));
    // SAFETY: as in `allgather`.
    post(
        "MPI_Irecv",
        Box::new(move |q| unsafe { ffi::MPI_Irecv(b, n, t, peer, tag, c.0, q) }),
    )
}

/// `MPI_Ibarrier`.
pub(crate) fn barrier(c: Comm) -> Result<Posted, Error> {
    // SAFETY: no buffers.
    post(
        "MPI_Ibarrier",
        Box::new(move |q| unsafe { ffi::MPI_Ibarrier(c.0, q) }),
    )
}

/// `MPI_Iallreduce` of `send` into `recv`, elements of type `ty`.
pub(crate) fn allreduce(
    c: Comm,
    send: &[u8],
    recv: &mut [u8],
    ty: Ty,
    red: Red,
) -> Result<Posted, Error> {
    let width = match ty {
        Ty::Byte => 1,
        Ty::U64 | Ty::F64 => 8,
    };
    let n = int(send.len() / width)?;
    let (s, r, t, o) = (cp(send), mp(recv), dtype(ty), redop(red));
    // SAFETY: as in `allgather`.
    post(
        "MPI_Iallreduce",
        Box::new(move |q| unsafe { ffi::MPI_Iallreduce(s, r, n, t, o, c.0, q) }),
    )
}

//! The call trace (`FAKE_NCCL_TRACE=PATH`): one line per NCCL API call, appended and flushed
//! under a lock so threads never interleave within a line, and in one write so processes
//! sharing the file do not either. The format is documented in the
//! crate root. Unit tests capture their own thread's lines with [`capture`] instead.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

thread_local! {
    static CAPTURE: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

fn file() -> Option<&'static Mutex<File>> {
    static FILE: OnceLock<Option<Mutex<File>>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::var_os("FAKE_NCCL_TRACE").filter(|p| !p.is_empty())?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()?;
        Some(Mutex::new(f))
    })
    .as_ref()
}

/// Whether lines are wanted (build them only then).
pub fn enabled() -> bool {
    CAPTURE.with(|c| c.borrow().is_some()) || file().is_some()
}

/// Writes one line: the C name, then `key=value` fields, tab-separated.
pub fn line(name: &str, fields: &[(&str, String)]) {
    if !enabled() {
        return;
    }
    let mut text = name.to_owned();
    for (k, v) in fields {
        text.push('\t');
        text.push_str(k);
        text.push('=');
        text.push_str(v);
    }
    let captured = CAPTURE.with(|c| match c.borrow_mut().as_mut() {
        Some(lines) => {
            lines.push(text.clone());
            true
        }
        None => false,
    });
    if !captured {
        if let Some(f) = file() {
            let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
            // One write per line: processes of one job append to one file, and O_APPEND
            // keeps a single write whole, where `writeln!` may split it.
            text.push('\n');
            let _ = f.write_all(text.as_bytes());
        }
    }
}

/// Runs `f` with this thread's trace lines captured, returning them.
pub fn capture(f: impl FnOnce()) -> Vec<String> {
    CAPTURE.with(|c| *c.borrow_mut() = Some(Vec::new()));
    f();
    CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default()
}

/// The line of a communication call (fields as documented in the crate root).
#[allow(clippy::too_many_arguments)]
pub fn coll(
    st: &crate::state::State,
    name: &str,
    comm: Option<u64>,
    ptrs: &[u64; 2],
    count: usize,
    dtype: u32,
    op: Option<u32>,
    root: i32,
    peer: i32,
    stream: *mut std::ffi::c_void,
) {
    if !enabled() {
        return;
    }
    let c = comm.and_then(|id| st.comms.get(&id));
    let (rank, nranks, dev) = c.map_or((-1, -1, -1), |c| {
        (c.rank as i64, c.nranks as i64, c.device as i64)
    });
    let op_text = match op {
        None => "-1".to_owned(),
        Some(code @ 0..=4) => code.to_string(),
        Some(code) => match c.and_then(|c| c.premulsum.get(code as usize - 5).copied().flatten()) {
            Some(pm) => format!("premulsum({})", premulsum_value(st, &pm)),
            None => code.to_string(),
        },
    };
    line(
        name,
        &[
            ("rank", rank.to_string()),
            ("nranks", nranks.to_string()),
            ("dev", dev.to_string()),
            ("send", st.describe_ptr(ptrs[0])),
            ("recv", st.describe_ptr(ptrs[1])),
            ("count", count.to_string()),
            ("dtype", dtype.to_string()),
            ("op", op_text),
            ("root", root.to_string()),
            ("peer", peer.to_string()),
            ("stream", describe_stream(stream)),
            ("group", crate::group::depth().to_string()),
            // CUDA events alive in the process: a harness that creates events while it times
            // shows up as a count that grows between the calls of one timed loop.
            ("events", st.events.len().to_string()),
        ],
    );
}

/// `null`, or `s<id>` for a stream handle.
pub fn describe_stream(h: *mut std::ffi::c_void) -> String {
    if h.is_null() {
        return "null".to_owned();
    }
    match crate::state::unhandle(crate::state::TAG_STREAM, h) {
        Some(id) => format!("s{id}"),
        None => format!("{h:p}"),
    }
}

/// A PreMulSum scalar's value (a device scalar is read now; `device` if unreadable).
pub fn premulsum_value(st: &crate::state::State, pm: &crate::comm::PreMul) -> String {
    let size = crate::reduce::dtype_size(pm.dtype);
    let bytes = match pm.scalar {
        crate::comm::Scalar::Host(b) => b,
        crate::comm::Scalar::Device(p) if st.alloc_holding(p, size).is_some() => {
            let mut b = [0u8; 8];
            // SAFETY: inside a live allocation.
            unsafe { std::ptr::copy_nonoverlapping(p as usize as *const u8, b.as_mut_ptr(), size) };
            b
        }
        crate::comm::Scalar::Device(_) => return "device".to_owned(),
    };
    format!("{:?}", crate::reduce::scalar_to_f64(pm.dtype, &bytes))
}

//! The per-call lines: COLL (`AllReduce: opCount ...`) and every TUNING decision format
//! (see docs/nccl-log-formats.md for who prints them and what the bytes mean):
//!
//! | versions | format after the prefix |
//! |---|---|
//! | 2.20-2.22 | `%ld Bytes -> Algo %d proto %d time %f` |
//! | 2.23 | `%s: %ld Bytes -> Algo %d proto %d time %f` |
//! | 2.24+ | `%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}` |
//! | 2.27+ | `%s [Symmetric]: %ld Bytes -> Kernel %s nchannels %d nthreads %d[ nWorks %d]` |
//! | 2.29+ | `%s [Copy Engine]: %ld Bytes -> cudaMemcpy%s` |
//! | 2.30 | `%s [Hierarchical CE]: %ld Bytes -> RMA proxy + CE` |
//!
//! Numeric algorithm numbers stay numbers here; the parser maps them with the table of the
//! version that wrote the line (it knows the version, this module does not).

use super::event::{CollCall, DecisionPath};
use super::names::{Algo, Func, Proto};
use super::scan::{text, Cursor};

/// The algorithm as the line gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlgoField {
    /// `Algo %d` (needs the version's enum).
    Index(i64),
    /// `Algo %s`, already resolved (`None`: a name this parser does not know).
    Name(Option<Algo>),
    /// The line has no algorithm (symmetric and copy-engine paths).
    Absent,
}

/// A TUNING line before the parser adds its context.
#[derive(Debug, Clone, PartialEq)]
pub struct TuningLine {
    /// The function named on the line (none on 2.20-2.22 lines).
    pub func: Option<Func>,
    /// Bytes.
    pub bytes: u64,
    /// Algorithm.
    pub algo: AlgoField,
    /// Protocol (`Index` forms resolved already: protocols never changed numbers).
    pub proto: Option<Proto>,
    /// Whether a protocol was given but not understood.
    pub bad_proto: bool,
    /// `channel{Lo..Hi}` or `0..nchannels-1` of a symmetric kernel.
    pub channels: Option<(u32, u32)>,
    /// Model time in microseconds.
    pub time_us: Option<f64>,
    /// Which format.
    pub path: DecisionPath,
    /// Symmetric kernel name or copy-engine suffix.
    pub kernel: Option<String>,
}

/// What a per-call message is.
#[derive(Debug, Clone, PartialEq)]
pub enum PerCall {
    /// A COLL line.
    Coll(CollCall),
    /// A TUNING line.
    Tuning(TuningLine),
    /// It has the shape of one (`... Bytes -> ...` or `...: opCount`) but does not parse.
    Malformed,
}

/// Reads a COLL or TUNING message; `None` when it is neither.
pub fn parse(msg: &[u8]) -> Option<PerCall> {
    let first = *msg.first()?;
    if first.is_ascii_digit() {
        // 2.20-2.22 (and TRACE copies of later versions): no function name.
        return memchr::memmem::find(msg, b" Bytes -> ")
            .map(|_| numeric(None, Cursor::new(msg)).map_or(PerCall::Malformed, PerCall::Tuning));
    }
    if !first.is_ascii_uppercase() {
        return None;
    }
    let mut c = Cursor::new(msg);
    let name = c.ident();
    let func = Func::parse(name);
    if c.lit(b": ").is_some() {
        let func = func?;
        if c.lit(b"opCount ").is_some() {
            return Some(coll(func, c).map_or(PerCall::Malformed, PerCall::Coll));
        }
        if !c.rest().first()?.is_ascii_digit() {
            return None; // `AllReduce: tuner chunk size ...` and other messages
        }
        let mut probe = c;
        probe.uint()?;
        probe.lit(b" Bytes -> Algo ")?;
        return Some(if probe.rest().first()?.is_ascii_digit() {
            numeric(Some(func), c).map_or(PerCall::Malformed, PerCall::Tuning)
        } else {
            named(func, c).map_or(PerCall::Malformed, PerCall::Tuning)
        });
    }
    let func = func?;
    let path = if c.lit(b" [Symmetric]: ").is_some() {
        DecisionPath::Symmetric
    } else if c.lit(b" [Copy Engine]: ").is_some() {
        DecisionPath::CopyEngine
    } else if c.lit(b" [Hierarchical CE]: ").is_some() {
        DecisionPath::HierarchicalCe
    } else {
        return None;
    };
    Some(special(func, path, c).map_or(PerCall::Malformed, PerCall::Tuning))
}

fn base(func: Option<Func>, bytes: u64, path: DecisionPath) -> TuningLine {
    TuningLine {
        func,
        bytes,
        algo: AlgoField::Absent,
        proto: None,
        bad_proto: false,
        channels: None,
        time_us: None,
        path,
        kernel: None,
    }
}

/// `%ld Bytes -> Algo %d proto %d time %f`.
fn numeric(func: Option<Func>, mut c: Cursor<'_>) -> Option<TuningLine> {
    let bytes = c.uint()?;
    c.lit(b" Bytes -> Algo ")?;
    let algo = c.int()?;
    c.lit(b" proto ")?;
    let proto = c.int()?;
    c.lit(b" time ")?;
    let time = c.float()?;
    let mut t = base(func, bytes, DecisionPath::Kernel);
    t.algo = AlgoField::Index(algo);
    t.proto = Proto::from_index(proto);
    t.bad_proto = t.proto.is_none();
    t.time_us = time.is_finite().then_some(time);
    Some(t)
}

/// `%ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}`.
fn named(func: Func, mut c: Cursor<'_>) -> Option<TuningLine> {
    let bytes = c.uint()?;
    c.lit(b" Bytes -> Algo ")?;
    let algo = c.word();
    c.lit(b" proto ")?;
    let proto = c.word();
    let mut t = base(Some(func), bytes, DecisionPath::Kernel);
    t.algo = AlgoField::Name(Algo::parse(algo));
    t.proto = Proto::parse(proto);
    t.bad_proto = t.proto.is_none();
    if c.lit(b" channel{Lo..Hi}={").is_some() {
        let lo = c.u32()?;
        c.lit(b"..")?;
        let hi = c.u32()?;
        t.channels = Some((lo, hi));
    }
    Some(t)
}

/// The rest of a `[Symmetric]`, `[Copy Engine]` or `[Hierarchical CE]` line.
fn special(func: Func, path: DecisionPath, mut c: Cursor<'_>) -> Option<TuningLine> {
    let bytes = c.uint()?;
    c.lit(b" Bytes -> ")?;
    let mut t = base(Some(func), bytes, path);
    match path {
        DecisionPath::Symmetric => {
            c.lit(b"Kernel ")?;
            t.kernel = Some(text(c.word(), 128));
            c.lit(b" nchannels ")?;
            let n = c.u32()?;
            t.channels = n.checked_sub(1).map(|hi| (0, hi));
        }
        DecisionPath::CopyEngine => {
            c.lit(b"cudaMemcpy")?;
            let suffix = c.rest();
            let suffix = suffix.strip_prefix(b"; ").unwrap_or(suffix);
            t.kernel = (!suffix.is_empty()).then(|| text(suffix, 128));
        }
        DecisionPath::HierarchicalCe | DecisionPath::Kernel => {}
    }
    Some(t)
}

/// `opCount %lx sendbuff %p recvbuff %p count %zi datatype %d op %d root %d comm %p
/// [nranks=%d] stream %p` (after `Func: `).
fn coll(func: Func, mut c: Cursor<'_>) -> Option<CollCall> {
    let op_count = c.hex()?;
    c.lit(b" sendbuff ")?;
    c.word();
    c.lit(b" recvbuff ")?;
    c.word();
    c.lit(b" count ")?;
    let count = c.uint()?;
    c.lit(b" datatype ")?;
    let datatype = c.int()?;
    c.lit(b" op ")?;
    let op = c.int()?;
    c.lit(b" root ")?;
    let root = c.int()?;
    c.lit(b" comm ")?;
    let comm = c.hex()?;
    c.lit(b" [nranks=")?;
    let nranks = c.u32()?;
    Some(CollCall {
        func,
        op_count,
        count,
        datatype,
        op,
        root,
        comm,
        nranks,
    })
}

#[cfg(test)]
fn tuning(msg: &str) -> TuningLine {
    match parse(msg.as_bytes()) {
        Some(PerCall::Tuning(t)) => t,
        other => panic!("{msg}: {other:?}"),
    }
}

#[test]
fn every_decision_format_parses() {
    let t = tuning("1048576 Bytes -> Algo 1 proto 2 time 36.118999");
    assert_eq!(
        (t.func, t.bytes, t.algo),
        (None, 1048576, AlgoField::Index(1))
    );
    assert_eq!((t.proto, t.time_us), (Some(Proto::Simple), Some(36.118999)));
    let t = tuning("AllGather: 4096 Bytes -> Algo 6 proto 0 time 12.000000");
    assert_eq!(
        (t.func, t.algo),
        (Some(Func::AllGather), AlgoField::Index(6))
    );
    let t = tuning("AllReduce: 8388608 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..23}");
    assert_eq!(t.algo, AlgoField::Name(Some(Algo::Ring)));
    assert_eq!((t.proto, t.channels), (Some(Proto::Simple), Some((0, 23))));
    let t = tuning("AllReduce: 8 Bytes -> Algo Ring proto LL channel{Lo..Hi}={2..3}");
    assert_eq!((t.proto, t.channels), (Some(Proto::Ll), Some((2, 3))));
    let t = tuning("AllReduce [Symmetric]: 65536 Bytes -> Kernel AllReduce_RSxLDMC_AGxSTMC nchannels 4 nthreads 512 nWorks 1");
    assert_eq!(t.path, DecisionPath::Symmetric);
    assert_eq!(t.kernel.as_deref(), Some("AllReduce_RSxLDMC_AGxSTMC"));
    assert_eq!(t.channels, Some((0, 3)));
    let t = tuning(
        "AllGather [Copy Engine]: 1048576 Bytes -> cudaMemcpy; CE synchronization with NVLS",
    );
    assert_eq!(t.path, DecisionPath::CopyEngine);
    assert_eq!(t.kernel.as_deref(), Some("CE synchronization with NVLS"));
    assert_eq!(
        tuning("AllGather [Copy Engine]: 8 Bytes -> cudaMemcpy").kernel,
        None
    );
    let t = tuning("AllGather [Hierarchical CE]: 1048576 Bytes -> RMA proxy + CE");
    assert_eq!((t.path, t.bytes), (DecisionPath::HierarchicalCe, 1048576));
    let t = tuning("AllReduce: 8 Bytes -> Algo WEIRD proto FAST channel{Lo..Hi}={0..0}");
    assert_eq!(
        (t.algo, t.proto, t.bad_proto),
        (AlgoField::Name(None), None, true)
    );
}

#[test]
fn coll_lines_parse_and_other_messages_are_not_decisions() {
    let m = "AllReduce: opCount 1f sendbuff 0x7f00 recvbuff 0x7f80 count 2097152 datatype 7 op 0 root 0 comm 0x55b6aa64a990 [nranks=2] stream 0x55b6a98daaf0";
    let Some(PerCall::Coll(c)) = parse(m.as_bytes()) else {
        panic!()
    };
    assert_eq!(
        (c.op_count, c.count, c.datatype, c.nranks),
        (0x1f, 2097152, 7, 2)
    );
    assert_eq!(c.comm, 0x55b6aa64a990);
    for other in [
        "AllReduce: tuner chunk size 1 exceeds buffer max 2, clamping",
        "Using network IB",
        "24 coll channels, 24 collnet channels, 0 nvls channels",
        "Foo: 12 Bytes -> Algo 1 proto 1 time 1",
        "",
    ] {
        assert_eq!(parse(other.as_bytes()), None, "{other}");
    }
    for bad in [
        "AllReduce: opCount zz",
        "AllReduce: 12 Bytes -> Algo RING",
        "12 Bytes -> Algo x proto 1 time 1",
        "AllReduce [Symmetric]: 1 Bytes -> Kernel k nchannels x",
    ] {
        assert_eq!(parse(bad.as_bytes()), Some(PerCall::Malformed), "{bad}");
    }
}

//! NCCL's names and enum numbers as its debug log prints them: functions, algorithms,
//! protocols and the library version (`NCCL version 2.27.7+cuda12.9`).
//!
//! Algorithm and protocol names are matched case-insensitively in both spellings NCCL uses
//! (`RING`/`Ring`, `COLLNET_DIRECT`/`CollNetDirect`, `NVLS_TREE`/`NVLSTree`, `SIMPLE`/`Simple`)
//! and are always shown in the init-table spelling, which is also what `NCCL_ALGO` accepts.

use serde::Serialize;
use std::fmt;

/// A collective (or point-to-point) function as NCCL names it (`ncclFuncToString`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Func {
    /// `Broadcast`.
    Broadcast,
    /// `Reduce`.
    Reduce,
    /// `AllGather`.
    AllGather,
    /// `ReduceScatter`.
    ReduceScatter,
    /// `AllReduce`.
    AllReduce,
    /// `SendRecv`.
    SendRecv,
    /// `Send`.
    Send,
    /// `Recv`.
    Recv,
    /// `AlltoAll` (2.28+).
    AlltoAll,
    /// `Gather` (2.28+).
    Gather,
    /// `Scatter` (2.28+).
    Scatter,
    /// `AllGatherV` (2.29+).
    AllGatherV,
}

impl Func {
    /// The five functions of the tuning-model table, in its row order.
    pub const TABLE_ROWS: [Func; 5] = [
        Func::Broadcast,
        Func::Reduce,
        Func::AllGather,
        Func::ReduceScatter,
        Func::AllReduce,
    ];

    /// Every function (the test that `parse` reads each spelling back).
    #[cfg(test)]
    const ALL: [Func; 12] = [
        Func::Broadcast,
        Func::Reduce,
        Func::AllGather,
        Func::ReduceScatter,
        Func::AllReduce,
        Func::SendRecv,
        Func::Send,
        Func::Recv,
        Func::AlltoAll,
        Func::Gather,
        Func::Scatter,
        Func::AllGatherV,
    ];

    /// NCCL's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Func::Broadcast => "Broadcast",
            Func::Reduce => "Reduce",
            Func::AllGather => "AllGather",
            Func::ReduceScatter => "ReduceScatter",
            Func::AllReduce => "AllReduce",
            Func::SendRecv => "SendRecv",
            Func::Send => "Send",
            Func::Recv => "Recv",
            Func::AlltoAll => "AlltoAll",
            Func::Gather => "Gather",
            Func::Scatter => "Scatter",
            Func::AllGatherV => "AllGatherV",
        }
    }

    /// The function named exactly `name` (NCCL prints one spelling only).
    pub fn parse(name: &[u8]) -> Option<Func> {
        // A match, not a search of `ALL`: it runs once per COLL line.
        Some(match name {
            b"Broadcast" => Func::Broadcast,
            b"Reduce" => Func::Reduce,
            b"AllGather" => Func::AllGather,
            b"ReduceScatter" => Func::ReduceScatter,
            b"AllReduce" => Func::AllReduce,
            b"SendRecv" => Func::SendRecv,
            b"Send" => Func::Send,
            b"Recv" => Func::Recv,
            b"AlltoAll" => Func::AlltoAll,
            b"Gather" => Func::Gather,
            b"Scatter" => Func::Scatter,
            b"AllGatherV" => Func::AllGatherV,
            _ => return None,
        })
    }
}

impl fmt::Display for Func {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An algorithm, numbered as `NCCL_ALGO_*` (the same in every version 2.18-2.30; PAT from 2.23).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Algo {
    /// 0.
    Tree,
    /// 1.
    Ring,
    /// 2.
    CollNetDirect,
    /// 3.
    CollNetChain,
    /// 4.
    Nvls,
    /// 5.
    NvlsTree,
    /// 6 (2.23+).
    Pat,
}

impl Algo {
    const ALL: [Algo; 7] = [
        Algo::Tree,
        Algo::Ring,
        Algo::CollNetDirect,
        Algo::CollNetChain,
        Algo::Nvls,
        Algo::NvlsTree,
        Algo::Pat,
    ];

    /// The init-table spelling (`ncclAlgoStr`), as `NCCL_ALGO` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Algo::Tree => "Tree",
            Algo::Ring => "Ring",
            Algo::CollNetDirect => "CollNetDirect",
            Algo::CollNetChain => "CollNetChain",
            Algo::Nvls => "NVLS",
            Algo::NvlsTree => "NVLSTree",
            Algo::Pat => "PAT",
        }
    }

    /// The algorithm numbered `index` in a log of a version with `count` algorithms (6 up to
    /// 2.22, 7 from 2.23); `None` out of range.
    pub fn from_index(index: i64, count: usize) -> Option<Algo> {
        usize::try_from(index)
            .ok()
            .filter(|&i| i < count.min(Algo::ALL.len()))
            .map(|i| Algo::ALL[i])
    }

    /// Either spelling, any case: `RING`, `Ring`, `COLLNET_DIRECT`, `CollNetDirect`, `NVLS_TREE`.
    pub fn parse(name: &[u8]) -> Option<Algo> {
        let mut key = [0u8; 16];
        let n = fold(name, &mut key)?;
        Algo::ALL.into_iter().find(|a| {
            let mut k = [0u8; 16];
            fold(a.as_str().as_bytes(), &mut k) == Some(n) && k[..n] == key[..n]
        })
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A protocol, numbered as `NCCL_PROTO_*` (0 LL, 1 LL128, 2 Simple in every version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Proto {
    /// 0.
    Ll,
    /// 1.
    Ll128,
    /// 2.
    Simple,
}

impl Proto {
    /// The three protocols in index order (the column order of the tuning table).
    pub const ALL: [Proto; 3] = [Proto::Ll, Proto::Ll128, Proto::Simple];

    /// The init-table spelling: `LL`, `LL128`, `Simple`.
    pub fn as_str(self) -> &'static str {
        match self {
            Proto::Ll => "LL",
            Proto::Ll128 => "LL128",
            Proto::Simple => "Simple",
        }
    }

    /// The protocol numbered `index`.
    pub fn from_index(index: i64) -> Option<Proto> {
        usize::try_from(index)
            .ok()
            .and_then(|i| Proto::ALL.get(i).copied())
    }

    /// Either spelling, any case.
    pub fn parse(name: &[u8]) -> Option<Proto> {
        Proto::ALL
            .into_iter()
            .find(|p| p.as_str().as_bytes().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Proto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Lower-cases `name` into `out` without underscores; `None` when it does not fit.
fn fold(name: &[u8], out: &mut [u8; 16]) -> Option<usize> {
    let mut n = 0;
    for &b in name.iter().filter(|&&b| b != b'_') {
        *out.get_mut(n)? = b.to_ascii_lowercase();
        n += 1;
    }
    Some(n)
}

/// `ncclDataType_t` names by number (0 int8 ... 9 bfloat16, 10 and 11 the fp8 types from 2.24);
/// `None` past Float8e5m2.
pub fn dtype_name(n: i64) -> Option<&'static str> {
    const NAMES: [&str; 12] = [
        "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double",
        "bfloat16", "f8e4m3", "f8e5m2",
    ];
    usize::try_from(n).ok().and_then(|i| NAMES.get(i).copied())
}

/// `ncclRedOp_t` names by number; 5 and above are user (PreMulSum) ops.
pub fn op_name(n: i64) -> &'static str {
    match n {
        0 => "sum",
        1 => "prod",
        2 => "max",
        3 => "min",
        4 => "avg",
        _ => "user",
    }
}

/// An NCCL library version `major.minor.patch` (the `+cudaX.Y` build suffix is kept apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct NcclVersion {
    /// 2.
    pub major: u32,
    /// 18 ... 30.
    pub minor: u32,
    /// Patch level.
    pub patch: u32,
}

impl NcclVersion {
    /// Reads `2.27.7+cuda13.0` (or `2.18.3`, `2.19.4a0+cuda12.2`): the leading `X.Y.Z`.
    pub fn parse(text: &[u8]) -> Option<NcclVersion> {
        let mut parts = [0u32; 3];
        let mut i = 0;
        for (k, part) in parts.iter_mut().enumerate() {
            let start = i;
            while i < text.len() && text[i].is_ascii_digit() && i - start < 6 {
                *part = *part * 10 + u32::from(text[i] - b'0');
                i += 1;
            }
            if i == start {
                return None;
            }
            if k < 2 {
                if text.get(i) != Some(&b'.') {
                    return None;
                }
                i += 1;
            }
        }
        Some(NcclVersion {
            major: parts[0],
            minor: parts[1],
            patch: parts[2],
        })
    }

    /// Number of algorithms in this version's enum: 7 from 2.23 (PAT), else 6.
    pub fn algo_count(self) -> usize {
        if (self.major, self.minor) >= (2, 23) {
            7
        } else {
            6
        }
    }

    /// Whether this parser knows the version's formats (2.18 through 2.30).
    pub fn is_known(self) -> bool {
        self.major == 2 && (18..=30).contains(&self.minor)
    }
}

impl fmt::Display for NcclVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[test]
fn every_function_name_reads_back() {
    for f in Func::ALL {
        assert_eq!(Func::parse(f.as_str().as_bytes()), Some(f));
    }
    assert_eq!(Func::parse(b"Allreduce"), None);
}

#[test]
fn algorithm_names_match_in_both_spellings_and_any_case() {
    for (name, algo) in [
        ("RING", Algo::Ring),
        ("Ring", Algo::Ring),
        ("COLLNET_DIRECT", Algo::CollNetDirect),
        ("CollNetChain", Algo::CollNetChain),
        ("NVLS_TREE", Algo::NvlsTree),
        ("NVLSTree", Algo::NvlsTree),
        ("nvls", Algo::Nvls),
        ("pat", Algo::Pat),
    ] {
        assert_eq!(Algo::parse(name.as_bytes()), Some(algo), "{name}");
    }
    assert_eq!(Algo::parse(b"RINGX"), None);
    assert_eq!(Algo::parse(b"A_VERY_LONG_NAME_THAT_OVERFLOWS"), None);
    assert_eq!(Proto::parse(b"SIMPLE"), Some(Proto::Simple));
    assert_eq!(Proto::parse(b"ll128"), Some(Proto::Ll128));
}

#[test]
fn numeric_algorithms_follow_the_version_enum() {
    assert_eq!(Algo::from_index(6, 6), None);
    assert_eq!(Algo::from_index(6, 7), Some(Algo::Pat));
    assert_eq!(Algo::from_index(-1, 7), None);
    assert_eq!(Proto::from_index(2), Some(Proto::Simple));
    assert_eq!(Proto::from_index(3), None);
    let v = NcclVersion::parse(b"2.22.3+cuda12.2").unwrap();
    assert_eq!((v.to_string(), v.algo_count()), ("2.22.3".into(), 6));
    assert_eq!(NcclVersion::parse(b"2.19.4a0+cuda").unwrap().patch, 4);
    assert_eq!(NcclVersion::parse(b"2.x"), None);
    assert_eq!(NcclVersion::parse(b"99999999.1.1"), None);
}

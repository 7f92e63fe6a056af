//! One rank's communication op ([`Op`]) as a call makes it and a stream holds it: the call
//! ([`Kind`]), its reduction ([`Red`]), and what identifies its partners ([`MatchKey`]).

/// A communication call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    AllReduce,
    Broadcast,
    Reduce,
    AllGather,
    ReduceScatter,
    AlltoAll,
    Gather,
    Scatter,
    Send,
    Recv,
}

impl Kind {
    /// The C entry point's name.
    pub fn c_name(self) -> &'static str {
        match self {
            Kind::AllReduce => "ncclAllReduce",
            Kind::Broadcast => "ncclBroadcast",
            Kind::Reduce => "ncclReduce",
            Kind::AllGather => "ncclAllGather",
            Kind::ReduceScatter => "ncclReduceScatter",
            Kind::AlltoAll => "ncclAlltoAll",
            Kind::Gather => "ncclGather",
            Kind::Scatter => "ncclScatter",
            Kind::Send => "ncclSend",
            Kind::Recv => "ncclRecv",
        }
    }

    /// Whether it reduces (takes an `op`).
    pub fn reduces(self) -> bool {
        matches!(self, Kind::AllReduce | Kind::Reduce | Kind::ReduceScatter)
    }

    pub fn is_p2p(self) -> bool {
        matches!(self, Kind::Send | Kind::Recv)
    }
}

/// What identifies an op's partners.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchKey {
    Coll {
        communicator: u64,
        seq: u64,
    },
    P2p {
        communicator: u64,
        src: usize,
        dst: usize,
        seq: u64,
    },
}

/// The reduction of one rank's op.
#[derive(Debug, Clone, Copy)]
pub enum Red {
    None,
    Builtin(u32),
    PreMulSum { code: u32, op: crate::comm::PreMul },
}

/// One rank's communication op.
#[derive(Debug, Clone)]
pub struct Op {
    pub comm: u64,
    pub rank: usize,
    pub nranks: usize,
    pub kind: Kind,
    pub send: u64,
    pub recv: u64,
    pub count: usize,
    pub dtype: u32,
    pub red: Red,
    pub root: i32,
    pub peer: i32,
    /// Assigned when placed on a stream (not at capture).
    pub key: Option<MatchKey>,
    pub index: u64,
    pub stalled: bool,
    pub corrupt: bool,
    /// The rank whose output a corrupt op spoils (`None`: the lowest with an output).
    pub corrupt_rank: Option<usize>,
    pub done: bool,
    /// Its part was sent to the process that computes the call ([`crate::xproc`]).
    pub published: bool,
}

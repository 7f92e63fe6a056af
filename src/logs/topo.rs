//! Init-time messages that need no context: version, ENV, bootstrap and network interfaces,
//! GPUDirect RDMA, channel connections and their transports, NVLS, communicator Init/Destroy,
//! channel counts and `Connected all ...` (formats by version in docs/nccl-log-formats.md).
//!
//! Each reader accepts every version's spelling of its line (2.18.1's busId-in-brackets
//! connection lines, `Bootstrap :` versus `Bootstrap:`, the 2.29 `[Rank N]` Init START, split
//! lines without commId).

use super::event::{CommInit, Connection, Event, Gdr, Nic, Phase, Transport};
use super::names::NcclVersion;
use super::scan::{field, field_hex, field_u32, text, Cursor};
use memchr::memmem;

/// Longest value kept from a message (longer ones are cut).
const MAX_TEXT: usize = 256;

/// Reads a context-free init message; `None` when it is none of these.
pub fn parse(msg: &[u8]) -> Option<Event> {
    let first = *msg.first()?;
    match first {
        b'C' => {
            if let Some(rest) = msg.strip_prefix(b"Channel ") {
                return channel(rest);
            }
            if msg.starts_with(b"Connected ") && !msg.starts_with(b"Connected to ") {
                return Some(Event::Connected(text(msg, MAX_TEXT)));
            }
        }
        b'N' => {
            if let Some(rest) = msg.strip_prefix(b"NCCL version ") {
                return Some(version(rest));
            }
            if msg.starts_with(b"NCCL git version") {
                return Some(Event::GitVersion);
            }
            if let Some(rest) = msg.strip_prefix(b"NET/IB : Using") {
                return Some(Event::NetIb(nics(rest)));
            }
            if msg.starts_with(b"NET/IB : No device found") {
                return Some(Event::NetIbNone);
            }
            if let Some(rest) = msg.strip_prefix(b"NVLS multicast support is ") {
                return Some(Event::Nvls {
                    available: !rest.starts_with(b"not "),
                });
            }
        }
        b'B' => {
            let rest = msg
                .strip_prefix(b"Bootstrap : Using")
                .or_else(|| msg.strip_prefix(b"Bootstrap: Using"));
            if let Some(rest) = rest {
                let mut c = Cursor::new(rest);
                c.spaces();
                return Some(Event::Bootstrap {
                    iface: text(c.word(), MAX_TEXT),
                });
            }
        }
        b'U' => {
            if let Some(rest) = msg.strip_prefix(b"Using network ") {
                return Some(Event::Network(text(rest, MAX_TEXT)));
            }
        }
        b'0'..=b'9' => {
            let mut c = Cursor::new(msg);
            let coll = c.u32()?;
            c.lit(b" coll channels")?;
            return Some(Event::Channels { coll });
        }
        _ => {}
    }
    if let Some(e) = comm_line(msg) {
        return Some(e);
    }
    if let Some(at) = memmem::find(msg, b"GPU Direct RDMA ") {
        return Some(gdr(&msg[at + 16..]));
    }
    if msg.starts_with(b"NCCL_") || msg.starts_with(b"CUDA_") {
        return env(msg);
    }
    topology(msg)
}

/// Topology dump lines (GRAPH): `+ NVL[240.0] - GPU/...` and `(1/240.0/NVL)` show NVLink, as
/// does a graph `Pattern ... type NVL/PIX` (or `NVB`, NVLink through another GPU); the
/// `=== System : maxBw` header and other `Pattern` lines show a topology without saying
/// NVLink is there.
fn topology(msg: &[u8]) -> Option<Event> {
    if memmem::find(msg, b"NVL[").is_some() || memmem::find(msg, b"/NVL)").is_some() {
        return Some(Event::NvLink);
    }
    if msg.starts_with(b"Pattern ") {
        let ty = memmem::find(msg, b", type ").map(|at| &msg[at + 7..])?;
        return Some(if ty.starts_with(b"NVL") || ty.starts_with(b"NVB") {
            Event::NvLink
        } else {
            Event::TopologyShown
        });
    }
    if msg.starts_with(b"=== System : ") {
        return Some(Event::TopologyShown);
    }
    None
}

fn version(rest: &[u8]) -> Event {
    let rest = rest.trim_ascii();
    Event::Version {
        version: NcclVersion::parse(rest),
        text: text(rest, 64),
    }
}

/// `NAME set by environment to VALUE[.]` or `NAME set to VALUE`.
fn env(msg: &[u8]) -> Option<Event> {
    let mut c = Cursor::new(msg);
    let name = c.ident();
    if c.lit(b" set by environment to ").is_none() {
        c.lit(b" set to ")?;
    }
    let value = c.rest();
    let value = value.trim_ascii_end();
    // Integer parameters end with a period (`%lld.`); string ones do not.
    let value = match value.strip_suffix(b".") {
        Some(v) if !v.is_empty() && v.iter().all(|b| b.is_ascii_digit() || *b == b'-') => v,
        _ => value,
    };
    Some(Event::Env {
        name: text(name, 64),
        value: text(value, MAX_TEXT),
    })
}

/// ` [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>` (2.30 may add `:rail`...).
fn nics(rest: &[u8]) -> Vec<Nic> {
    let list = rest.split(|&b| b == b';').next().unwrap_or(&[]);
    list.split(|&b| b == b' ')
        .filter_map(|tok| {
            let close = memchr::memchr(b']', tok)?;
            let dev = tok.get(close + 1..)?;
            if !tok.starts_with(b"[") || dev.is_empty() {
                return None; // `[RO]` and the like
            }
            let slash = memchr::memrchr(b'/', dev);
            let (name, link) = match slash {
                Some(s) => (&dev[..s], &dev[s + 1..]),
                None => (dev, &b""[..]),
            };
            let link = link.split(|&b| b == b':').next().unwrap_or(link);
            Some(Nic {
                name: text(name, 64),
                link: text(link, 16),
            })
        })
        .take(256)
        .collect()
}

/// After `GPU Direct RDMA `: `Enabled|Disabled for ... (distance D <= L), read R` and friends.
fn gdr(rest: &[u8]) -> Event {
    let enabled = rest.starts_with(b"Enabled");
    let per_hca = memmem::find(rest, b" for HCA ").is_some();
    let distance = memmem::find(rest, b"distance ").and_then(|at| {
        let mut c = Cursor::new(&rest[at + 9..]);
        let d = c.int()?;
        c.spaces();
        let _ = c.lit(b"<=").or_else(|| c.lit(b">"));
        c.spaces();
        Some((d, c.int()?))
    });
    Event::Gdr(Gdr {
        enabled,
        distance,
        per_hca,
    })
}

/// After `Channel `: a connection (`NN/C : a[x] -> b[y] [send] via T/...`) or rank 0's ring
/// order (`NN/NC : 0 1 2 ...`).
fn channel(rest: &[u8]) -> Option<Event> {
    let mut c = Cursor::new(rest);
    let channel = c.u32()?;
    let slash = if c.lit(b"/").is_some() { c.u32() } else { None };
    c.lit(b" :")?;
    let Some(via_at) = memmem::find(c.rest(), b" via ") else {
        if memmem::find(c.rest(), b"->").is_some() {
            return None;
        }
        return slash.map(|nchannels| Event::RingOrder { nchannels });
    };
    let via = &c.rest()[via_at + 5..];
    c.spaces();
    let from = c.u32()?;
    c.until(b"-> ")?;
    let to = c.u32()?;
    let transport = if via.starts_with(b"P2P") {
        Transport::P2P
    } else if via.starts_with(b"SHM") {
        Transport::Shm
    } else if via.starts_with(b"NET") {
        Transport::Net
    } else {
        Transport::Other
    };
    Some(Event::Connection(Connection {
        channel,
        from,
        to,
        transport,
        gdr: memmem::find(via, b"/GDRDMA").is_some(),
        via: text(via, 96),
    }))
}

/// `... comm 0x.. rank R nranks N cudaDev D [nvmlDev V] busId B [commId 0x..] - Init START`,
/// `... - Init COMPLETE`, `... - Destroy COMPLETE`, and the 2.20+ layout line
/// `comm %p rank %d nRanks %d nNodes %d ...` (taken as the start of that comm's init).
fn comm_line(msg: &[u8]) -> Option<Event> {
    let at = memmem::find(msg, b"comm 0x")?;
    if at > 0 && !msg.starts_with(b"nccl") && !msg.starts_with(b"[Rank ") {
        return None;
    }
    let body = &msg[at..];
    let phase = if body.ends_with(b"Init COMPLETE") {
        Phase::Complete
    } else if body.ends_with(b"Init START") {
        Phase::Start
    } else if body.ends_with(b"Destroy COMPLETE") || body.ends_with(b"Abort COMPLETE") {
        Phase::Destroy
    } else if field(body, b"nNodes").is_some() {
        Phase::Start
    } else {
        return None;
    };
    let nranks = field_u32(body, b"nranks").or_else(|| field_u32(body, b"nRanks"))?;
    Some(Event::CommInit(CommInit {
        comm: field_hex(body, b"comm")?,
        rank: field_u32(body, b"rank")?,
        nranks,
        cuda_dev: field_u32(body, b"cudaDev"),
        bus_id: field_hex(body, b"busId"),
        comm_id: field_hex(body, b"commId"),
        phase,
    }))
}

#[test]
fn init_lines_of_every_version_parse() {
    let e = parse(b"ncclCommInitRankConfig comm 0x55b6aa64a990 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 17000 commId 0x54fe282d32a87d85 - Init COMPLETE").unwrap();
    let Event::CommInit(i) = e else { panic!() };
    assert_eq!(
        (i.comm, i.rank, i.nranks, i.phase),
        (0x55b6aa64a990, 0, 2, Phase::Complete)
    );
    assert_eq!(
        (i.bus_id, i.comm_id),
        (Some(0x17000), Some(0x54fe282d32a87d85))
    );
    let e = parse(b"comm 0x1 rank 1 nranks 2 cudaDev 1 busId 1b000 commId 0x9 - Init COMPLETE");
    assert!(matches!(e, Some(Event::CommInit(CommInit { rank: 1, .. }))));
    let e = parse(b"[Rank 3] ncclCommInitRankConfig comm 0x5 rank 3 nranks 4 cudaDev 3 nvmlDev 3 busId 3000 commId 0x7 - Init START");
    assert!(matches!(
        e,
        Some(Event::CommInit(CommInit {
            phase: Phase::Start,
            rank: 3,
            ..
        }))
    ));
    let e = parse(b"comm 0x2 rank 9 nRanks 16 nNodes 2 localRanks 8 localRank 1 MNNVL 0");
    assert!(matches!(
        e,
        Some(Event::CommInit(CommInit {
            nranks: 16,
            comm_id: None,
            ..
        }))
    ));
    let e = parse(b"comm 0x2 rank 0 nranks 16 cudaDev 0 busId 53000 - Destroy COMPLETE");
    assert!(matches!(
        e,
        Some(Event::CommInit(CommInit {
            phase: Phase::Destroy,
            ..
        }))
    ));
    assert_eq!(parse(b"NVLS comm 0x1 headRank 0 nHeads 2 buffSize 1"), None);
}

#[test]
fn connections_ring_orders_and_network_lines_parse() {
    let Some(Event::Connection(c)) =
        parse(b"Channel 03/0 : 8[0] -> 0[0] [receive] via NET/AWS Libfabric/0/GDRDMA")
    else {
        panic!()
    };
    assert_eq!(
        (c.channel, c.from, c.to, c.transport, c.gdr),
        (3, 8, 0, Transport::Net, true)
    );
    assert_eq!(c.via, "NET/AWS Libfabric/0/GDRDMA");
    let Some(Event::Connection(c)) = parse(b"Channel 01 : 0[0] -> 1[1] via SHM/direct/direct")
    else {
        panic!()
    };
    assert_eq!((c.channel, c.transport), (1, Transport::Shm));
    let Some(Event::Connection(c)) = parse(b"Channel 00/0 : 0[1b000] -> 1[3d000] via P2P/CUMEM")
    else {
        panic!()
    };
    assert_eq!((c.to, c.transport), (1, Transport::P2P));
    assert_eq!(
        parse(b"Channel 00/24 : 0 1"),
        Some(Event::RingOrder { nchannels: 24 })
    );
    assert_eq!(
        parse(b"Channel 00/24 :"),
        Some(Event::RingOrder { nchannels: 24 })
    );
    assert_eq!(parse(b"Channel 00/0 : 0[0] -> 1[1]"), None);
    let Some(Event::NetIb(n)) =
        parse(b"NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB [RO]; OOB ib0:10.1.1.1<0>")
    else {
        panic!()
    };
    assert_eq!(
        n.iter().map(|n| n.link.as_str()).collect::<Vec<_>>(),
        ["RoCE", "IB"]
    );
    assert_eq!(n[0].name, "mlx5_0:1");
    let Some(Event::Gdr(g)) =
        parse(b"GPU Direct RDMA Disabled for GPU 17000 / HCA 0 (distance 5 > 4)")
    else {
        panic!()
    };
    assert_eq!(
        (g.enabled, g.distance, g.per_hca),
        (false, Some((5, 4)), false)
    );
    let Some(Event::Gdr(g)) = parse(b"NET/IB : GPU Direct RDMA Enabled for HCA 1 'mlx5_2'") else {
        panic!()
    };
    assert!(g.enabled && g.per_hca);
    assert_eq!(
        parse(b"Bootstrap: Using eno8303:192.168.0.3<0>"),
        Some(Event::Bootstrap {
            iface: "eno8303:192.168.0.3<0>".into()
        })
    );
    assert_eq!(
        parse(b"NCCL_IB_DISABLE set by environment to 0."),
        Some(Event::Env {
            name: "NCCL_IB_DISABLE".into(),
            value: "0".into()
        })
    );
    assert_eq!(
        parse(b"NCCL_SOCKET_IFNAME set to eth0."),
        Some(Event::Env {
            name: "NCCL_SOCKET_IFNAME".into(),
            value: "eth0.".into()
        })
    );
    assert_eq!(
        parse(b"24 coll channels, 24 collnet channels"),
        Some(Event::Channels { coll: 24 })
    );
    assert_eq!(
        parse(b"NVLS multicast support is not available on dev 0"),
        Some(Event::Nvls { available: false })
    );
    assert_eq!(parse(b"NCCL_X"), None);
}

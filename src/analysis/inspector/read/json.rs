//! One JSON record object into a [`Record`]: borrowed deserialisation into structs that hold
//! only the fields kept (serde skips the rest without building it, and borrows the strings it
//! keeps from the file's bytes), and [`build`], which turns their content into the record or
//! the reason there is none.
//!
//! The plugin (output format v4.0) writes each record as `{"header": {...}, "metadata":
//! {...}, "coll_perf" | "p2p_perf": {...}}`. `header` holds `id` (the communicator hash as a
//! hex string), `comm_name` (newer versions; `"unknown"` for an unnamed communicator), `rank`,
//! `n_ranks`, `nnodes`; `metadata` holds `inspector_output_format_version`, `git_rev`,
//! `rec_mechanism`, `dump_timestamp_us`, `hostname`, `pid`. `coll_perf` holds `coll` (NCCL's
//! function name), `coll_sn`, `coll_msg_size_bytes`, `coll_exec_time_us` (an integer),
//! `coll_timing_source` (newer versions), `coll_algobw_gbs`, `coll_busbw_gbs`; `p2p_perf` the
//! same with the `p2p` prefix and `p2p_peer`. Bandwidths are printed with `%lf`, so a NaN is
//! the string `"nan"` (read as not written). Verbose records add `event_trace_sn` and
//! `event_trace_ts` inside the perf object; only the operation's start time is kept from them.
//!
//! Required: `header.id`, `header.n_ranks` (at least 1), the function name, size and time. A
//! record without one of them, with a field of the wrong type, or with no perf object is
//! skipped with the reason; a record whose only section is of another kind (`*_perf` keys this reader does not
//! know) is counted in the file's notes.

use super::convention::{apply, collective, p2p, size_rule, timing};
use super::intern::{Interner, Probe};
use crate::analysis::inspector::record::{Op, Origin, Record, Size, Timing};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Deserialize, Default)]
pub(super) struct Header<'a> {
    #[serde(borrow)]
    pub(super) id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) comm_name: Option<Cow<'a, str>>,
    pub(super) rank: Option<u32>,
    pub(super) n_ranks: Option<u32>,
    pub(super) nnodes: Option<u32>,
}

#[derive(Deserialize, Default)]
pub(super) struct Meta<'a> {
    #[serde(borrow)]
    pub(super) inspector_output_format_version: Option<Cow<'a, str>>,
    pub(super) dump_timestamp_us: Option<u64>,
    #[serde(borrow)]
    pub(super) hostname: Option<Cow<'a, str>>,
    pub(super) pid: Option<u32>,
}

/// `coll_perf` or `p2p_perf`: the p2p keys are aliases of the coll ones.
#[derive(Deserialize, Default)]
pub(super) struct Perf<'a> {
    #[serde(borrow, alias = "p2p")]
    pub(super) coll: Option<Cow<'a, str>>,
    #[serde(alias = "p2p_sn")]
    pub(super) coll_sn: Option<u64>,
    pub(super) p2p_peer: Option<u32>,
    #[serde(alias = "p2p_msg_size_bytes")]
    pub(super) coll_msg_size_bytes: Option<u64>,
    #[serde(alias = "p2p_exec_time_us")]
    pub(super) coll_exec_time_us: Option<f64>,
    #[serde(borrow, alias = "p2p_timing_source")]
    pub(super) coll_timing_source: Option<Cow<'a, str>>,
    #[serde(default, alias = "p2p_algobw_gbs", deserialize_with = "bandwidth")]
    pub(super) coll_algobw_gbs: Option<f64>,
    #[serde(default, alias = "p2p_busbw_gbs", deserialize_with = "bandwidth")]
    pub(super) coll_busbw_gbs: Option<f64>,
    pub(super) event_trace_sn: Option<IgnoredAny>,
    pub(super) event_trace_ts: Option<TraceTs>,
}

#[derive(Deserialize, Default)]
pub(super) struct TraceTs {
    #[serde(alias = "p2p_start_ts")]
    pub(super) coll_start_ts: Option<u64>,
}

/// A bandwidth: a number, or a string (`"nan"`) read as not written.
fn bandwidth<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = Option<f64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a bandwidth (a number or \"nan\")")
        }
        fn visit_f64<E>(self, v: f64) -> Result<Option<f64>, E> {
            Ok(Some(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Option<f64>, E> {
            Ok(Some(v as f64))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Option<f64>, E> {
            Ok(Some(v as f64))
        }
        fn visit_str<E>(self, _: &str) -> Result<Option<f64>, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Option<f64>, E> {
            Ok(None)
        }
    }
    d.deserialize_any(V)
}

/// The top-level object; its keys are matched by hand so an unknown section's name is kept.
#[derive(Default)]
pub(super) struct Raw<'a> {
    pub(super) header: Option<Header<'a>>,
    pub(super) metadata: Option<Meta<'a>>,
    pub(super) coll: Option<Perf<'a>>,
    pub(super) p2p: Option<Perf<'a>>,
    pub(super) other: Option<String>,
}

impl<'de> Deserialize<'de> for Raw<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Raw<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an Inspector record object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw<'de>, A::Error> {
                let mut raw = Raw::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "header" => raw.header = Some(map.next_value()?),
                        "metadata" => raw.metadata = Some(map.next_value()?),
                        "coll_perf" => raw.coll = Some(map.next_value()?),
                        "p2p_perf" => raw.p2p = Some(map.next_value()?),
                        other => {
                            if raw.other.is_none() {
                                raw.other = Some(other.to_string());
                            }
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(raw)
            }
        }
        d.deserialize_map(V)
    }
}

/// What one object was.
#[derive(Debug, PartialEq)]
pub(super) enum Parsed {
    /// A record, and whether it carried a verbose event trace.
    Record(Record, bool),
    /// A record of another kind (the name of its first unknown section).
    OtherKind(String),
    /// An object that is no usable record, with the reason.
    Skip(String),
}

/// Deserialises one object (`text` from `{` to `}`); the error is the skipped entry's reason.
pub(super) fn raw(text: &[u8]) -> Result<Raw<'_>, String> {
    serde_json::from_slice::<Raw>(text).map_err(|e| format!("invalid record: {e}"))
}

/// The record of one object's content, or why it is none.
pub(super) fn build(raw: &Raw<'_>, file: &Arc<PathBuf>, sources: &mut Interner) -> Parsed {
    let (perf, p2p_section) = match (&raw.coll, &raw.p2p) {
        (Some(c), None) => (c, false),
        (None, Some(p)) => (p, true),
        (Some(_), Some(_)) => return Parsed::Skip("both coll_perf and p2p_perf".into()),
        (None, None) => {
            return match &raw.other {
                Some(kind) if raw.header.is_some() || kind.ends_with("_perf") => {
                    Parsed::OtherKind(kind.clone())
                }
                _ => Parsed::Skip("no coll_perf or p2p_perf".into()),
            }
        }
    };
    let Some(header) = &raw.header else {
        return Parsed::Skip("no header".into());
    };
    let missing = |what: &str| Parsed::Skip(format!("missing {what}"));
    let Some(id) = &header.id else {
        return missing("header.id");
    };
    let Some(nranks) = header.n_ranks else {
        return missing("header.n_ranks");
    };
    if nranks == 0 {
        // No communicator has none, and sizes in nccl-tests' convention are a rank's part
        // times the rank count.
        return Parsed::Skip("header.n_ranks is 0".into());
    }
    let (section, prefix) = if p2p_section {
        ("p2p_perf", "p2p")
    } else {
        ("coll_perf", "coll")
    };
    let Some(name) = &perf.coll else {
        return Parsed::Skip(format!("missing {section}.{prefix}"));
    };
    let Some(bytes) = perf.coll_msg_size_bytes else {
        return missing(&format!("{section}.{prefix}_msg_size_bytes"));
    };
    let Some(time_us) = perf.coll_exec_time_us else {
        return missing(&format!("{section}.{prefix}_exec_time_us"));
    };
    let known = if p2p_section {
        p2p(name, perf.p2p_peer)
    } else {
        collective(name).map(Op::Collective)
    };
    let op = known.unwrap_or_else(|| Op::Other(sources.name(name)));
    let rule = size_rule(&op, bytes, nranks, time_us, perf.coll_algobw_gbs);
    let Some(size) = apply(rule, Size::Exact(bytes), nranks) else {
        return Parsed::Skip(format!("{bytes} bytes times {nranks} ranks overflows"));
    };
    let meta = raw.metadata.as_ref();
    let source = sources.get(&Probe {
        file,
        origin: Origin::Json,
        comm_id: id,
        comm_name: header.comm_name.as_deref(),
        rank: header.rank,
        nranks,
        nnodes: header.nnodes,
        host: meta.and_then(|m| m.hostname.as_deref()),
        pid: meta.and_then(|m| m.pid),
        format_version: meta.and_then(|m| m.inspector_output_format_version.as_deref()),
    });
    let timing = perf
        .coll_timing_source
        .as_deref()
        .map(|t| timing(t).unwrap_or_else(|| Timing::Other(sources.name(t))));
    let trace_start = perf.event_trace_ts.as_ref().and_then(|t| t.coll_start_ts);
    let verbose = perf.event_trace_sn.is_some() || perf.event_trace_ts.is_some();
    let record = Record {
        source,
        op,
        seq: perf.coll_sn,
        size,
        size_rule: rule,
        time_us,
        timing,
        busbw_gbs: perf.coll_busbw_gbs,
        timestamp_us: trace_start.or(meta.and_then(|m| m.dump_timestamp_us)),
    };
    Parsed::Record(record, verbose)
}

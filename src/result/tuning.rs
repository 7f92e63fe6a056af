//! NCCL's own account of a measurement (`--tuning`): the per-call decisions that NCCL's debug
//! log printed for the calls of one (row, placement), joined by call order and bytes, and the
//! run-level report of how well the log matched the calls the harness made.
//!
//! A measurement whose calls all got the same decision is `single`; one whose calls got
//! different ones is `mixed`, and every distinct decision is kept (never flattened). With
//! `--tuning` but no decision line found (NCCL 2.18/2.19 print none per call, or nothing
//! matched) the annotation exists but is empty, so every field prints empty.

/// One distinct decision among a measurement's calls.
#[derive(Debug, Clone, PartialEq)]
pub struct TuningDecision {
    /// Algorithm in NCCL's table spelling (`Tree`, `Ring`, `NVLS`, ...), or the per-call
    /// path (`symmetric`, `copy_engine`) where the line names no algorithm.
    pub algo: String,
    /// Protocol (`LL`, `LL128`, `Simple`), empty where the line names none.
    pub proto: String,
    /// Channel range `(lo, hi)`, inclusive, where the format prints one (2.24+).
    pub channels: Option<(u32, u32)>,
    /// NCCL's model estimate in microseconds (2.20-2.23 numeric lines only).
    pub model_time_us: Option<f64>,
    /// How many of the measurement's calls got this decision.
    pub calls: u64,
}

impl TuningDecision {
    /// `lo-hi`, or empty.
    pub fn channels_text(&self) -> String {
        self.channels
            .map(|(lo, hi)| format!("{lo}-{hi}"))
            .unwrap_or_default()
    }

    /// Whether `other` is the same decision (everything but the call count).
    pub fn same(&self, other: &TuningDecision) -> bool {
        self.algo == other.algo
            && self.proto == other.proto
            && self.channels == other.channels
            && self.model_time_us.map(f64::to_bits) == other.model_time_us.map(f64::to_bits)
    }
}

/// The decisions of one measurement's calls.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tuning {
    /// Distinct decisions in the order first seen.
    pub decisions: Vec<TuningDecision>,
    /// Calls of the measurement (untimed, timed, verification) the harness made.
    pub calls: u64,
    /// Of those, calls with no decision line.
    pub unmatched_calls: u64,
}

impl Tuning {
    /// Adds one call's decision, merging it into an equal one.
    pub fn add(&mut self, d: TuningDecision) {
        match self.decisions.iter_mut().find(|x| x.same(&d)) {
            Some(x) => x.calls += d.calls,
            None => self.decisions.push(d),
        }
    }

    /// `single`, `mixed`, or empty when no decision was found.
    pub fn kind(&self) -> &'static str {
        match self.decisions.len() {
            0 => "",
            1 => "single",
            _ => "mixed",
        }
    }

    /// One field over the distinct decisions: their values joined by `|`, aligned with each
    /// other (the i-th algorithm goes with the i-th protocol).
    fn joined(&self, f: impl Fn(&TuningDecision) -> String) -> String {
        self.decisions.iter().map(f).collect::<Vec<_>>().join("|")
    }

    /// The `algo` field.
    pub fn algo_text(&self) -> String {
        self.joined(|d| d.algo.clone())
    }

    /// The `proto` field.
    pub fn proto_text(&self) -> String {
        self.joined(|d| d.proto.clone())
    }

    /// The `channels` field (`lo-hi`).
    pub fn channels_text(&self) -> String {
        self.joined(TuningDecision::channels_text)
    }

    /// The `nccl_model_time_us` field: empty unless some decision has a model time.
    pub fn model_time_text(&self) -> String {
        if self.decisions.iter().all(|d| d.model_time_us.is_none()) {
            return String::new();
        }
        self.joined(|d| d.model_time_us.map(|t| t.to_string()).unwrap_or_default())
    }

    /// Short text for the `--show-algo` column: `Ring/LL128/0-3`, `mixed:Tree/LL,Ring/LL128`,
    /// or `-` when nothing was found.
    pub fn short(&self) -> String {
        let one = |d: &TuningDecision| {
            let mut s = d.algo.clone();
            if !d.proto.is_empty() {
                s = format!("{s}/{}", d.proto);
            }
            if let Some((lo, hi)) = d.channels {
                s = format!("{s}/{lo}-{hi}");
            }
            s
        };
        match self.decisions.as_slice() {
            [] => "-".into(),
            [d] => one(d),
            ds => format!("mixed:{}", ds.iter().map(one).collect::<Vec<_>>().join(",")),
        }
    }
}

/// How the debug log was joined to the harness's calls, for the run's footer and JSON.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TuningReport {
    /// The log file read (this process's).
    pub log: String,
    /// The NCCL version the log names, when it does.
    pub nccl_version: Option<String>,
    /// NCCL calls the harness made on rank 0's communicator (warm-ups included).
    pub calls: u64,
    /// Decision lines of rank 0's communicator read from the log.
    pub decisions: u64,
    /// Of those, joined to a call.
    pub joined: u64,
    /// COLL lines of rank 0's communicator matched to the harness's calls in order.
    pub coll_matched: u64,
    /// COLL lines that disagreed with the call at their position (collective, count, type).
    pub coll_mismatched: u64,
    /// The opCount mapping, e.g. `opCount = seq + 0 for 240 calls`.
    pub op_count: String,
    /// Notes (no per-call lines in this version, log not found, ...), without `#`.
    pub notes: Vec<String>,
    /// The topology the log shows at the end of the run: NCCL 2.22 and later connect
    /// channels at the first collective, so only now does it name the transports. The sinks
    /// put it into the run's environment record.
    pub topology: Option<crate::result::topology::TopologySummary>,
}

impl TuningReport {
    /// The `#` lines printed before the text footer.
    pub fn lines(&self) -> Vec<String> {
        let mut v = vec![format!(
            "# NCCL tuning log {}: {} of {} decision lines joined to {} calls; {}",
            self.log,
            self.joined,
            self.decisions,
            self.calls,
            if self.op_count.is_empty() {
                "no COLL lines"
            } else {
                &self.op_count
            }
        )];
        v.extend(self.notes.iter().map(|n| format!("# {n}")));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(algo: &str, proto: &str, calls: u64) -> TuningDecision {
        TuningDecision {
            algo: algo.into(),
            proto: proto.into(),
            channels: Some((0, 3)),
            model_time_us: None,
            calls,
        }
    }

    #[test]
    fn equal_decisions_merge_and_different_ones_make_a_mixed_list() {
        let mut t = Tuning::default();
        assert_eq!((t.kind(), t.short()), ("", "-".to_string()));
        t.add(d("Ring", "LL128", 2));
        t.add(d("Ring", "LL128", 3));
        assert_eq!(t.kind(), "single");
        assert_eq!(t.decisions[0].calls, 5);
        assert_eq!(t.short(), "Ring/LL128/0-3");
        t.add(d("Tree", "LL", 1));
        assert_eq!(t.kind(), "mixed");
        assert_eq!(
            (t.algo_text(), t.proto_text(), t.channels_text()),
            ("Ring|Tree".into(), "LL128|LL".into(), "0-3|0-3".into())
        );
        assert_eq!(t.model_time_text(), "");
        assert_eq!(t.short(), "mixed:Ring/LL128/0-3,Tree/LL/0-3");
    }
}

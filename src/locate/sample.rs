//! What one rank measured in one group of one round, and its wire line (every process sends
//! its samples to rank 0, which judges them).

/// How a rank's measurement of a group ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The median time of one iteration, microseconds.
    Timed(f64),
    /// A wait passed `-T`.
    TimedOut,
    /// The backend failed (the message).
    Failed(String),
}

/// One rank's measurement of one group.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Index of the round in the run's sequence of measured rounds.
    pub round: usize,
    /// The group (colour) in that round.
    pub group: usize,
    /// Global rank.
    pub rank: usize,
    /// How it ended.
    pub outcome: Outcome,
}

impl Sample {
    /// The tab-separated wire form (no tab or newline inside).
    pub fn to_line(&self) -> String {
        let tail = match &self.outcome {
            Outcome::Timed(us) => format!("ok\t{us:e}"),
            Outcome::TimedOut => "timeout".to_string(),
            Outcome::Failed(m) => format!("failed\t{}", m.replace(['\t', '\n'], " ")),
        };
        format!("{}\t{}\t{}\t{tail}", self.round, self.group, self.rank)
    }

    /// Parses [`Sample::to_line`].
    pub fn from_line(line: &str) -> Option<Sample> {
        let f: Vec<&str> = line.splitn(5, '\t').collect();
        let outcome = match (f.get(3).copied(), f.get(4)) {
            (Some("ok"), Some(v)) => {
                Outcome::Timed(v.parse().ok().filter(|x: &f64| x.is_finite())?)
            }
            (Some("timeout"), None) => Outcome::TimedOut,
            (Some("failed"), Some(m)) => Outcome::Failed(m.to_string()),
            _ => return None,
        };
        Some(Sample {
            round: f[0].parse().ok()?,
            group: f[1].parse().ok()?,
            rank: f[2].parse().ok()?,
            outcome,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_garbage_is_refused() {
        for outcome in [
            Outcome::Timed(1234.5678),
            Outcome::TimedOut,
            Outcome::Failed("ncclSystemError\tboom".into()),
        ] {
            let s = Sample {
                round: 3,
                group: 1,
                rank: 17,
                outcome,
            };
            let back = Sample::from_line(&s.to_line()).unwrap();
            assert_eq!((back.round, back.group, back.rank), (3, 1, 17));
            if let Outcome::Failed(m) = &back.outcome {
                assert_eq!(m, "ncclSystemError boom");
            } else {
                assert_eq!(back, s);
            }
        }
        for bad in [
            "",
            "1\t2\t3",
            "1\t2\t3\tok\tnan",
            "x\t2\t3\ttimeout",
            "1\t2\t3\tok",
        ] {
            assert_eq!(Sample::from_line(bad), None, "{bad:?}");
        }
    }
}

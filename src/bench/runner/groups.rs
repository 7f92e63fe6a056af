//! `--per-group`: each split group's own figures for one measurement. Every process sends its
//! colour, its rank count, its own time and its own wrong-element count to the root in one
//! gather; the root reduces them per colour the way the job's time is reduced over the world
//! (`-a`: the group's first process, mean, minimum or maximum) and computes the bandwidths with
//! the group's own rank count. Times travel as their exact bits, so a group of one process has
//! exactly that process's time.

use crate::config::TimeReduce;
use crate::core::error::Error;
use crate::result::GroupMeasurement;
use std::collections::BTreeMap;

/// What one process contributes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Share {
    /// Split colour.
    pub color: usize,
    /// Ranks this process drives.
    pub ranks: usize,
    /// This process's time per operation, microseconds.
    pub time_us: f64,
    /// Wrong elements on this process's ranks; `None` when not checked.
    pub wrong: Option<u64>,
}

impl Share {
    /// The line it travels as.
    pub(super) fn line(&self) -> String {
        let wrong = self.wrong.map_or("-".to_string(), |w| w.to_string());
        format!(
            "{} {} {:x} {wrong}",
            self.color,
            self.ranks,
            self.time_us.to_bits()
        )
    }

    /// Parses [`Share::line`].
    pub(super) fn parse(line: &str) -> Result<Share, Error> {
        let bad = || Error::Backend(format!("a process sent a bad per-group line: {line:?}"));
        let f: Vec<&str> = line.split(' ').collect();
        let [color, ranks, time, wrong] = f[..] else {
            return Err(bad());
        };
        Ok(Share {
            color: color.parse().map_err(|_| bad())?,
            ranks: ranks.parse().map_err(|_| bad())?,
            time_us: f64::from_bits(u64::from_str_radix(time, 16).map_err(|_| bad())?),
            wrong: match wrong {
                "-" => None,
                w => Some(w.parse().map_err(|_| bad())?),
            },
        })
    }
}

/// Each colour's figures from every process's share (in world-rank order), by colour.
/// `bandwidth(nranks, time_us)` gives (algbw, busbw) for a group of `nranks` ranks.
pub(super) fn reduce(
    shares: &[Share],
    how: TimeReduce,
    bandwidth: impl Fn(usize, f64) -> (f64, f64),
) -> Vec<GroupMeasurement> {
    let mut by_color: BTreeMap<usize, Vec<&Share>> = BTreeMap::new();
    for s in shares {
        by_color.entry(s.color).or_default().push(s);
    }
    by_color
        .into_iter()
        .map(|(group, members)| {
            let times = members.iter().map(|s| s.time_us);
            let time_us = match how {
                // nccl-tests' rank 0 is the world's; within a group, its first process.
                TimeReduce::Rank0 => members[0].time_us,
                TimeReduce::Mean => times.sum::<f64>() / members.len() as f64,
                TimeReduce::Min => times.fold(f64::INFINITY, f64::min),
                TimeReduce::Max => times.fold(f64::NEG_INFINITY, f64::max),
            };
            let nranks = members.iter().map(|s| s.ranks).sum();
            let (algbw_gbs, busbw_gbs) = bandwidth(nranks, time_us);
            let wrong = members
                .iter()
                .map(|s| s.wrong)
                .try_fold(0u64, |sum, w| w.map(|w| sum + w));
            GroupMeasurement {
                group,
                nranks,
                time_us,
                algbw_gbs,
                busbw_gbs,
                wrong,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(color: usize, time_us: f64, wrong: Option<u64>) -> Share {
        Share {
            color,
            ranks: 2,
            time_us,
            wrong,
        }
    }

    /// algbw = 1 GB per second of time, busbw = algbw x nranks, so both are checkable.
    fn bw(n: usize, t: f64) -> (f64, f64) {
        (1.0 / t, n as f64 / t)
    }

    #[test]
    fn shares_travel_exactly() {
        for s in [
            share(3, 0.1 + 0.2, Some(7)),
            share(0, f64::MIN_POSITIVE, None),
        ] {
            assert_eq!(Share::parse(&s.line()).unwrap(), s);
        }
        for bad in [
            "",
            "1 2 3",
            "x 2 3ff0000000000000 -",
            "1 2 zz -",
            "1 2 0 -5",
        ] {
            assert!(Share::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn each_colour_is_reduced_over_its_own_processes() {
        // World order: colours 0, 1, 0, 1 (NCCL_TESTS_SPLIT_MASK=1 on four processes).
        let shares = [
            share(0, 10.0, Some(0)),
            share(1, 40.0, Some(3)),
            share(0, 20.0, Some(1)),
            share(1, 80.0, Some(0)),
        ];
        let times =
            |how| -> Vec<f64> { reduce(&shares, how, bw).iter().map(|g| g.time_us).collect() };
        assert_eq!(times(TimeReduce::Rank0), [10.0, 40.0]);
        assert_eq!(times(TimeReduce::Mean), [15.0, 60.0]);
        assert_eq!(times(TimeReduce::Min), [10.0, 40.0]);
        assert_eq!(times(TimeReduce::Max), [20.0, 80.0]);
        let g = reduce(&shares, TimeReduce::Mean, bw);
        assert_eq!((g[0].group, g[0].nranks, g[0].wrong), (0, 4, Some(1)));
        assert_eq!((g[1].group, g[1].nranks, g[1].wrong), (1, 4, Some(3)));
        assert_eq!((g[1].algbw_gbs, g[1].busbw_gbs), (1.0 / 60.0, 4.0 / 60.0));
    }

    #[test]
    fn an_unchecked_process_leaves_the_group_unchecked() {
        let g = reduce(
            &[share(0, 1.0, Some(2)), share(0, 1.0, None)],
            TimeReduce::Max,
            bw,
        );
        assert_eq!(g[0].wrong, None);
        let one = reduce(&[share(5, 2.5, None)], TimeReduce::Mean, bw);
        assert_eq!((one.len(), one[0].group, one[0].time_us), (1, 5, 2.5));
    }
}

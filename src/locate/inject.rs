//! Test-only fault switches of `ncclbench locate` (read through [`crate::core::test_hooks`]:
//! `test-hooks` builds only), inert unless set (like the hang switches
//! `NCCLBENCH_TEST_STALL_RANK`, which locate also obeys through the MPI backend):
//!
//! * `NCCLBENCH_TEST_HOSTNAMES=a,a,b,b`: each global rank's host name (so the processes of one
//!   machine play several nodes);
//! * `NCCLBENCH_TEST_LOCATE_SLOW_RANK=r[,r...]`: every group with rank r is slowed;
//! * `NCCLBENCH_TEST_LOCATE_SLOW_HOST=h[,h...]`: every group with a rank on host h is slowed;
//! * `NCCLBENCH_TEST_LOCATE_SLOW_PAIR=a-b[,c-d...]`: every group with both ranks is slowed;
//! * `NCCLBENCH_TEST_LOCATE_SLOW_FACTOR=F` (default 4): how much.
//!
//! A slowed rank's process sleeps after each timed iteration for (F - 1) times its plain
//! iteration (the median of its warm-up), so its partners wait for it: the group's iterations
//! take about F times as long.

use super::layout::Layout;

/// The switches as read from the environment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Switches {
    ranks: Vec<usize>,
    hosts: Vec<String>,
    pairs: Vec<(usize, usize)>,
    factor: f64,
}

fn list(v: Option<String>) -> Vec<String> {
    v.map(|s| {
        s.split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

impl Switches {
    /// Reads the switches through `var` (the environment, or a map in tests).
    pub fn from(var: impl Fn(&str) -> Option<String>) -> Result<Switches, String> {
        let bad = |k: &str, v: &str| format!("{k}: {v:?} is not valid");
        let mut ranks = Vec::new();
        for r in list(var("NCCLBENCH_TEST_LOCATE_SLOW_RANK")) {
            ranks.push(
                r.parse()
                    .map_err(|_| bad("NCCLBENCH_TEST_LOCATE_SLOW_RANK", &r))?,
            );
        }
        let mut pairs = Vec::new();
        for p in list(var("NCCLBENCH_TEST_LOCATE_SLOW_PAIR")) {
            let pair = p
                .split_once('-')
                .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)))
                .ok_or_else(|| bad("NCCLBENCH_TEST_LOCATE_SLOW_PAIR", &p))?;
            pairs.push(pair);
        }
        let factor = match var("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR") {
            None => 4.0,
            Some(f) => f
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 1.0)
                .ok_or_else(|| bad("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", &f))?,
        };
        Ok(Switches {
            ranks,
            hosts: list(var("NCCLBENCH_TEST_LOCATE_SLOW_HOST")),
            pairs,
            factor,
        })
    }

    /// The stretch this process applies in a group of `members` where it drives `mine`: the
    /// factor when one of its own ranks is slowed there, else 1.
    pub fn factor(&self, layout: &Layout, members: &[usize], mine: &[usize]) -> f64 {
        let slowed = mine.iter().any(|&r| {
            self.ranks.contains(&r)
                || self.hosts.iter().any(|h| h == layout.host(r))
                || self.pairs.iter().any(|&(a, b)| {
                    (r == a && members.contains(&b)) || (r == b && members.contains(&a))
                })
        });
        if slowed {
            self.factor
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(pairs: &[(&str, &str)]) -> Result<Switches, String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Switches::from(|k| m.get(k).cloned())
    }

    #[test]
    fn inert_unless_set_and_each_switch_slows_its_groups_only() {
        let l = Layout::new(&["a", "a", "b", "b"].map(String::from));
        let none = from(&[]).unwrap();
        assert_eq!(none.factor(&l, &[0, 2], &[0, 2]), 1.0);
        let s = from(&[("NCCLBENCH_TEST_LOCATE_SLOW_RANK", "2")]).unwrap();
        assert_eq!(s.factor(&l, &[0, 2], &[2]), 4.0);
        assert_eq!(
            s.factor(&l, &[0, 2], &[0]),
            1.0,
            "the partner does not sleep"
        );
        let h = from(&[
            ("NCCLBENCH_TEST_LOCATE_SLOW_HOST", "b"),
            ("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "3"),
        ])
        .unwrap();
        assert_eq!(h.factor(&l, &[1, 3], &[3]), 3.0);
        let p = from(&[("NCCLBENCH_TEST_LOCATE_SLOW_PAIR", "1-3")]).unwrap();
        assert_eq!(p.factor(&l, &[1, 3], &[1]), 4.0);
        assert_eq!(p.factor(&l, &[0, 1], &[1]), 1.0);
        for bad in [
            ("NCCLBENCH_TEST_LOCATE_SLOW_RANK", "x"),
            ("NCCLBENCH_TEST_LOCATE_SLOW_PAIR", "1"),
            ("NCCLBENCH_TEST_LOCATE_SLOW_FACTOR", "0.5"),
        ] {
            assert!(from(&[bad]).is_err(), "{bad:?}");
        }
    }
}

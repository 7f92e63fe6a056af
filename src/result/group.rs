//! Per-group results (`--per-group`): under `NCCL_TESTS_SPLIT`/`NCCL_TESTS_SPLIT_MASK` the job
//! runs one communicator per colour at once, and nccl-tests prints only the aggregate of all of
//! them. A group's own time, bandwidths and wrong elements are kept beside the aggregate, with
//! which ranks and hosts each group holds, so one slow group (a rail with a bad NIC, a node
//! with a bad link) shows by name instead of as a lower average.

/// Which ranks and hosts one group holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    /// The split colour.
    pub group: usize,
    /// Job-wide ranks (process world rank x local ranks + local index), ascending.
    pub ranks: Vec<usize>,
    /// Host of each rank, in the order of `ranks`.
    pub hosts: Vec<String>,
}

impl GroupInfo {
    /// The groups of a job from every rank's device, in job-rank order (as gathered), by
    /// colour: a rank's job-wide number is its place in that order.
    pub fn of_devices(devices: &[super::DeviceInfo]) -> Vec<GroupInfo> {
        let mut groups: std::collections::BTreeMap<usize, GroupInfo> = Default::default();
        for (rank, d) in devices.iter().enumerate() {
            let g = groups.entry(d.group).or_insert_with(|| GroupInfo {
                group: d.group,
                ranks: Vec::new(),
                hosts: Vec::new(),
            });
            g.ranks.push(rank);
            g.hosts.push(d.hostname.clone());
        }
        groups.into_values().collect()
    }

    /// The distinct hosts, in first-seen order.
    pub fn distinct_hosts(&self) -> Vec<&str> {
        let mut seen: Vec<&str> = Vec::new();
        for h in &self.hosts {
            if !seen.contains(&h.as_str()) {
                seen.push(h);
            }
        }
        seen
    }
}

/// One group's measurement of one placement.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupMeasurement {
    /// The split colour.
    pub group: usize,
    /// Ranks in the group's communicator.
    pub nranks: usize,
    /// Time per operation in microseconds, reduced over the group's processes per `-a`.
    pub time_us: f64,
    /// Algorithm bandwidth, GB/s, from the group's time.
    pub algbw_gbs: f64,
    /// Bus bandwidth, GB/s, with the group's rank count.
    pub busbw_gbs: f64,
    /// Wrong elements summed over the group's ranks; `None` when not checked.
    pub wrong: Option<u64>,
}

//! Where every rank of a locate run sits: its host (the node) and its GPU index on that host,
//! in world-rank order. Nodes are numbered by their lowest rank and a node's GPUs by rank, so
//! every process derives the same layout from the same host list. "GPU i" of two nodes are the
//! ranks that pair up on rail i.

/// One rank's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Host name of the node.
    pub host: String,
    /// Node index (0-based, in order of each node's lowest rank).
    pub node: usize,
    /// GPU index on the node (0-based, in rank order).
    pub gpu: usize,
}

/// One node: its host name and its ranks, GPU 0 first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Host name.
    pub host: String,
    /// Global ranks, in GPU order.
    pub ranks: Vec<usize>,
}

/// Every rank's place and every node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// One entry per global rank.
    pub ranks: Vec<Place>,
    /// The nodes, in order of their lowest rank.
    pub nodes: Vec<Node>,
}

impl Layout {
    /// The layout of ranks whose host names are `hosts` (index = global rank).
    pub fn new(hosts: &[String]) -> Layout {
        let mut nodes: Vec<Node> = Vec::new();
        let mut ranks = Vec::with_capacity(hosts.len());
        for (rank, host) in hosts.iter().enumerate() {
            let node = match nodes.iter().position(|n| &n.host == host) {
                Some(i) => i,
                None => {
                    nodes.push(Node {
                        host: host.clone(),
                        ranks: Vec::new(),
                    });
                    nodes.len() - 1
                }
            };
            ranks.push(Place {
                host: host.clone(),
                node,
                gpu: nodes[node].ranks.len(),
            });
            nodes[node].ranks.push(rank);
        }
        Layout { ranks, nodes }
    }

    /// `host GPU g (rank r)`, the way reports name a rank.
    pub fn name(&self, rank: usize) -> String {
        match self.ranks.get(rank) {
            Some(p) => format!("{} GPU {} (rank {rank})", p.host, p.gpu),
            None => format!("rank {rank}"),
        }
    }

    /// The host of `rank` (empty when out of range).
    pub fn host(&self, rank: usize) -> &str {
        self.ranks.get(rank).map_or("", |p| p.host.as_str())
    }

    /// The most GPUs any node has.
    pub fn max_gpus(&self) -> usize {
        self.nodes.iter().map(|n| n.ranks.len()).max().unwrap_or(0)
    }
}

/// The host names of the ranks: `own` (each rank's real host), unless the test-only switch
/// `NCCLBENCH_TEST_HOSTNAMES` (a comma-separated name per global rank) is set, which lets
/// processes of one machine play several nodes. A list of the wrong length is an error.
pub fn hosts_with_test_names(
    own: Vec<String>,
    switch: Option<&str>,
) -> Result<Vec<String>, String> {
    let Some(list) = switch.filter(|s| !s.trim().is_empty()) else {
        return Ok(own);
    };
    let names: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
    if names.len() != own.len() || names.iter().any(String::is_empty) {
        return Err(format!(
            "NCCLBENCH_TEST_HOSTNAMES names {} hosts for {} ranks (one non-empty name per rank)",
            names.len(),
            own.len()
        ));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn nodes_by_lowest_rank_and_gpus_by_rank() {
        let l = Layout::new(&hosts(&["b", "a", "b", "a", "c"]));
        assert_eq!(l.nodes.len(), 3);
        assert_eq!(
            (l.nodes[0].host.as_str(), &l.nodes[0].ranks),
            ("b", &vec![0, 2])
        );
        assert_eq!(l.nodes[1].ranks, vec![1, 3]);
        assert_eq!((l.ranks[3].node, l.ranks[3].gpu), (1, 1));
        assert_eq!(l.name(2), "b GPU 1 (rank 2)");
        assert_eq!(l.max_gpus(), 2);
    }

    #[test]
    fn the_test_switch_renames_every_rank_or_is_refused() {
        let own = hosts(&["x", "x", "x", "x"]);
        assert_eq!(hosts_with_test_names(own.clone(), None).unwrap(), own);
        let named = hosts_with_test_names(own.clone(), Some("n1,n1,n2,n2")).unwrap();
        assert_eq!(named, hosts(&["n1", "n1", "n2", "n2"]));
        assert!(hosts_with_test_names(own.clone(), Some("n1,n2")).is_err());
        assert!(hosts_with_test_names(own, Some("n1,,n2,n2")).is_err());
    }
}

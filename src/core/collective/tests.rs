//! Tests of the collective table.

use super::*;

#[test]
fn counts_follow_nccl_tests_including_16_byte_alignment() {
    let s = Collective::AllReduce.shape(&Traffic::default(), 8, DataType::Float, 8);
    assert_eq!((s.count, s.bytes), (2, 8));
    // all_gather over 8 ranks: 1 MiB of floats = 262144 elems, per rank 32768.
    let s = Collective::AllGather.shape(&Traffic::default(), 1 << 20, DataType::Float, 8);
    assert_eq!(
        (s.count, s.send_elems, s.recv_elems, s.bytes),
        (32768, 32768, 262144, 1 << 20)
    );
    // Tiny sizes round to zero for divided collectives.
    let s = Collective::ReduceScatter.shape(&Traffic::default(), 64, DataType::Float, 8);
    assert_eq!((s.count, s.bytes), (0, 0));
    // 3 ranks, 100 int8: floor(100/3)=33 -> 32 (multiple of 16 elements).
    let s = Collective::AllToAll.shape(&Traffic::default(), 100, DataType::Int8, 3);
    assert_eq!((s.count, s.send_elems, s.bytes), (32, 96, 96));
    let s = Collective::Scatter.shape(&Traffic::default(), 1000, DataType::Double, 2);
    assert_eq!((s.count, s.send_elems, s.recv_elems), (62, 124, 62));
}

#[test]
fn bandwidth_factors_match_the_nccl_tests_formulas() {
    assert_eq!(Collective::AllReduce.busbw_factor(8), 1.75);
    assert_eq!(Collective::AllGather.busbw_factor(4), 0.75);
    assert_eq!(Collective::Broadcast.busbw_factor(4), 1.0);
    let s = Collective::Hypercube.shape(&Traffic::default(), 1024, DataType::Float, 4);
    assert_eq!(
        Collective::Hypercube.algbw_bytes(&s, DataType::Float, 4),
        64.0 * 3.0 * 4.0
    );
}

#[test]
fn names_parse_with_and_without_perf_suffix() {
    for c in Collective::ALL {
        assert_eq!(Collective::parse(c.name()), Some(c));
        assert_eq!(Collective::parse(&c.perf_name()), Some(c));
    }
    assert_eq!(Collective::parse("allreduce"), None);
}

#[test]
fn shape_from_count_inverts_shape() {
    for coll in Collective::ALL {
        for n in [1, 2, 3, 8] {
            for size in [0, 8, 1000, 1 << 20] {
                let s = coll.shape(&Traffic::default(), size, DataType::Half, n);
                assert_eq!(
                    coll.shape_from_count(&Traffic::default(), s.count, DataType::Half, n),
                    s,
                    "{coll} n={n} size={size}"
                );
            }
        }
    }
}

#[test]
fn every_expected_element_of_a_data_movement_collective_comes_from_exactly_one_sender() {
    // For each global plain index expected somewhere, some rank must send it.
    for coll in Collective::ALL.into_iter().filter(|c| !c.reduces()) {
        for n in [1usize, 2, 3, 4] {
            let shape = coll.shape(&Traffic::default(), 4096, DataType::Float, n);
            let root = n - 1;
            let mut sent = std::collections::HashSet::new();
            for r in 0..n {
                for s in coll.send_contents(&Traffic::default(), &shape, r, n, root) {
                    if let Content::Plain { first } = s.content {
                        for k in 0..s.len {
                            assert!(sent.insert(first + k), "{coll} sends index twice");
                        }
                    }
                }
            }
            for r in 0..n {
                for s in coll.expected_contents(&Traffic::default(), &shape, r, n, root) {
                    if let Content::Plain { first } = s.content {
                        assert!(
                            (first..first + s.len).all(|g| sent.contains(&g)),
                            "{coll} n={n}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn every_spec_describes_its_own_collective_under_its_own_name() {
    for c in Collective::ALL {
        assert_eq!(c.spec().collective, c);
        assert!(
            c.spec().about.ends_with(&format!("({})", c.perf_name())),
            "{c}"
        );
    }
}

#[test]
fn per_peer_blocks_may_differ_and_overflow_is_none() {
    use super::spec::Blocks;
    // A variable-count layout (as alltoallv's): rank r sends peer p `count + r + p` elements.
    let var = Blocks::PerPeer(|z, r, p| z.count + r + p);
    assert_eq!(
        var.elems(&Traffic::default(), 10, 4, 1, 3),
        Some(11 + 12 + 13)
    );
    assert_eq!(
        Blocks::One.elems(&Traffic::default(), 10, 4, 1, 3),
        Some(10)
    );
    assert_eq!(
        Blocks::PerPeer(super::spec::uniform).elems(&Traffic::default(), usize::MAX, 4, 0, 2),
        None
    );
    assert_eq!(
        Collective::AllToAll.extents(&Traffic::default(), usize::MAX, DataType::Float, 0, 2),
        None
    );
}

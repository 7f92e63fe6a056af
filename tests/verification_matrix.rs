//! Verification across the whole matrix, through the real runner and host backend: every
//! collective x every type x every op (where the collective uses one) x nranks in {1,2,3,4,8},
//! both placements, several sizes including ones that round to zero elements. Every checked
//! measurement must report exactly 0 wrong elements, and unchecked ones (in-place sendrecv and
//! alltoall) must report N/A.

use crate::support::run::run_host;
use ncclbench::core::collective::Collective;

fn check_all(coll: Collective, n: usize) {
    let ops = if coll.iterates_ops() { "all" } else { "sum" };
    let roots = if coll.rooted() { "-1" } else { "0" };
    let args = format!(
        "{} -g {n} -b 8 -e 2K -f 16 -n 1 -w 1 -d all -o {ops} -r {roots}",
        coll.name()
    );
    let out = run_host(&args).unwrap_or_else(|e| panic!("{args}: {e}"));
    assert!(!out.rows.is_empty(), "{args}: no rows");
    for row in &out.rows {
        assert_eq!(row.out_of_place.wrong, Some(0), "{args}: {:?}", row.key);
        let want = if coll.checks_in_place() {
            Some(0)
        } else {
            None
        };
        assert_eq!(row.in_place.wrong, want, "{args}: {:?}", row.key);
    }
    assert_eq!(out.summary.out_of_bounds, 0);
    assert_eq!(out.exit_code(), 0);
}

macro_rules! matrix_test {
    ($name:ident, $coll:expr) => {
        #[test]
        fn $name() {
            let ranks: &[usize] = if $coll.needs_power_of_two_ranks() {
                &[1, 2, 4, 8]
            } else {
                &[1, 2, 3, 4, 8]
            };
            for &n in ranks {
                check_all($coll, n);
            }
        }
    };
}

matrix_test!(
    all_reduce_verifies_for_every_type_op_and_rank_count,
    Collective::AllReduce
);
matrix_test!(
    all_gather_verifies_for_every_type_and_rank_count,
    Collective::AllGather
);
matrix_test!(
    reduce_scatter_verifies_for_every_type_op_and_rank_count,
    Collective::ReduceScatter
);
matrix_test!(
    broadcast_verifies_for_every_type_root_and_rank_count,
    Collective::Broadcast
);
matrix_test!(
    reduce_verifies_for_every_type_op_root_and_rank_count,
    Collective::Reduce
);
matrix_test!(
    alltoall_verifies_for_every_type_and_rank_count,
    Collective::AllToAll
);
matrix_test!(
    sendrecv_verifies_for_every_type_op_and_rank_count,
    Collective::SendRecv
);
matrix_test!(
    scatter_verifies_for_every_type_root_and_rank_count,
    Collective::Scatter
);
matrix_test!(
    gather_verifies_for_every_type_root_and_rank_count,
    Collective::Gather
);
matrix_test!(
    hypercube_verifies_for_every_type_and_power_of_two_rank_count,
    Collective::Hypercube
);

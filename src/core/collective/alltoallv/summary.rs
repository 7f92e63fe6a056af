//! `NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY`'s lines: the traffic of one measurement and, per
//! rank, its bytes and bandwidths, in nccl-tests' words and number formats (so scripts that
//! grep them keep working).

use super::Traffic;

/// The summary of one measurement under traffic `t`: `count` (the row's count column) elements
/// of `elt` bytes on `n` ranks took `time_us` per operation.
pub fn summary_lines(t: &Traffic, count: usize, elt: usize, n: usize, time_us: f64) -> Vec<String> {
    let sec = time_us * 1e-6;
    let head = match t {
        Traffic::Generated { spread } => format!(
            "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=generated nranks={n} total_bytes={} \
             spread={spread:.3} time_usec={time_us:.2}",
            count.saturating_mul(n).saturating_mul(elt)
        ),
        Traffic::Matrix(m) => format!(
            "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=matrix nranks={n} matrix_dim={} \
             scale={:.3} time_usec={time_us:.2}",
            m.dim, m.scale
        ),
    };
    let factor = (n as f64 - 1.0) / n as f64;
    let ranks = (0..n).map(|r| {
        let sent: usize = (0..n).map(|p| t.pair_bytes(count, elt, r, p, n)).sum();
        let got: usize = (0..n).map(|p| t.pair_bytes(count, elt, p, r, n)).sum();
        let alg = sent.max(got) as f64 / 1e9 / sec;
        format!(
            "#   rank={r} send_bytes={sent} recv_bytes={got} alg_bw={alg:.2} bus_bw={:.2}",
            alg * factor
        )
    });
    std::iter::once(head).chain(ranks).collect()
}

//! Speed of `ncclbench analyze` without plotting: 10,000 rows forming 300 curves (5
//! collectives x 5 rank counts x 6 types x 2 placements, 33 sizes from 8 B to 32 GiB with a
//! second cycle at the smallest size of 100 curves), pooled, fitted and reported. Criterion
//! prints the throughput in rows per second.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use ncclbench::analysis::build::analyze;
use ncclbench::analysis::input::{InputRow, ReadSet, SourceRef};
use ncclbench::core::collective::Collective;
use ncclbench::result::Placement;

const ROWS: usize = 10_000;
const CURVES: usize = 300;
const SIZES: usize = 33;

/// SplitMix64 step mapped to `[0, 1)`.
fn unit(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// Row `i`: curve `i % 300`, size `(i / 300) % 33`, cycle `i / 9900`; time from three
/// LL/LL128/Simple-like regimes with +-2% noise.
fn rows() -> Vec<InputRow> {
    let collectives = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::Broadcast,
        Collective::AllToAll,
    ];
    let dtypes = ["float", "half", "bfloat16", "double", "int32", "int8"];
    let mut rng = 7u64;
    (0..ROWS)
        .map(|i| {
            let c = i % CURVES;
            let (k, cycle) = ((i / CURVES) % SIZES, i / (CURVES * SIZES));
            let collective = collectives[c % 5];
            let nranks = 2usize << ((c / 5) % 5);
            let placement = Placement::BOTH[c / 150];
            let bytes = 8u64 << k;
            let s = bytes as f64;
            let depth = 1.0 + (nranks as f64).log2() / 2.0;
            let t = [(3.0, 2e3), (50.0, 2e4), (1000.0, 2e5)]
                .iter()
                .map(|(a, bw)| a * depth + s / bw)
                .fold(f64::INFINITY, f64::min)
                * (1.0 + 0.04 * (unit(&mut rng) - 0.5));
            let algbw = s / t * 1e-3;
            InputRow {
                source: SourceRef {
                    file: "bench".into(),
                    line: i + 1,
                },
                collective: Some(collective.name().into()),
                dtype: dtypes[(c / 25) % 6].into(),
                op: "sum".into(),
                root: -1,
                nranks: Some(nranks),
                placement,
                cycle: cycle as u32,
                run: 0,
                bytes,
                count: bytes / 4,
                time_us: t,
                algbw_gbs: algbw,
                busbw_gbs: algbw * collective.busbw_factor(nranks),
                wrong: Some(0.0),
                tuning: None,
            }
        })
        .collect()
}

fn bench_analyze(c: &mut Criterion) {
    let set = ReadSet {
        rows: rows(),
        skipped: vec![],
        inferred: vec![],
        group_rows: 0,
    };
    assert_eq!(analyze(&set, None).curves.len(), CURVES);
    let mut group = c.benchmark_group("analyze");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.sample_size(10);
    group.bench_function("10k_rows_300_curves", |b| {
        b.iter(|| analyze(black_box(&set), Some(450.0)))
    });
    group.finish();
}

criterion_group!(benches, bench_analyze);
criterion_main!(benches);

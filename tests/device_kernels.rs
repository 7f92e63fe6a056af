//! One source, two compilers: the kernels of `kernels/verify.cuh`, built for the host by the
//! `ncclbench-kernels` crate, must compute exactly what the Rust generator and checker of
//! `ncclbench::bench::verify` compute: the same bits for every run a verified call fills or
//! checks, and the same wrong counts on clean and on corrupted results, for every dtype x op x
//! collective x nranks {1, 2, 3, 4, 8}, several seeds and random global indices (both halves of
//! the 64-bit index), and the fault cases of `fault_injection` (flipped bit, dropped rank,
//! swapped and shifted chunks, stale buffer) run through the host backend.

use crate::support::fault::{Fault, Faulty};
use ncclbench::bench::backend::host::HostBackend;
use ncclbench::bench::backend::{rank_args, Backend, Call};
use ncclbench::bench::verify::{self, CheckCase, DevParams, DevRun, Pattern, DEV_ABI};
use ncclbench::core::collective::{Collective, Content, Traffic};
use ncclbench::core::dtype::DataType;
use ncclbench::core::op::RedOp;
use ncclbench::result::Placement;
use ncclbench_kernels as kernels;

const RANKS: [usize; 5] = [1, 2, 3, 4, 8];

/// A small deterministic generator for indices and seeds (the test must be reproducible).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 ^ (self.0 >> 29)
    }
}

fn c_count(run: &DevRun, data: &[u8]) -> u64 {
    kernels::count(run.params.as_bytes(), &run.table, data)
}

fn c_fill(run: &DevRun, out: &mut [u8]) {
    kernels::fill(run.params.as_bytes(), &run.table, out)
}

#[test]
fn the_rust_parameter_block_has_the_c_layout() {
    assert_eq!(std::mem::size_of::<DevParams>(), kernels::params_size());
    assert_eq!(DevParams::offsets(), kernels::params_offsets());
    assert_eq!(DEV_ABI, kernels::abi());
}

#[test]
fn a_block_with_another_abi_writes_nothing_and_counts_everything_wrong() {
    let p = Pattern::new(DataType::Float, RedOp::Sum, 4, 7);
    let mut run = DevRun::of(&p, 1, Content::Plain { first: 0 }, 0);
    run.params.abi ^= 1;
    let mut out = vec![0xAAu8; 64];
    c_fill(&run, &mut out);
    assert!(out.iter().all(|&b| b == 0xAA), "an unknown block was used");
    assert_eq!(c_count(&run, &out), 16);
}

/// Every content a run can have for `rank`, at element positions that exercise both halves of
/// the global index (near and across 2^32, and far above it).
fn contents(rng: &mut Lcg, rank: usize) -> Vec<(Content, usize)> {
    let mut firsts = vec![0usize, (1 << 32) - 7, (5 << 32) + 3];
    firsts.extend((0..6).map(|_| (rng.next() >> 20) as usize));
    let mut out = vec![(Content::Unchanged, 0), (Content::Decoy, firsts[3])];
    for &first in &firsts {
        out.push((Content::Plain { first }, 0));
        out.push((Content::Reduced { first }, 0));
        out.push((Content::ReduceInput { first }, rank));
    }
    out
}

#[test]
fn host_kernels_generate_the_rust_pattern_bit_for_bit() {
    let mut rng = Lcg(0x5EED);
    const LEN: usize = 96;
    for dtype in DataType::ALL {
        let w = dtype.size();
        for op in RedOp::ALL {
            for n in RANKS {
                for seed in [0u64, 1234, rng.next()] {
                    let p = Pattern::new(dtype, op, n, seed);
                    for rank in [0, n / 2, n - 1] {
                        for (content, at) in contents(&mut rng, rank) {
                            let what =
                                format!("{dtype} {op} n={n} seed={seed} rank={rank} {content:?}");
                            let mut want = vec![0u8; LEN * w];
                            verify::write_content(&p, rank, content, at, &mut want);
                            let run = DevRun::of(&p, rank, content, at);
                            let mut got = vec![0x5Au8; LEN * w];
                            c_fill(&run, &mut got);
                            assert_eq!(got, want, "{what}");
                            // The checker side: clean data, then every element off by 1..=3
                            // units (float avg tolerates 2), then a flipped top bit.
                            assert_eq!(c_count(&run, &want), 0, "{what}");
                            for units in [1u64, 2, 3] {
                                let off = bump(&want, w, units);
                                assert_eq!(
                                    c_count(&run, &off),
                                    verify::count_wrong(&p, rank, content, at, &off),
                                    "{what} +{units}"
                                );
                            }
                            let mut flipped = want.clone();
                            flipped[LEN / 2 * w + w - 1] ^= 0x80;
                            assert_eq!(c_count(&run, &flipped), 1, "{what} flipped");
                            assert_eq!(verify::count_wrong(&p, rank, content, at, &flipped), 1);
                        }
                    }
                }
            }
        }
    }
}

/// `data` with every element's bits increased by `units` (wrapping in the element width).
fn bump(data: &[u8], w: usize, units: u64) -> Vec<u8> {
    let mask = if w == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * w)) - 1
    };
    data.chunks(w)
        .flat_map(|c| {
            let mut b = [0u8; 8];
            b[..w].copy_from_slice(c);
            let v = u64::from_le_bytes(b).wrapping_add(units) & mask;
            v.to_le_bytes()[..w].to_vec()
        })
        .collect()
}

fn case(coll: Collective, dtype: DataType, op: RedOp, n: usize, placement: Placement) -> CheckCase {
    CheckCase {
        coll,
        dtype,
        op,
        root: n / 2,
        traffic: Default::default(),
        shape: coll.shape(
            &Traffic::default(),
            40 * 8 * dtype.size().max(1) * n,
            dtype,
            n,
        ),
        nranks: n,
        first_rank: 0,
        local_ranks: n,
        base: 24,
        placement,
        seed: 99 + n as u64,
    }
}

fn call_for(case: &CheckCase) -> Call {
    Call {
        coll: case.coll,
        dtype: case.dtype,
        op: case.op,
        root: case.root,
        count: case.shape.count,
        traffic: Default::default(),
        ranks: (0..case.nranks)
            .map(|r| {
                rank_args(
                    case.coll,
                    &case.shape,
                    case.dtype,
                    r,
                    case.placement,
                    case.base,
                )
            })
            .collect(),
    }
}

/// The wrong count the host kernels find over the runs of [`verify::check_runs`], and a check
/// that their fill runs write what [`verify::prepare`] wrote.
fn kernel_check(b: &mut dyn Backend, case: &CheckCase) -> u64 {
    let p = case.pattern();
    let elt = case.dtype.size();
    let mut wrong = 0;
    for run in verify::check_runs(case).unwrap() {
        let dev = DevRun::of(&p, run.rank, run.content, run.at);
        b.inspect(run.local, run.buf, run.offset, run.len * elt, &mut |d| {
            wrong += c_count(&dev, d)
        })
        .unwrap();
    }
    wrong
}

fn run_case(case: &CheckCase, fault: Option<Fault>) -> (u64, u64) {
    let alloc = case.shape.send_elems.max(case.shape.recv_elems) * case.dtype.size() + 128;
    let host = HostBackend::new(case.nranks).unwrap();
    let mut b: Box<dyn Backend> = match fault {
        Some(f) => Box::new(Faulty::new(host, f)),
        None => Box::new(host),
    };
    b.allocate(alloc, alloc).unwrap();
    verify::prepare(b.as_mut(), case).unwrap();
    // The kernels' fill of every run equals what prepare wrote.
    let p = case.pattern();
    for run in verify::fill_runs(case).unwrap() {
        let dev = DevRun::of(&p, run.rank, run.content, run.at);
        let mut want = vec![0u8; run.len * case.dtype.size()];
        c_fill(&dev, &mut want);
        let mut same = false;
        b.inspect(run.local, run.buf, run.offset, want.len(), &mut |d| {
            same = d == want
        })
        .unwrap();
        // In-place send data overwrites part of the zeroed receive region afterwards, so a
        // zero run is only compared where nothing later wrote into it.
        assert!(
            same || run.content == Content::Unchanged,
            "{case:?} {run:?}"
        );
    }
    b.launch(&call_for(case)).unwrap();
    b.wait(None).unwrap();
    (
        verify::check(b.as_mut(), case).unwrap(),
        kernel_check(b.as_mut(), case),
    )
}

fn faults(case: &CheckCase) -> Vec<Fault> {
    let victim = match case.coll {
        Collective::Broadcast | Collective::Scatter | Collective::Reduce | Collective::Gather => {
            case.root
        }
        _ => case.nranks - 1,
    };
    let bit = 8 * case.dtype.size() as u32 - 1;
    vec![
        Fault::FlipBit {
            rank: victim,
            elem: 1,
            bit,
        },
        Fault::FlipBit {
            rank: victim,
            elem: 2,
            bit: 0,
        },
        Fault::DropRank { rank: victim },
        Fault::SwapChunks { rank: victim },
        Fault::ShiftChunk { rank: victim },
        Fault::Stale,
    ]
}

#[test]
fn host_kernels_count_what_the_rust_checker_counts_on_every_collective_and_fault() {
    let mut faulted = 0;
    for coll in Collective::ALL {
        for n in RANKS {
            if coll.needs_power_of_two_ranks() && !n.is_power_of_two() {
                continue;
            }
            for dtype in DataType::ALL {
                let ops: &[RedOp] = if coll.reduces() {
                    &RedOp::ALL
                } else {
                    &[RedOp::Sum]
                };
                for &op in ops {
                    for placement in Placement::BOTH {
                        if placement == Placement::InPlace && !coll.checks_in_place() {
                            continue;
                        }
                        let c = case(coll, dtype, op, n, placement);
                        assert_eq!(run_case(&c, None), (0, 0), "clean {c:?}");
                        for f in faults(&c) {
                            let (rust, kernel) = run_case(&c, Some(f));
                            assert_eq!(kernel, rust, "{f:?} {c:?}");
                            faulted += (rust > 0) as usize;
                        }
                    }
                }
            }
        }
    }
    // The faults must really have produced wrong elements, or the comparison proves nothing.
    assert!(
        faulted > 5000,
        "only {faulted} faulty runs had wrong elements"
    );
}

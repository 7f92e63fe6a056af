//! Collective and p2p results, for a few dtypes and ops, driven from one thread in groups.

use super::*;
use crate::nccl_calls::*;

/// Per-rank buffers of `bytes`, filled by `fill(rank)`.
fn buffers(ranks: &[Rank], bytes: usize, fill: impl Fn(usize) -> Vec<u8>) -> Vec<u64> {
    ranks
        .iter()
        .enumerate()
        .map(|(r, rank)| {
            rank.on();
            let p = alloc(bytes);
            let data = fill(r);
            h2d(p, &data[..data.len().min(bytes)]);
            p
        })
        .collect()
}

fn read(ranks: &[Rank], bufs: &[u64], bytes: usize) -> Vec<Vec<u8>> {
    ranks
        .iter()
        .zip(bufs)
        .map(|(r, &p)| {
            r.on();
            d2h(p, bytes)
        })
        .collect()
}

#[test]
fn allreduce_sums_int32_and_averages_floats() {
    let rs = ranks(4);
    let send = buffers(&rs, 16, |r| i32s(&[r as i32, 10 * r as i32, i32::MAX, -1]));
    let recv = buffers(&rs, 16, |_| vec![0; 16]);
    grouped(&rs, |r, k| {
        ncclAllReduce(ptr(send[r]), ptr(recv[r]), 4, 2, 0, k.comm, k.stream)
    });
    sync_all(&rs);
    for out in read(&rs, &recv, 16) {
        assert_eq!(as_i32(&out), vec![6, 60, i32::MAX.wrapping_mul(4), -4]);
    }
    // avg of floats: each input times 1/4 then summed.
    let fsend = buffers(&rs, 8, |r| f32s(&[r as f32, 1.0]));
    grouped(&rs, |r, k| {
        ncclAllReduce(ptr(fsend[r]), ptr(fsend[r]), 2, 7, 4, k.comm, k.stream)
    });
    sync_all(&rs);
    for out in read(&rs, &fsend, 8) {
        assert_eq!(as_f32(&out), vec![1.5, 1.0]);
    }
    // int avg: wrapping sum / n, truncating.
    grouped(&rs, |r, k| {
        ncclAllReduce(ptr(send[r]), ptr(recv[r]), 4, 2, 4, k.comm, k.stream)
    });
    sync_all(&rs);
    assert_eq!(
        as_i32(&read(&rs, &recv, 16)[0]),
        vec![1, 15, i32::MAX.wrapping_mul(4) / 4, -1]
    );
    destroy(rs);
}

#[test]
fn max_min_prod_over_half_and_uint8() {
    let rs = ranks(3);
    let h = |v: f32| half::f16::from_f32(v).to_bits().to_le_bytes();
    let send = buffers(&rs, 4, |r| [h(r as f32 + 1.0), h(-(r as f32))].concat());
    let recv = buffers(&rs, 4, |_| vec![0; 4]);
    for (op, want) in [(1u32, [6.0f32, 0.0]), (2, [3.0, 0.0]), (3, [1.0, -2.0])] {
        grouped(&rs, |r, k| {
            ncclAllReduce(ptr(send[r]), ptr(recv[r]), 2, 6, op, k.comm, k.stream)
        });
        sync_all(&rs);
        let out = &read(&rs, &recv, 4)[2];
        let got: Vec<f32> = out
            .chunks(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect();
        assert_eq!(got, want, "op {op}");
    }
    let bytes = buffers(&rs, 2, |r| vec![200, r as u8]);
    grouped(&rs, |r, k| {
        ncclAllReduce(ptr(bytes[r]), ptr(bytes[r]), 2, 1, 0, k.comm, k.stream)
    });
    sync_all(&rs);
    assert_eq!(read(&rs, &bytes, 2)[0], vec![88, 3]); // 600 mod 256
    destroy(rs);
}

#[test]
fn rooted_collectives_write_only_where_nccl_does() {
    let rs = ranks(3);
    let send = buffers(&rs, 24, |r| i32s(&[r as i32 + 1, 10, 20, 30, 40, 50]));
    let recv = buffers(&rs, 24, |_| i32s(&[-7; 6]));
    grouped(&rs, |r, k| {
        ncclReduce(ptr(send[r]), ptr(recv[r]), 2, 2, 0, 1, k.comm, k.stream)
    });
    sync_all(&rs);
    let out = read(&rs, &recv, 8);
    assert_eq!(
        (as_i32(&out[0]), as_i32(&out[1])),
        (vec![-7, -7], vec![6, 30])
    );
    grouped(&rs, |r, k| {
        ncclBroadcast(ptr(send[r]), ptr(recv[r]), 1, 2, 2, k.comm, k.stream)
    });
    sync_all(&rs);
    assert!(read(&rs, &recv, 4).iter().all(|o| as_i32(o) == vec![3]));
    grouped(&rs, |r, k| {
        ncclGather(ptr(send[r]), ptr(recv[r]), 1, 2, 0, k.comm, k.stream)
    });
    sync_all(&rs);
    assert_eq!(as_i32(&read(&rs, &recv, 12)[0]), vec![1, 2, 3]);
    grouped(&rs, |r, k| {
        ncclScatter(ptr(send[r]), ptr(recv[r]), 2, 2, 1, k.comm, k.stream)
    });
    sync_all(&rs);
    let out: Vec<Vec<i32>> = read(&rs, &recv, 8).iter().map(|o| as_i32(o)).collect();
    assert_eq!(out, vec![vec![2, 10], vec![20, 30], vec![40, 50]]);
    destroy(rs);
}

#[test]
fn gather_scatter_family_places_blocks_by_rank() {
    let rs = ranks(2);
    let send = buffers(&rs, 16, |r| {
        i32s(&[
            r as i32 * 10,
            r as i32 * 10 + 1,
            r as i32 * 10 + 2,
            r as i32 * 10 + 3,
        ])
    });
    let recv = buffers(&rs, 16, |_| vec![0; 16]);
    grouped(&rs, |r, k| {
        ncclAllGather(ptr(send[r]), ptr(recv[r]), 2, 2, k.comm, k.stream)
    });
    sync_all(&rs);
    assert_eq!(as_i32(&read(&rs, &recv, 16)[1]), vec![0, 1, 10, 11]);
    grouped(&rs, |r, k| {
        ncclReduceScatter(ptr(send[r]), ptr(recv[r]), 2, 2, 0, k.comm, k.stream)
    });
    sync_all(&rs);
    let out = read(&rs, &recv, 8);
    assert_eq!(
        (as_i32(&out[0]), as_i32(&out[1])),
        (vec![10, 12], vec![14, 16])
    );
    grouped(&rs, |r, k| {
        ncclAlltoAll(ptr(send[r]), ptr(recv[r]), 2, 2, k.comm, k.stream)
    });
    sync_all(&rs);
    let out = read(&rs, &recv, 16);
    assert_eq!(
        (as_i32(&out[0]), as_i32(&out[1])),
        (vec![0, 1, 10, 11], vec![2, 3, 12, 13])
    );
    destroy(rs);
}

#[test]
fn grouped_send_recv_ring_matches_in_posting_order() {
    let rs = ranks(4);
    let send = buffers(&rs, 8, |r| i32s(&[r as i32, 100 + r as i32]));
    let recv = buffers(&rs, 8, |_| vec![0; 8]);
    grouped(&rs, |r, k| {
        let next = (r as i32 + 1) % 4;
        let prev = (r as i32 + 3) % 4;
        let a = ncclSend(ptr(send[r]), 1, 2, next, k.comm, k.stream);
        let b = ncclSend(ptr(send[r] + 4), 1, 2, next, k.comm, k.stream);
        let c = ncclRecv(ptr(recv[r]), 1, 2, prev, k.comm, k.stream);
        let d = ncclRecv(ptr(recv[r] + 4), 1, 2, prev, k.comm, k.stream);
        a | b | c | d
    });
    sync_all(&rs);
    for (r, out) in read(&rs, &recv, 8).iter().enumerate() {
        let prev = (r as i32 + 3) % 4;
        assert_eq!(as_i32(out), vec![prev, 100 + prev]);
    }
    destroy(rs);
}

#[test]
fn premulsum_scales_each_rank_by_its_own_scalar() {
    let rs = ranks(2);
    let ops: Vec<u32> = rs
        .iter()
        .enumerate()
        .map(|(r, k)| {
            let mut op = 0;
            let scalar = if r == 0 { 1.0f32 } else { 2.0 };
            let code = unsafe {
                ncclRedOpCreatePreMulSum(
                    &mut op,
                    (&scalar as *const f32).cast_mut().cast(),
                    7,
                    1,
                    k.comm,
                )
            };
            assert_eq!(code, 0);
            op
        })
        .collect();
    let send = buffers(&rs, 4, |r| f32s(&[r as f32 + 3.0]));
    grouped(&rs, |r, k| {
        ncclAllReduce(ptr(send[r]), ptr(send[r]), 1, 7, ops[r], k.comm, k.stream)
    });
    sync_all(&rs);
    assert_eq!(as_f32(&read(&rs, &send, 4)[0]), vec![3.0 + 2.0 * 4.0]);
    assert_eq!(ncclRedOpDestroy(ops[0], rs[0].comm), 0);
    assert_eq!(ncclRedOpDestroy(ops[0], rs[0].comm), 4);
    rs[0].on();
    assert_eq!(
        ncclAllReduce(
            ptr(send[0]),
            ptr(send[0]),
            1,
            7,
            ops[0],
            rs[0].comm,
            rs[0].stream
        ),
        4
    );
    assert!(
        last_error().contains("not an op of this comm"),
        "{}",
        last_error()
    );
    destroy(rs);
}

#[test]
fn fp8_and_bf16_reduce_in_their_precision() {
    let rs = ranks(2);
    let e4 = |v: f32| crate::fp8::encode(crate::fp8::E4M3, v);
    let send = buffers(&rs, 2, |_| vec![e4(1.0), e4(448.0)]);
    grouped(&rs, |r, k| {
        ncclAllReduce(ptr(send[r]), ptr(send[r]), 2, 10, 0, k.comm, k.stream)
    });
    sync_all(&rs);
    assert_eq!(read(&rs, &send, 2)[1], vec![e4(2.0), e4(448.0)]); // saturates
    let b = |v: f32| half::bf16::from_f32(v).to_bits().to_le_bytes();
    let send = buffers(&rs, 2, |r| b(r as f32 + 0.5).to_vec());
    grouped(&rs, |r, k| {
        ncclAllReduce(ptr(send[r]), ptr(send[r]), 1, 9, 0, k.comm, k.stream)
    });
    sync_all(&rs);
    assert_eq!(read(&rs, &send, 2)[0], b(2.0).to_vec());
    destroy(rs);
}

#[test]
fn one_rank_fp8_premulsum_is_refused_as_nccl_does() {
    let rs = ranks(1);
    let k = &rs[0];
    let send = buffers(&rs, 4, |_| vec![0x38; 4]);
    let recv = buffers(&rs, 4, |_| vec![0; 4]);
    k.on();
    for dtype in [10, 11] {
        // avg: a PreMulSum by 1/n on float types, with no one-rank fp8 kernel.
        for coll in [0, 1] {
            let code = match coll {
                0 => ncclAllReduce(ptr(send[0]), ptr(recv[0]), 4, dtype, 4, k.comm, k.stream),
                _ => ncclReduceScatter(ptr(send[0]), ptr(recv[0]), 4, dtype, 4, k.comm, k.stream),
            };
            assert_eq!(code, 4, "dtype {dtype}");
            assert!(last_error().contains("one-rank fp8"), "{}", last_error());
        }
        let code = ncclReduce(ptr(send[0]), ptr(recv[0]), 4, dtype, 4, 0, k.comm, k.stream);
        assert_eq!(code, 4);
        // A user PreMulSum likewise.
        let mut op = 0;
        let scalar = [0x38u8; 8];
        let made = unsafe {
            ncclRedOpCreatePreMulSum(&mut op, scalar.as_ptr().cast_mut().cast(), dtype, 1, k.comm)
        };
        assert_eq!(made, 0);
        let code = ncclAllReduce(ptr(send[0]), ptr(recv[0]), 4, dtype, op, k.comm, k.stream);
        assert_eq!(code, 4);
        assert_eq!(ncclRedOpDestroy(op, k.comm), 0);
        // The built-in ops, an empty call and the other types still run.
        for op in 0..4 {
            let code = ncclAllReduce(ptr(send[0]), ptr(recv[0]), 4, dtype, op, k.comm, k.stream);
            assert_eq!(code, 0, "op {op}");
        }
        let code = ncclAllReduce(ptr(send[0]), ptr(recv[0]), 0, dtype, 4, k.comm, k.stream);
        assert_eq!(code, 0);
    }
    let code = ncclAllReduce(ptr(send[0]), ptr(recv[0]), 1, 7, 4, k.comm, k.stream);
    assert_eq!(code, 0);
    sync_all(&rs);
    destroy(rs);
}

#[test]
fn two_rank_fp8_avg_still_runs() {
    let rs = ranks(2);
    let e4 = |v: f32| crate::fp8::encode(crate::fp8::E4M3, v);
    let send = buffers(&rs, 1, |_| vec![e4(2.0)]);
    grouped(&rs, |r, k| {
        ncclAllReduce(ptr(send[r]), ptr(send[r]), 1, 10, 4, k.comm, k.stream)
    });
    sync_all(&rs);
    assert_eq!(read(&rs, &send, 1)[0], vec![e4(2.0)]);
    destroy(rs);
}

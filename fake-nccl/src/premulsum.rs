//! PreMulSum operators (`ncclRedOpCreatePreMulSum`, 2.11+): per comm, numbered from
//! ncclNumOps (5); the scalar is a value of the op's dtype, copied now (host immediate) or read
//! from device memory when the op runs (device residence).

use std::ffi::c_void;

use crate::comm::{PreMul, Scalar};
use crate::nccl_api::{check_dtype, comm_fields, need_version, with_group};
use crate::state::*;

/// `ncclRedOpCreatePreMulSum(ncclRedOp_t*, void* scalar, ncclDataType_t, residence, comm)`.
#[no_mangle]
pub unsafe extern "C" fn ncclRedOpCreatePreMulSum(
    op: *mut u32,
    scalar: *mut c_void,
    dtype: u32,
    residence: u32,
    comm: *mut c_void,
) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let id = st.comm_id(comm)?;
        need_version(21100, "ncclRedOpCreatePreMulSum")?;
        check_dtype(dtype)?;
        let size = crate::reduce::dtype_size(dtype);
        let s = match residence {
            _ if scalar.is_null() || op.is_null() => {
                return nccl_err(
                    NCCL_INVALID_ARGUMENT,
                    "ncclRedOpCreatePreMulSum: NULL scalar or op",
                )
            }
            0 => {
                let p = scalar as usize as u64;
                match st.alloc_holding(p, size) {
                    Some(a) if a.kind == crate::memory::AllocKind::Device && a.device == st.comms[&id].device => Scalar::Device(p),
                    _ => return nccl_err(NCCL_INVALID_ARGUMENT, "ncclRedOpCreatePreMulSum: device scalar is not in a device allocation of the comm's device"),
                }
            }
            1 => {
                let mut b = [0u8; 8];
                std::ptr::copy_nonoverlapping(scalar as *const u8, b.as_mut_ptr(), size);
                Scalar::Host(b)
            }
            _ => {
                return nccl_err(
                    NCCL_INVALID_ARGUMENT,
                    format!("ncclRedOpCreatePreMulSum: bad residence {residence}"),
                )
            }
        };
        let pm = PreMul { dtype, scalar: s };
        let comm = st.comms.get_mut(&id).expect("resolved");
        comm.premulsum.push(Some(pm));
        let code = 4 + comm.premulsum.len() as u32;
        let mut fields = comm_fields(&st, id);
        fields.extend([
            ("dtype", dtype.to_string()),
            ("residence", residence.to_string()),
        ]);
        fields.extend([
            ("scalar", crate::trace::premulsum_value(&st, &pm)),
            ("op", code.to_string()),
        ]);
        crate::trace::line("ncclRedOpCreatePreMulSum", &with_group(fields));
        op.write(code);
        Ok(())
    })
}

/// `ncclRedOpDestroy(ncclRedOp_t, ncclComm_t)`.
#[no_mangle]
pub extern "C" fn ncclRedOpDestroy(op: u32, comm: *mut c_void) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let id = st.comm_id(comm)?;
        need_version(21100, "ncclRedOpDestroy")?;
        let c = st.comms.get_mut(&id).expect("resolved");
        match op
            .checked_sub(5)
            .and_then(|i| c.premulsum.get_mut(i as usize))
        {
            Some(slot @ Some(_)) => {
                *slot = None;
                Ok(())
            }
            _ => nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("ncclRedOpDestroy: op {op} is not a live op of this comm"),
            ),
        }
    })
}

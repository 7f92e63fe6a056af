//! The verification pattern as the device kernels take it: [`DevParams`], the Rust mirror of
//! `vf_params` in `kernels/verify.cuh`, holds the per-call constants of one run of elements
//! (what [`super::write_content`] writes or [`super::count_wrong`] counts against), so a kernel
//! computes exactly the elements the host generator would. [`DevRun::of`] builds it from a
//! [`Pattern`]; each pattern family's shape fills its own fields.

use super::pattern::Pattern;
use crate::core::collective::Content;

/// `vf_params` of `kernels/verify.cuh`, field for field (20 eight-byte fields, then 22
/// four-byte ones: no padding). A test compares every offset with the C compiler's.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(missing_docs)] // each field is documented once, in verify.cuh
pub struct DevParams {
    pub key: u64,
    pub first: u64,
    pub tol: u64,
    pub mask: u64,
    pub lo: u64,
    pub ca: u64,
    pub cb: u64,
    pub base: u64,
    pub cmask: u64,
    pub dmask: u64,
    pub code_mask: u64,
    pub dmul: u64,
    pub amask: u64,
    pub bmask: u64,
    pub umask: u64,
    pub c0a: i64,
    pub c0b: i64,
    pub e_lo: i64,
    pub e_span: u64,
    pub q64: u64,
    pub q32: u32,
    pub family: u32,
    pub side: u32,
    pub kind: u32,
    pub width: u32,
    pub rank: u32,
    pub n: u32,
    pub bits: u32,
    pub man: u32,
    pub bias: i32,
    pub p: u32,
    pub fields: u32,
    pub is_signed: u32,
    pub max: u32,
    pub m: u32,
    pub step: u32,
    pub choices: u32,
    pub per_leader: u32,
    pub k: u32,
    pub sign_shift: u32,
    pub monotone: u32,
    pub abi: u32,
}

/// Pattern families (`VF_ZERO` ... `VF_AVG`).
pub(crate) mod family {
    pub const ZERO: u32 = 0;
    pub const PLAIN: u32 = 1;
    pub const INT: u32 = 2;
    pub const SUM: u32 = 3;
    pub const PROD: u32 = 4;
    pub const MINMAX: u32 = 5;
    pub const AVG: u32 = 6;
}

/// `VF_INPUT`: the block describes a rank's input, not the reduced value.
pub(crate) const SIDE_INPUT: u32 = 1;

/// `VF_ABI`: layout version 1 and the block's size.
pub const DEV_ABI: u32 = (1 << 16) | std::mem::size_of::<DevParams>() as u32;

impl DevParams {
    /// The block as the bytes a kernel launch passes.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `DevParams` is `repr(C)` of integers without padding (its size is the sum of
        // its fields', which the layout test checks), so every byte is initialized.
        unsafe {
            std::slice::from_raw_parts(
                (self as *const DevParams).cast::<u8>(),
                std::mem::size_of::<DevParams>(),
            )
        }
    }

    /// Field offsets in declaration order, to compare with the C compiler's.
    pub fn offsets() -> Vec<usize> {
        use std::mem::offset_of;
        vec![
            offset_of!(DevParams, key),
            offset_of!(DevParams, first),
            offset_of!(DevParams, tol),
            offset_of!(DevParams, mask),
            offset_of!(DevParams, lo),
            offset_of!(DevParams, ca),
            offset_of!(DevParams, cb),
            offset_of!(DevParams, base),
            offset_of!(DevParams, cmask),
            offset_of!(DevParams, dmask),
            offset_of!(DevParams, code_mask),
            offset_of!(DevParams, dmul),
            offset_of!(DevParams, amask),
            offset_of!(DevParams, bmask),
            offset_of!(DevParams, umask),
            offset_of!(DevParams, c0a),
            offset_of!(DevParams, c0b),
            offset_of!(DevParams, e_lo),
            offset_of!(DevParams, e_span),
            offset_of!(DevParams, q64),
            offset_of!(DevParams, q32),
            offset_of!(DevParams, family),
            offset_of!(DevParams, side),
            offset_of!(DevParams, kind),
            offset_of!(DevParams, width),
            offset_of!(DevParams, rank),
            offset_of!(DevParams, n),
            offset_of!(DevParams, bits),
            offset_of!(DevParams, man),
            offset_of!(DevParams, bias),
            offset_of!(DevParams, p),
            offset_of!(DevParams, fields),
            offset_of!(DevParams, is_signed),
            offset_of!(DevParams, max),
            offset_of!(DevParams, m),
            offset_of!(DevParams, step),
            offset_of!(DevParams, choices),
            offset_of!(DevParams, per_leader),
            offset_of!(DevParams, k),
            offset_of!(DevParams, sign_shift),
            offset_of!(DevParams, monotone),
            offset_of!(DevParams, abi),
        ]
    }
}

/// One run as a kernel sees it: the parameter block and the sum pattern's per-leader table
/// (`(C_a, C_b)` pairs flattened; empty unless `params.per_leader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevRun {
    /// The parameter block.
    pub params: DevParams,
    /// The leader table the kernel reads when `params.per_leader` is set.
    pub table: Vec<i64>,
}

impl DevRun {
    /// The run of `content` for global `rank` whose element 0 sits at element `at` of its
    /// buffer, with the arguments of [`super::write_content`] and [`super::count_wrong`]: a
    /// kernel filling it writes what `write_content` writes, and counting it finds what
    /// `count_wrong` finds.
    pub fn of(p: &Pattern, rank: usize, content: Content, at: usize) -> DevRun {
        let mut run = DevRun {
            params: DevParams {
                abi: DEV_ABI,
                ..DevParams::default()
            },
            table: Vec::new(),
        };
        p.describe(rank, content, at, &mut run);
        run
    }
}

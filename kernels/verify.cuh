/* ncclbench verifiable-data kernels: fill a run of elements with the verification pattern, or
 * count the elements of a run that differ from it. One source for two compilers: NVRTC builds
 * it to PTX for the GPU (scripts/gen-ptx), and a C compiler builds it for the host (the
 * ncclbench-kernels crate), where tests compare it bit for bit with the Rust generator of
 * src/bench/verify and fake-nccl runs the same kernels on host memory.
 *
 * Every element is a pure function of (per-call constants, global element index). The per-call
 * constants (keys, masks, coefficients: one vf_params) are computed on the host by the Rust
 * pattern code, so this file holds only the per-element arithmetic. That arithmetic is integer
 * arithmetic on bit patterns; the only floating-point operations are the rounded products and
 * sums of float avg, written with explicitly rounded operations (no contraction into FMA) so
 * host and device round identically under IEEE 754.
 *
 * Adding a pattern family is one more VF_* family constant and one more case in vf_bits; a new
 * collective needs nothing here (collectives only choose which runs to fill and check). */
#ifndef NCCLBENCH_VERIFY_CUH
#define NCCLBENCH_VERIFY_CUH

typedef unsigned char vf_u8;
typedef unsigned short vf_u16;
typedef unsigned int vf_u32;
typedef int vf_i32;
typedef unsigned long long vf_u64;
typedef long long vf_i64;

#ifdef __CUDACC__
#define VF_FN static __device__ __forceinline__
#define VF_KERNEL extern "C" __global__ void
#define VF_POPC64(x) ((vf_u64)__popcll(x))
#define VF_CLZ64(x) ((vf_u32)__clzll((vf_i64)(x)))
#define VF_THREAD ((vf_u64)blockIdx.x * blockDim.x + threadIdx.x)
#define VF_THREADS ((vf_u64)gridDim.x * blockDim.x)
#else
#define VF_FN static inline
#define VF_KERNEL void
#define VF_POPC64(x) ((vf_u64)__builtin_popcountll(x))
#define VF_CLZ64(x) ((vf_u32)__builtin_clzll(x))
/* On the host a launch is one call that covers the whole grid. */
#define VF_THREAD ((vf_u64)0)
#define VF_THREADS ((vf_u64)1)
#endif

/* Pattern families (vf_params.family). */
#define VF_ZERO 0   /* zeros: what prepare leaves in receive buffers */
#define VF_PLAIN 1  /* data movement and decoys */
#define VF_INT 2    /* integer reductions */
#define VF_SUM 3    /* float sum, mulsum */
#define VF_PROD 4   /* float prod */
#define VF_MINMAX 5 /* float min, max */
#define VF_AVG 6    /* float avg */

/* Sides of a reduction (vf_params.side). */
#define VF_EXPECTED 0 /* the reduced value */
#define VF_INPUT 1    /* rank vf_params.rank's input */

/* Integer kinds (vf_params.kind of VF_INT). */
#define VF_INT_LINEAR 0
#define VF_INT_AVG 1
#define VF_INT_PROD 2
#define VF_INT_ORDERED 3
#define VF_INT_FOLD 4

/* Avg kinds (vf_params.kind of VF_AVG). */
#define VF_AVG_FLOAT 0
#define VF_AVG_DOUBLE 1
#define VF_AVG_NARROW 2

/* The per-call constants. Twenty 64-bit fields, then twenty-two 32-bit ones (the last an ABI tag): no padding, the
 * same layout in C, CUDA and the Rust mirror (ncclbench::bench::verify::DevParams), which a
 * test checks field by field. Slots shared by families say so. */
typedef struct vf_params {
    vf_u64 key;       /* pattern key (the decoy key for decoys) */
    vf_u64 first;     /* global index of the run's element 0 */
    vf_u64 tol;       /* counting: allowed distance of element bits read as unsigned */
    vf_u64 mask;      /* the element width's mask */
    vf_u64 lo;        /* plain float: lowest exponent field; minmax: lowest magnitude code */
    vf_u64 ca;        /* int: closed form a*ca + b*cb of sum, avg, mulsum */
    vf_u64 cb;
    vf_u64 base;      /* int ordered: c = base + (h & cmask) */
    vf_u64 cmask;     /* int ordered, minmax: mask of the start c */
    vf_u64 dmask;     /* int ordered, minmax: mask of the step d */
    vf_u64 code_mask; /* minmax: magnitude offsets stay below 2^z */
    vf_u64 dmul;      /* minmax: step multiplier */
    vf_u64 amask;     /* sum: masks of a, b, u */
    vf_u64 bmask;
    vf_u64 umask;
    vf_i64 c0a;       /* sum: (C_a, C_b) of leader choice 0 */
    vf_i64 c0b;
    vf_i64 e_lo;      /* sum, prod, avg: lowest exponent drawn */
    vf_u64 e_span;    /* sum, prod, avg: exponents drawn */
    vf_u64 q64;       /* avg double: 1/n rounded to double, as bits */
    vf_u32 q32;       /* avg float, narrow: 1/n rounded to the type, as float bits */
    vf_u32 family;    /* VF_ZERO ... VF_AVG */
    vf_u32 side;      /* VF_EXPECTED or VF_INPUT */
    vf_u32 kind;      /* VF_INT_* or VF_AVG_* */
    vf_u32 width;     /* bytes per element: 1, 2, 4 or 8 */
    vf_u32 rank;      /* VF_INPUT: the rank (< n) */
    vf_u32 n;         /* ranks */
    vf_u32 bits;      /* float layout: width in bits, stored mantissa bits, bias, precision */
    vf_u32 man;
    vf_i32 bias;
    vf_u32 p;
    vf_u32 fields;    /* plain float: number of exponent fields */
    vf_u32 is_signed; /* int: signed type */
    vf_u32 max;       /* int, minmax: max (1) or min (0) */
    vf_u32 m;         /* sum: window length */
    vf_u32 step;      /* sum: leaders are step * choice */
    vf_u32 choices;   /* sum: leader choices */
    vf_u32 per_leader; /* sum: (C_a, C_b) come from the table */
    vf_u32 k;         /* prod: window positions 1..=k carry 2^+-1 */
    vf_u32 sign_shift; /* minmax */
    vf_u32 monotone;  /* minmax: closed-form result */
    vf_u32 abi;       /* VF_ABI: a launch with another layout does nothing and says so */
} vf_params;

/* The parameter block's version (high half) and size (low half). A kernel given a block whose
 * abi differs writes nothing, counts every element wrong and, on the device, traps. */
#define VF_ABI ((1u << 16) | (vf_u32)sizeof(vf_params))

/* ---- bit manipulation ---- */

VF_FN vf_u32 vf_rotl32(vf_u32 x, vf_u32 r) { return (x << r) | (x >> (32 - r)); }
VF_FN vf_u32 vf_rotr32(vf_u32 x, vf_u32 r) { return (x >> r) | (x << (32 - r)); }
VF_FN vf_u64 vf_rotr64(vf_u64 x, vf_u32 r) { return (x >> r) | (x << (64 - r)); }
VF_FN vf_u64 vf_rotl64(vf_u64 x, vf_u32 r) { return (x << r) | (x >> (64 - r)); }

/* Mask of the low k bits, k <= 64. */
VF_FN vf_u64 vf_low_mask(vf_u32 k) { return k >= 64 ? ~0ull : (1ull << k) - 1; }

/* Murmur3's 32-bit finalizer. */
VF_FN vf_u32 vf_fmix32(vf_u32 x) {
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    return x ^ (x >> 16);
}

/* The one mix per element: 64 bits from (key, global index g). */
VF_FN vf_u64 vf_mix(vf_u64 key, vf_u64 g) {
    vf_u32 c = vf_fmix32((vf_u32)(g >> 32) ^ (vf_u32)(key >> 32)) ^ (vf_u32)key;
    vf_u32 lo = vf_fmix32((vf_u32)g ^ c);
    vf_u32 t = (lo ^ vf_rotl32(c, 16)) * 0x9E3779B1u;
    return ((vf_u64)(t ^ (t >> 16)) << 32) | lo;
}

/* A second 64-bit word derived from h. */
VF_FN vf_u64 vf_second(vf_u64 h) {
    return ((h & 0xffffffffull) * 0xD6E8FEB9ull) ^ ((h >> 32) * 0x8CB92BA7ull);
}

/* A second 32-bit word derived from h. */
VF_FN vf_u32 vf_second32(vf_u64 h) {
    vf_u32 w = ((vf_u32)h ^ vf_rotr32((vf_u32)(h >> 32), 16)) * 0x9E3779B1u;
    return w ^ (w >> 15);
}

/* A value in 0..span from 16 bits of bits at shift; span <= 65536. */
VF_FN vf_u64 vf_pick16(vf_u64 bits, vf_u32 shift, vf_u64 span) {
    return (((bits >> shift) & 0xffff) * span) >> 16;
}

/* A value in 0..span from the low 32 bits; span <= 2^32. */
VF_FN vf_u64 vf_pick32(vf_u64 bits, vf_u64 span) { return ((bits & 0xffffffffull) * span) >> 32; }

/* ---- float layouts ---- */

VF_FN vf_u64 vf_man_mask(const vf_params *p) { return (1ull << p->man) - 1; }

/* Bits of (-1)^neg * 1.mant * 2^exp for a normal exp. */
VF_FN vf_u64 vf_pack(const vf_params *p, vf_u64 neg, vf_i64 exp, vf_u64 mant) {
    return (neg << (p->bits - 1)) | ((vf_u64)(exp + p->bias) << p->man) | mant;
}

/* Bits of k * 2^e for an integer k (sign neg, magnitude mag) that the caller guarantees is
 * zero or exactly representable as a normal value: pure integer work, no rounding. */
VF_FN vf_u64 vf_encode(const vf_params *p, vf_u64 neg, vf_u64 mag, vf_i64 e) {
    if (mag == 0)
        return 0;
    vf_u32 msb = 63 - VF_CLZ64(mag);
    vf_u64 mant = msb <= p->man ? mag << (p->man - msb) : mag >> (msb - p->man);
    return vf_pack(p, neg, e + msb, mant & vf_man_mask(p));
}

/* The exact float (as bits) of a zero or normal element narrower than float. */
VF_FN vf_u32 vf_widen(const vf_params *p, vf_u64 b64) {
    vf_u32 b = (vf_u32)b64, top = p->bits - 1;
    vf_u32 sign = (b >> top) << 31;
    vf_u32 mag = b & ((1u << top) - 1);
    vf_u32 exp = (vf_u32)((vf_i32)(mag >> p->man) - p->bias + 127);
    vf_u32 f = sign | (exp << 23) | ((mag & (vf_u32)vf_man_mask(p)) << (23 - p->man));
    return mag == 0 ? sign : f;
}

/* Float bits rounded to nearest, ties to even, in a type narrower than float (the value is
 * nonzero and rounds to a normal, finite value). */
VF_FN vf_u64 vf_narrow(const vf_params *p, vf_u32 b) {
    vf_u32 shift = 23 - p->man;
    vf_u32 exp = (vf_u32)((vf_i32)((b >> 23) & 0xff) - 127 + p->bias);
    vf_u32 mant = b & 0x7fffff;
    vf_u32 keep = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    vf_u32 up = (rest > half || (rest == half && (keep & 1))) ? 1 : 0;
    return (vf_u64)(((b >> 31) << (p->bits - 1)) | (((exp << p->man) | keep) + up));
}

/* ---- IEEE arithmetic of float avg: rounded to nearest, never fused ---- */

#ifdef __CUDACC__
VF_FN vf_u32 vf_fmul(vf_u32 a, vf_u32 b) {
    return __float_as_uint(__fmul_rn(__uint_as_float(a), __uint_as_float(b)));
}
VF_FN vf_u32 vf_fadd(vf_u32 a, vf_u32 b) {
    return __float_as_uint(__fadd_rn(__uint_as_float(a), __uint_as_float(b)));
}
VF_FN vf_u64 vf_dmul(vf_u64 a, vf_u64 b) {
    return (vf_u64)__double_as_longlong(
        __dmul_rn(__longlong_as_double((vf_i64)a), __longlong_as_double((vf_i64)b)));
}
VF_FN vf_u64 vf_dadd(vf_u64 a, vf_u64 b) {
    return (vf_u64)__double_as_longlong(
        __dadd_rn(__longlong_as_double((vf_i64)a), __longlong_as_double((vf_i64)b)));
}
#else
/* The host build is compiled with -ffp-contract=off; each operation is a separate statement
 * through a union, so nothing fuses or keeps extra precision (SSE arithmetic on x86-64). */
typedef union { vf_u32 u; float f; } vf_f32bits;
typedef union { vf_u64 u; double f; } vf_f64bits;
VF_FN vf_u32 vf_fmul(vf_u32 a, vf_u32 b) {
    vf_f32bits x, y, r;
    x.u = a; y.u = b; r.f = x.f * y.f;
    return r.u;
}
VF_FN vf_u32 vf_fadd(vf_u32 a, vf_u32 b) {
    vf_f32bits x, y, r;
    x.u = a; y.u = b; r.f = x.f + y.f;
    return r.u;
}
VF_FN vf_u64 vf_dmul(vf_u64 a, vf_u64 b) {
    vf_f64bits x, y, r;
    x.u = a; y.u = b; r.f = x.f * y.f;
    return r.u;
}
VF_FN vf_u64 vf_dadd(vf_u64 a, vf_u64 b) {
    vf_f64bits x, y, r;
    x.u = a; y.u = b; r.f = x.f + y.f;
    return r.u;
}
#endif

/* ---- the pattern families: element bits at global index g ---- */

/* Plain pattern: hash bits for integers; for floats a random sign, an exponent field from the
 * middle half of the range and a random mantissa. */
VF_FN vf_u64 vf_plain(const vf_params *p, vf_u64 g) {
    vf_u64 h = vf_mix(p->key, g);
    if (p->bits == 0)
        return h & p->mask;
    vf_u32 hi = (vf_u32)(h >> 32);
    vf_u64 field = p->lo + (vf_u64)(((hi >> 16) * p->fields) >> 16);
    return ((vf_u64)((hi >> 15) & 1) << (p->bits - 1)) | (field << p->man) | (h & vf_man_mask(p));
}

/* Integer reductions. rank r holds a + b*r (prod: 2(a + b*r) + 1); ordered min/max: window
 * position j holds c + j*d. */
VF_FN vf_u64 vf_int_input(const vf_params *p, vf_u64 a, vf_u64 b, vf_u64 r) {
    vf_u64 v = a + b * r;
    if (p->kind == VF_INT_PROD)
        v = (v * 2) | 1;
    return v & p->mask;
}

/* A key that orders element bits as the type compares them. */
VF_FN vf_u64 vf_int_order(const vf_params *p, vf_u64 v) {
    if (!p->is_signed)
        return v;
    vf_u64 sb = 1ull << (8 * p->width - 1);
    return (((v & p->mask) ^ sb) - sb) ^ (1ull << 63);
}

VF_FN vf_u64 vf_int(const vf_params *p, vf_u64 g) {
    vf_u64 h = vf_mix(p->key, g);
    vf_u64 n = p->n;
    if (p->kind == VF_INT_ORDERED) {
        vf_u64 rho = vf_pick32(vf_second32(h), n);
        vf_u64 c = p->base + (h & p->cmask);
        vf_u64 d = 1 + (vf_rotr64(h, 32) & p->dmask);
        vf_u64 j;
        if (p->side == VF_INPUT)
            j = p->rank - rho + (p->rank < rho ? n : 0);
        else
            j = p->max ? n - 1 : 0;
        return (c + d * j) & p->mask;
    }
    vf_u64 a = h, b = vf_second(h) | 1;
    if (p->side == VF_INPUT)
        return vf_int_input(p, a, b, p->rank);
    vf_u64 sum = (a * p->ca + b * p->cb) & p->mask;
    switch (p->kind) {
    case VF_INT_LINEAR:
        return sum;
    case VF_INT_AVG:
        if (p->is_signed) {
            vf_u64 sb = 1ull << (8 * p->width - 1);
            vf_i64 s = (vf_i64)((sum ^ sb) - sb);
            return (vf_u64)(s / (vf_i64)n) & p->mask;
        }
        return sum / n;
    case VF_INT_PROD: {
        vf_u64 prod = 1;
        for (vf_u64 r = 0; r < n; r++)
            prod *= vf_int_input(p, a, b, r);
        return prod & p->mask;
    }
    default: {
        vf_u64 best = vf_int_input(p, a, b, 0);
        for (vf_u64 r = 1; r < n; r++) {
            vf_u64 v = vf_int_input(p, a, b, r);
            if ((vf_int_order(p, v) > vf_int_order(p, best)) == (p->max != 0))
                best = v;
        }
        return best;
    }
    }
}

/* Float sum, mulsum: every contribution is an integer k times 2^e, all partial sums exact.
 * The lane is 32-bit for every type but double, wrapping as the Rust lanes do. */
VF_FN vf_u64 vf_sum(const vf_params *p, const vf_i64 *table, vf_u64 g) {
    vf_u64 h = vf_mix(p->key, g);
    vf_u32 w = vf_second32(h);
    vf_i64 e = p->e_lo + (vf_i64)(((w >> 16) * (vf_u32)p->e_span) >> 16);
    vf_u32 choice = (vf_u32)vf_pick32(w, p->choices);
    vf_u64 s = w & 1, s0 = (w >> 1) & 1;
    vf_i64 ca = p->c0a, cb = p->c0b;
    if (p->per_leader) {
        ca = table[2 * choice];
        cb = table[2 * choice + 1];
    }
    /* a, b, u, r, a0, k: integers modulo the lane (2^32 or 2^64), kept in vf_u64. */
    vf_u64 lane = p->width == 8 ? ~0ull : 0xffffffffull;
    vf_u64 a, b, u;
    if (p->width == 8) {
        a = 1 + (h & p->amask);
        b = vf_rotr64(h, 21) & p->bmask;
        u = vf_rotr64(h, 42) & p->umask;
    } else {
        vf_u32 lo = (vf_u32)h, hi = (vf_u32)(h >> 32);
        vf_u32 uu = vf_rotr32(lo, 11) ^ vf_rotr32(hi, 21);
        a = (vf_u32)(1 + (lo & (vf_u32)p->amask));
        b = hi & (vf_u32)p->bmask;
        u = uu & (vf_u32)p->umask;
    }
    vf_u64 r = (a * (vf_u64)ca + b * (vf_u64)cb) & lane;
    if (s)
        r = (0 - r) & lane;
    vf_u64 lead = (u * 2 + 1 + (r & 1)) & lane;
    if (s0)
        lead = (0 - lead) & lane;
    vf_u64 k;
    if (p->side == VF_EXPECTED) {
        k = (lead + r) & lane;
    } else {
        vf_u32 rho = p->step * choice;
        vf_u32 j = p->rank - rho + (p->rank < rho ? p->n : 0);
        if (j == 0) {
            k = lead;
        } else if (j < p->m) {
            k = (b * j + a) & lane;
            if (s ^ (j & 1))
                k = (0 - k) & lane;
        } else {
            k = 0;
        }
    }
    /* The lane's signed value as sign and magnitude. */
    vf_u64 top = p->width == 8 ? 1ull << 63 : 1ull << 31;
    vf_u64 neg = (k & top) ? 1 : 0;
    vf_u64 mag = neg ? (0 - k) & lane : k;
    return vf_encode(p, neg, mag, e);
}

/* Number of j in 1..n whose bit j % 64 is set in word. */
VF_FN vf_u64 vf_cyclic_count(vf_u64 word, vf_u64 n) {
    return (n / 64) * VF_POPC64(word) + VF_POPC64(word & vf_low_mask((vf_u32)(n % 64))) - (word & 1);
}

/* Float prod: one leader with a full significand, the others +-2^t with t in {-1, 0, +1}. */
VF_FN vf_u64 vf_prod(const vf_params *p, vf_u64 g) {
    vf_u64 n = p->n;
    vf_u64 h = vf_mix(p->key, g);
    vf_u64 h2 = vf_second(h), h3 = vf_second(h2);
    vf_u64 leader = vf_pick32(h2, n), neg_lead = h2 >> 63;
    vf_i64 e0 = p->e_lo + (vf_i64)vf_pick16(h2, 40, p->e_span);
    vf_u64 mant = h & vf_man_mask(p);
    vf_u64 signs = h3, ups = vf_rotl64(h3, 32) ^ h;
    if (p->side == VF_EXPECTED) {
        vf_u64 negs = vf_cyclic_count(signs, n);
        vf_i64 up = (vf_i64)VF_POPC64(ups & (vf_low_mask(p->k + 1) & ~1ull));
        return vf_pack(p, neg_lead ^ (negs & 1), e0 + 2 * up - (vf_i64)p->k, mant);
    }
    vf_u64 j = (p->rank + n - leader) % n;
    if (j == 0)
        return vf_pack(p, neg_lead, e0, mant);
    vf_i64 t = j <= p->k ? 2 * (vf_i64)((ups >> (j % 64)) & 1) - 1 : 0;
    return vf_pack(p, (signs >> (j % 64)) & 1, t, 0);
}

/* Float min, max: window position j holds magnitude code lo + c + j*d with alternating signs. */
VF_FN vf_u64 vf_minmax_value(const vf_params *p, vf_u64 s, vf_u64 c, vf_u64 d, vf_u32 j) {
    vf_u64 code = p->lo + ((c + d * j) & p->code_mask);
    return ((s ^ (j & 1)) << p->sign_shift) | code;
}

VF_FN vf_u64 vf_minmax_order(const vf_params *p, vf_u64 bits) {
    vf_u64 top = 1ull << p->sign_shift;
    return (bits & top) ? top - 1 - (bits & (top - 1)) : bits | top;
}

VF_FN vf_u64 vf_minmax(const vf_params *p, vf_u64 g) {
    vf_u64 h = vf_mix(p->key, g);
    vf_u32 w = vf_second32(h);
    vf_u32 rho = (vf_u32)vf_pick32(w, p->n), n = p->n;
    vf_u64 s = w & 1, c = h & p->cmask;
    vf_u64 d = 1 + ((h >> 32) & p->dmask) * p->dmul;
    if (p->side == VF_INPUT)
        return vf_minmax_value(p, s, c, d, p->rank - rho + (p->rank < rho ? n : 0));
    if (!p->monotone) {
        vf_u64 best = vf_minmax_value(p, s, c, d, 0);
        for (vf_u32 j = 1; j < n; j++) {
            vf_u64 v = vf_minmax_value(p, s, c, d, j);
            if ((vf_minmax_order(p, v) > vf_minmax_order(p, best)) == (p->max != 0))
                best = v;
        }
        return best;
    }
    /* The maximum is the largest position holding a positive value, the minimum the largest
     * holding a negative one; a single rank is both. */
    vf_u32 last = n - 1;
    vf_u32 want = (vf_u32)s ^ (p->max ? 0u : 1u);
    vf_u32 j = last - ((last & 1) ^ want);
    return vf_minmax_value(p, s, c, d, n == 1 ? 0 : j);
}

/* Float avg: two ranks contribute, everyone else +0; the expected value is x0*q + x1*q with
 * every step rounded to the element type. */
VF_FN vf_u64 vf_avg(const vf_params *p, vf_u64 g) {
    vf_u64 n = p->n;
    vf_u64 h = vf_mix(p->key, g);
    vf_u64 h2 = vf_second(h), h3 = vf_second(h2);
    vf_u64 first = vf_pick32(h2, n);
    vf_u64 other = first + 1 + vf_pick32(h2 >> 32, n > 0 ? n - 1 : 0);
    if (other >= n)
        other -= n;
    vf_u64 neg = h3 >> 63;
    vf_i64 exp = p->e_lo + (vf_i64)vf_pick16(h3, 0, p->e_span) + (vf_i64)p->p - 1;
    vf_u64 x0 = vf_pack(p, neg, exp, h & vf_man_mask(p));
    vf_u64 x1 = vf_pack(p, neg, exp, vf_rotr64(h, 32) & vf_man_mask(p));
    if (p->side == VF_INPUT) {
        if (p->rank == first)
            return x0;
        return (p->rank == other && n > 1) ? x1 : 0;
    }
    if (n == 1)
        return x0;
    switch (p->kind) {
    case VF_AVG_DOUBLE:
        return vf_dadd(vf_dmul(x0, p->q64), vf_dmul(x1, p->q64));
    case VF_AVG_FLOAT:
        return vf_fadd(vf_fmul((vf_u32)x0, p->q32), vf_fmul((vf_u32)x1, p->q32));
    default: {
        vf_u32 y0 = vf_widen(p, vf_narrow(p, vf_fmul(vf_widen(p, x0), p->q32)));
        vf_u32 y1 = vf_widen(p, vf_narrow(p, vf_fmul(vf_widen(p, x1), p->q32)));
        return vf_narrow(p, vf_fadd(y0, y1));
    }
    }
}

/* The element bits at global index g (the low 8 * width bits count). */
VF_FN vf_u64 vf_bits(const vf_params *p, const vf_i64 *table, vf_u64 g) {
    switch (p->family) {
    case VF_PLAIN: return vf_plain(p, g);
    case VF_INT: return vf_int(p, g);
    case VF_SUM: return vf_sum(p, table, g);
    case VF_PROD: return vf_prod(p, g);
    case VF_MINMAX: return vf_minmax(p, g);
    case VF_AVG: return vf_avg(p, g);
    default: return 0;
    }
}

/* ---- the kernels ---- */

/* Whether every element of the run at ptr can be accessed with one aligned access. */
VF_FN int vf_aligned(const void *ptr, vf_u32 width) {
    return ((vf_u64)ptr & (width - 1)) == 0;
}

VF_FN vf_u64 vf_load(const void *data, vf_u64 i, vf_u32 width, int aligned) {
    if (aligned) {
        switch (width) {
        case 1: return ((const vf_u8 *)data)[i];
        case 2: return ((const vf_u16 *)data)[i];
        case 4: return ((const vf_u32 *)data)[i];
        default: return ((const vf_u64 *)data)[i];
        }
    }
    /* Misaligned runs (-u): little-endian bytes. */
    vf_u64 v = 0;
    for (vf_u32 b = 0; b < width; b++)
        v |= (vf_u64)((const vf_u8 *)data)[i * width + b] << (8 * b);
    return v;
}

VF_FN void vf_store(void *out, vf_u64 i, vf_u32 width, int aligned, vf_u64 v) {
    if (aligned) {
        switch (width) {
        case 1: ((vf_u8 *)out)[i] = (vf_u8)v; return;
        case 2: ((vf_u16 *)out)[i] = (vf_u16)v; return;
        case 4: ((vf_u32 *)out)[i] = (vf_u32)v; return;
        default: ((vf_u64 *)out)[i] = v; return;
        }
    }
    for (vf_u32 b = 0; b < width; b++)
        ((vf_u8 *)out)[i * width + b] = (vf_u8)(v >> (8 * b));
}

/* Writes count elements of the run described by p (element i is the pattern at global index
 * p.first + i) to out. table: the sum pattern's per-leader (C_a, C_b) pairs when
 * p.per_leader, else unused (may be null). */
VF_FN int vf_abi_ok(const vf_params *p) {
#ifdef __CUDACC__
    if (p->abi != VF_ABI)
        __trap();
#endif
    return p->abi == VF_ABI;
}

VF_KERNEL vf_fill(vf_params p, const vf_i64 *table, void *out, vf_u64 count) {
    if (!vf_abi_ok(&p))
        return;
    int aligned = vf_aligned(out, p.width);
    for (vf_u64 i = VF_THREAD; i < count; i += VF_THREADS)
        vf_store(out, i, p.width, aligned, vf_bits(&p, table, p.first + i));
}

/* Adds to *wrong the number of the count elements at data that are more than p.tol units
 * (element bits read as unsigned integers) from the run described by p. */
VF_KERNEL vf_count(vf_params p, const vf_i64 *table, const void *data, vf_u64 count,
                   vf_u64 *wrong) {
    if (!vf_abi_ok(&p)) {
        if (VF_THREAD == 0)
            *wrong += count;
        return;
    }
    int aligned = vf_aligned(data, p.width);
    vf_u64 bad = 0;
    for (vf_u64 i = VF_THREAD; i < count; i += VF_THREADS) {
        vf_u64 want = vf_bits(&p, table, p.first + i) & p.mask;
        vf_u64 got = vf_load(data, i, p.width, aligned);
        vf_u64 dist = got > want ? got - want : want - got;
        bad += dist > p.tol ? 1 : 0;
    }
#ifdef __CUDACC__
    /* One atomic per warp: the counts meet in one integer on the device. */
    for (int off = 16; off > 0; off >>= 1)
        bad += __shfl_down_sync(0xffffffffu, bad, off);
    if ((threadIdx.x & 31) == 0 && bad != 0)
        atomicAdd((unsigned long long *)wrong, (unsigned long long)bad);
#else
    *wrong += bad;
#endif
}

#endif

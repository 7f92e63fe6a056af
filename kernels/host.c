/* The host build of verify.cuh: the kernels themselves (plain C functions there) plus entry
 * points taking the parameter block by pointer, so Rust never depends on how a C compiler
 * passes a large struct by value, and a description of the parameter block's layout for the
 * test that checks the Rust mirror. */
#include <stddef.h>
#include "verify.cuh"

void vf_host_fill(const vf_params *p, const vf_i64 *table, void *out, vf_u64 count) {
    vf_fill(*p, table, out, count);
}

void vf_host_count(const vf_params *p, const vf_i64 *table, const void *data, vf_u64 count,
                   vf_u64 *wrong) {
    vf_count(*p, table, data, count, wrong);
}

vf_u64 vf_host_bits(const vf_params *p, const vf_i64 *table, vf_u64 g) {
    return vf_bits(p, table, g);
}

#define VF_FIELD(f) offsetof(vf_params, f)
static const size_t vf_offsets[] = {
    VF_FIELD(key), VF_FIELD(first), VF_FIELD(tol), VF_FIELD(mask), VF_FIELD(lo),
    VF_FIELD(ca), VF_FIELD(cb), VF_FIELD(base), VF_FIELD(cmask), VF_FIELD(dmask),
    VF_FIELD(code_mask), VF_FIELD(dmul), VF_FIELD(amask), VF_FIELD(bmask), VF_FIELD(umask),
    VF_FIELD(c0a), VF_FIELD(c0b), VF_FIELD(e_lo), VF_FIELD(e_span), VF_FIELD(q64),
    VF_FIELD(q32), VF_FIELD(family), VF_FIELD(side), VF_FIELD(kind), VF_FIELD(width),
    VF_FIELD(rank), VF_FIELD(n), VF_FIELD(bits), VF_FIELD(man), VF_FIELD(bias), VF_FIELD(p),
    VF_FIELD(fields), VF_FIELD(is_signed), VF_FIELD(max), VF_FIELD(m), VF_FIELD(step),
    VF_FIELD(choices), VF_FIELD(per_leader), VF_FIELD(k), VF_FIELD(sign_shift),
    VF_FIELD(monotone), VF_FIELD(abi),
};

/* sizeof(vf_params), and the offset of every field in declaration order. */
size_t vf_host_params_size(void) { return sizeof(vf_params); }
vf_u32 vf_host_abi(void) { return VF_ABI; }
size_t vf_host_params_fields(const size_t **offsets) {
    *offsets = vf_offsets;
    return sizeof vf_offsets / sizeof vf_offsets[0];
}

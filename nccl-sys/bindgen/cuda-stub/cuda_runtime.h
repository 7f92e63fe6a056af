/* Stand-in for the CUDA toolkit's cuda_runtime.h, written for ncclbench's nccl-sys.
 *
 * nccl.h includes cuda_runtime.h only for a few opaque handle types and for
 * CUDART_VERSION (which gates its other includes). Declaring exactly those here lets
 * bindgen read nccl.h on a machine without the CUDA toolkit; the generated Rust then
 * treats the handles as opaque pointers, which is all NCCL's C API needs. */
#ifndef NCCLBENCH_CUDA_RUNTIME_STUB_H
#define NCCLBENCH_CUDA_RUNTIME_STUB_H

#include <stddef.h>

/* Any CUDA 12 value: nccl.h only compares it against 11000 and 11080. */
#define CUDART_VERSION 12000

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

#endif

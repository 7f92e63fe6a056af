/* Stand-in for the CUDA toolkit's cuda_bf16.h (see cuda_runtime.h here): nccl.h includes
 * it, but its C API declares no bfloat16 types, so nothing is needed. */
#ifndef NCCLBENCH_CUDA_BF16_STUB_H
#define NCCLBENCH_CUDA_BF16_STUB_H
#endif

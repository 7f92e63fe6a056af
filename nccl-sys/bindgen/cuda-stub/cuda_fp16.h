/* Stand-in for the CUDA toolkit's cuda_fp16.h (see cuda_runtime.h here): nccl.h includes
 * it, but its C API declares no half-precision types, so nothing is needed. */
#ifndef NCCLBENCH_CUDA_FP16_STUB_H
#define NCCLBENCH_CUDA_FP16_STUB_H
#endif

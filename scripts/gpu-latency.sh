#!/usr/bin/env bash
# Small-message launch cost, ncclbench against nccl-tests on one GPU: where the GPU check shows
# ncclbench slower at sizes the host loop bounds (a few microseconds per call), this run says
# whether the gap is in the host's enqueue time (-C 1 prints it per call), in what the process
# does beside the launches (--verify host leaves the verification module unloaded), or in where
# the threads run (taskset to one core), with many iterations so noise is well below the gap.
# Also runs the one-rank fp8 -d all -o all checks that NCCL refuses part of.
#
# Usage: scripts/gpu-latency.sh OUTDIR NCCLBENCH NCCL_TESTS_TARBALL
#   OUTDIR gets latency.txt (the summary), raw.tar.gz (every output) and build.log.
#   GPU_LATENCY_ROUNDS (3), GPU_LATENCY_ITERS (1000), GPU_LATENCY_BUDGET seconds (200).
set -uo pipefail
out=${1:?usage: scripts/gpu-latency.sh OUTDIR NCCLBENCH NCCL_TESTS_TARBALL}
bin=$(readlink -f "${2:?ncclbench binary}")
tarball=$(readlink -f "${3:?nccl-tests tarball}")
rounds=${GPU_LATENCY_ROUNDS:-3} iters=${GPU_LATENCY_ITERS:-1000}
deadline=$((SECONDS + ${GPU_LATENCY_BUDGET:-200}))
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" && out=$(readlink -f "$out")
work=$(mktemp -d) raw=$work/raw
mkdir -p "$raw"

lib=${NCCLBENCH_NCCL_LIB:-$(python3 -c 'import glob,site
for s in site.getsitepackages():
    for h in glob.glob(s + "/nvidia/nccl/lib/libnccl.so.2"): print(h); raise SystemExit' 2>/dev/null)}
export NCCLBENCH_NCCL_LIB=$lib
inc=$(dirname "$lib")/../include
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
mkdir -p "$work/home/lib" "$work/nt"
ln -s "$(readlink -f "$inc")" "$work/home/include"
ln -s "$lib" "$work/home/lib/libnccl.so"
tar xzf "$tarball" -C "$work/nt" --strip-components=1
timeout 150 make -C "$work/nt/src" -j "$(nproc)" MPI=0 NVCC="$cuda/bin/nvcc" CUDA_HOME="$cuda" \
    NCCL_HOME="$work/home" NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 BUILDDIR="$work/nt/build" \
    "$work/nt/build/all_reduce_perf" "$work/nt/build/sendrecv_perf" >"$out/build.log" 2>&1
nt=$work/nt/build
export LD_LIBRARY_PATH=$(dirname "$lib"):$cuda/lib64:${LD_LIBRARY_PATH:-}

# run NAME CMD...: bounded by what is left of the budget; stdout to raw/NAME.txt.
run() {
    local name=$1 left=$((deadline - SECONDS))
    shift
    ((left > 5)) || { echo "NOTRUN $name (budget)" >>"$raw/steps.txt"; return; }
    timeout $((left < 60 ? left : 60)) "$@" >"$raw/$name.txt" 2>"$raw/$name.err"
    echo "rc=$? $name" >>"$raw/steps.txt"
}

# Each variant: NAME (nb*: ncclbench, nt*: nccl-tests), then what goes before the flags.
flags=(-b 8 -e 1M -f 4 -n "$iters" -w 100 -c 0)
for r in $(seq 1 "$rounds"); do
    for c in all_reduce sendrecv; do
        run "$c.nb.r$r" "$bin" "$c" --backend nccl "${flags[@]}"
        run "$c.nt.r$r" "$nt/${c}_perf" "${flags[@]}"
        run "$c.nb-cpu.r$r" "$bin" "$c" --backend nccl "${flags[@]}" -C 1
        run "$c.nt-cpu.r$r" "$nt/${c}_perf" "${flags[@]}" -C 1
        run "$c.nb-vhost.r$r" "$bin" "$c" --backend nccl --verify host "${flags[@]}"
        run "$c.nb-core2.r$r" taskset -c 2 "$bin" "$c" --backend nccl "${flags[@]}"
        run "$c.nt-core2.r$r" taskset -c 2 "$nt/${c}_perf" "${flags[@]}"
    done
done
for c in all_reduce sendrecv; do
    NCCL_DEBUG=INFO run "$c.nb.info" "$bin" "$c" --backend nccl -b 8 -e 8 -n 5 -w 1 -c 0
    NCCL_DEBUG=INFO run "$c.nt.info" "$nt/${c}_perf" -b 8 -e 8 -n 5 -w 1 -c 0
done
for c in all_reduce reduce_scatter reduce; do
    run "$c.fp8-all" "$bin" "$c" --backend nccl -b 8 -e 64M -f 8 -d all -o all -c 1 -n 2 -w 1
done
python3 "$here/gpu-latency-summary.py" "$raw" >"$out/latency.txt" 2>&1
(cd "$work" && tar czf "$out/raw.tar.gz" raw)
rm -rf "$work"

#!/usr/bin/env bash
# The GPU check: one prepared run of ncclbench on a machine with NVIDIA GPUs, finishing in a few
# minutes on one GPU, everything written under OUTDIR:
#   env.txt/env.json/nvidia-smi.txt  what the run used (library, driver, GPUs)
#   correctness/<coll>.{txt,csv}     every collective, -c 1 over -d all -o all, 8 B..1 MiB
#   perf/all_reduce{,_graph,_device_timer}.{txt,csv,json}   8 B..1 GiB sweeps
#   two_ranks_one_gpu/*              two ranks on device 0 (P2P/SHM off, socket transport)
#   multi_gpu/*                      all visible GPUs in one process, when there are several
#   summary.txt                      one line per step: status, seconds, command
#
# Usage: scripts/gpu-check.sh OUTDIR [NCCLBENCH]
#   NCCLBENCH   the built binary (default: target/release/ncclbench next to this script, or
#               `ncclbench` on PATH); no Rust toolchain is needed on the GPU machine.
#   NCCLBENCH_NCCL_LIB  the libnccl.so.2 to load; when unset, one from an installed Python
#               nvidia-nccl package is used if found, else the loader's default search.
#   GPU_CHECK_MAX       largest size of the performance sweeps (default 1G),
#   GPU_CHECK_CHECK_MAX largest size of the correctness runs (default 1M),
#   GPU_CHECK_PAIR_MAX  largest size of the two-ranks-one-GPU all_reduce (default 64M);
#                       tests shrink all three to run against the fake NCCL quickly.
# Exit status: 0 when every step passed, 1 otherwise (each step's status is in summary.txt).
set -uo pipefail

out=${1:?usage: scripts/gpu-check.sh OUTDIR [NCCLBENCH]}
here=$(cd "$(dirname "$0")" && pwd)
bin=${2:-}
if [[ -z "$bin" ]]; then
    if [[ -x "$here/../target/release/ncclbench" ]]; then
        bin="$here/../target/release/ncclbench"
    else
        bin=$(command -v ncclbench || true)
    fi
fi
[[ -x "$bin" ]] || { echo "gpu-check: no ncclbench binary (give its path as the 2nd argument)" >&2; exit 2; }
max=${GPU_CHECK_MAX:-1G}
check_max=${GPU_CHECK_CHECK_MAX:-1M}
pair_max=${GPU_CHECK_PAIR_MAX:-64M}
mkdir -p "$out"/{correctness,perf,two_ranks_one_gpu,multi_gpu} || exit 2
out=$(cd "$out" && pwd)

if [[ -z "${NCCLBENCH_NCCL_LIB:-}" ]]; then
    # The GPU machines carry libnccl inside Python packages (nvidia-nccl-cu12, torch).
    lib=$(python3 - 2>/dev/null <<'PY'
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + sys.path
for root in roots:
    for pat in ("nvidia/nccl/lib/libnccl.so.2", "torch/lib/libnccl.so.2"):
        hits = glob.glob(os.path.join(root, pat))
        if hits:
            print(hits[0]); raise SystemExit
PY
    )
    [[ -n "$lib" ]] && export NCCLBENCH_NCCL_LIB="$lib"
fi

failures=0
# step NAME TIMEOUT_S CMD... : runs CMD with stdout to NAME.txt, stderr to NAME.err.
step() {
    local name=$1 limit=$2; shift 2
    local start=$SECONDS rc
    timeout --kill-after=10 "$limit" "$@" >"$out/$name.txt" 2>"$out/$name.err"
    rc=$?
    printf '%-40s rc=%-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" "$*" >>"$out/summary.txt"
    [[ $rc -eq 0 ]] || failures=$((failures + 1))
    return $rc
}

: >"$out/summary.txt"
echo "# ncclbench GPU check, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), binary $bin" >>"$out/summary.txt"
echo "# NCCLBENCH_NCCL_LIB=${NCCLBENCH_NCCL_LIB:-<default search>}" >>"$out/summary.txt"
step env 30 "$bin" env
step env_json 30 "$bin" env --json && cp "$out/env_json.txt" "$out/env.json"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1
    nvidia-smi topo -m >"$out/nvidia-smi-topo.txt" 2>&1
fi
ngpus=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cuda"]["devices"]))' "$out/env.json" 2>/dev/null || echo 1)

for c in all_reduce all_gather broadcast reduce_scatter reduce alltoall scatter sendrecv hypercube gather; do
    step "correctness/$c" 120 "$bin" "$c" --backend nccl -b 8 -e "$check_max" -f 8 -d all -o all \
        -r -1 -c 1 -n 2 -w 1 --csv "$out/correctness/$c.csv"
done

step perf/all_reduce 150 "$bin" all_reduce --backend nccl -b 8 -e "$max" -f 2 \
    --csv "$out/perf/all_reduce.csv" -J "$out/perf/all_reduce.json"
step perf/all_reduce_graph 150 "$bin" all_reduce --backend nccl -b 8 -e "$max" -f 2 -G 10 \
    --csv "$out/perf/all_reduce_graph.csv" -J "$out/perf/all_reduce_graph.json"
step perf/all_reduce_device_timer 150 "$bin" all_reduce --backend nccl -b 8 -e "$max" -f 2 \
    --timer device -I 1 --csv "$out/perf/all_reduce_device_timer.csv" \
    -J "$out/perf/all_reduce_device_timer.json"

# Two ranks on one GPU: a real multi-rank NCCL run on a single-GPU machine. NCCL needs P2P and
# SHM off and the socket transport for two ranks sharing a device; if it refuses, its message
# is in the .err file.
(
    export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
    step two_ranks_one_gpu/all_reduce 150 "$bin" all_reduce --backend nccl -g 2 --devices 0,0 \
        -b 8 -e "$pair_max" -f 4 -c 1 --csv "$out/two_ranks_one_gpu/all_reduce.csv"
    for c in all_gather reduce_scatter alltoall broadcast sendrecv; do
        step "two_ranks_one_gpu/$c" 120 "$bin" "$c" --backend nccl -g 2 --devices 0,0 \
            -b 8 -e "$check_max" -f 8 -d all -o all -r -1 -c 1 -n 2 \
            --csv "$out/two_ranks_one_gpu/$c.csv"
    done
    exit "$failures"
)
failures=$((failures + $?))

if [[ "$ngpus" -gt 1 ]]; then
    step multi_gpu/all_reduce 150 "$bin" all_reduce --backend nccl -g "$ngpus" -b 8 -e "$max" -f 2 \
        --csv "$out/multi_gpu/all_reduce.csv"
    step multi_gpu/alltoall 150 "$bin" alltoall --backend nccl -g "$ngpus" -b 8 -e "$check_max" -f 8 \
        -d all -c 1 --csv "$out/multi_gpu/alltoall.csv"
fi

echo "# failed steps: $failures" >>"$out/summary.txt"
cat "$out/summary.txt"
[[ $failures -eq 0 ]]

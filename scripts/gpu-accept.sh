#!/usr/bin/env bash
# The acceptance suite and locate on a GPU machine, as an operator runs them on a new node:
# `ncclbench accept` with the default profile (every collective's correctness stage with every
# type and op, then the sweep) and `--locate`, bounded by -e; then `ncclbench locate` over the
# machine's GPUs (with one GPU it has no groups to make and says so). Every step runs under
# `timeout`; a failing step is recorded and the script goes on.
#
# Usage: scripts/gpu-accept.sh OUTDIR NCCLBENCH
#   OUTDIR receives summary.txt (each step's exit status and wall time) and accept.tar.gz (the
#   accept and locate output directories and every step's stdout/stderr).
# Settings: GPU_ACCEPT_MAX (the sweep's end, 1G), GPU_ACCEPT_LIMIT (seconds per step, 240).
# Exit status: 0 when accept passed and locate named nobody, 1 otherwise, 2 bad usage.
set -uo pipefail

usage="usage: scripts/gpu-accept.sh OUTDIR NCCLBENCH"
out=${1:?$usage}
bin=${2:?$usage}
[[ -x "$bin" ]] || { echo "gpu-accept: $bin is not an executable ncclbench" >&2; exit 2; }
mkdir -p "$out" && [[ -z "$(ls -A "$out")" ]] || { echo "gpu-accept: $out must be a new or empty directory" >&2; exit 2; }
out=$(cd "$out" && pwd)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
limit=${GPU_ACCEPT_LIMIT:-240}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-accept.XXXXXX") || exit 2
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[[ "$gpus" -ge 1 ]] || gpus=1
status=0

# step NAME CMD...: CMD under `timeout $limit`, its output in $work/NAME.{out,err}.
step() {
    local name=$1
    shift
    local t0=$SECONDS
    timeout "$limit" "$@" >"$work/$name.out" 2>"$work/$name.err"
    local rc=$?
    printf '%-8s exit %3d  %4d s  %s\n' "$name" "$rc" $((SECONDS - t0)) "$*" >>"$out/summary.txt"
    return "$rc"
}

echo "# gpu-accept: $gpus GPU(s), $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$out/summary.txt"
step accept "$bin" accept --out "$work/accept" -g "$gpus" -e "${GPU_ACCEPT_MAX:-1G}" --locate || status=1
step locate "$bin" locate -g "$gpus" -T 60 --out "$work/locate" || status=1
{
    echo "# accept verdict:"
    grep '^# accept:' "$work/accept.out" || echo "(none)"
    echo "# locate:"
    grep -E '^# (locate|[0-9]+ groups measured)' "$work/locate.out" || echo "(none)"
} >>"$out/summary.txt"
tar czf "$out/accept.tar.gz" -C "$work" . 2>/dev/null
rm -rf "$work"
exit "$status"

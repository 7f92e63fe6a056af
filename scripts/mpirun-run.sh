#!/usr/bin/env bash
# A recorded multi-process run under mpirun: results/<run-id>/ gets the environment (ncclbench env
# --json, NCCL_* variables, host names of every rank) and one CSV + JSON per collective.
#
#   NP=16 HOSTS=node1:8,node2:8 COLLECTIVES="all_reduce all_gather" scripts/mpirun-run.sh -b 8 -e 8G -f 2 -g 1
#
# Variables: NP (processes, default 2), HOSTS (mpirun --host list, optional), COLLECTIVES
# (default all_reduce), NCCLBENCH (binary, default target/release/ncclbench, built with
# --features mpi), RUN_ID (default date-time), MPIRUN_ARGS (extra mpirun flags, e.g.
# "--allow-run-as-root --oversubscribe"). Remaining arguments go to every ncclbench run.
set -euo pipefail
cd "$(dirname "$0")/.."
np="${NP:-2}"
bin="${NCCLBENCH:-target/release/ncclbench}"
run_id="${RUN_ID:-$(date +%Y%m%d-%H%M%S)}"
out="results/$run_id"
mkdir -p "$out"
# shellcheck disable=SC2206
mpirun_cmd=(mpirun -np "$np" ${HOSTS:+--host "$HOSTS"} ${MPIRUN_ARGS:-})
# Export every NCCL_* variable to the ranks.
for v in $(env | grep -o '^NCCL_[A-Za-z0-9_]*' || true); do mpirun_cmd+=(-x "$v"); done

"$bin" env --json > "$out/env.json"
env | grep -E '^(NCCL|CUDA|UCX|OMPI|SLURM|PMIX)_' | sort > "$out/nccl-env.txt" || true
"${mpirun_cmd[@]}" hostname > "$out/hostnames.txt"
printf '%s\n' "${mpirun_cmd[*]} $bin <collective> $*" > "$out/command.txt"
status=0
for c in ${COLLECTIVES:-all_reduce}; do
    "${mpirun_cmd[@]}" "$bin" "$c" --csv "$out/$c.csv" --json "$out/$c.json" "$@" \
        | tee "$out/$c.txt" || status=$?
done
echo "results in $out"
exit "$status"

#!/usr/bin/env bash
# The GPU check: ncclbench and nccl-tests 2.19.6 side by side on a machine with NVIDIA GPUs, with
# the same flags and the same libnccl, interleaved (ncclbench, nccl-tests, ncclbench, ...) so
# machine drift cancels. One prepared run, hard-bounded: every step runs under `timeout`, cut to
# what is left of GPU_CHECK_BUDGET; a failing step is recorded and the check goes on.
#
# Wrapper (device machine, in a copy of the checkout carrying target/gpu and gpu-ext):
#   scripts/gpu-check.sh "$OUT" target/gpu/ncclbench gpu-ext/nccl-tests-2.19.6.tar.gz
#
# Usage: scripts/gpu-check.sh OUTDIR NCCLBENCH [NCCL_TESTS_TARBALL]
#   OUTDIR receives at most 8 files of at most 16 MiB: summary.txt (every step with status and
#   wall time; per collective and size the ncclbench/nccl-tests time and busbw ratios; wall time
#   of each run), compare.txt (`ncclbench compare`, nccl-tests before, ncclbench after, one
#   report per configuration), compare.json (the main -c 0 pair), env.txt, env.json and
#   results.tar.gz (every raw output, the build log and the step manifest raw/steps.tsv).
#   NCCL_TESTS_TARBALL is built with the local nvcc against the libnccl ncclbench loads (only the
#   six binaries, for this GPU's architecture); NCCL_TESTS_BIN=DIR uses ready <coll>_perf files.
# What runs (sizes x2 from 8 B): per collective (all_reduce all_gather reduce_scatter broadcast
#   alltoall sendrecv) -n 20 -w 5 pairs: -c 0 up to GPU_CHECK_MAX (8G) GPU_CHECK_ROUNDS (2) times,
#   -c 1 up to 8G once (ncclbench --verify device; then ncclbench alone with --verify host, the
#   vhost config; the summary gives -c 1 / -c 0 wall per tool), -G 10 / --timer device (ncclbench; nccl-tests keeps its host timer) /
#   -z 3 up to GPU_CHECK_SIDE_MAX (1G), -R 1 and -R 2 with -c 1 up to GPU_CHECK_CHECK_MAX (64M);
#   -c 1 -d all -o all -r -1 up to 64M (x8) by both; two ranks on GPU 0 (ncclbench only, NCCL
#   2.30+ with NCCL_MULTI_RANK_GPU_ENABLE=1; 2.5-2.29 refuse it) up to GPU_CHECK_PAIR_MAX (1G).
# Other settings: NCCLBENCH_NCCL_LIB (else an installed Python package's nvidia/nccl/lib, else
#   ncclbench's default; nccl-tests gets the file `ncclbench env` reports as loaded),
#   GPU_CHECK_BUDGET seconds (450), GPU_CHECK_COLLS and GPU_CHECK_CONFIGS (comma lists, to run
#   less), GPU_CHECK_GPUS (ranks per run, 1), GPU_CHECK_BUILD_S (210), GPU_CHECK_GENCODE,
#   GPU_CHECK_NCCL_INCLUDE, GPU_CHECK_FILE_LIMIT (bytes, 16 MiB), GPU_CHECK_KEEP=1 (keep the
#   work folder named in env.txt).
# Exit status: 0 when every step passed (or was skipped by design), 1 otherwise; 2 bad usage.
set -uo pipefail

usage="usage: scripts/gpu-check.sh OUTDIR NCCLBENCH [NCCL_TESTS_TARBALL]"
out=${1:?$usage}
bin=${2:?$usage}
tarball=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
[[ -x "$bin" ]] || { echo "gpu-check: $bin is not an executable ncclbench" >&2; exit 2; }
[[ -z "$tarball" || -f "$tarball" ]] || { echo "gpu-check: no tarball $tarball" >&2; exit 2; }
mkdir -p "$out" && [[ -z "$(ls -A "$out")" ]] || { echo "gpu-check: $out must be a new or empty directory" >&2; exit 2; }
out=$(cd "$out" && pwd)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
[[ -n "$tarball" ]] && tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")

budget=${GPU_CHECK_BUDGET:-450}
deadline=$((SECONDS + budget - 35)) # the last 35 s are kept for compare, summary and packing
finish_by=$((SECONDS + budget))
max=${GPU_CHECK_MAX:-8G} side_max=${GPU_CHECK_SIDE_MAX:-1G}
check_max=${GPU_CHECK_CHECK_MAX:-64M} pair_max=${GPU_CHECK_PAIR_MAX:-1G}
rounds=${GPU_CHECK_ROUNDS:-2} gpus=${GPU_CHECK_GPUS:-1}
wants() { [[ ",${GPU_CHECK_CONFIGS:-c0,c1,vhost,graph,timer,z3,reg1,reg2,correctness,two_ranks}," == *",$1,"* ]]; }
IFS=, read -r -a colls <<<"${GPU_CHECK_COLLS:-all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv}"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX") || exit 2
raw=$work/raw manifest=$work/raw/steps.tsv
mkdir -p "$raw"
printf 'name\ttool\tconfig\tcoll\tstatus\trc\twall_s\tlimit_s\tend_s\tnote\n' >"$manifest"
now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }
t0=$(now)

# record NAME TOOL CONFIG COLL STATUS RC WALL LIMIT NOTE: one manifest line and one progress line
# in OUTDIR/summary.txt (replaced by the full summary at the end; kept if the run is cut short).
# The background build records too: each record is one short append, so lines never mix.
record() {
    local end
    end=$(awk "BEGIN{printf \"%.1f\", $(now) - $t0}")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${@:1:8}" "$end" "$9" >>"$manifest"
    printf '%-8s rc=%-3s %7ss  %s  %s\n' "$5" "$6" "$7" "$1" "$9" >>"$out/summary.txt"
}

# step NAME TOOL CONFIG COLL LIMIT CMD...: CMD under a hard bound (LIMIT seconds, cut to the
# budget left), stdout to raw/NAME.txt and stderr to raw/NAME.err.
step() {
    local name=$1 tool=$2 config=$3 coll=$4 limit=$5 left=$((deadline - SECONDS)) t rc status
    shift 5
    mkdir -p "$(dirname "$raw/$name")"
    if ((left < 5)); then
        record "$name" "$tool" "$config" "$coll" NOTRUN - 0 0 "budget spent: $*"
        return 1
    fi
    ((limit > left)) && limit=$left
    t=$(now)
    timeout --kill-after=5 "$limit" "$@" >"$raw/$name.txt" 2>"$raw/$name.err"
    rc=$?
    case $rc in 0) status=PASS ;; 124 | 137) status=TIMEOUT ;; *) status=FAIL ;; esac
    record "$name" "$tool" "$config" "$coll" "$status" "$rc" "$(awk "BEGIN{printf \"%.2f\", $(now) - $t}")" "$limit" "$*"
    return $rc
}

# nb NAME CONFIG COLL LIMIT FLAGS...: ncclbench on the NCCL backend, text table plus CSV.
nb() {
    local name=$1 config=$2 c=$3 limit=$4
    shift 4
    step "$name.ncclbench" ncclbench "$config" "$c" "$limit" "$bin" "$c" --backend nccl "$@" --csv "$raw/$name.ncclbench.csv"
}

# nt NAME CONFIG COLL LIMIT FLAGS...: nccl-tests' <coll>_perf on the library ncclbench loaded.
nt() {
    local name=$1 config=$2 c=$3 limit=$4
    shift 4
    if [[ ! -x "$nt_bin/${c}_perf" ]]; then
        record "$name.nccl-tests" nccl-tests "$config" "$c" NOTRUN - 0 0 "no ${c}_perf: $(cat "$work/nt-why" 2>/dev/null)"
        return 1
    fi
    step "$name.nccl-tests" nccl-tests "$config" "$c" "$limit" env LD_LIBRARY_PATH="$nt_ld" "$nt_bin/${c}_perf" "$@"
}

# pair CONFIG COLL ROUND LIMIT FLAGS...: ncclbench then nccl-tests with the same flags
# ($NB_EXTRA: ncclbench-only flags of this configuration).
pair() {
    local config=$1 c=$2 r=$3 limit=$4 extra
    shift 4
    read -r -a extra <<<"${NB_EXTRA:-}"
    nb "$config/$c.r$r" "$config" "$c" "$limit" "$@" "${extra[@]}"
    nt "$config/$c.r$r" "$config" "$c" "$limit" "$@"
}

# build_nccl_tests: unpack the tarball and build the six binaries with the local nvcc against
# $lib (its include/ beside lib/, a temporary NCCL_HOME with the lib/libnccl.so link make wants).
build_nccl_tests() {
    local src=$work/nccl-tests home=$work/nccl-home nvcc inc cuda_home targets=() c
    mkdir -p "$src" "$home/lib"
    step build/unpack build build - 60 tar xzf "$tarball" -C "$src" --strip-components=1 || return 1
    nvcc=${NVCC:-$(command -v nvcc || true)}
    for c in "${CUDA_HOME:-/nonexistent}/bin/nvcc" /usr/local/cuda/bin/nvcc; do
        [[ -z "$nvcc" && -x "$c" ]] && nvcc=$c
    done
    if [[ -z "$nvcc" ]]; then
        echo "no nvcc (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)" >"$work/nt-why"
        record build/nccl-tests build build - FAIL - 0 0 "$(cat "$work/nt-why")"
        return 1
    fi
    cuda_home=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
    for inc in ${GPU_CHECK_NCCL_INCLUDE:-} "$(dirname "${given_lib:-$lib}")/../include" \
        "$(dirname "$lib")/../include" /usr/include /usr/local/include ""; do
        [[ -f "$inc/nccl.h" ]] && break
    done
    if [[ -z "$inc" ]]; then
        echo "no nccl.h for $lib (beside its lib/, /usr/include; or GPU_CHECK_NCCL_INCLUDE)" >"$work/nt-why"
        record build/nccl-tests build build - FAIL - 0 0 "$(cat "$work/nt-why")"
        return 1
    fi
    ln -sfn "$(cd "$inc" && pwd)" "$home/include"
    ln -sf "$lib" "$home/lib/libnccl.so"
    for c in "${colls[@]}"; do targets+=("$src/build/${c}_perf"); done
    step build/nccl-tests build build - "${GPU_CHECK_BUILD_S:-210}" nice make -C "$src/src" -j "$(nproc)" \
        MPI=0 NVCC="$nvcc" CUDA_HOME="$cuda_home" NCCL_HOME="$home" NVCC_GENCODE="$gencode" BUILDDIR="$src/build" "${targets[@]}" ||
        echo "the build failed (raw/build/nccl-tests.err)" >"$work/nt-why"
    echo "$cuda_home/lib64" >"$work/cuda-lib"
}

# ---- environment: what ncclbench loads is what nccl-tests gets
: >"$out/summary.txt"
if [[ -z "${NCCLBENCH_NCCL_LIB:-}" ]]; then # GPU machines carry libnccl in Python packages
    NCCLBENCH_NCCL_LIB=$(python3 - 2>/dev/null <<'PY'
import glob, os, site, sys
for root in site.getsitepackages() + [site.getusersitepackages()] + sys.path:
    for pat in ("nvidia/nccl/lib/libnccl.so.2", "torch/lib/libnccl.so.2"):
        for hit in glob.glob(os.path.join(root, pat)):
            print(hit)
            raise SystemExit
PY
    )
    [[ -n "$NCCLBENCH_NCCL_LIB" ]] && export NCCLBENCH_NCCL_LIB || unset NCCLBENCH_NCCL_LIB
fi
step env/ncclbench-env ncclbench env - 30 "$bin" env
step env/ncclbench-env-json ncclbench env - 30 "$bin" env --json && cp "$raw/env/ncclbench-env-json.txt" "$out/env.json"
envq() { python3 -c "import json,sys; e=json.load(open(sys.argv[1])); print($1)" "$out/env.json" 2>/dev/null; }
lib=$(envq 'e["nccl"]["path"] or ""')
version=$(envq 'e["nccl"]["version"] or ""')
code=$(envq 'e["nccl"]["version_code"] or 0')
code=${code:-0}
minor=$((code >= 10000 ? code / 100 : code / 100 % 10 + code / 1000 * 100)) # 2.30.1 -> 230
cc=$(envq '"%d%d" % tuple(e["cuda"]["devices"][0]["compute_capability"])')
gencode=${GPU_CHECK_GENCODE:-${cc:+-gencode=arch=compute_$cc,code=sm_$cc}}
given_lib=${NCCLBENCH_NCCL_LIB:-} # the wheel's or the user's path; beside it lies include/
[[ -n "$lib" ]] && export NCCLBENCH_NCCL_LIB=$lib
{
    echo "# gpu-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname), budget ${budget}s"
    echo "ncclbench: $bin; work folder $work"
    echo "libnccl: ${lib:-<none loaded>} (NCCL ${version:-?}, code $code); nccl-tests gets the same file"
    echo "nccl-tests: ${NCCL_TESTS_BIN:-${tarball:-<none>}}"
    echo "sizes: perf 8..$max, side 8..$side_max, checks 8..$check_max, two ranks 8..$pair_max; rounds $rounds; ranks per run $gpus"
    echo "collectives: ${colls[*]}"
    echo
    cat "$raw/env/ncclbench-env.txt"
    echo
    uname -a
    python3 -c 'import importlib.metadata as m
for d in ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "torch", "nvidia-cuda-nvcc-cu13"):
    try: print(d, m.version(d))
    except Exception: pass' 2>/dev/null
    command -v nvcc >/dev/null && nvcc --version | tail -2
    command -v nvidia-smi >/dev/null && timeout 20 nvidia-smi --query-gpu=name,pci.bus_id,driver_version,memory.total,clocks.max.sm --format=csv
    env | grep -E '^(NCCL|CUDA|NCCLBENCH|GPU_CHECK)_' | sort
} >"$out/env.txt" 2>&1
if command -v nvidia-smi >/dev/null; then
    timeout 20 nvidia-smi -q >"$raw/env/nvidia-smi-q.txt" 2>&1
    timeout 20 nvidia-smi topo -m >"$raw/env/nvidia-smi-topo.txt" 2>&1
fi

# ---- nccl-tests: ready binaries, or a build in the background while ncclbench checks data
nt_bin=${NCCL_TESTS_BIN:-$work/nccl-tests/build}
mkdir -p "$work/nccl-lib"
[[ -n "$lib" ]] && ln -sf "$lib" "$work/nccl-lib/libnccl.so.2"
build_pid=
if [[ -n "${NCCL_TESTS_BIN:-}" ]]; then
    echo "NCCL_TESTS_BIN=$NCCL_TESTS_BIN has no such binary" >"$work/nt-why"
elif [[ -n "$tarball" ]]; then
    build_nccl_tests &
    build_pid=$!
else
    echo "no nccl-tests: give a tarball or NCCL_TESTS_BIN" >"$work/nt-why"
    record build/nccl-tests build build - NOTRUN - 0 0 "$(cat "$work/nt-why")"
fi

check_flags=(-b 8 -e "$check_max" -f 8 -d all -o all -r -1 -c 1 -n 2 -w 1 -g "$gpus")
for c in "${colls[@]}"; do # data checks need no quiet machine: they run beside the build
    wants correctness && nb "correctness/$c" correctness "$c" 60 "${check_flags[@]}"
done
if wants two_ranks; then # the NCCL version decides whether two ranks may share a GPU
    if ((minor >= 205 && minor < 230)); then
        record two_ranks/all ncclbench two_ranks - SKIP - 0 0 "NCCL $version refuses two ranks on one GPU (2.5-2.29: Duplicate GPU detected)"
    else
        for c in "${colls[@]}"; do
            NCCL_MULTI_RANK_GPU_ENABLE=1 nb "two_ranks/$c" two_ranks "$c" 45 -g 2 --devices 0,0 \
                -b 8 -e "$pair_max" -f 2 -n 20 -w 5 -c 1
        done
    fi
    record two_ranks/nccl-tests nccl-tests two_ranks - SKIP - 0 0 "nccl-tests puts each rank on its own device"
fi
if [[ -n "$build_pid" ]]; then
    wait "$build_pid"
    nt_ld=$work/nccl-lib:$(cat "$work/cuda-lib" 2>/dev/null):${LD_LIBRARY_PATH:-}
else
    nt_ld=$work/nccl-lib:${LD_LIBRARY_PATH:-}
fi

# ---- side by side, most important first (a spent budget drops the tail, recorded)
perf=(-b 8 -f 2 -n 20 -w 5 -g "$gpus")
configs="c0	-c 0 -e $max ($rounds rounds)
c1	-c 1 -e $max
graph	-c 0 -G 10 -e $side_max
timer	-c 0 -e $side_max, ncclbench --timer device, nccl-tests its host timer
z3	-c 0 -z 3 -e $side_max
reg1	-c 1 -R 1 -e $check_max
reg2	-c 1 -R 2 -e $check_max"
echo "$configs" >"$raw/configs.tsv"
for ((r = 1; r <= rounds; r++)); do
    for c in "${colls[@]}"; do wants c0 && pair c0 "$c" "$r" 60 "${perf[@]}" -e "$max" -c 0; done
done
# -c 1 with the device kernels (ncclbench fails the step if they do not load), then the same
# sweep verified on the host (ncclbench only): the summary sets both against -c 0.
for c in "${colls[@]}"; do
    wants c1 && NB_EXTRA="--verify device" pair c1 "$c" 1 120 "${perf[@]}" -e "$max" -c 1
    wants vhost && nb "vhost/$c.r1" vhost "$c" 240 "${perf[@]}" -e "$max" -c 1 --verify host
done
for c in "${colls[@]}"; do wants graph && pair graph "$c" 1 60 "${perf[@]}" -e "$side_max" -c 0 -G 10; done
for c in "${colls[@]}"; do
    wants timer && NB_EXTRA="--timer device" pair timer "$c" 1 60 "${perf[@]}" -e "$side_max" -c 0
done
for c in "${colls[@]}"; do wants z3 && pair z3 "$c" 1 60 "${perf[@]}" -e "$side_max" -c 0 -z 3; done
for c in "${colls[@]}"; do wants reg1 && pair reg1 "$c" 1 40 "${perf[@]}" -e "$check_max" -c 1 -R 1; done
for c in "${colls[@]}"; do wants reg2 && pair reg2 "$c" 1 40 "${perf[@]}" -e "$check_max" -c 1 -R 2; done
for c in "${colls[@]}"; do wants correctness && nt "correctness/$c" correctness "$c" 60 "${check_flags[@]}"; done

# ---- compare, summary, pack: bounded by the budget's end
left() { local l=$((finish_by - SECONDS)); echo $((l < 5 ? 5 : l)); }
cp "$out/summary.txt" "$raw/progress.txt"
timeout --kill-after=3 "$(left)" python3 "$here/gpu-check-summary.py" "$bin" "$work" "$out" \
    "$((finish_by - 10 - SECONDS))" >"$raw/summary.out" 2>"$raw/summary.err"
rc=$?
if ((rc != 0)); then
    cp "$raw/progress.txt" "$out/summary.txt"
    record summary gpu-check finish - FAIL "$rc" 0 0 "the summary failed (raw/summary.err); progress lines above"
fi
limit=${GPU_CHECK_FILE_LIMIT:-$((16 << 20))} # bytes per file that can come back
pack() { # pack [SIZE]: results.tar.gz of raw/, less charts and files over SIZE when given
    local drop=()
    [[ -n "${1:-}" ]] && drop=(! \( \( -name '*.png' -o -name '*.svg' -o -size +"$1" \) ! -name steps.tsv \))
    (cd "$work" && find raw -type f "${drop[@]}" -print0 | timeout "$(left)" tar czf "$out/results.tar.gz" --null -T -)
    stat -c %s "$out/results.tar.gz" 2>/dev/null || echo 0
}
size=$(pack)
for cut in 1024k 64k 8k; do # too big: leave out the charts and the largest raw files, and say so
    ((size <= limit)) && break
    size=$(pack "$cut")
    echo "# results.tar.gz: left out the charts and the raw files over $cut" >>"$out/summary.txt"
done
((size > 0 && size <= limit)) || record pack gpu-check finish - FAIL - 0 0 "results.tar.gz is $size bytes"
for f in "$out"/*; do # no file over the limit: a cut text file still says most
    if (($(stat -c %s "$f") > limit)); then
        truncate -s "$limit" "$f"
        echo "# $(basename "$f") was cut to $limit bytes" >>"$out/summary.txt"
    fi
done
files=$(find "$out" -type f | wc -l)
((files <= 8)) || echo "# $files files in OUTDIR: over the limit of 8" >>"$out/summary.txt"
failed=$(awk -F'\t' 'NR > 1 && ($5 == "FAIL" || $5 == "TIMEOUT" || $5 == "NOTRUN")' "$manifest" | wc -l)
echo "# gpu-check: $failed failed steps, $files files in OUTDIR, results.tar.gz $size bytes, ${SECONDS}s" >>"$out/summary.txt"
[[ -n "${GPU_CHECK_KEEP:-}" ]] || rm -rf "$work"
((failed == 0 && files <= 8))

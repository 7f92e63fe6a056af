#!/usr/bin/env bash
# The GPU check: ncclbench beside references that call the same libnccl file on one GPU, in at
# most GPU_CHECK_BUDGET (300) seconds of wall time, building nothing. References: (a)
# scripts/gpu-ref-cupy.py, a bare NCCL loop over CuPy's binding with ncclbench's sizes,
# warm-up, iterations and host timing; (b) scripts/gpu-ref-torch.py, torch.distributed with the
# NCCL backend, world size 1; (c) nccl-tests only when NCCL_TESTS_BIN names a folder holding the
# user's own <coll>_perf build. CuPy and torch get LD_PRELOAD of the file `ncclbench env`
# reports loaded (nccl-tests an LD_LIBRARY_PATH link to it); each names the file it mapped.
#
# Usage: scripts/gpu-check.sh OUTDIR NCCLBENCH    run the check (the device needs no Rust: carry
#                                                 a stripped release binary)
#        scripts/gpu-check.sh --plan              print every step with its bound and the total
# Steps (each under `timeout`, cut to the budget left; a failed step is recorded and passed
# over; the bounds sum to at most the budget, which --plan shows):
#   env        ncclbench env (text, JSON), the host (nvidia-smi, Python packages)
#   small      8 B..1M x2, -n 1000 -w 20 -c 0, GPU_CHECK_ROUNDS (3) rounds, interleaved per
#              collective: ncclbench, cupy (, nccl-tests in round 1)
#   large      GPU_CHECK_SMALL_MAX..GPU_CHECK_MAX (8G) x2, -n 20 -w 5 -c 0, 2 rounds, interleaved likewise
#   torch      one process, both sweeps
#   correct    all eleven collectives -c 1 -d all -o all -r -1 up to 64M
#   feature    all_reduce up to 64M with -G 10, --timer device, -z 3, -R 1 -c 1, -R 2 -c 1
#   locate     `locate` (one GPU is one rank, which it must refuse: exit 2 naming why) and
#              `accept --locate` (a small profile whose latency bound fails on purpose, so
#              locate runs: exit 1 with a locate row is this step's pass)
# NCCL_DEBUG=WARN for every step (unless set). A step that NCCL refuses in part on one rank
# (ncclbench's "# skipping ... one-rank" lines; nccl-tests stopping with invalid argument after
# an fp8 sweep) is EXPECTED, not FAIL.
# OUTDIR (new or empty) gets summary.txt (steps, ratios per collective and size with their
# spread over rounds, libraries), env.txt, env.json and results.tar.gz (every raw output and the
# step manifest raw/steps.tsv): at most 8 files of at most GPU_CHECK_FILE_LIMIT (16 MiB).
# Settings: GPU_CHECK_BUDGET, GPU_CHECK_ROUNDS, GPU_CHECK_LARGE_ROUNDS (2), GPU_CHECK_ITERS
#   (1000), GPU_CHECK_SMALL_MAX (1M), GPU_CHECK_MAX, GPU_CHECK_CHECK_MAX (64M), GPU_CHECK_COLLS
#   (compared: all_reduce,all_gather,sendrecv), GPU_CHECK_ALL_COLLS (the eleven),
#   GPU_CHECK_LIMIT_<KIND> (a step kind's bound, s), NCCLBENCH_NCCL_LIB, NCCL_TESTS_BIN,
#   GPU_CHECK_PYTHON (python3), GPU_CHECK_KEEP=1 (keep the work folder).
# Exit status: 0 when no step failed, 1 otherwise, 2 bad usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
usage="usage: scripts/gpu-check.sh OUTDIR NCCLBENCH | scripts/gpu-check.sh --plan"
plan_only=
if [[ "${1:-}" == --plan ]]; then
    plan_only=1 out=/nonexistent bin=ncclbench work=
else
    out=${1:?$usage}
    bin=${2:?$usage}
    [[ -x "$bin" ]] || { echo "gpu-check: $bin is not an executable ncclbench" >&2; exit 2; }
    mkdir -p "$out" && [[ -z "$(ls -A "$out")" ]] || { echo "gpu-check: $out must be a new or empty directory" >&2; exit 2; }
    out=$(cd "$out" && pwd)
    bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
fi

budget=${GPU_CHECK_BUDGET:-300}
rounds=${GPU_CHECK_ROUNDS:-3} large_rounds=${GPU_CHECK_LARGE_ROUNDS:-2}
iters=${GPU_CHECK_ITERS:-1000} small_max=${GPU_CHECK_SMALL_MAX:-1M}
max=${GPU_CHECK_MAX:-8G} check_max=${GPU_CHECK_CHECK_MAX:-64M}
py=${GPU_CHECK_PYTHON:-python3}
IFS=, read -r -a colls <<<"${GPU_CHECK_COLLS:-all_reduce,all_gather,sendrecv}"
IFS=, read -r -a all_colls <<<"${GPU_CHECK_ALL_COLLS:-all_reduce,all_gather,broadcast,reduce_scatter,reduce,alltoall,scatter,sendrecv,hypercube,gather,alltoallv}"
# Each kind's bound (s): about three times what one H200 took (ncclbench's -c 0 sweep to 8G,
# init included, 1.2 s; a -c 1 -d all -o all sweep to 64M 1.1-2.0 s).
limit() {
    local var="GPU_CHECK_LIMIT_${1^^}" default
    case $1 in
        env) default=5 ;; nb_small) default=4 ;; ref_small) default=5 ;; nt_small) default=4 ;;
        nb_large) default=5 ;; ref_large) default=6 ;; nt_large) default=5 ;; torch) default=20 ;;
        correct) default=4 ;; feature) default=4 ;; locate) default=6 ;; accept) default=12 ;;
        finish) default=9 ;;
    esac
    echo "${!var:-$default}"
}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN} PYTHONDONTWRITEBYTECODE=1 # no .pyc beside the scripts
planned=0
now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }
t0=$(now)

# record NAME TOOL KIND COLL STATUS RC WALL LIMIT NOTE: one manifest line, one progress line.
record() {
    local end
    local note=${9//[$'\t\n']/ }
    end=$(awk "BEGIN{printf \"%.1f\", $(now) - $t0}")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${@:1:8}" "$end" "$note" >>"$manifest"
    printf '%-8s rc=%-3s %7ss  %s  %s\n' "$5" "$6" "$7" "$1" "$note" >>"$out/summary.txt"
}

# refusal FILE: why NCCL refused part of this one-rank run as documented, or nothing.
refusal() {
    local n
    n=$(grep -c '^# skipping .*one-rank' "$1.txt" 2>/dev/null)
    if ((n > 0)); then
        echo "$n type/op pairs NCCL refuses on one rank: $(grep -m1 '^# skipping' "$1.txt" | cut -c3-90)"
    elif grep -qi 'invalid argument' "$1.txt" "$1.err" 2>/dev/null &&
        [[ "$(awk '$1 ~ /^[0-9]+$/ && NF >= 12 {t = $3} END {print t}' "$1.txt")" == f8* ]]; then
        echo "NCCL's one-rank fp8 PreMulSum refusal (invalid argument after the fp8 sweeps)"
    fi
}

# step NAME TOOL KIND COLL CMD...: CMD under its kind's bound, cut to the budget left; stdout to
# raw/NAME.txt, stderr to raw/NAME.err. EXPECT_RC and EXPECT_RE: a step whose pass is another
# exit status with a line matching EXPECT_RE. --plan: print the step and its bound instead.
step() {
    local name=$1 tool=$2 kind=$3 coll=$4 lim left t rc status note=
    lim=$(limit "$kind")
    shift 4
    if [[ -n "$plan_only" ]]; then
        printf '%4s s  %s\n' "$lim" "$name"
        planned=$((planned + lim))
        return 0
    fi
    left=$((deadline - SECONDS))
    mkdir -p "$(dirname "$raw/$name")"
    if ((left < 2)); then
        record "$name" "$tool" "$kind" "$coll" NOTRUN - 0 0 "budget spent: $*"
        return 1
    fi
    ((lim > left)) && lim=$left
    t=$(now)
    timeout --kill-after=1 "$lim" "$@" >"$raw/$name.txt" 2>"$raw/$name.err"
    rc=$?
    case $rc in
        124 | 137) status=TIMEOUT ;;
        "${EXPECT_RC:-0}") status=PASS ;;
        *) status=FAIL ;;
    esac
    if [[ $status == PASS && -n "${EXPECT_RE:-}" ]] && ! grep -Eq "$EXPECT_RE" "$raw/$name.txt"; then
        status=FAIL note="no line matching '$EXPECT_RE'; "
    fi
    if [[ $status == PASS && -n "${EXPECT_ERR_RE:-}" ]] && ! grep -Eq "$EXPECT_ERR_RE" "$raw/$name.err"; then
        status=FAIL note="no stderr line matching '$EXPECT_ERR_RE'; "
    fi
    local why
    why=$(refusal "$raw/$name")
    [[ -n "$why" && $status != TIMEOUT ]] && status=EXPECTED note="$why; "
    record "$name" "$tool" "$kind" "$coll" "$status" "$rc" \
        "$(awk "BEGIN{printf \"%.2f\", $(now) - $t}")" "$lim" "$note$*"
    [[ $status == PASS || $status == EXPECTED ]]
}

# The three tools of a comparison. nb: ncclbench on the NCCL backend.
nb() { local name=$1 kind=$2 c=$3; shift 3; step "$name.ncclbench" ncclbench "$kind" "$c" "$bin" "$c" --backend nccl "$@"; }
# ref NAME KIND TOOL COLLS SWEEP...: a Python reference with the library preloaded.
ref() {
    local name=$1 kind=$2 tool=$3 cs=$4
    shift 4
    step "$name.$tool" "$tool" "$kind" "$cs" env ${lib:+LD_PRELOAD="$lib"} "$py" "$here/gpu-ref-$tool.py" "$cs" "$@"
}
nt() {
    local name=$1 kind=$2 c=$3
    shift 3
    step "$name.nccl-tests" nccl-tests "$kind" "$c" env LD_LIBRARY_PATH="$work/nccl-lib:${LD_LIBRARY_PATH:-}" \
        "$NCCL_TESTS_BIN/${c}_perf" "$@"
}

if [[ -z "$plan_only" ]]; then
    deadline=$((SECONDS + budget - $(limit finish)))
    finish_by=$((SECONDS + budget))
    work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX") || exit 2
    raw=$work/raw manifest=$work/raw/steps.tsv
    mkdir -p "$raw/env" "$work/nccl-lib"
    printf 'name\ttool\tkind\tcoll\tstatus\trc\twall_s\tlimit_s\tend_s\tnote\n' >"$manifest"
    : >"$out/summary.txt"
    if [[ -z "${NCCLBENCH_NCCL_LIB:-}" ]]; then # GPU machines carry libnccl in Python packages
        NCCLBENCH_NCCL_LIB=$("$py" - 2>/dev/null <<'PY'
import glob, os, site, sys
for root in site.getsitepackages() + [site.getusersitepackages()] + sys.path:
    for hit in glob.glob(os.path.join(root, "nvidia/nccl/lib/libnccl.so.2")):
        print(hit)
        raise SystemExit
PY
        )
        [[ -n "$NCCLBENCH_NCCL_LIB" ]] && export NCCLBENCH_NCCL_LIB || unset NCCLBENCH_NCCL_LIB
    fi
fi

# ---- env: the library ncclbench loads is the one every reference gets
step env/ncclbench ncclbench env - "$bin" env
step env/ncclbench-json ncclbench env - "$bin" env --json
step env/host host env - "$py" "$here/gpu-ref-common.py"
lib=
if [[ -z "$plan_only" ]]; then
    cp "$raw/env/ncclbench-json.txt" "$out/env.json" 2>/dev/null
    lib=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["nccl"]["path"] or "")' "$out/env.json" 2>/dev/null)
    [[ -n "$lib" ]] && export NCCLBENCH_NCCL_LIB=$lib && ln -sf "$lib" "$work/nccl-lib/libnccl.so.2"
    {
        echo "# gpu-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname), budget ${budget}s"
        echo "ncclbench: $bin; work folder $work"
        echo "libnccl: ${lib:-<none loaded>}: ncclbench loads it, cupy and torch get it as LD_PRELOAD, nccl-tests on LD_LIBRARY_PATH"
        echo "nccl-tests: ${NCCL_TESTS_BIN:-<not given: NCCL_TESTS_BIN>}"
        echo "small: 8..$small_max x2 -n $iters, $rounds rounds; large: $small_max..$max x2 -n 20, $large_rounds rounds; compared: ${colls[*]}"
        echo
        cat "$raw/env/ncclbench.txt" "$raw/env/host.txt"
        env | grep -E '^(NCCL|CUDA|NCCLBENCH|GPU_CHECK)_' | sort
    } >"$out/env.txt" 2>&1
fi

# ---- small sizes, then large: per collective ncclbench and the references in turn
small=(-b 8 -e "$small_max" -f 2 -n "$iters" -w 20 -c 0)
large=(-b "$small_max" -e "$max" -f 2 -n 20 -w 5 -c 0)
for ((r = 1; r <= rounds; r++)); do
    for c in "${colls[@]}"; do
        nb "small/$c.r$r" nb_small "$c" "${small[@]}"
        ref "small/$c.r$r" ref_small cupy "$c" "8,$small_max,2,$iters,20"
        [[ -n "${NCCL_TESTS_BIN:-}" && $r == 1 ]] && nt "small/$c.r$r" nt_small "$c" "${small[@]}"
    done
done
for ((r = 1; r <= large_rounds; r++)); do
    for c in "${colls[@]}"; do
        nb "large/$c.r$r" nb_large "$c" "${large[@]}"
        ref "large/$c.r$r" ref_large cupy "$c" "$small_max,$max,2,20,5"
        [[ -n "${NCCL_TESTS_BIN:-}" && $r == 1 ]] && nt "large/$c.r$r" nt_large "$c" "${large[@]}"
    done
done
ref torch/all torch torch "$(
    IFS=,
    echo "${colls[*]}"
)" "8,$small_max,2,$iters,20" "$small_max,$max,2,20,5"

# ---- data checks of every collective, the flags' paths, locate and accept
for c in "${all_colls[@]}"; do
    nb "correct/$c" correct "$c" -b 8 -e "$check_max" -f 8 -d all -o all -r -1 -c 1 -n 2 -w 1
done
side=(-b 8 -e "$check_max" -f 8 -n 20 -w 5)
nb feature/graph feature all_reduce "${side[@]}" -c 0 -G 10
nb feature/timer-device feature all_reduce "${side[@]}" -c 0 --timer device
nb feature/z3 feature all_reduce "${side[@]}" -c 0 -z 3
nb feature/reg1 feature all_reduce "${side[@]}" -c 1 -R 1
nb feature/reg2 feature all_reduce "${side[@]}" -c 1 -R 2
if [[ -z "$plan_only" ]]; then
    cat >"$work/smoke.toml" <<EOF
[profile]
name = "gpu-check-smoke"
description = "scripts/gpu-check.sh: a small suite whose latency bound cannot hold, so --locate runs"

[suite]
collectives = ["all_reduce", "sendrecv"]
correctness_max_bytes = "$small_max"
perf_max_bytes = "$check_max"
iters = 5
warmup_iters = 1
timeout_s = 30

[[latency]]
collective = "all_reduce"
max_bytes = "8"
max_us = 0.001
EOF
fi
# One GPU is one rank, which locate cannot judge: it must refuse cleanly (exit 2, one line).
EXPECT_RC=2 EXPECT_ERR_RE='cannot be judged' step locate/locate ncclbench locate - \
    "$bin" locate -g 1 -T 30 --out "${work:-}/locate"
EXPECT_RC=1 EXPECT_RE='^ +locate ' step locate/accept ncclbench accept - \
    "$bin" accept --profile "${work:-}/smoke.toml" --locate -g 1 --out "${work:-}/accept"

if [[ -n "$plan_only" ]]; then
    printf '%4s s  %s\n' "$(limit finish)" "finish (summary, pack)"
    planned=$((planned + $(limit finish)))
    echo "total: $planned s of a $budget s budget"
    ((planned <= budget)) || echo "over the budget: the steps at the end are cut (recorded NOTRUN)"
    exit 0
fi

# ---- summary and packing, bounded by the budget's end
left() { local l=$((finish_by - SECONDS)); echo $((l < 3 ? 3 : l)); }
cp "$out/summary.txt" "$raw/progress.txt"
timeout --kill-after=1 "$(left)" "$py" "$here/gpu-check-summary.py" "$work" "$out" >"$raw/summary.out" 2>"$raw/summary.err"
rc=$?
if ((rc != 0)); then
    cp "$raw/progress.txt" "$out/summary.txt"
    record summary gpu-check finish - FAIL "$rc" 0 0 "the summary failed (raw/summary.err); progress lines above"
fi
cp "$work/locate/locate.txt" "$raw/locate/" 2>/dev/null
cp "$work/accept/accept.txt" "$raw/locate/" 2>/dev/null
limit_bytes=${GPU_CHECK_FILE_LIMIT:-$((16 << 20))}
pack() { # pack [SIZE]: results.tar.gz of raw/, less the files over SIZE when given
    local drop=()
    [[ -n "${1:-}" ]] && drop=(! \( -size +"$1" ! -name steps.tsv \))
    (cd "$work" && find raw -type f "${drop[@]}" -print0 | timeout "$(left)" tar czf "$out/results.tar.gz" --null -T -)
    stat -c %s "$out/results.tar.gz" 2>/dev/null || echo 0
}
size=$(pack)
for cut in 1024k 64k 8k 0; do # too big: leave out the largest raw files (at last all but the manifest), and say so
    ((size <= limit_bytes)) && break
    size=$(pack "$cut")
    echo "# results.tar.gz: left out the raw files over $cut bytes" >>"$out/summary.txt"
done
((size > 0 && size <= limit_bytes)) || record pack gpu-check finish - FAIL - 0 0 "results.tar.gz is $size bytes"
files=$(find "$out" -type f | wc -l)
((files <= 8)) || echo "# $files files in OUTDIR: over the limit of 8" >>"$out/summary.txt"
failed=$(awk -F'\t' 'NR > 1 && ($5 == "FAIL" || $5 == "TIMEOUT" || $5 == "NOTRUN")' "$manifest" | wc -l)
echo "# gpu-check: $failed failed steps, $files files in OUTDIR, results.tar.gz $size bytes, ${SECONDS}s" >>"$out/summary.txt"
for f in "$out"/*.txt "$out"/*.json; do # no file over the limit: a cut text file still says most, and says so
    if (($(stat -c %s "$f") > limit_bytes)); then
        note="# $(basename "$f") was cut to $limit_bytes bytes"
        truncate -s $((limit_bytes - ${#note} - 2)) "$f"
        printf '\n%s\n' "$note" >>"$f"
    fi
done
[[ -n "${GPU_CHECK_KEEP:-}" ]] || rm -rf "$work"
((failed == 0 && files <= 8))

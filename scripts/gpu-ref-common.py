"""The measuring loop the GPU check's references share (loaded by gpu-ref-cupy.py and
gpu-ref-torch.py): ncclbench's host timer, step for step, so a ratio compares the call path
and nothing else. Per sweep (one collective, float, sum, root 0, one rank): `-w` launches at
each warm-up size (the minimum doubling to the maximum) then a wait; per size and placement one
untimed launch and a wait, then `-n` launches timed by the wall clock up to the stream's wait,
divided by `-n`. Launch k uses the buffers at offset (k mod max/size) x size, as ncclbench
rotates them. The output is nccl-tests' text table, so one parser reads every tool.

Usage (through a reference): COLLS SWEEP...; COLLS a comma list, SWEEP MIN,MAX,FACTOR,ITERS,WARMUP
with sizes as ncclbench takes them (8, 1K, 1M, 8G).
"""

import os
import sys
import time

# collective: (divided per rank, reduces, rooted, busbw factor at one rank)
COLLS = {
    "all_reduce": (False, True, False, 0.0),
    "all_gather": (True, False, False, 0.0),
    "reduce_scatter": (True, True, False, 0.0),
    "broadcast": (False, False, True, 1.0),
    "reduce": (False, True, True, 1.0),
    "sendrecv": (False, True, False, 1.0),
}
ELT = 4  # float


def size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text[:-1] if mult > 1 else text) * mult


def parse(argv):
    if len(argv) < 2:
        sys.exit("usage: COLLS SWEEP... (SWEEP: MIN,MAX,FACTOR,ITERS,WARMUP)")
    colls = argv[0].split(",")
    bad = [c for c in colls if c not in COLLS]
    if bad:
        sys.exit(f"unknown collective {bad[0]} (known: {', '.join(COLLS)})")
    sweeps = []
    for s in argv[1:]:
        lo, hi, f, n, w = s.split(",")
        sweeps.append((size(lo), size(hi), int(f), int(n), int(w)))
    return colls, sweeps


def shape(coll, nbytes):
    """(count, bytes shown): a divided collective's block is rounded down to 16 B, as
    ncclbench and nccl-tests do."""
    count = nbytes // ELT
    if COLLS[coll][0]:
        count -= count % (16 // ELT)
    return count, count * ELT


def nccl_libraries():
    """Every mapped file named lib*nccl.so*: the library this process really calls (two
    names mean two copies were loaded)."""
    seen = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if "/" in line else ""
            base = os.path.basename(path)
            if base.startswith("lib") and "nccl.so" in base and "-" not in base:
                real = os.path.realpath(path)
                if real not in seen:
                    seen.append(real)
    return seen


def version_string(code):
    major, rest = (code // 10000, code % 10000) if code >= 10000 else (code // 1000, code % 1000)
    return f"{major}.{rest // 100}.{rest % 100}"


def header(tool, nccl_code):
    print(f"# reference: {tool}")
    print(f"# nccl-version: {version_string(nccl_code)} ({nccl_code})")
    for lib in nccl_libraries() or ["<none mapped>"]:
        print(f"# nccl-library: {lib}")
    print(f"# timing: host wall clock around -n launches and the stream's wait, as ncclbench's "
          f"host timer; pid {os.getpid()}")


def fmt(x, width):
    """nccl-tests' number cells: the most decimals (2, 1, 0) that fit the width."""
    if x is None:
        return "N/A".rjust(width)
    for spec in ("%*.2f", "%*.1f", "%*.0f"):
        s = spec % (width, x)
        if len(s) <= width:
            return s
    return "%*.0e" % (width, x)


def run(ref, colls, sweeps):
    """ref: .launch(coll, inplace, offset, count) -> bool (False: the placement is not
    measured by this reference), .sync(); buffers cover the largest MAX."""
    for coll in colls:
        reduces, rooted, factor = COLLS[coll][1], COLLS[coll][2], COLLS[coll][3]
        for lo, hi, f, n, w in sweeps:
            print(f"# Collective test starting: {coll}_perf")
            print(f"# minBytes {lo} maxBytes {hi} step: {f}(factor) warmup iters: {w} iters: {n}")
            s = lo
            while s <= hi:  # warm-up: -w launches per doubling size, then a wait
                count, shown = shape(coll, s)
                for k in range(w):  # out of place where the reference has it
                    if not ref.launch(coll, False, offset(k, shown, hi), count):
                        ref.launch(coll, True, offset(k, shown, hi), count)
                ref.sync()
                s *= 2
            s = lo
            while s <= hi:
                count, shown = shape(coll, s)
                cells = []
                for inplace in (False, True):
                    if not ref.launch(coll, inplace, offset(0, shown, hi), count):
                        cells.append(None)
                        continue
                    ref.sync()
                    t0 = time.perf_counter()
                    for k in range(n):
                        ref.launch(coll, inplace, offset(k, shown, hi), count)
                    ref.sync()
                    cells.append((time.perf_counter() - t0) * 1e6 / n)
                line = "%12d  %12d  %8s  %6s  %6d" % (shown, count, "float",
                                                      "sum" if reduces else "none",
                                                      0 if rooted else -1)
                for us in cells:
                    alg = shown / us / 1e3 if us else None
                    bus = alg * factor if alg is not None else None
                    line += f"  {fmt(us, 7)}  {fmt(alg, 6)}  {fmt(bus, 6)}     N/A"
                print(line, flush=True)
                s *= f
            print(f"# Collective test concluded: {coll}_perf")


def offset(k, shown, hi):
    return 0 if shown == 0 else (k % max(1, hi // shown)) * shown


def host():
    """The GPU check's host step (this file run as a script): the GPUs, their links and the
    Python packages the references need."""
    import importlib.metadata
    import subprocess

    for cmd in (["nvidia-smi", "--query-gpu=name,pci.bus_id,driver_version,memory.total,"
                 "clocks.max.sm", "--format=csv"], ["nvidia-smi", "topo", "-m"], ["uname", "-a"]):
        try:
            print(subprocess.run(cmd, capture_output=True, text=True, timeout=2).stdout, end="")
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"{cmd[0]}: {e}")
    for d in ("cupy-cuda13x", "cupy-cuda12x", "torch", "nvidia-nccl-cu13", "nvidia-nccl-cu12"):
        try:
            print(d, importlib.metadata.version(d))
        except importlib.metadata.PackageNotFoundError:
            pass


if __name__ == "__main__":
    host()

#!/usr/bin/env python3
"""A stand-in for the nccl-tests 2.19.6 binaries (`<collective>_perf`), for the GPU-check test.

Run through a link named `<collective>_perf`, it parses nccl-tests' flags and prints a result
table in nccl-tests 2.19.6's text layout with plausible numbers (a latency plus a bandwidth
term per size), so scripts/gpu-check.sh's parsing, summary and packing can be proven without a
GPU. It is at least as strict as the real binaries where that matters to the check:

* libnccl.so.2 is loaded through the dynamic loader's search (LD_LIBRARY_PATH), as the real
  binaries link it; missing, it fails as the loader does (exit 127). When NCCLBENCH_NCCL_LIB is
  set, the file loaded must be that very library, so a check that pairs ncclbench with a
  different libnccl fails. `nccl-library=` is that library's ncclGetVersion.
* The GPU count comes from libcuda.so.1's cuDeviceGetCount: `-g` above it gives nccl-tests'
  "Invalid number of GPUs" (exit 5).
* Flags outside nccl-tests' set are refused with exit 2 (the real binary prints its usage and
  exits 0, which would hide a check passing ncclbench-only flags to it).

FAKE_NCCL_TESTS_FAIL=coll[,coll]: those collectives fail as an NCCL error does (exit 3).
FAKE_NCCL_TESTS_HANG=coll[,coll]: those collectives hang after the device lines (as a stuck
communicator does), until killed.
FAKE_NCCL_TESTS_LOG=FILE: each invocation appends `<collective> <args>` to FILE.
"""

import ctypes
import os
import socket
import sys
import time
import zlib

SHORT = "t:g:b:e:i:f:n:m:w:N:p:I:K:c:o:d:r:z:y:T:hG:C:a:R:x:D:V:J:S:M:u:"
LONG = {
    "nthreads": "t", "ngpus": "g", "minbytes": "b", "maxbytes": "e", "stepbytes": "i",
    "stepfactor": "f", "iters": "n", "agg_iters": "m", "warmup_iters": "w", "run_cycles": "N",
    "parallel_init": "p", "per_iter_timing": "I", "per_iter_skip": "K", "check": "c", "op": "o",
    "datatype": "d", "root": "r", "blocking": "z", "stream_null": "y", "timeout": "T",
    "cudagraph": "G", "report_cputime": "C", "average": "a", "local_register": "R",
    "cta_policy": "x", "device_implementation": "D", "device_cta_count": "V",
    "output_file": "J", "report_timestamps": "S", "memory": "M", "unalign": "u",
}
TYPES = [("int8", 1), ("uint8", 1), ("int32", 4), ("uint32", 4), ("int64", 8), ("uint64", 8),
         ("half", 2), ("float", 4), ("double", 8), ("bfloat16", 2), ("f8e4m3", 1),
         ("f8e5m2", 1)]
OPS = ["sum", "prod", "max", "min", "avg", "mulsum"]
# collective: (divides the buffer by ranks, reduces, rooted, in-place checked, busbw factor)
COLLS = {
    "all_reduce": (False, True, False, True, lambda n: 2 * (n - 1) / n),
    "all_gather": (True, False, False, True, lambda n: (n - 1) / n),
    "reduce_scatter": (True, True, False, True, lambda n: (n - 1) / n),
    "broadcast": (False, False, True, True, lambda n: 1),
    "reduce": (False, True, True, True, lambda n: 1),
    "alltoall": (True, False, False, False, lambda n: (n - 1) / n),
    "sendrecv": (False, True, False, False, lambda n: 1),
    "scatter": (True, False, True, True, lambda n: (n - 1) / n),
    "gather": (True, False, True, True, lambda n: (n - 1) / n),
    "hypercube": (True, False, False, True, lambda n: 1),
}


def die(code, msg):
    sys.stderr.write(msg + "\n")
    sys.exit(code)


def parse_args(argv):
    opts, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            key = LONG.get(a[2:].split("=")[0])
            if key is None:
                die(2, f"invalid option '{a}' (the real binary prints its usage and exits 0)")
            val = a.split("=", 1)[1] if "=" in a else (argv[i + 1] if i + 1 < len(argv) else None)
            i += 1 if "=" in a else 2
        elif a.startswith("-") and len(a) >= 2 and a[1] in SHORT.replace(":", ""):
            key = a[1]
            if key == "h":
                print("USAGE: (stand-in)")
                sys.exit(0)
            val = a[2:] if len(a) > 2 else (argv[i + 1] if i + 1 < len(argv) else None)
            i += 1 if len(a) > 2 else 2
        else:
            die(2, f"invalid option '{a}' (the real binary prints its usage and exits 0)")
        if val is None:
            die(2, f"option '{a}' requires an argument")
        opts[key] = val
    return opts


def size(text):
    num = text.rstrip("KkMmGgBb")
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[len(num):][:1].lower(), 1)
    return int(float(num) * mult)


def fstr(value, width):
    """nccl-tests' getFloatStr: the most decimals (2, 1, 0) that fit, else an exponent."""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        s = fmt % (width, value)
        if len(s) <= width:
            return s
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


def load_libraries():
    try:
        nccl = ctypes.CDLL("libnccl.so.2")
    except OSError:
        die(127, f"{sys.argv[0]}: error while loading shared libraries: libnccl.so.2: "
                 "cannot open shared object file: No such file or directory")
    want = os.environ.get("NCCLBENCH_NCCL_LIB")
    if want:
        mapped = {line.split()[-1] for line in open("/proc/self/maps") if "/" in line}
        if os.path.realpath(want) not in mapped:
            die(126, f"stand-in: the libnccl.so.2 found on LD_LIBRARY_PATH is not "
                     f"NCCLBENCH_NCCL_LIB ({want})")
    version = ctypes.c_int(0)
    nccl.ncclGetVersion(ctypes.byref(version))
    cuda = ctypes.CDLL("libcuda.so.1")
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        die(2, f"{socket.gethostname()}: Test CUDA failure common.cu:1000 'no CUDA-capable device'")
    name = ctypes.create_string_buffer(256)
    cuda.cuDeviceGetName(name, 256, 0)
    return version.value, count.value, name.value.decode()


def counts(coll, nbytes, elt, n):
    """(count column, size column): divided collectives round each rank's block down to 16 B."""
    count = nbytes // elt
    if not COLLS[coll][0]:
        return count, count * elt
    per = count // n
    per -= per % max(1, 16 // elt)
    return per, per * n * elt


def fake_time(coll, nbytes, key, graph, blocking):
    alpha = 6.0 if graph == 0 else 3.5
    alpha += 2.0 if blocking == 3 else 0.0
    jitter = 1 + (zlib.crc32(f"{coll} {nbytes} {key}".encode()) % 100) / 2000
    return (alpha + nbytes / 1.8e6) * jitter  # ~1.8 TB/s: an on-device copy


def main():
    coll = os.path.basename(sys.argv[0])
    if coll.endswith("_perf"):
        coll = coll[: -len("_perf")]
    if coll not in COLLS:
        die(2, f"stand-in: no collective in the name {sys.argv[0]}")
    opts = parse_args(sys.argv[1:])
    log = os.environ.get("FAKE_NCCL_TESTS_LOG")
    if log:
        with open(log, "a") as f:
            f.write(coll + " " + " ".join(sys.argv[1:]) + "\n")
    library, ndev, devname = load_libraries()
    t, g = int(opts.get("t", 1)), int(opts.get("g", 1))
    lo, hi = size(opts.get("b", "32M")), size(opts.get("e", "32M"))
    factor, step = int(opts.get("f", 1)), size(opts.get("i", "1M"))
    iters, warm, check = int(opts.get("n", 20)), int(opts.get("w", 1)), int(opts.get("c", 1))
    graph, blocking = int(opts.get("G", 0)), int(opts.get("z", 0))
    host = socket.gethostname().split(".")[0]
    if lo > hi:
        die(255, f"invalid sizes for 'minbytes' and 'maxbytes': {lo} > {hi}")
    print(f"# nccl-tests version 2.19.6 nccl-headers={library} nccl-library={library}")
    print(f"# Collective test starting: {coll}_perf")
    stepdesc = f"{factor}(factor)" if factor > 1 else f"{step}(bytes)"
    print(f"# nThread {t} nGpus {g} minBytes {lo} maxBytes {hi} step: {stepdesc} warmup iters: "
          f"{warm} iters: {iters} agg iters: {opts.get('m', 1)} validation: {check} graph: {graph} "
          f"unalign: {opts.get('u', 0)}")
    if blocking == 3:
        print("# Blocking Enabled: wait and barrier after each outer iteration (-n); "
              "time excludes barrier ")
    print("#\n# Using devices")
    n = t * g
    if n > ndev:
        sys.stdout.flush()
        die(5, f"Invalid number of GPUs: {n} requested but only {ndev} were found.\n"
               "Please check the number of processes and GPUs per process.")
    for r in range(n):
        print(f"#  Rank {r:2d} Group  0 Pid {os.getpid():6d} on {host:>10s} device {r:2d} "
              f"[0000:{0x18 + r:02x}:00] {devname}")
    if coll in os.environ.get("FAKE_NCCL_TESTS_FAIL", "").split(","):
        sys.stdout.flush()
        die(3, f"{host}: Test NCCL failure common.cu:1178 'unhandled cuda error (run with "
               f"NCCL_DEBUG=INFO for details) / stand-in failure'\n .. {host} pid "
               f"{os.getpid()}: Test failure common.cu:1203")
    if coll in os.environ.get("FAKE_NCCL_TESTS_HANG", "").split(","):
        sys.stdout.flush()
        time.sleep(3600)
    print("#")
    print("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
          % ("", "", "", "", ""))
    print("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
          % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
             "time", "algbw", "busbw", "#wrong", 0, ""))
    print("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
          % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
             "(GB/s)", "", 0, ""))
    divided, reduces, rooted, inplace_checked, busbw = COLLS[coll]
    dt = opts.get("d", "float")
    types = TYPES if dt == "all" else [x for x in TYPES if x[0] == dt] or [("float", 4)]
    ops = (OPS if opts.get("o", "sum") == "all" else [opts.get("o", "sum")]) if reduces else ["none"]
    root = int(opts.get("r", 0))
    roots = (range(n) if root == -1 else [root]) if rooted else [-1]
    bws = []
    for tname, elt in types:
        for op in ops:
            for rt in roots:
                nbytes = lo
                while nbytes <= hi:
                    count, shown = counts(coll, nbytes, elt, n)
                    line = "%12li  %12li  %8s  %6s  %6s" % (shown, count, tname, op, "%6i" % rt)
                    for place, checked in (("oop", True), ("ip", inplace_checked)):
                        us = fake_time(coll, shown, f"{tname}{op}{rt}{place}", graph, blocking)
                        alg = shown / us / 1e3
                        bus = alg * busbw(n)
                        bws.append(bus)
                        wrong = "%6g" % 0 if check and checked else "   N/A"
                        line += "  %7s  %6s  %6s  %s" % (fstr(us, 7), fstr(alg, 6), fstr(bus, 6), wrong)
                    print(line)
                    nbytes = nbytes * factor if factor > 1 else nbytes + step
    print("# %-20s : %d %s" % ("Out of bounds values", 0, "OK"))
    print("# %-20s : %g %s" % ("Avg bus bandwidth", sum(bws) / len(bws) if bws else 0, ""))
    print("#")
    print(f"# Collective test concluded: {coll}_perf")
    print("#")
    print()


if __name__ == "__main__":
    main()

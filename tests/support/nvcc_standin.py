#!/usr/bin/env python3
"""A stand-in for nvcc, for the GPU-check test of the nccl-tests build step.

Installed as `<dir>/bin/nvcc`, it lets nccl-tests' own Makefile run to the end without CUDA and
checks what a real build needs from scripts/gpu-check.sh:

* `--version` prints a CUDA release line (the Makefile derives its C++ standard from it).
* A compile (`-c X.cu -o X.o`) needs `nccl.h` in one of its `-I` folders and one `-gencode`
  (the script limits the build to the GPU's architecture); it writes an empty object.
* A link (`-o .../<coll>_perf`) needs `libnccl.so` in one of its `-L` folders, resolving to
  NCCLBENCH_NCCL_LIB when that is set (nccl-tests must link the library ncclbench loads), and
  every input object to exist; the "binary" it writes is a link to nccl_tests_standin.py
  beside this file, so the check can run what it built.

NVCC_STANDIN_LOG=FILE: each call appends its arguments to FILE.
"""

import os
import sys


def fail(msg):
    sys.stderr.write(f"nvcc stand-in: {msg}\n")
    sys.exit(1)


def values(args, flag):
    """Values of `-Xdir` and `-X dir` forms."""
    out = []
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            out.append(args[i + 1])
        elif a.startswith(flag) and len(a) > len(flag):
            out.append(a[len(flag):])
    return out


def main():
    args = sys.argv[1:]
    log = os.environ.get("NVCC_STANDIN_LOG")
    if log:
        with open(log, "a") as f:
            f.write(" ".join(args) + "\n")
    if "--version" in args:
        print("nvcc: NVIDIA (R) Cuda compiler driver (stand-in)")
        print("Cuda compilation tools, release 12.8, V12.8.93")
        return
    target = (values(args, "-o") or [None])[0]
    if target is None:
        fail("no -o")
    if not any(a.startswith("-gencode") for a in args):
        fail("no -gencode: the build would compile for every architecture")
    if "-c" in args:
        if not any(os.path.isfile(os.path.join(d, "nccl.h")) for d in values(args, "-I")):
            fail(f"nccl.h is in none of the -I folders {values(args, '-I')}")
        open(target, "w").close()
        return
    libs = [os.path.join(d, "libnccl.so") for d in values(args, "-L")]
    found = [p for p in libs if os.path.exists(p)]
    if not found:
        fail(f"cannot find -lnccl: no libnccl.so in {values(args, '-L')}")
    want = os.environ.get("NCCLBENCH_NCCL_LIB")
    if want and os.path.realpath(found[0]) != os.path.realpath(want):
        fail(f"{found[0]} is not NCCLBENCH_NCCL_LIB ({want})")
    for a in args:
        if a.endswith((".o", ".a")) and not os.path.isfile(a):
            fail(f"missing input {a}")
    here = os.path.dirname(os.path.realpath(__file__))
    if os.path.lexists(target):
        os.remove(target)
    os.symlink(os.path.join(here, "nccl_tests_standin.py"), target)


if __name__ == "__main__":
    main()

"""The stand-ins' one device: libcuda.so.1 and libnccl.so.2 as the dynamic loader finds them
(fake-nccl in the GPU-check tests), called through ctypes the way CuPy and torch call the real
ones. Every call's status is checked: a refused call raises, as the real bindings do.

FAKE_REF_LOG=FILE: each stand-in process appends `<module> <argv>` to FILE.
"""

import ctypes
import os
import sys

cuda = ctypes.CDLL("libcuda.so.1")
nccl = ctypes.CDLL("libnccl.so.2")
if os.environ.get("FAKE_REF_LOG"):
    with open(os.environ["FAKE_REF_LOG"], "a") as f:
        f.write(f"{os.path.basename(sys.argv[0])} {' '.join(sys.argv[1:])}\n")


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


def cu(name, *args):
    rc = getattr(cuda, name)(*args)
    if rc != 0:
        raise RuntimeError(f"{name} failed: CUresult {rc}")


def nc(name, *args):
    rc = getattr(nccl, name)(*args)
    if rc != 0:
        raise RuntimeError(f"{name} failed: ncclResult_t {rc}")


def use_device(ordinal):
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    cu("cuInit", 0)
    cu("cuDeviceGet", ctypes.byref(dev), ordinal)
    cu("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    cu("cuCtxSetCurrent", ctx)


def alloc(nbytes):
    p = ctypes.c_uint64()
    cu("cuMemAlloc_v2", ctypes.byref(p), ctypes.c_size_t(nbytes))
    return p.value


def stream():
    s = ctypes.c_void_p()
    cu("cuStreamCreate", ctypes.byref(s), 1)
    return s.value or 0


def sync(s):
    cu("cuStreamSynchronize", ctypes.c_void_p(s))


def version():
    v = ctypes.c_int()
    nc("ncclGetVersion", ctypes.byref(v))
    return v.value


def unique_id():
    uid = UniqueId()
    nc("ncclGetUniqueId", ctypes.byref(uid))
    return uid


def comm_init(nranks, uid, rank):
    comm = ctypes.c_void_p()
    nc("ncclCommInitRank", ctypes.byref(comm), nranks, uid, rank)
    return comm


P, N = ctypes.c_void_p, ctypes.c_size_t


def call(name, comm, st, *args):
    """An NCCL collective: pointer/int arguments in the order of nccl.h, then comm, stream."""
    conv = [P(a) if isinstance(a, Ptr) else a for a in args]
    nc(name, *conv, comm, P(st))


class Ptr(int):
    """A device address (passed as a pointer, not an int)."""

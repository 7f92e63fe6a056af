#!/usr/bin/env python3
"""The GPU check's bare NCCL reference: the loop of gpu-ref-common.py over CuPy's thin NCCL
binding (`cupy.cuda.nccl`, one Python call per NCCL call, on one non-blocking stream), one rank
on GPU 0. Run it with LD_PRELOAD naming the libnccl ncclbench loaded so both call one file;
the header names the file this process mapped.

Usage: gpu-ref-cupy.py COLLS SWEEP...  (see gpu-ref-common.py)
"""

import importlib.util
import os
import sys

spec = importlib.util.spec_from_file_location(
    "gpu_ref_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu-ref-common.py"))
common = importlib.util.module_from_spec(spec)
spec.loader.exec_module(common)


class CupyRef:
    def __init__(self, max_bytes):
        import cupy
        from cupy.cuda import nccl

        self.nccl = nccl
        cupy.cuda.Device(0).use()
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.send = cupy.cuda.alloc(max(max_bytes, 1))
        self.recv = cupy.cuda.alloc(max(max_bytes, 1))
        self.comm = nccl.NcclCommunicator(1, nccl.get_unique_id(), 0)
        self.version = nccl.get_version()
        self.tool = f"cupy {cupy.__version__} (cupy.cuda.nccl), one rank on GPU 0"

    def launch(self, coll, inplace, off, count):
        nccl, c, st = self.nccl, self.comm, self.stream.ptr
        recv = self.recv.ptr + off
        send = recv if inplace else self.send.ptr + off
        f32, add = nccl.NCCL_FLOAT32, nccl.NCCL_SUM
        if coll == "all_reduce":
            c.allReduce(send, recv, count, f32, add, st)
        elif coll == "all_gather":
            c.allGather(send, recv, count, f32, st)
        elif coll == "reduce_scatter":
            c.reduceScatter(send, recv, count, f32, add, st)
        elif coll == "broadcast":
            c.broadcast(send, recv, count, f32, 0, st)
        elif coll == "reduce":
            c.reduce(send, recv, count, f32, add, 0, st)
        else:  # sendrecv: a send to and a receive from itself, paired in one group
            nccl.groupStart()
            c.send(send, count, f32, 0, st)
            c.recv(recv, count, f32, 0, st)
            nccl.groupEnd()
        return True

    def sync(self):
        self.stream.synchronize()


def main():
    colls, sweeps = common.parse(sys.argv[1:])
    ref = CupyRef(max(s[1] for s in sweeps))
    common.header(ref.tool, ref.version)
    common.run(ref, colls, sweeps)
    ref.sync()
    ref.comm.destroy()


if __name__ == "__main__":
    main()

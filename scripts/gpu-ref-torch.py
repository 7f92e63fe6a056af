#!/usr/bin/env python3
"""The GPU check's framework reference: the loop of gpu-ref-common.py over `torch.distributed`
with the NCCL backend, world size 1 on GPU 0, as an ML engineer measures a collective (the
torch call on the current stream, torch.cuda.synchronize() as the wait). torch's calls are in
place (all_reduce, broadcast, reduce: the in-place columns) or out of place
(all_gather_into_tensor, reduce_scatter_tensor: the out-of-place columns); torch refuses a
send to its own rank, so sendrecv is skipped with a line saying so. Run it with LD_PRELOAD
naming the libnccl ncclbench loaded; the header names the file this process mapped.

Usage: gpu-ref-torch.py COLLS SWEEP...  (see gpu-ref-common.py)
"""

import importlib.util
import os
import sys

spec = importlib.util.spec_from_file_location(
    "gpu_ref_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu-ref-common.py"))
common = importlib.util.module_from_spec(spec)
spec.loader.exec_module(common)

IN_PLACE = ("all_reduce", "broadcast", "reduce")
OUT_OF_PLACE = ("all_gather", "reduce_scatter")


class TorchRef:
    def __init__(self, max_bytes):
        import torch
        import torch.distributed as dist

        self.torch, self.dist = torch, dist
        torch.cuda.set_device(0)
        dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
        n = max(max_bytes // common.ELT, 1)
        self.send = torch.empty(n, dtype=torch.float32, device="cuda")
        self.recv = torch.empty(n, dtype=torch.float32, device="cuda")
        self.views = {}
        v = torch.cuda.nccl.version()
        self.version = v[0] * 10000 + v[1] * 100 + v[2] if isinstance(v, tuple) else int(v)
        self.tool = f"torch {torch.__version__} (torch.distributed, nccl backend), world size 1 on GPU 0"

    def view(self, buf, off, count):
        """The tensor view of launch k, made once (slicing in the loop would time Python)."""
        key = (id(buf), off, count)
        if key not in self.views:
            e = off // common.ELT
            self.views[key] = buf[e:e + count]
        return self.views[key]

    def launch(self, coll, inplace, off, count):
        d = self.dist
        if (coll in IN_PLACE) != inplace or coll not in IN_PLACE + OUT_OF_PLACE:
            return False
        recv = self.view(self.recv, off, count)
        if coll == "all_reduce":
            d.all_reduce(recv)
        elif coll == "broadcast":
            d.broadcast(recv, src=0)
        elif coll == "reduce":
            d.reduce(recv, dst=0)
        elif coll == "all_gather":
            d.all_gather_into_tensor(recv, self.view(self.send, off, count))
        else:
            d.reduce_scatter_tensor(recv, self.view(self.send, off, count))
        return True

    def sync(self):
        self.torch.cuda.synchronize()


def main():
    colls, sweeps = common.parse(sys.argv[1:])
    ref = TorchRef(max(s[1] for s in sweeps))
    common.header(ref.tool, ref.version)
    for c in [c for c in colls if c not in IN_PLACE + OUT_OF_PLACE]:
        print(f"# skipping {c}: torch.distributed refuses a send to its own rank (world size 1)")
    common.run(ref, [c for c in colls if c in IN_PLACE + OUT_OF_PLACE], sweeps)
    ref.sync()
    ref.dist.destroy_process_group()


if __name__ == "__main__":
    main()

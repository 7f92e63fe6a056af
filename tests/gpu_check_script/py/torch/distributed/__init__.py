"""torch.distributed with the nccl backend over one communicator, on torch.cuda's stream."""

import _fakegpu as g

from .. import cuda

pg = {}


class HashStore:
    pass


def init_process_group(backend, store=None, rank=0, world_size=1):
    assert backend == "nccl" and isinstance(store, HashStore)
    pg["comm"] = g.comm_init(world_size, g.unique_id(), rank)


def _c(name, *args):
    g.call(name, pg["comm"], cuda.current["stream"], *args)


def all_reduce(t):
    _c("ncclAllReduce", g.Ptr(t.ptr), g.Ptr(t.ptr), g.N(t.n), 7, 0)


def broadcast(t, src=0):
    _c("ncclBroadcast", g.Ptr(t.ptr), g.Ptr(t.ptr), g.N(t.n), 7, src)


def reduce(t, dst=0):
    _c("ncclReduce", g.Ptr(t.ptr), g.Ptr(t.ptr), g.N(t.n), 7, 0, dst)


def all_gather_into_tensor(out, inp):
    _c("ncclAllGather", g.Ptr(inp.ptr), g.Ptr(out.ptr), g.N(inp.n), 7)


def reduce_scatter_tensor(out, inp):
    _c("ncclReduceScatter", g.Ptr(inp.ptr), g.Ptr(out.ptr), g.N(out.n), 7, 0)


def destroy_process_group():
    g.nc("ncclCommDestroy", pg.pop("comm"))

"""torch.cuda: the device, its current stream and the wait."""

import _fakegpu as g

from . import nccl  # noqa: F401

current = {"stream": None}


def set_device(ordinal):
    g.use_device(ordinal)
    current["stream"] = g.stream()


def synchronize():
    g.sync(current["stream"])

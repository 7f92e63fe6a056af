"""A stand-in for PyTorch in the GPU-check tests: only what scripts/gpu-ref-torch.py calls, over
fake-nccl (see _fakegpu). Tensors are float32 device buffers; slicing gives views."""

import _fakegpu as g

__version__ = "0.0.0-standin"
float32 = "float32"


class Tensor:
    def __init__(self, ptr, numel):
        self.ptr, self.n = ptr, numel

    def numel(self):
        return self.n

    def data_ptr(self):
        return self.ptr

    def __getitem__(self, s):
        start, stop, step = s.indices(self.n)
        assert step == 1
        return Tensor(self.ptr + 4 * start, stop - start)


def empty(n, dtype=None, device=None):
    assert dtype == float32 and str(device).startswith("cuda")
    return Tensor(g.alloc(4 * n), n)


from . import cuda, distributed  # noqa: E402,F401

"""torch.cuda.nccl.version(): the loaded library's, as a tuple."""

import _fakegpu as g


def version():
    v = g.version()
    return (v // 10000, v // 100 % 100, v % 100)

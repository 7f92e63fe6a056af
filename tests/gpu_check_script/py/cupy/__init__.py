"""A stand-in for CuPy in the GPU-check tests: only what scripts/gpu-ref-cupy.py calls, over
fake-nccl (see _fakegpu)."""

__version__ = "0.0.0-standin"

from . import cuda  # noqa: E402,F401

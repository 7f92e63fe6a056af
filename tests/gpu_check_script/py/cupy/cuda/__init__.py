"""cupy.cuda's Device, Stream and alloc, as the reference uses them."""

import _fakegpu as g


class Device:
    def __init__(self, ordinal=0):
        self.ordinal = ordinal

    def use(self):
        g.use_device(self.ordinal)


class Stream:
    def __init__(self, non_blocking=False):
        self.ptr = g.stream()

    def synchronize(self):
        g.sync(self.ptr)


class MemoryPointer:
    def __init__(self, nbytes):
        self.ptr = g.alloc(nbytes)


def alloc(nbytes):
    return MemoryPointer(nbytes)

"""cupy.cuda.nccl's communicator, with CuPy's signatures (pointers and the stream as ints)."""

import ctypes

import _fakegpu as g

NCCL_FLOAT32 = 7
NCCL_SUM = 0


def get_version():
    return g.version()


def get_unique_id():
    return tuple(g.unique_id().internal)


def groupStart():
    g.nc("ncclGroupStart")


def groupEnd():
    g.nc("ncclGroupEnd")


class NcclCommunicator:
    def __init__(self, ndev, comm_id, rank):
        assert len(comm_id) == 128
        uid = g.UniqueId()
        uid.internal = (ctypes.c_byte * 128)(*comm_id)
        self.comm = g.comm_init(ndev, uid, rank)

    def _c(self, name, stream, *args):
        g.call(name, self.comm, stream, *args)

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
        self._c("ncclAllReduce", stream, g.Ptr(sendbuf), g.Ptr(recvbuf), g.N(count), datatype, op)

    def allGather(self, sendbuf, recvbuf, count, datatype, stream):
        self._c("ncclAllGather", stream, g.Ptr(sendbuf), g.Ptr(recvbuf), g.N(count), datatype)

    def reduceScatter(self, sendbuf, recvbuf, recvcount, datatype, op, stream):
        self._c("ncclReduceScatter", stream, g.Ptr(sendbuf), g.Ptr(recvbuf), g.N(recvcount),
                datatype, op)

    def broadcast(self, sendbuff, recvbuff, count, datatype, root, stream):
        self._c("ncclBroadcast", stream, g.Ptr(sendbuff), g.Ptr(recvbuff), g.N(count), datatype,
                root)

    def reduce(self, sendbuf, recvbuf, count, datatype, op, root, stream):
        self._c("ncclReduce", stream, g.Ptr(sendbuf), g.Ptr(recvbuf), g.N(count), datatype, op,
                root)

    def send(self, sendbuf, count, datatype, peer, stream):
        self._c("ncclSend", stream, g.Ptr(sendbuf), g.N(count), datatype, peer)

    def recv(self, recvbuf, count, datatype, peer, stream):
        self._c("ncclRecv", stream, g.Ptr(recvbuf), g.N(count), datatype, peer)

    def destroy(self):
        if self.comm:
            g.nc("ncclCommDestroy", self.comm)
            self.comm = ctypes.c_void_p()

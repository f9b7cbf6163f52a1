"""What pykokkos knows about running under MPI (mpi4py): the probe of
CUDA-aware MPI and a one-line description of each rank's set-up."""
from __future__ import annotations

import ctypes
import functools
import os


@functools.lru_cache(maxsize=1)
def cuda_aware() -> bool:
    """Whether the MPI library says it can take device pointers: MPICH's and
    Open MPI's MPIX_Query_cuda_support(), asked at run time (never assumed).
    False when the library has no such query."""
    from mpi4py import MPI  # noqa: F401  (loads the MPI library first)

    for lib in (None, "libmpi.so", "libmpi.so.12", "libmpi.so.40"):
        try:
            fn = getattr(ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL), "MPIX_Query_cuda_support")
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_int
        return bool(fn())
    return False


def describe(comm=None) -> str:
    """`rank r/n (node-local l): T host threads, GPU d, CUDA-aware MPI: yes|no`."""
    import pykokkos as pk

    if comm is None:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    local = next((os.environ[k] for k in ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                          "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID") if k in os.environ), "?")
    threads = pk._native.initialize()
    device = pk._native.device_id()
    gpu = f"GPU {device}" if device >= 0 else "no GPU"
    return (f"rank {comm.Get_rank()}/{comm.Get_size()} (node-local {local}): {threads} host thread(s), "
            f"{gpu}, CUDA-aware MPI: {'yes' if cuda_aware() else 'no'}")

"""Run by test_mpi.py under mpiexec: pykokkos.mpi.device_buffer on an MPI
library that is not CUDA-aware (the MPICH wheel), and the export hold that a
device buffer keeps while MPI may still use the memory."""
import pykokkos as pk
from pykokkos.mpi import cuda_aware, device_buffer

v = pk.View([8], pk.double)
assert not cuda_aware()  # the MPICH wheel: MPIX_Query_cuda_support() says 0
try:
    device_buffer(v)
    raise AssertionError("device_buffer must refuse an MPI that is not CUDA-aware")
except RuntimeError as e:
    assert "not CUDA-aware" in str(e)
assert device_buffer(v, require=False) is v  # host staging: the View itself
# While a device export is held the memory is foreign: launches on it run at once.
assert not v._is_foreign
pk._native.hold_device_export(v, True)
assert v._is_foreign
pk._native.hold_device_export(v, False)
assert not v._is_foreign
print("device buffer ok")

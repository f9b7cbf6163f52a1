"""CUDA view plumbing on a host-only build: nothing device-side is reached."""
import numpy as np
import pytest

import pykokkos as pk

# What a build without CUDA does with CUDA spaces; on the GPU, tests/test_cuda_device.py.
pytestmark = pytest.mark.host_only


@pk.workunit
def _inc(i, y):
    y[i] = y[i] + 1.0


def test_cuda_space_view_accepted_and_runs_on_host():
    v = pk.View([8], pk.double, space=pk.CudaSpace)
    pk.parallel_for(8, _inc, y=v)
    np.testing.assert_array_equal(np.asarray(v), np.ones(8))
    assert pk.device_copies() == (0, 0)  # no device memory in a host-only build


def test_no_cuda_array_interface_without_device_memory():
    v = pk.View([4], pk.double)
    assert not hasattr(v, "__cuda_array_interface__")


def test_uvm_needs_cuda():
    assert "CUDA" not in pk.config()["kokkos_config"].split()
    assert pk.config()["cuda_arch"] == ""  # kernels are built for no GPU
    with pytest.raises(Exception, match="CUDA"):
        pk.View([4], pk.double, space=pk.CudaUVMSpace)


class _FakeDeviceArray:
    """Looks like a CuPy array (CUDA array interface v3) without a GPU."""

    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (0x1000, False), "strides": None, "version": 3}


@pk.workunit
def _touch(i, v):
    v[i] = 1.0


def test_cuda_array_on_a_host_kernel_is_a_clear_error():
    with pytest.raises(TypeError, match="CUDA array .* host"):
        pk.parallel_for(4, _touch, v=_FakeDeviceArray())


def test_pk_array_of_a_cuda_array_wraps_it_in_place_and_the_host_cannot_read_it():
    """`pk.array(cupy_array)` (upstream's form) is a View of the device memory
    itself: its geometry is the array's, and host access is a clear error."""
    fake = _FakeDeviceArray()
    v = pk.array(fake)
    assert v.shape == (4,) and v.dtype is pk.double
    with pytest.raises(ValueError, match="can only be used by kernels in the Cuda space"):
        v[0]
    with pytest.raises(Exception, match="CUDA array|Cuda"):
        pk.parallel_for(4, _touch, v=v)


class _MappedArray(np.ndarray):
    """An ndarray subclass that also names device memory, as Numba's mapped arrays do."""

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": "<f8", "data": (0x1000, False), "strides": None, "version": 3}


def test_an_ndarray_subclass_with_device_memory_is_wrapped_as_device_memory():
    """Only a plain ndarray skips the device-memory question (the fast wrap);
    a subclass that answers it is taken at its word, as before."""
    mapped = np.zeros(4).view(_MappedArray)
    v = pk.array(mapped)
    with pytest.raises(ValueError, match="can only be used by kernels in the Cuda space"):
        v[0]
    plain = pk.array(np.arange(4.0))
    assert plain[3] == 3.0

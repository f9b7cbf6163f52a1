"""DLPack both ways, legacy and 1.0 versioned capsules. Imported tensors are
used in place and kept alive until the kernel is done with them, then their
deleter runs exactly once: the producer here (built with ctypes, as a C
library would) frees its memory in the deleter, poisoning it first so that a
read after the deleter shows. Exports hand out a capsule whose deleter the
consumer calls once."""
from __future__ import annotations

import ctypes as C
import gc

import numpy as np
import pytest

import pykokkos as pk


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManaged(C.Structure):
    pass


class DLVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLManagedVersioned(C.Structure):
    pass


DELETER = C.CFUNCTYPE(None, C.POINTER(DLManaged))
VDELETER = C.CFUNCTYPE(None, C.POINTER(DLManagedVersioned))
DLManaged._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", DELETER)]
DLManagedVersioned._fields_ = [("version", DLVersion), ("manager_ctx", C.c_void_p), ("deleter", VDELETER),
                               ("flags", C.c_uint64), ("dl_tensor", DLTensor)]

capsule_new = C.pythonapi.PyCapsule_New
capsule_new.restype = C.py_object
capsule_new.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
capsule_name = C.pythonapi.PyCapsule_GetName
capsule_name.restype = C.c_char_p
capsule_name.argtypes = [C.py_object]
capsule_ptr = C.pythonapi.PyCapsule_GetPointer
capsule_ptr.restype = C.c_void_p
capsule_ptr.argtypes = [C.py_object, C.c_char_p]


class FreeingProducer:
    """Hands out one tensor over memory that only the managed tensor owns: the
    deleter poisons it with NaN and drops it (the memory is then freed)."""

    def __init__(self, values, versioned=False, read_only=False, legacy_only=False):
        self.n = len(values)
        self.versioned, self.read_only, self.legacy_only = versioned, read_only, legacy_only
        self.values = values
        self.deleted = 0
        self.capsules = []
        # The deleters' ctypes thunks outlive their calls: a callback that
        # dropped the last reference to its own thunk would return into freed code.
        self.thunks = []

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None, max_version=None, **kw):
        if self.legacy_only and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        mem = (C.c_double * self.n)(*self.values)
        shape = (C.c_int64 * 1)(self.n)
        keep = {"mem": mem, "shape": shape}
        tensor = DLTensor(C.cast(mem, C.c_void_p), DLDevice(1, 0), 1, DLDataType(2, 64, 1),
                          C.cast(shape, C.POINTER(C.c_int64)), None, 0)

        def free(_m):
            for k in range(self.n):
                keep["mem"][k] = float("nan")
            keep.clear()  # the last reference: ctypes frees the memory
            self.deleted += 1

        if self.versioned and max_version is not None and max_version[0] >= 1:
            d = VDELETER(free)
            m = DLManagedVersioned(DLVersion(1, 0), None, d, 1 if self.read_only else 0, tensor)
            name = b"dltensor_versioned"
        else:
            d = DELETER(free)
            m = DLManaged(tensor, None, d)
            name = b"dltensor"
        keep.update(m=m)
        self.thunks.append(d)
        cap = capsule_new(C.addressof(m), name, None)
        self.capsules.append(cap)
        return cap


@pk.workunit
def dl_scale(i, dst, src):
    dst[i] = 2.0 * src[i]


@pytest.mark.parametrize("kind", ["legacy", "versioned", "legacy_only"])
def test_an_imported_tensor_lives_until_the_kernel_is_done_then_is_deleted_once(pk_mode, kind):
    prod = FreeingProducer(np.arange(8.0), versioned=kind == "versioned", legacy_only=kind == "legacy_only")
    out = pk.View([8], pk.double)
    pk.parallel_for(8, dl_scale, dst=out, src=prod)
    np.testing.assert_array_equal(np.asarray(out), 2.0 * np.arange(8.0))  # not the poisoned NaN
    gc.collect()
    assert prod.deleted == 1
    used = b"used_dltensor_versioned" if kind == "versioned" else b"used_dltensor"
    assert capsule_name(prod.capsules[0]) == used  # taken, as the protocol says


def test_a_read_only_versioned_tensor_is_refused_and_still_deleted_once(pk_mode):
    prod = FreeingProducer(np.arange(4.0), versioned=True, read_only=True)
    out = pk.View([4], pk.double)
    with pytest.raises(TypeError, match="read-only DLPack tensor"):
        pk.parallel_for(4, dl_scale, dst=out, src=prod)
    gc.collect()
    assert prod.deleted == 1


def test_versioned_export_and_its_deleter():
    v = pk.View([5], pk.double)
    np.asarray(v)[:] = np.arange(5.0)
    cap = v.__dlpack__(max_version=(1, 0))
    assert capsule_name(cap) == b"dltensor_versioned"
    m = DLManagedVersioned.from_address(capsule_ptr(cap, b"dltensor_versioned"))
    assert (m.version.major, m.version.minor, m.flags) == (1, 0, 0)
    t = m.dl_tensor
    assert t.data == np.asarray(v).ctypes.data and t.ndim == 1 and t.shape[0] == 5
    assert (t.dtype.code, t.dtype.bits) == (2, 64) and v._exports == 1
    # A consumer takes it (renames the capsule) and later calls the deleter once.
    C.pythonapi.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]
    C.pythonapi.PyCapsule_SetName(cap, b"used_dltensor_versioned")
    m.deleter(C.pointer(m))
    del cap
    assert v._exports == 0
    # Consumers that know DLPack 1.0 (NumPy 2.1+) share the memory.
    a = np.from_dlpack(v)
    np.asarray(v)[1] = 7.0
    assert a[1] == 7.0

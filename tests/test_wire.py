"""The Python enums are built from the native core's one table of wire codes
(src/python/wire.rs): every code the core decodes has its Python name, and
a View made with each dtype, layout and memory space reads back as made."""
import numpy as np

import pykokkos as pk
from pykokkos import _native
from pykokkos.runtime._reducers import launch_code


def test_every_native_code_has_its_python_name():
    w = _native.wire_codes()
    assert [t.name for t in pk.DataType if t.name in w["dtypes"]] == w["dtypes"]
    assert {s.name: s.value for s in pk.ExecutionSpace if s is not pk.ExecutionSpace.Default} == w["exec_spaces"]
    assert {m.name: m.value for m in pk.MemorySpace} == w["memory_spaces"]
    assert {k: getattr(pk, k).value for k in w["layouts"]} == w["layouts"]
    assert pk.ExecutionSpace.Default.value not in w["exec_spaces"].values()
    assert pk.LayoutDefault.value not in w["layouts"].values()
    assert {r: launch_code(r) for r in w["reducers"]} == w["reducers"]
    assert launch_code("Sum") == w["patterns"]["parallel_reduce"]


def test_views_read_back_with_the_dtype_and_layout_they_were_made_with():
    for name in _native.wire_codes()["dtypes"]:
        dt = getattr(pk, name)
        v = pk.View([3, 2], dt, layout=pk.LayoutLeft)
        assert np.asarray(v).dtype == np.dtype(name if name != "bool" else np.bool_), name
        assert v.layout == pk.LayoutLeft and np.asarray(v).flags.f_contiguous, name
    assert pk.View([4], pk.double).layout == pk.LayoutRight

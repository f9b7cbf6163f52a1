"""PyKokkos' public names beyond kernels and Views: policies as classes,
host-side atomics, the default precision, space and layout queries, and the
names of features this runtime does not have (which say so when used)."""
from __future__ import annotations

import threading

import enum

import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.eager_only


def test_policies_are_classes_with_upstreams_attributes():
    r = pk.RangePolicy(pk.ExecutionSpace.Serial, 2, 9)
    assert isinstance(r, pk.RangePolicy) and isinstance(r, pk.ExecutionPolicy)
    assert (r.begin, r.end, r.space) == (2, 9, pk.ExecutionSpace.Serial)
    t = pk.TeamPolicy(5, pk.AUTO, 2)
    assert isinstance(t, pk.TeamPolicy) and (t.league_size, t.vector_length) == (5, 2)
    assert isinstance(pk.MDRangePolicy([0, 0], [2, 3]), pk.ExecutionPolicy)
    assert pk.RangePolicy(0, 4).space is pk.ExecutionSpace.Default


def test_host_atomics_return_the_old_value_and_do_not_lose_updates():
    v = pk.View([2, 3], pk.int64)
    assert pk.atomic_fetch_add(v, [1, 2], 5) == 0 and v[1, 2] == 5
    assert pk.atomic_fetch_max(v, [1, 2], 3) == 5 and v[1, 2] == 5
    assert pk.atomic_compare_exchange(v, [0, 0], 0, 7) == 0 and v[0, 0] == 7
    assert pk.atomic_compare_exchange(v, [0, 0], 1, 9) == 7 and v[0, 0] == 7

    def bump():
        for _ in range(500):
            pk.atomic_increment(v, [0, 1])

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert v[0, 1] == 2000


def test_default_precision_sets_the_dtype_of_views_made_without_one():
    assert pk.get_default_precision() is pk.double
    pk.set_default_precision(pk.float32)
    try:
        assert pk.View([3]).dtype is pk.float32
        assert pk.View([3], pk.int8).dtype is pk.int8
    finally:
        pk.set_default_precision(pk.float64)
    with pytest.raises(TypeError, match="floating dtype"):
        pk.set_default_precision(pk.int32)


def test_space_layout_and_type_queries():
    assert pk.is_host_execution_space(pk.ExecutionSpace.OpenMP)
    assert not pk.is_host_execution_space(pk.ExecutionSpace.Cuda)
    assert pk.get_default_memory_space(pk.ExecutionSpace.Cuda) is pk.CudaSpace
    pk.enable_uvm()
    try:
        assert pk.is_uvm_enabled() and pk.get_default_memory_space(pk.ExecutionSpace.Cuda) is pk.CudaUVMSpace
    finally:
        pk.disable_uvm()
    assert pk.get_default_layout(pk.HostSpace) is pk.LayoutRight
    assert pk.result_type(pk.View([1], pk.int32), 1.5) is pk.float64
    a = pk.astype(pk.array(np.array([1.7, -2.2])), pk.int32)
    assert a.dtype is pk.int32 and np.asarray(a).tolist() == [1, -2]
    assert pk.DataTypeClass is type(pk.double) and isinstance(pk.View([1]), pk.Subview)
    # Newer PyKokkos' rule: the elements' bytes rounded up to 8 (int is int32, float double).
    assert pk.ScratchView4D[pk.double].shmem_size(1, 2, 3, 4) == 24 * 8
    assert pk.ScratchView1D[int].shmem_size(10) == 40 and pk.ScratchView1D[pk.uint8].shmem_size(11) == 16
    assert pk.ScratchView2D[float].shmem_size(3, 3) == 72 and pk.ScratchView1D[pk.int16].shmem_size(5) == 16
    with pytest.raises(TypeError, match="needs the element type"):
        pk.ScratchView1D.shmem_size(10)


def test_every_public_name_of_upstream_exists():
    # The names PyKokkos b42c805 exports at top level (its __init__ files).
    for name in ("ExecutionSpaceInstance", "cyl_bessel_j0", "cyl_bessel_j1", "compile_into_module",
                 "Decorator", "add_enum_to_globals", "generic_error", "runtime_singleton", "Runtime",
                 "cleanup", "complex64", "complex128", "Random_XorShift64_Pool", "rand", "MaxLoc"):
        assert hasattr(pk, name), name
    with pytest.raises(RuntimeError, match="device 1"):
        pk.set_device_id(1)


@pk.workunit
def ramp(i, v):
    v[i] = i


def test_execution_space_instances_act_as_their_space():
    inst = pk.ExecutionSpaceInstance(pk.ExecutionSpace.OpenMP)
    v = pk.View([10], pk.int64)
    pk.parallel_for(pk.RangePolicy(inst, 0, 10), ramp, v=v)
    inst.fence()
    assert np.asarray(v).tolist() == list(range(10))
    assert pk.ExecutionSpaceInstance(pk.ExecutionSpace.Default).space in (pk.OpenMP, pk.Serial, pk.Cuda)
    with pytest.raises(ValueError, match="stream"):
        pk.ExecutionSpaceInstance(pk.OpenMP, object())


def test_host_bessel_functions_match_their_integral():
    x = np.array([-22.0, -3.0, 0.0, 0.5, 7.0, 14.9, 15.1, 60.0])
    t = np.linspace(0.0, 2 * np.pi, 4096, endpoint=False)
    for n, f in ((0, pk.cyl_bessel_j0), (1, pk.cyl_bessel_j1)):
        want = np.cos(n * t[None, :] - x[:, None] * np.sin(t[None, :])).mean(axis=1)
        np.testing.assert_allclose([f(v) for v in x], want, rtol=0, atol=1e-10)


def test_the_small_upstream_helpers():
    assert pk.Decorator.is_pykokkos_decorator(pk.Decorator.WorkUnit)
    assert pk.Decorator("workunit") is pk.Decorator.WorkUnit

    class Colour(enum.Enum):
        Mauve = 1

    pk.add_enum_to_globals(Colour)
    assert pk.Mauve is Colour.Mauve
    del pk.Mauve
    with pytest.raises(SystemExit, match="PyKokkos: stop"):
        pk.generic_error("f.py", 3, "bad", "stop")
    pk.runtime_singleton.runtime.flush()
    pk.cleanup()


@pytest.mark.host_only("compiles a pybind11 module with the host toolchain")
def test_compile_into_module_links_this_processs_kokkos(tmp_path):
    src = [
        "#include <pybind11/pybind11.h>\n#include <Kokkos_Core.hpp>\n",
        "PYBIND11_MODULE(pk_ext_sum, m) {\n",
        "  m.def(\"initialized\", []() { return Kokkos::is_initialized(); });\n",
        "  m.def(\"sum_to\", [](int n) { double s = 0;\n",
        "    Kokkos::parallel_reduce(Kokkos::RangePolicy<Kokkos::Serial>(0, n),\n",
        "      [=](int i, double& a) { a += i; }, s); return s; });\n",
        "}\n",
    ]
    pk.parallel_for(1, ramp, v=pk.View([1], pk.int64))  # Kokkos is up
    mod = pk.compile_into_module(tmp_path, src, "pk_ext_sum", pk.ExecutionSpace.Serial)
    assert mod.initialized()  # the same Kokkos the kernels run on, already initialized
    assert mod.sum_to(101) == sum(range(101))
    assert (tmp_path / "pk_ext_sum" / "Serial" / "pk_ext_sum.cpp").exists()
    with pytest.raises(pk.CompileError, match="did not compile"):
        pk.compile_into_module(tmp_path, ["this is not C++"], "pk_ext_bad")


class Field(pk.View):
    """A View subclass with its own constructor, as PyKokkos programs write them."""

    def __init__(self, x: int = 0, y: int = 0, data_type: pk.DataTypeClass = pk.double):
        super().__init__([x, y], data_type)
        self.label = "field"


def test_view_subclasses_with_their_own_constructor():
    f = Field(3, 4, data_type=pk.int32)
    assert isinstance(f, pk.View) and f.shape == (3, 4) and f.dtype is pk.int32 and f.label == "field"
    f[2, 3] = 7
    assert np.asarray(f)[2, 3] == 7 and np.asarray(f).sum() == 7


def test_binsort_orders_keys_by_bin_as_kokkos_bins_them():
    rng = np.random.default_rng(3)
    keys = rng.uniform(0.0, 10.0, 200)
    values = np.arange(200, dtype=np.int64) * 3
    k, v = pk.array(keys.copy()), pk.array(values.copy())
    sorter = pk.BinSort(k, pk.BinOp1D(k, 7, 0.0, 10.0))
    sorter.create_permute_vector()
    bins = (7 / 10.0 * keys).astype(int)  # Kokkos' BinOp1D: int(nbins / (max - min) * (key - min))
    perm = np.asarray(sorter.get_permute_vector())
    assert sorted(perm.tolist()) == list(range(200))  # a permutation ...
    assert (np.diff(bins[perm]) >= 0).all()           # ... that orders by bin
    np.testing.assert_array_equal(np.asarray(sorter.get_bin_count()), np.bincount(bins, minlength=8))
    np.testing.assert_array_equal(np.asarray(sorter.get_bin_offsets()),
                                  np.concatenate([[0], np.cumsum(np.bincount(bins, minlength=8))[:-1]]))
    sorter.sort(v)
    np.testing.assert_array_equal(np.asarray(v), values[perm])
    pts = pk.array(rng.uniform(0.0, 1.0, (50, 3)))
    s3 = pk.BinSort(pts, pk.BinOp3D(pts, [2, 2, 2], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]))
    counts3 = np.asarray(s3.get_bin_count())
    assert int(counts3.sum()) == 50 and len(counts3) == 8  # Kokkos' BinOp3D: nx * ny * nz bins
    b3 = (np.asarray(pts) * 2).astype(int)
    np.testing.assert_array_equal(counts3, np.bincount((b3[:, 0] * 2 + b3[:, 1]) * 2 + b3[:, 2], minlength=8))
    # A key range shorter than the values: only that many values move (Kokkos' sort).
    w = pk.array(np.arange(10.0))
    part = pk.BinSort(pk.array(np.array([3.0, 1.0, 2.0, 0.0])), pk.BinOp1D(pk.View([1]), 4, 0.0, 4.0))
    part.sort(w)
    assert np.asarray(w).tolist() == [3.0, 1.0, 2.0, 0.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    with pytest.raises(ValueError, match="outside the bin operator's range"):
        pk.BinSort(k, pk.BinOp1D(k, 4, 0.0, 5.0)).create_permute_vector()


def test_binsort_in_chunks_is_the_stable_order_by_bin():
    # Enough entries for several chunks of the parallel counting sort: the same
    # permutation as NumPy's stable sort by bin, and sort() applies it to 1-D
    # and 2-D Views of any dtype (ExaMiniMD sorts x, v, f, type, id, q).
    rng = np.random.default_rng(11)
    n = 70_000
    x = rng.uniform(-1.0, 9.0, (n, 3))
    xv = pk.array(x.copy())
    op = pk.BinOp3D(xv, [5, 4, 3], [-1.0, -1.0, -1.0], [9.0, 9.0, 9.0])
    s = pk.BinSort(xv, op)
    s.create_permute_vector()
    b = (np.floor((x + 1.0) * (np.array([5, 4, 3]) / 10.0))).astype(int)
    bins = (b[:, 0] * 4 + b[:, 1]) * 3 + b[:, 2]
    ref = np.argsort(bins, kind="stable")
    np.testing.assert_array_equal(np.asarray(s.get_permute_vector()), ref)
    np.testing.assert_array_equal(np.asarray(s.get_bin_count()), np.bincount(bins, minlength=60))
    ids, q = pk.array(np.arange(n, dtype=np.int32)), pk.array(rng.random(n).astype(np.float32))
    q_ref = np.asarray(q).copy()
    for v in (xv, ids, q):
        s.sort(v)
    np.testing.assert_array_equal(np.asarray(xv), x[ref])
    np.testing.assert_array_equal(np.asarray(ids), ref)
    np.testing.assert_array_equal(np.asarray(q), q_ref[ref])
    # A key range inside the keys: permutation entries name the keys' indices.
    k1 = pk.array(rng.uniform(0.0, 4.0, 40_000))
    part = pk.BinSort(k1, 100, 39_000, pk.BinOp1D(k1, 8, 0.0, 4.0))
    part.create_permute_vector()
    kb = (8 / 4.0 * np.asarray(k1)[100:39_000]).astype(int)
    np.testing.assert_array_equal(np.asarray(part.get_permute_vector()), np.argsort(kb, kind="stable") + 100)


@pytest.mark.parametrize("lazy_mode", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("device", [False, True], ids=["host_way", "gpu_way"])
@pytest.mark.parametrize("n", [40_000, 3_000], ids=["chunks", "one_item"])
def test_binsort_with_small_bins_and_with_one_full_bin_is_the_stable_order(lazy_mode, device, n):
    # Both ways of ordering, run here on the host: the host's (a counting sort
    # in chunks; under 32k keys, in one work item) and the GPU's (counts by
    # atomics, a scan, then each entry a slot by atomics that each bin orders
    # by index; a bin too full for that takes the chunks). Cells of a few
    # entries each (ExaMiniMD's case), and the same keys with a fifth of them
    # piled into one bin.
    from pykokkos.runtime import _binsort_kernels as kernels

    pk._native.set_lazy(lazy_mode)
    try:
        rng = np.random.default_rng(23)
        nb = [20, 20, 20]
        x = rng.uniform(0.0, 1.0, (n, 3))
        x[rng.random(n) < 0.2] = 0.01
        for keys in (rng.uniform(0.0, 1.0, (n, 3)), x):
            kv = pk.array(keys.copy())
            op = pk.BinOp3D(kv, nb, [0.0] * 3, [1.0] * 3)
            perm, counts, offsets = kernels.stable_order(kernels.bins_of(op, kv), 8000, 5, device)
            b = (keys * 20.0).astype(int)
            bins = (b[:, 0] * 20 + b[:, 1]) * 20 + b[:, 2]
            count = np.bincount(bins, minlength=8000)
            np.testing.assert_array_equal(np.asarray(perm), np.argsort(bins, kind="stable") + 5)
            np.testing.assert_array_equal(np.asarray(counts), count)
            np.testing.assert_array_equal(np.asarray(offsets), np.cumsum(count) - count)
        bad = keys.copy()
        bad[n // 3, 0] = 1.5
        kv = pk.array(bad)
        op = pk.BinOp3D(kv, nb, [0.0] * 3, [1.0] * 3)
        assert kernels.stable_order(kernels.bins_of(op, kv), 8000, 0, device) is None
        with pytest.raises(ValueError, match=rf"entry {n // 3}\) lies outside"):
            pk.BinSort(kv, op).create_permute_vector()
    finally:
        pk.flush()
        pk._native.set_lazy(False)


def test_resize_data_setter_deepcopy_and_integer_like_policies(pk_mode):
    import copy

    v = pk.View([2, 3], pk.int32)
    v[1, 2] = 7
    v.resize(1, 5)
    assert v.shape == (2, 5) and np.asarray(v)[1].tolist() == [0, 0, 7, 0, 0]
    v.resize(0, 1)
    assert v.shape == (1, 5) and not np.asarray(v).any()
    d = pk.View([3])
    d.data += 2
    d.data = [1, 2, 3]
    assert np.asarray(d).tolist() == [1.0, 2.0, 3.0] and copy.deepcopy(d) is d

    @pk.workunit
    def count_ones(i, acc: pk.Acc[pk.int64], x):
        acc += 1

    @pk.workunit
    def put(i, n, x):
        x[i] = n

    x, y = pk.View([5]), pk.View([7])
    n = pk.parallel_reduce(5, count_ones, x=x)            # lazy: a pending total
    pk.parallel_for(np.int32(3), put, n=n, x=x)            # a NumPy integer policy, a total as an argument
    pk.parallel_for(n, put, n=2, x=y)                      # the total as the policy
    assert np.asarray(x).tolist() == [5.0, 5.0, 5.0, 0.0, 0.0]
    assert np.asarray(y).tolist() == [2.0] * 5 + [0.0] * 2
    assert pk.TeamPolicy(3, "auto").team_size == pk.AUTO

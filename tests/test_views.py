"""View host behaviour: no kernels are compiled here."""
from __future__ import annotations

import numpy as np
import pytest

import pykokkos as pk
from conftest import ALL_DTYPE_IDS, ALL_DTYPES


def sample(np_t, shape):
    """Distinct, exactly representable values of a dtype."""
    n = int(np.prod(shape))
    if np_t is np.bool_:
        return (np.arange(n) % 3 == 1).reshape(shape)
    return (np.arange(n) % 100 + 1).astype(np_t).reshape(shape)


# --- construction ------------------------------------------------------------------


@pytest.mark.parametrize("pk_t,np_t", ALL_DTYPES, ids=ALL_DTYPE_IDS)
def test_new_view_is_zero_filled_with_right_dtype(pk_t, np_t):
    v = pk.View([4, 3], pk_t)
    a = np.asarray(v)
    assert a.dtype == np.dtype(np_t)
    assert a.shape == (4, 3)
    assert v.dtype == pk_t
    assert not a.any()
    np.testing.assert_array_equal(a, np.zeros((4, 3), np_t))


@pytest.mark.parametrize("pk_t,np_t", ALL_DTYPES, ids=ALL_DTYPE_IDS)
def test_big_new_view_is_zero_filled(pk_t, np_t):
    # Large enough to come from fresh pages or recycled heap memory alike.
    for _ in range(3):
        v = pk.View([1 << 16], pk_t)
        a = np.asarray(v)
        assert a.dtype == np.dtype(np_t)
        assert np.count_nonzero(a) == 0
        a[:] = 1  # dirty it, so a reused allocation would show up non-zero
        del a, v


def test_dtype_aliases():
    assert pk.double == pk.float64
    assert pk.real == pk.float64
    assert pk.float == pk.float32  # PyKokkos: pk.float is single precision
    assert np.asarray(pk.View([2], pk.float)).dtype == np.float32
    assert np.asarray(pk.View([2], pk.double)).dtype == np.float64
    assert np.asarray(pk.View([2])).dtype == np.float64  # default dtype is double


def test_shape_as_int_and_list():
    assert pk.View(5, pk.int32).shape == (5,)
    assert pk.View([5], pk.int32).shape == (5,)
    assert pk.View((2, 3), pk.int32).shape == (2, 3)
    assert pk.View(np.int64(4)).shape == (4,)


@pytest.mark.parametrize("rank", range(1, 9))
@pytest.mark.parametrize("layout", [pk.LayoutRight, pk.LayoutLeft], ids=["right", "left"])
def test_rank_shape_extent(rank, layout):
    shape = [2, 3, 1, 4, 2, 1, 3, 2][:rank]
    v = pk.View(shape, pk.int16, layout=layout)
    assert v.rank() == rank
    assert v.shape == tuple(shape)
    assert len(v) == shape[0]
    for d in range(rank):
        assert v.extent(d) == shape[d]
    with pytest.raises(IndexError):
        v.extent(rank)
    a = np.asarray(v)
    assert a.shape == tuple(shape)
    assert a.ndim == rank
    assert np.count_nonzero(a) == 0


def test_layout_left_is_column_major_on_the_host():
    v = pk.View([3, 4], pk.float64, layout=pk.LayoutLeft)
    a = np.asarray(v)
    assert a.flags.f_contiguous and not a.flags.c_contiguous
    assert a.strides == (8, 24)
    assert v.layout == pk.LayoutLeft
    w = pk.View([3, 4], pk.float64, space=pk.HostSpace)
    b = np.asarray(w)
    assert b.flags.c_contiguous
    assert b.strides == (32, 8)
    assert w.layout == pk.LayoutRight
    # Element (i, j) is the same logical element whatever the layout.
    v[1, 2] = 7.5
    assert a[1, 2] == 7.5
    assert np.asarray(v).ravel(order="F")[1 + 2 * 3] == 7.5


def test_a_view_takes_its_spaces_default_layout():
    # As in PyKokkos and Kokkos: column-major in GPU memory (neighbouring GPU
    # threads, the first index, touch neighbouring elements), row-major on the
    # host; without a space, the default space's memory.
    assert pk.View([3, 4], space=pk.CudaSpace).layout is pk.LayoutLeft
    assert pk.View([3, 4], space=pk.HostSpace).layout is pk.LayoutRight
    assert pk.View([3, 4], space=pk.CudaSpace, layout=pk.LayoutRight).layout is pk.LayoutRight
    assert pk.View([3, 4], space=pk.CudaSpace, layout=pk.Layout.LayoutDefault).layout is pk.LayoutLeft
    on_gpu = pk.get_default_space() is pk.Cuda
    for v in (pk.View([3, 4]), pk.View([3, 4], pk.int32), pk.View([2, 3, 4], layout=pk.Layout.LayoutDefault)):
        assert v.layout is (pk.LayoutLeft if on_gpu else pk.LayoutRight)
    v = pk.View([3, 4], space=pk.CudaSpace)
    np.asarray(v)[:] = np.arange(12.0).reshape(3, 4)
    assert np.asarray(v).flags.f_contiguous and v[1, 2] == 6.0


def test_layout_left_rank3_strides():
    v = pk.View([2, 3, 4], pk.int32, layout=pk.LayoutLeft)
    assert np.asarray(v).strides == (4, 8, 24)
    w = pk.View([2, 3, 4], pk.int32, layout=pk.LayoutRight)
    assert np.asarray(w).strides == (48, 16, 4)


def test_zero_length_views():
    v = pk.View([0], pk.float64)
    assert len(v) == 0
    assert v.shape == (0,)
    assert list(v) == []
    assert str(v) == str(np.zeros(0))
    assert np.asarray(v).size == 0
    v.fill(3.0)  # a no-op, not an error
    w = pk.View([3, 0], pk.int32)
    assert w.shape == (3, 0)
    assert np.asarray(w).shape == (3, 0)


def test_bad_shapes_are_rejected():
    with pytest.raises(ValueError):
        pk.View([-1])
    with pytest.raises(ValueError):
        pk.View([1] * 9)
    with pytest.raises(TypeError):
        pk.View([3], "no-such-dtype")


# --- host element access ---------------------------------------------------------------


@pytest.mark.parametrize("pk_t,np_t", ALL_DTYPES, ids=ALL_DTYPE_IDS)
def test_getitem_setitem_fill_str(pk_t, np_t):
    ref = sample(np_t, (5,))
    v = pk.View([5], pk_t)
    for k in range(5):
        v[k] = ref[k]
    np.testing.assert_array_equal(np.asarray(v), ref)
    assert v[3] == ref[3]
    assert v[-1] == ref[-1]
    assert str(v) == str(ref)
    v.fill(ref[1])
    np.testing.assert_array_equal(np.asarray(v), np.full(5, ref[1], np_t))


@pytest.mark.parametrize("pk_t,np_t", ALL_DTYPES, ids=ALL_DTYPE_IDS)
def test_iteration_rank1(pk_t, np_t):
    ref = sample(np_t, (6,))
    v = pk.View([6], pk_t)
    np.asarray(v)[:] = ref
    got = list(v)
    assert len(got) == 6
    assert got == ref.tolist()


def test_iteration_rank2_yields_rows():
    ref = sample(np.int32, (3, 4))
    v = pk.array(ref.copy())
    rows = list(v)
    assert len(rows) == 3
    for k, row in enumerate(rows):
        np.testing.assert_array_equal(np.asarray(row), ref[k])
    # Rows share memory with the view.
    np.asarray(rows[1])[2] = -5
    assert np.asarray(v)[1, 2] == -5


def test_multi_index_access():
    v = pk.View([3, 4], pk.int64)
    v[1, 2] = 12
    v[2, -1] = 23
    a = np.asarray(v)
    expected = np.zeros((3, 4), np.int64)
    expected[1, 2] = 12
    expected[2, 3] = 23
    np.testing.assert_array_equal(a, expected)
    assert v[1, 2] == 12
    assert v[2, 3] == 23
    with pytest.raises(IndexError):
        v[3, 0]
    with pytest.raises(IndexError):
        v[0, 0, 0]


def test_str_multi_dim_matches_numpy():
    ref = sample(np.float64, (2, 3))
    v = pk.array(ref.copy())
    assert str(v) == str(ref)
    vl = pk.View([2, 3], pk.float64, layout=pk.LayoutLeft)
    np.asarray(vl)[...] = ref
    assert str(vl) == str(ref)


@pytest.mark.parametrize("pk_t,np_t", ALL_DTYPES, ids=ALL_DTYPE_IDS)
def test_asarray_shares_memory(pk_t, np_t):
    v = pk.View([4, 2], pk_t)
    a = np.asarray(v)
    b = np.asarray(v)
    assert np.shares_memory(a, b)
    ref = sample(np_t, (4, 2))
    a[...] = ref
    np.testing.assert_array_equal(np.asarray(v), ref)
    v.fill(ref[0, 1])
    np.testing.assert_array_equal(a, np.full((4, 2), ref[0, 1], np_t))
    assert a.flags.writeable
    np.testing.assert_array_equal(np.array(v), a)


def test_data_and_to_numpy_share_memory():
    v = pk.View([4], pk.int32)
    v.data[2] = 9
    assert v[2] == 9
    v.to_numpy()[1] = 4
    np.testing.assert_array_equal(np.asarray(v), [0, 4, 9, 0])


def test_view_outlives_its_exported_arrays_and_vice_versa():
    v = pk.View([1000], pk.float64)
    a = np.asarray(v)
    del v
    a[:] = 2.0  # memory must still be alive through the export
    assert a.sum() == 2000.0


# --- wrapping NumPy memory --------------------------------------------------------------


@pytest.mark.parametrize("wrap", [pk.array, pk.asarray, pk.from_numpy], ids=["array", "asarray", "from_numpy"])
@pytest.mark.parametrize("pk_t,np_t", ALL_DTYPES, ids=ALL_DTYPE_IDS)
def test_wrapping_does_not_copy(wrap, pk_t, np_t):
    base = sample(np_t, (3, 4))
    keep = base.copy()
    v = wrap(base)
    assert v.dtype == pk_t
    assert v.shape == (3, 4)
    assert np.shares_memory(np.asarray(v), base)
    np.testing.assert_array_equal(np.asarray(v), keep)
    # Writes go both ways.
    new = sample(np_t, (1,))[0]
    v[2, 1] = new
    assert base[2, 1] == new
    base[0, 0] = keep[1, 1]
    assert v[0, 0] == keep[1, 1]


def test_wrapping_fortran_and_strided_arrays():
    f = np.asfortranarray(sample(np.float64, (3, 5)))
    v = pk.array(f)
    assert np.shares_memory(np.asarray(v), f)
    np.testing.assert_array_equal(np.asarray(v), f)
    assert v.layout == pk.LayoutLeft
    base = sample(np.int32, (10,))
    s = base[1::3]
    w = pk.array(s)
    assert w.shape == (3,)
    np.testing.assert_array_equal(np.asarray(w), base[1::3])
    w[2] = -1
    assert base[7] == -1


def test_zeros_ones_full():
    z = pk.zeros([2, 3], pk.int32)
    o = pk.ones([4], pk.float32)
    f = pk.full([2, 2], 7, pk.int64)
    np.testing.assert_array_equal(np.asarray(z), np.zeros((2, 3), np.int32))
    np.testing.assert_array_equal(np.asarray(o), np.ones(4, np.float32))
    np.testing.assert_array_equal(np.asarray(f), np.full((2, 2), 7, np.int64))
    assert np.asarray(o).dtype == np.float32


# --- subviews ------------------------------------------------------------------------------


def test_slice_subview_shares_memory():
    v = pk.View([8], pk.int32)
    s = v[2:5]
    assert isinstance(s, pk.View)
    assert s.shape == (3,)
    assert len(s) == 3
    s[0] = 10
    s.fill(7)
    ref = np.zeros(8, np.int32)
    ref[2:5] = 7
    np.testing.assert_array_equal(np.asarray(v), ref)
    np.asarray(v)[3] = 99
    assert s[1] == 99
    assert np.shares_memory(np.asarray(s), np.asarray(v))


def test_strided_and_nested_subviews():
    base = np.arange(20, dtype=np.float64)
    v = pk.array(base)
    s = v[1:17:3]  # 1, 4, 7, 10, 13, 16
    np.testing.assert_array_equal(np.asarray(s), base[1:17:3])
    t = s[1:4]  # 4, 7, 10
    np.testing.assert_array_equal(np.asarray(t), [4.0, 7.0, 10.0])
    t.fill(-1.0)
    expected = np.arange(20, dtype=np.float64)
    expected[[4, 7, 10]] = -1.0
    np.testing.assert_array_equal(base, expected)
    r = v[::-2]
    np.testing.assert_array_equal(np.asarray(r), base[::-2])


@pytest.mark.parametrize("layout", [pk.LayoutRight, pk.LayoutLeft], ids=["right", "left"])
def test_2d_subviews(layout):
    v = pk.View([4, 5], pk.int32, layout=layout)
    a = np.asarray(v)
    a[...] = np.arange(20).reshape(4, 5)
    row = v[2]
    col = v[:, 3]
    block = v[1:3, 2:5]
    assert row.shape == (5,) and col.shape == (4,) and block.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(row), np.arange(10, 15))
    np.testing.assert_array_equal(np.asarray(col), [3, 8, 13, 18])
    np.testing.assert_array_equal(np.asarray(block), [[7, 8, 9], [12, 13, 14]])
    col.fill(0)
    block[0, 0] = -7
    expected = np.arange(20).reshape(4, 5)
    expected[:, 3] = 0
    expected[1, 2] = -7
    np.testing.assert_array_equal(a, expected)
    assert v[2, 4] == row[4] == 14


def test_dlpack_export_shares_memory_and_counts_as_an_export():
    v = pk.View([6], pk.double)
    np.asarray(v)[:] = np.arange(6)
    a = np.from_dlpack(v)
    assert np.array_equal(a, np.arange(6)) and v._exports == 1 and v._is_foreign
    np.asarray(v)[2] = 9.0  # same memory
    assert a[2] == 9.0
    del a
    assert v._exports == 0
    w = pk.View([4, 6], pk.int32)
    np.asarray(w)[:] = np.arange(24).reshape(4, 6)
    b = np.from_dlpack(w[1:3, ::2])
    assert np.array_equal(b, np.arange(24).reshape(4, 6)[1:3, ::2])
    assert v.__dlpack_device__() == (1, 0)


# --- memory errors and bounds (never an abort, never a write outside) --------------

@pytest.mark.parametrize("start,length,step", [([5], [6], [1]), ([-1], [2], [1]), ([0], [5], [3]), ([0], [2], [0])])
def test_subview_outside_its_parent_is_an_index_error(start, length, step):
    v = pk.View([10], pk.double)
    with pytest.raises(IndexError, match="outside extent 10"):
        pk._native.View(parent=v, start=start, length=length, step=step, keep=[True])


def test_subviews_inside_their_parent_still_work():
    v = pk.array(np.arange(10.0))
    np.testing.assert_array_equal(np.asarray(v[::-1]), np.arange(10.0)[::-1])
    np.testing.assert_array_equal(np.asarray(v[2:9:3]), [2.0, 5.0, 8.0])
    assert np.asarray(pk.View([0], pk.double)[::-1]).shape == (0,)


def test_a_view_the_machine_cannot_hold_raises_memory_error():
    big = pk.View([2**58], pk.double)  # 2^61 bytes, past any address space: allocated on first use
    with pytest.raises(MemoryError, match="cannot allocate"):
        np.asarray(big)
    small = pk.View([3], pk.double)  # the process goes on
    np.asarray(small)[:] = 1.0
    assert np.asarray(small).sum() == 3.0


# --- host element access: the native fast path gives what NumPy gives -------------

@pytest.mark.parametrize("pk_t,np_t", ALL_DTYPES, ids=ALL_DTYPE_IDS)
def test_element_reads_and_writes_match_numpy(pk_t, np_t):
    ref = np.zeros((3, 4), np_t)
    v = pk.View([3, 4], pk_t)
    values = [1, 0, 2.75, True, -1.5, 7] if np.issubdtype(np_t, np.signedinteger) or np_t in (
        np.float32, np.float64, np.bool_) else [1, 0, 2.75, True, 7]
    for k, x in enumerate(values):
        i, j = divmod(k, 4)
        ref[i, j] = x          # NumPy's conversion (float to int truncates, ...)
        v[i, j] = x
        ref[i][-1 - j] = x
        v[i][-1 - j] = x       # a row, then an element
    np.testing.assert_array_equal(np.asarray(v), ref)
    arr = np.asarray(v)  # NumPy's own indexing of the View's memory sets the scalar types
    for i in range(3):
        for j in range(-4, 4):
            got, want = v[i, j], ref[i, j]
            assert type(got) is type(arr[i, j]) and got == want, (i, j, got, want)
            assert type(v[i][j]) is type(arr[i, j]) and v[i][j] == want
    for bad in [(3, 0), (0, 4), (-4, 0)]:
        with pytest.raises(IndexError, match="out of bounds for axis"):
            v[bad]
        with pytest.raises(IndexError):
            v[bad] = 1


@pytest.mark.parametrize("pk_t,np_t", [(pk.uint8, np.uint8), (pk.int16, np.int16)], ids=["uint8", "int16"])
def test_an_out_of_range_integer_is_refused_as_numpy_refuses_it(pk_t, np_t):
    v, a = pk.View([2], pk_t), np.zeros(2, np_t)
    for x in (70000, -70000):
        with pytest.raises(OverflowError) as mine:
            v[0] = x
        with pytest.raises(OverflowError) as numpys:
            a[0] = x
        assert str(mine.value) == str(numpys.value)
    assert v[0] == 0


def test_rows_are_views_sharing_memory_and_other_keys_still_work():
    v = pk.array(np.arange(24.0).reshape(2, 3, 4))
    row = v[1]
    assert isinstance(row, pk.View) and row.shape == (3, 4)
    row[2][3] = -1.0
    assert np.asarray(v)[1, 2, 3] == -1.0
    assert v[1, 2].shape == (4,) and v[-1][0][0] == 12.0
    np.testing.assert_array_equal(np.asarray(v[0, 1:3]), np.arange(24.0).reshape(2, 3, 4)[0, 1:3])
    v[0, 0] = 5.0  # a partial index takes the general path (broadcast)
    assert (np.asarray(v)[0, 0] == 5.0).all()


@pk.workunit
def el_double(i, v):
    v[i] = 2.0 * v[i]


def test_element_access_waits_for_pending_work(pk_mode):
    v = pk.array(np.arange(8.0))
    pk.parallel_for(8, el_double, v=v)
    assert v[3] == 6.0  # the pending launch ran first
    pk.parallel_for(8, el_double, v=v)
    v[0] = 100.0       # a host write after a pending writer: the kernel runs first
    pk.flush()
    assert v[0] == 100.0 and v[1] == 4.0


def test_rows_handed_out_again_stay_right_while_indices_change():
    ref = np.arange(60.0).reshape(3, 4, 5)
    v = pk.array(ref.copy())
    for e in (0, 2, 0, 1):          # the row cache is hit, missed, and hit again
        for j in (3, 1, 3):
            for i in range(5):
                assert v[e][j][i] == ref[e, j, i]
                v[e][j][i] = -ref[e, j, i]
                ref[e, j, i] *= -1
    np.testing.assert_array_equal(np.asarray(v), ref)
    r = v[2]
    del v                            # a row keeps the memory alive by itself
    assert r[1][1] == ref[2, 1, 1]


def test_resize_refuses_while_an_array_of_the_memory_is_alive():
    # The array names the View as its owner: new memory under it would leave
    # the array on freed memory (NumPy refuses to resize a referenced array).
    v = pk.View([4], pk.double)
    v[1] = 2.0
    arr = v.data
    with pytest.raises(BufferError, match="cannot resize"):
        v.resize(0, 8)
    assert arr[1] == 2.0
    del arr
    v.resize(0, 8)
    assert tuple(v.shape) == (8,)
    assert np.asarray(v).tolist() == [0.0, 2.0] + [0.0] * 6


def test_unaligned_numpy_memory_reads_and_writes_elementwise():
    raw = bytearray(8 * 5 + 1)
    a = np.frombuffer(raw, dtype=np.float64, offset=1, count=5)
    assert not a.flags.aligned
    a[:] = np.arange(5.0)
    v = pk.array(a)
    assert v[2] == 2.0
    v[3] = 7.5
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0, 7.5, 4.0])


def test_a_refused_buffer_request_holds_nothing():
    # A column-major View refuses a C-order-only (PyBUF_SIMPLE) request; the
    # refusal must keep no reference and no export behind.
    import ctypes
    import sys

    v = pk.View([3, 4], pk.double, layout=pk.LayoutLeft)
    before = sys.getrefcount(v)
    buf = (ctypes.c_byte * 256)()
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
    with pytest.raises(BufferError, match="not C-contiguous"):
        get(v, ctypes.addressof(buf), 0)
    assert sys.getrefcount(v) == before
    assert v._exports == 0
    v.resize(0, 5)  # no export is left alive
    assert tuple(v.shape) == (5, 4)


def test_slices_of_ints_and_slices_match_numpy():
    # The native slicing path (`v[a:b]`, `v[i, :]`, steps, negatives) against NumPy,
    # each result a View sharing the memory.
    ref = np.arange(5 * 6 * 4, dtype=np.float64).reshape(5, 6, 4)
    v = pk.array(ref.copy())
    keys = [slice(1, 4), (2, slice(None)), (slice(None), 3), (-1, slice(None, None, -2)),
            (slice(4, 0, -1), 1, slice(1, 3)), (slice(None), slice(None), 0), slice(7, 9),
            (0, slice(-3, None)), (slice(None, None, 2), slice(1, None, 3), slice(None, 2))]
    for key in keys:
        got, want = v[key], ref[key]
        assert isinstance(got, pk.View) and tuple(got.shape) == want.shape, key
        np.testing.assert_array_equal(np.asarray(got), want)
    row = v[1, :]
    row[2][0] = -5.0  # shares the memory
    assert np.asarray(v)[1, 2, 0] == -5.0
    with pytest.raises(IndexError):
        v[9, :]

    class Mine(pk.View):  # a user's subclass keeps the Python path (a pk.View back)
        pass

    m = Mine([4, 3], pk.double)
    assert type(m[1, :]) is pk.View and tuple(m[1:3].shape) == (2, 3)


def test_a_contiguous_buffer_request_of_a_strided_subview_is_refused_not_misread():
    # mpi4py asks for contiguous memory in either order (PyBUF_ANY_CONTIGUOUS),
    # NumPy's frombuffer for C order: a column of a row-major View meets
    # neither and must be refused, where it used to hand over the first
    # elements of the allocation. Rows and strided requests still work.
    import ctypes

    ref = np.arange(7 * 3, dtype=np.float64).reshape(7, 3)
    v = pk.array(ref.copy())
    col, row = v[:, 2], v[4, :]
    assert not col._c_contiguous and row._c_contiguous
    np.testing.assert_array_equal(np.frombuffer(row), ref[4])
    with pytest.raises(BufferError, match="not C-contiguous"):
        np.frombuffer(col)
    buf = (ctypes.c_byte * 256)()
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
    any_contiguous, f_contiguous = 0x0080 | 0x0018, 0x0040 | 0x0018
    with pytest.raises(BufferError, match="not contiguous"):
        get(col, ctypes.addressof(buf), any_contiguous)
    with pytest.raises(BufferError, match="not contiguous"):
        get(v, ctypes.addressof(buf), f_contiguous)  # C order, asked in Fortran's
    assert v._exports == 0
    np.testing.assert_array_equal(np.asarray(memoryview(col)), ref[:, 2])  # a strided request
    left = pk.View([3, 4], pk.double, layout=pk.LayoutLeft)
    assert get(left, ctypes.addressof(buf), any_contiguous) == 0  # column-major is one run
    ctypes.pythonapi.PyBuffer_Release.argtypes = [ctypes.c_void_p]
    ctypes.pythonapi.PyBuffer_Release(ctypes.addressof(buf))
    assert left._exports == 0

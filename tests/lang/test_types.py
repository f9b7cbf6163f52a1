"""Type propagation: unannotated locals take the type of their first assignment
and widen like Python; annotations win; one workunit compiles once per set of
argument types; NumPy's promotion rules (NEP 50) for views and Python numbers."""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels


@pk.workunit
def locals_kernel(i, iv, fv, out):
    a = iv[i]            # int32 local
    b = a / 2            # int / int -> float
    c = 3                # int
    c = c + 0.5          # assigned int, then float: a float local, as in Python
    d = 0
    for k in range(3):
        d += 0.25        # widened to float by an augmented assignment
    e: int = fv[i]       # the annotation wins: truncated to an int
    f: float = a         # an int stored in a float local
    g: pk.int8 = 130     # wraps like a C int8
    h = a // 2
    if i > 100:
        late = 1
    late = 2.5           # first bound in a branch, widened later
    out[i][0] = b
    out[i][1] = c
    out[i][2] = d
    out[i][3] = e
    out[i][4] = f / 4
    out[i][5] = g
    out[i][6] = h
    out[i][7] = late


def test_local_types_follow_python_and_annotations():
    iv = pk.array(np.array([5, -3, 8], dtype=np.int32))
    fv = pk.array(np.array([2.7, -2.7, 9.99]))
    out = pk.View([3, 8], pk.double)
    pk.parallel_for(3, locals_kernel, iv=iv, fv=fv, out=out)
    expect = [[a / 2, 3.5, 0.75, int(x), a / 4, -126, a // 2, 2.5]
              for a, x in zip([5, -3, 8], [2.7, -2.7, 9.99])]
    np.testing.assert_allclose(np.asarray(out), expect)


@pk.workunit
def generic_scale(i, src, dst, s):
    t = src[i] * s
    dst[i] = t + src[i] / 2


def test_same_workunit_compiles_per_argument_types():
    a = pk.array(np.array([1, 2, 3], dtype=np.int32))
    da = pk.View([3], pk.double)
    pk.parallel_for(3, generic_scale, src=a, dst=da, s=3)
    np.testing.assert_allclose(np.asarray(da), [1 * 3 + 0.5, 2 * 3 + 1.0, 3 * 3 + 1.5])
    b = pk.array(np.array([0.5, 1.5, 2.5]))
    db = pk.View([3], pk.double)
    pk.parallel_for(3, generic_scale, src=b, dst=db, s=0.5)
    np.testing.assert_allclose(np.asarray(db), [0.5, 1.5, 2.5])
    # The first version still works after the second was compiled.
    pk.parallel_for(3, generic_scale, src=a, dst=da, s=1)
    np.testing.assert_allclose(np.asarray(da), [1.5, 3.0, 4.5])


@pk.workunit
def promotion(i, i32, f32, x, out64, out32):
    out64[i][0] = i32[i] * x         # int32 view * Python float -> float64
    out64[i][1] = i32[i] * 0.1       # int32 view * float literal -> float64
    out64[i][2] = f32[i] * 1.1       # float32 view * Python float stays float32
    out64[i][3] = f32[i] * x         # ... also with a Python float argument
    out64[i][4] = f32[i] * i32[i]    # float32 * int32 -> float64
    out64[i][5] = f32[i] / 3         # float32 / int literal stays float32
    out32[i] = f32[i] * 1.1 + 0.3    # float32 arithmetic throughout
    y = f32[i] * 2.0                 # a float32 local
    out64[i][6] = y / 3.0


def test_numpy_promotion_rules():
    iv = np.array([3, -7, 123456], dtype=np.int32)
    fv = np.array([0.1, 1.7, -3.3], dtype=np.float32)
    x = 0.1
    out64 = pk.View([3, 7], pk.double)
    out32 = pk.View([3], pk.float32)
    pk.parallel_for(3, promotion, i32=pk.array(iv), f32=pk.array(fv), x=x,
                    out64=out64, out32=out32)
    expect = np.stack([
        iv * x, iv * 0.1, (fv * 1.1).astype(np.float64), (fv * np.float32(x)).astype(np.float64),
        fv * iv, (fv / 3).astype(np.float64), ((fv * 2.0) / 3.0).astype(np.float64),
    ], axis=1)
    assert (fv * 1.1).dtype == np.float32 and (iv * 0.1).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(out64), expect)
    np.testing.assert_array_equal(np.asarray(out32), fv * 1.1 + 0.3)


@pk.workunit
def annotated(i: int, acc: pk.Acc[pk.double], v: pk.View1D[pk.int32], x: float, n: int):
    acc += v[i] * x + n


def test_annotated_parameters():
    v = pk.array(np.array([1, 2, 3, 4], dtype=np.int32))
    assert pk.parallel_reduce(4, annotated, v=v, x=0.5, n=2) == 0.5 * 10 + 8

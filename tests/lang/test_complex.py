"""complex64/complex128: Views, host access, kernel arithmetic with NumPy's
promotion, math functions, reductions, and the errors NumPy would raise."""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles

RNG = np.random.default_rng(11)
N = 257


def crandom(n, dtype=np.complex128):
    return (RNG.normal(size=n) + 1j * RNG.normal(size=n)).astype(dtype)


@pk.workunit
def mixed(i: int, out: pk.View1D[pk.complex128], z: pk.View1D[pk.complex128], w: pk.View1D[pk.complex64],
          x: pk.View1D[pk.double], s, k: int):
    t = z[i] * s + w[i] / (x[i] + 3.0) - 2j
    out[i] = t * t.conjugate() + pk.complex128(t.imag, t.real) + abs(t) + k - z[i] ** 2


def test_mixed_arithmetic_matches_numpy():
    z, w, x = crandom(N), crandom(N, np.complex64), RNG.normal(size=N)
    out = pk.View([N], pk.complex128)
    s = 0.5 - 1.5j
    pk.parallel_for(N, mixed, out=out, z=pk.array(z), w=pk.array(w), x=pk.array(x), s=s, k=3)
    t = z * s + w / (x + 3.0) - 2j
    want = t * np.conj(t) + (t.imag + 1j * t.real) + abs(t) + 3 - z ** 2
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)  # w brings float32 parts


@pk.workunit
def single(i: int, out: pk.View1D[pk.complex64], a: pk.View1D[pk.complex64], f: pk.View1D[pk.float32]):
    out[i] = a[i] * f[i] + 1j


def test_complex64_stays_single_precision():
    a, f = crandom(N, np.complex64), RNG.normal(size=N).astype(np.float32)
    out = pk.View([N], pk.complex64)
    pk.parallel_for(N, single, out=out, a=pk.array(a), f=pk.array(f))
    want = a * f + np.complex64(1j)
    assert want.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


@pk.workunit
def maths(i: int, out: pk.View2D[pk.complex128], z: pk.View1D[pk.complex128]):
    out[i][0] = pk.sqrt(z[i])
    out[i][1] = pk.exp(z[i])
    out[i][2] = pk.log(z[i])
    out[i][3] = pk.sin(z[i])
    out[i][4] = pk.cosh(z[i])
    out[i][5] = pk.pow(z[i], 2.5)
    out[i][6] = np.conj(z[i]) + z[i].real - z[i].imag
    out[i][7] = pk.log10(z[i]) + pk.atanh(z[i])


def test_math_functions_match_numpy():
    z = crandom(N)
    out = pk.View([N, 8], pk.complex128)
    pk.parallel_for(N, maths, out=out, z=pk.array(z))
    want = np.stack([np.sqrt(z), np.exp(z), np.log(z), np.sin(z), np.cosh(z), z ** 2.5,
                     np.conj(z) + z.real - z.imag, np.log10(z) + np.arctanh(z)], axis=1)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-12)


@pk.workunit
def csum(i: int, acc: pk.Acc[pk.complex128], z: pk.View1D[pk.complex128]):
    acc += z[i] * z[i]


@pk.workunit
def square(i: int, out: pk.View1D[pk.complex128], z: pk.View1D[pk.complex128]):
    out[i] = z[i] * 1j


def test_complex_reductions_and_fused_chains():
    z = crandom(10_000)
    total = pk.parallel_reduce(10_000, csum, z=pk.array(z))
    assert complex(total) == pytest.approx(np.sum(z * z), rel=1e-12)
    t = pk.View([10_000], pk.complex128)
    pk.parallel_for(10_000, square, out=t, z=pk.array(z))
    total = pk.parallel_reduce(10_000, csum, z=t)  # fuses with the for under PK_FUSE=1
    assert complex(total) == pytest.approx(np.sum((z * 1j) ** 2), rel=1e-12)


def test_host_side_views_and_values():
    v = pk.View([3], pk.complex64)
    assert v.dtype is pk.complex64 and np.asarray(v).dtype == np.complex64
    v[0] = 1 + 2j
    v[1] = 3.5
    assert v[0] == np.complex64(1 + 2j) and v[1] == 3.5 and v[2] == 0
    v.fill(2j)
    np.testing.assert_array_equal(np.asarray(v), np.full(3, 2j, dtype=np.complex64))
    a = pk.array(np.array([1 + 1j, 2], dtype=np.complex128))
    assert a.dtype is pk.complex128
    assert pk.complex128(1.0, -2.0) == 1 - 2j and isinstance(pk.complex64(1.0, 2.0), np.complex64)
    assert pk.View([2], complex).dtype is pk.complex128


@pk.workunit
def to_real(i: int, x: pk.View1D[pk.double], z: pk.View1D[pk.complex128]):
    x[i] = z[i]  # ERR complex into a real view


@pk.workunit
def ordered(i: int, x: pk.View1D[pk.double], z: pk.View1D[pk.complex128]):
    if z[i] < z[0]:
        x[i] = 1.0


@pk.workunit
def floored(i: int, x: pk.View1D[pk.complex128], z: pk.View1D[pk.complex128]):
    x[i] = z[i] // 2


@pk.workunit
def as_float(i: int, x: pk.View1D[pk.double], z: pk.View1D[pk.complex128]):
    x[i] = float(z[i])


@pytest.mark.parametrize("kernel,message", [
    (to_real, "does not convert to a real type"),
    (ordered, "no order"),
    (floored, "not defined for complex"),
    (as_float, r"float\(\) of a complex"),
])
def test_what_numpy_refuses_is_a_located_error(kernel, message):
    x, z = pk.View([2], pk.double), pk.array(np.array([1j, 2], dtype=np.complex128))
    if kernel is floored:
        x = pk.View([2], pk.complex128)
    with pytest.raises(pk.KernelTypeError, match=message) as e:
        pk.parallel_for(2, kernel, x=x, z=z)
        pk.flush()
    assert "test_complex.py" in str(e.value)

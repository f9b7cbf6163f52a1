"""math.* and pk.* functions and constants, abs/min/max, against Python's math."""
import math

import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels

XS = [0.3, 0.75, 1.5, 2.5, 3.5, -0.5, -2.5, 0.999]

# (name, python reference) for one-argument functions; inputs are mapped into
# each function's domain by `dom` in the kernel and in the reference alike.
ONE = [
    ("sqrt", math.sqrt), ("exp", math.exp), ("log", math.log), ("log2", math.log2),
    ("log10", math.log10), ("log1p", math.log1p), ("expm1", math.expm1),
    ("sin", math.sin), ("cos", math.cos), ("tan", math.tan), ("asin", math.asin),
    ("acos", math.acos), ("atan", math.atan), ("sinh", math.sinh), ("cosh", math.cosh),
    ("tanh", math.tanh), ("fabs", math.fabs), ("cbrt", lambda x: math.copysign(abs(x) ** (1 / 3), x)),
    ("erf", math.erf), ("erfc", math.erfc), ("tgamma", math.gamma), ("lgamma", math.lgamma),
]


@pk.workunit
def math_module(i, x, out):
    v = x[i]
    p = abs(v) + 0.1
    u = v - math.floor(v)
    out[i][0] = math.sqrt(p)
    out[i][1] = math.exp(v)
    out[i][2] = math.log(p)
    out[i][3] = math.log2(p)
    out[i][4] = math.log10(p)
    out[i][5] = math.log1p(p)
    out[i][6] = math.expm1(v)
    out[i][7] = math.sin(v)
    out[i][8] = math.cos(v)
    out[i][9] = math.tan(v)
    out[i][10] = math.asin(u)
    out[i][11] = math.acos(u)
    out[i][12] = math.atan(v)
    out[i][13] = math.sinh(v)
    out[i][14] = math.cosh(v)
    out[i][15] = math.tanh(v)
    out[i][16] = math.fabs(v)
    out[i][17] = math.cbrt(v)
    out[i][18] = math.erf(v)
    out[i][19] = math.erfc(v)
    out[i][20] = math.gamma(p)
    out[i][21] = math.lgamma(p)
    out[i][22] = math.pow(p, v)
    out[i][23] = math.atan2(v, 0.7)
    out[i][24] = math.hypot(v, 3.0)
    out[i][25] = math.fmod(v * 3.0, 0.7)
    out[i][26] = math.floor(v)
    out[i][27] = math.ceil(v)
    out[i][28] = math.trunc(v)
    out[i][29] = round(v)
    out[i][30] = math.pi + math.e
    out[i][31] = 1.0 if math.isnan(v) else 0.0
    out[i][32] = 1.0 if math.isinf(v / 0.25) else 0.0
    out[i][33] = 1.0 if math.isfinite(v) else 0.0
    out[i][34] = math.floor(v) // 2
    out[i][35] = math.tau + math.log(p, 2.0)


def py_math_module(v):
    p = abs(v) + 0.1
    u = v - math.floor(v)
    return [
        math.sqrt(p), math.exp(v), math.log(p), math.log2(p), math.log10(p), math.log1p(p),
        math.expm1(v), math.sin(v), math.cos(v), math.tan(v), math.asin(u), math.acos(u),
        math.atan(v), math.sinh(v), math.cosh(v), math.tanh(v), math.fabs(v),
        math.copysign(abs(v) ** (1 / 3), v), math.erf(v), math.erfc(v), math.gamma(p),
        math.lgamma(p), math.pow(p, v), math.atan2(v, 0.7), math.hypot(v, 3.0),
        math.fmod(v * 3.0, 0.7), math.floor(v), math.ceil(v), math.trunc(v), round(v),
        math.pi + math.e, 0.0, 0.0, 1.0, math.floor(v) // 2, math.tau + math.log(p, 2.0),
    ]


def test_math_module_functions():
    n = len(XS)
    x = pk.array(np.array(XS))
    out = pk.View([n, 36], pk.double)
    pk.parallel_for(n, math_module, x=x, out=out)
    expect = np.array([py_math_module(v) for v in XS])
    np.testing.assert_allclose(np.asarray(out), expect, rtol=1e-12, atol=1e-15)


@pk.workunit
def pk_module(i, x, out):
    v = x[i]
    p = abs(v) + 0.1
    u = v - pk.floor(v)
    out[i][0] = pk.sqrt(p)
    out[i][1] = pk.exp(v)
    out[i][2] = pk.log(p)
    out[i][3] = pk.log2(p)
    out[i][4] = pk.log10(p)
    out[i][5] = pk.log1p(p)
    out[i][6] = pk.expm1(v)
    out[i][7] = pk.sin(v)
    out[i][8] = pk.cos(v)
    out[i][9] = pk.tan(v)
    out[i][10] = pk.asin(u)
    out[i][11] = pk.acos(u)
    out[i][12] = pk.atan(v)
    out[i][13] = pk.sinh(v)
    out[i][14] = pk.cosh(v)
    out[i][15] = pk.tanh(v)
    out[i][16] = pk.fabs(v)
    out[i][17] = pk.cbrt(v)
    out[i][18] = pk.erf(v)
    out[i][19] = pk.erfc(v)
    out[i][20] = pk.tgamma(p)
    out[i][21] = pk.lgamma(p)
    out[i][22] = pk.pow(p, v)
    out[i][23] = pk.atan2(v, 0.7)
    out[i][24] = pk.hypot(v, 3.0)
    out[i][25] = pk.fmod(v * 3.0, 0.7)
    out[i][26] = pk.floor(v) / 2
    out[i][27] = pk.ceil(v) / 2
    out[i][28] = pk.trunc(v) / 2
    out[i][29] = pk.round(v * 3.0)
    out[i][30] = pk.pi * pk.e
    out[i][31] = 1.0 if pk.isnan(pk.nan) else 0.0
    out[i][32] = 1.0 if pk.isinf(-pk.inf) and not pk.isfinite(pk.inf) else 0.0
    out[i][33] = pk.rsqrt(p)
    out[i][34] = pk.abs(v) + pk.min(v, 0.5) + pk.max(v, 0.5)
    out[i][35] = abs(-3) + min(4, 2, 8) + max(-1, -9)


def py_pk_module(v):
    p = abs(v) + 0.1
    return py_math_module(v)[:26] + [
        math.floor(v) / 2, math.ceil(v) / 2, math.trunc(v) / 2,
        _round_half_away(v * 3.0),  # pk.round is Kokkos' round: halves away from zero
        math.pi * math.e, 1.0, 1.0, 1 / math.sqrt(p),
        abs(v) + min(v, 0.5) + max(v, 0.5), 3 + 2 - 1,
    ]


def _round_half_away(x):
    return math.copysign(math.floor(abs(x) + 0.5), x)


def test_pk_module_functions_and_constants():
    n = len(XS)
    x = pk.array(np.array(XS))
    out = pk.View([n, 36], pk.double)
    pk.parallel_for(n, pk_module, x=x, out=out)
    expect = np.array([py_pk_module(v) for v in XS])
    np.testing.assert_allclose(np.asarray(out), expect, rtol=1e-12, atol=1e-15)


@pk.workunit
def math_ints(i, x, out):
    v = x[i]
    out[i][0] = abs(v)
    out[i][1] = min(v, 2)
    out[i][2] = max(v, -1, 0)
    out[i][3] = math.floor(v / 3)
    out[i][4] = math.ceil(v / 3)
    out[i][5] = round(v / 2)
    out[i][6] = int(math.sqrt(abs(v)))
    out[i][7] = min(v, 3) * max(v, 2)


def test_integer_abs_min_max_and_rounding():
    vals = [-7, -2, -1, 0, 1, 3, 5, 9]
    x = pk.array(np.array(vals, dtype=np.int32))
    out = pk.View([len(vals), 8], pk.int64)
    pk.parallel_for(len(vals), math_ints, x=x, out=out)
    expect = [[abs(v), min(v, 2), max(v, -1, 0), math.floor(v / 3), math.ceil(v / 3),
               round(v / 2), int(math.sqrt(abs(v))), min(v, 3) * max(v, 2)] for v in vals]
    np.testing.assert_array_equal(np.asarray(out), np.array(expect))


@pk.workunit
def numpy_spellings(i, x, out: pk.View2D[pk.double, pk.LayoutRight]):
    v = x[i]
    out[i][0] = np.sqrt(abs(v)) + np.floor(v) + np.abs(v) + np.pi + np.e
    out[i][1] = np.minimum(v, 0.5) + np.maximum(v, 0.5) + np.round(v * 2)
    out[i][2] = float("inf") if v > 3 else float("-inf")
    out[i][3] = 1.0 if float("nan") != float("nan") else 0.0
    out[i][4] = np.int64(v * 2.7) + pk.int32(-v) + pk.float32(0.1) + np.float64(0.25)
    out[i][5] = pk.uint8(300) + np.int8(-129)
    out[i][6] = 2 ** -2 + 10 ** -1
    out[i][7] = x.shape[0] + out.shape[1]


def test_numpy_spellings_and_conversions():
    xs = [3.5, -1.25, 2.5]
    out = pk.View([3, 8], pk.double)
    pk.parallel_for(3, numpy_spellings, x=pk.array(np.array(xs)), out=out)
    expect = [[math.sqrt(abs(v)) + math.floor(v) + abs(v) + math.pi + math.e,
               min(v, 0.5) + max(v, 0.5) + float(np.round(v * 2)),
               math.inf if v > 3 else -math.inf, 1.0,
               int(v * 2.7) + int(-v) + float(np.float32(0.1)) + 0.25,
               300 % 256 + 127, 2 ** -2 + 10 ** -1, 3 + 8] for v in xs]
    np.testing.assert_allclose(np.asarray(out), expect)


@pk.workunit
def bessel(i: int, out: pk.View2D[pk.double], x: pk.View1D[pk.double]):
    out[i][0] = pk.cyl_bessel_j0(x[i])
    out[i][1] = pk.cyl_bessel_j1(x[i])


def bessel_integral(n, x, points=4096):
    """J_n(x) = (1/2pi) * integral over a period of cos(n t - x sin t): the
    trapezoid rule on a periodic analytic integrand converges spectrally."""
    t = np.linspace(0.0, 2 * np.pi, points, endpoint=False)
    return np.cos(n * t[None, :] - x[:, None] * np.sin(t[None, :])).mean(axis=1)


def test_bessel_functions_match_their_integral():
    x = np.concatenate([np.linspace(-40.0, 40.0, 801), [0.0, 1e-8, 14.999, 15.0, 15.001]])
    out = pk.View([x.size, 2], pk.double)
    pk.parallel_for(x.size, bessel, out=out, x=pk.array(x))
    got = np.asarray(out)
    np.testing.assert_allclose(got[:, 0], bessel_integral(0, x), rtol=0, atol=1e-10)
    np.testing.assert_allclose(got[:, 1], bessel_integral(1, x), rtol=0, atol=1e-10)

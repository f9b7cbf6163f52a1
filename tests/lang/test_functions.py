"""@pk.function helpers: unannotated and annotated, returning values (joined
across returns), taking views, writing into views, calling each other, and
instantiated once per argument-type combination."""
import builtins
import math

import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels

OFFSET = 0.25


@pk.function
def twice(x):
    return x * 2


@pk.function
def hyp(a: float, b: float) -> float:
    return math.sqrt(a * a + b * b)


@pk.function
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@pk.function
def half_or_int(n: int):
    # returns an int on one path and a float on the other: the function returns float
    if n % 2 == 0:
        return n // 2
    return n / 2


@pk.function
def dot(a, b, n: int) -> float:
    s = 0.0
    for k in range(n):
        s += a[k] * b[k]
    return s


@pk.function
def norm(a, n: int) -> float:
    return math.sqrt(dot(a, a, n))


@pk.function
def fill_row(out, i: int, value: float):
    for k in range(out.extent(1)):
        out[i][k] = value + k


@pk.function
def count_down(n: int) -> int:
    c = 0
    while n > 0:
        n -= 1          # parameters are local copies
        c += 1
    return c


@pk.function
def max(a, b):  # noqa: A001  (a module-level function shadows the builtin, as in Python)
    return a * 100 + b


@pk.function
def affine(x: float, scale: float = 2.0, shift=OFFSET, flip=False):
    y = x * scale + shift
    return -y if flip else y


@pk.workunit
def use_functions(i, x, a, b, grid, out):
    out[i][0] = twice(x[i])
    out[i][1] = twice(i)             # same function, int instance
    out[i][2] = hyp(x[i], 4.0)
    out[i][3] = clamp(x[i], 0.5, 2.5)
    out[i][4] = clamp(i, 1, 2)
    out[i][5] = half_or_int(i)
    out[i][6] = dot(a, b, a.extent(0))
    out[i][7] = norm(a, 3)
    out[i][8] = count_down(i + 3)
    out[i][9] = later_defined(i)
    out[i][10] = max(i, 2)
    out[i][11] = affine(x[i]) + affine(x[i], 3.0) + affine(x[i], shift=-1.0)
    out[i][12] = affine(scale=0.5, x=x[i], flip=True)
    fill_row(grid, i, x[i])


@pk.function
def later_defined(k: int) -> int:
    return twice(k) + 1


def test_functions():
    xs = np.array([0.0, 1.0, 2.0, 3.0])
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([4.0, 5.0, 6.0])
    out = pk.View([4, 13], pk.double)
    grid = pk.View([4, 3], pk.double)
    pk.parallel_for(4, use_functions, x=pk.array(xs), a=pk.array(a), b=pk.array(b),
                    grid=grid, out=out)
    expect = []
    for i, x in enumerate(xs):
        expect.append([x * 2, i * 2, math.hypot(x, 4.0), min(builtins.max(x, 0.5), 2.5),
                       min(builtins.max(i, 1), 2), i // 2 if i % 2 == 0 else i / 2, a @ b,
                       math.sqrt(a @ a), i + 3, 2 * i + 1, i * 100 + 2,
                       (2 * x + 0.25) + (3 * x + 0.25) + (2 * x - 1.0), -(0.5 * x + 0.25)])
    np.testing.assert_allclose(np.asarray(out), expect)
    np.testing.assert_allclose(np.asarray(grid), xs[:, None] + np.arange(3))


def test_functions_still_callable_from_python():
    assert twice(4) == 8 and clamp(5, 1, 3) == 3 and later_defined(2) == 5
    assert affine(1.0, flip=True) == -2.25

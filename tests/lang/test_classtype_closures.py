"""@pk.classtype value classes built inside kernels; workunits defined inside
functions, closing over constants; module-level constants."""
import math

import numpy as np
import pykokkos as pk

SCALE = 3
OFFSET = 0.25
FLAG = True
NP_CONST = np.float64(1.5)


@pk.classtype
class Vec2:
    def __init__(self, x: float, y: float):
        self.x = x
        self.y = y


@pk.classtype
class Cell:
    def __init__(self, k: int, w: float):
        self.k = k
        self.w = w * 2


@pk.function
def vlen(v: Vec2) -> float:
    return math.sqrt(v.x * v.x + v.y * v.y)


@pk.function
def vadd(a: Vec2, b: Vec2) -> Vec2:
    return Vec2(a.x + b.x, a.y + b.y)


@pk.workunit
def use_classtypes(i, xs, out):
    p = Vec2(xs[i], 4.0)
    q = vadd(p, Vec2(1.0, -1.0))
    out[i][0] = vlen(p)
    out[i][1] = q.x * 10 + q.y
    c = Cell(i, xs[i])
    out[i][2] = c.k + c.w
    p.x = 0.5               # fields of a local value can be assigned
    p.y += 1.0
    out[i][3] = p.x + p.y
    out[i][4] = SCALE * xs[i] + OFFSET + (1 if FLAG else 0) + NP_CONST


def test_classtypes_and_module_constants():
    xs = np.array([3.0, 0.0, -1.5])
    out = pk.View([3, 5], pk.double)
    pk.parallel_for(3, use_classtypes, xs=pk.array(xs), out=out)
    expect = [[math.hypot(x, 4.0), (x + 1) * 10 + 3.0, i + 2 * x, 0.5 + 5.0,
               SCALE * x + OFFSET + 1 + 1.5] for i, x in enumerate(xs)]
    np.testing.assert_allclose(np.asarray(out), expect)


def make_kernels(factor, shift):
    limit = 4

    @pk.workunit
    def scaled(i, v):
        if i < limit:
            v[i] = v[i] * factor + shift

    @pk.workunit
    def summed(i, acc, v):
        acc += v[i] * factor

    return scaled, summed


def test_workunits_in_functions_close_over_constants():
    v = pk.array(np.arange(6, dtype=np.float64))
    scaled, summed = make_kernels(2, 0.5)
    pk.parallel_for(6, scaled, v=v)
    np.testing.assert_allclose(np.asarray(v), [0.5, 2.5, 4.5, 6.5, 4, 5])
    assert pk.parallel_reduce(6, summed, v=v) == 2 * (0.5 + 2.5 + 4.5 + 6.5 + 4 + 5)
    scaled3, _ = make_kernels(3, -1.0)      # other constants: another kernel
    w = pk.array(np.ones(6))
    pk.parallel_for(6, scaled3, v=w)
    np.testing.assert_allclose(np.asarray(w), [2, 2, 2, 2, 1, 1])

"""@pk.classtype value classes built inside kernels; workunits defined inside
functions, closing over constants; module-level constants."""
import math

import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels

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


# PyKokkos' own classtype test (tests/test_classtypes.py), as one functor:
# methods, classtype fields, mutation through a @pk.function, returned values.
@pk.classtype
class DepOne:
    def __init__(self, i: int, j: float, k: bool):
        self.i: int = i
        self.j: float = j
        self.k: bool = k

    def sum(self) -> float:
        if self.k:
            return self.i + self.j
        else:
            return self.j

    def scaled(self, f: float = 2.0) -> float:
        return self.sum() * f


@pk.classtype
class DepTwo:
    def __init__(self, dep_one: DepOne):
        self.dep_one: DepOne = DepOne(dep_one.i, dep_one.j, dep_one.k)

    def sum(self) -> float:
        return self.dep_one.sum()

    def get_dep_one(self) -> DepOne:
        return self.dep_one

    def bump(self, by: int):
        self.dep_one.i += by


@pk.classtype
class Particle:
    def __init__(self):
        self.x: float = 0.0
        self.id: int = -1


@pk.functor
class ClasstypesFunctor:
    def __init__(self, out, i_1: int, i_2: int, f_1: float, b_1: bool):
        self.out = out
        self.i_1: int = i_1
        self.i_2: int = i_2
        self.f_1: float = f_1
        self.b_1: bool = b_1

    @pk.function
    def mutate(self, dep_one: DepOne) -> None:
        dep_one.i = self.i_2

    @pk.function
    def ret(self) -> DepOne:
        return DepOne(self.i_1, self.f_1, self.b_1)

    @pk.workunit
    def work(self, t: int):
        dep_one: DepOne = DepOne(self.i_1, self.f_1, self.b_1)
        self.out[t][0] = dep_one.sum()
        self.mutate(dep_one)                  # objects are passed by reference
        self.out[t][1] = dep_one.sum()
        self.out[t][2] = self.ret().sum() + self.ret().scaled() + dep_one.scaled(f=0.5)
        d1 = DepOne(self.i_1, self.f_1, self.b_1)
        dep_two: DepTwo = DepTwo(d1)
        d1.i = self.i_2                       # DepTwo copied the fields
        self.out[t][3] = dep_two.sum()
        dep_two.bump(10)
        self.out[t][4] = dep_two.get_dep_one().i + dep_two.dep_one.j
        p: Particle = Particle()
        self.out[t][5] = p.id
        p.x = 2.5
        p.id = t
        self.out[t][6] = p.x * p.id


def test_pykokkos_classtype_semantics():
    n = 5
    out = pk.View([n, 7], pk.double)
    pk.parallel_for(n, ClasstypesFunctor(out, 5, 1, 5.5, True).work)

    def dsum(i, j, k):
        return i + j if k else j

    expect = [[dsum(5, 5.5, True), dsum(1, 5.5, True),
               dsum(5, 5.5, True) * 3 + dsum(1, 5.5, True) * 0.5, dsum(5, 5.5, True),
               15 + 5.5, -1, 2.5 * t] for t in range(n)]
    np.testing.assert_allclose(np.asarray(out), expect)


@pk.classtype
class Pair3:
    def __init__(self, a: float, b: float):
        self.a = a
        self.b = b

    def total(self) -> float:
        return self.a + self.b


@pk.functor
class MakesPairs:
    def __init__(self, x):
        self.x: pk.View1D[pk.double] = x

    @pk.function
    def pair_at(self, i: int) -> Pair3:
        return Pair3(self.x[i], 1.0)

    @pk.workunit
    def work(self, i: int, acc: pk.Acc[pk.double]):
        p: Pair3 = self.pair_at(i)  # the class is named only in the annotation
        acc += p.total()


def test_a_classtype_named_only_in_a_local_annotation():
    x = np.arange(10.0)
    assert float(pk.parallel_reduce(10, MakesPairs(pk.array(x)).work)) == float(np.sum(x + 1.0))


_EDITED_MODULE = '''
import pykokkos as pk


@pk.classtype
class Half:
    def __init__(self, v: float):
        self.v = v * 0.5


@pk.function
def make(v: float) -> Half:
    return Half(v)


@pk.workunit
def halves(i, x, out):
    h: Half = make(x[i])  # the class is named only in the annotation
    out[i] = h.v
'''


def test_names_in_local_annotations_come_from_the_source_captured_at_decoration(tmp_path, monkeypatch):
    """The source of a kernel is read once, when it is decorated: a file edited
    (or removed) before its first launch changes nothing, as in Python."""
    import importlib

    (tmp_path / "edited_kernels.py").write_text(_EDITED_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("edited_kernels")
    (tmp_path / "edited_kernels.py").write_text("# edited after import\n")
    x = np.arange(6.0)
    out = pk.View([6], pk.double)
    pk.parallel_for(6, mod.halves, x=pk.array(x), out=out)
    np.testing.assert_array_equal(np.asarray(out), x * 0.5)

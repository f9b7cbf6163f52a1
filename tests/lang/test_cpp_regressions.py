"""Valid Python that once produced C++ the compiler rejected (or C++ that
computed something else than Python). Each kernel here failed before its fix;
several fixes share a kernel to keep the compile count down."""
import math

import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels


@pk.workunit
def sibling_variable_step_loops(i, step, out):
    # Two loops with a non-literal step in one block: the step variable was
    # declared twice in the same C++ scope ("redeclaration of pk_s0").
    s = 0
    for j in range(0, 10, step):
        s += j
    for j in range(10, 0, -step):
        s += j
    out[i] = s


def test_sibling_loops_with_variable_steps():
    out = pk.View([2], pk.int64)
    pk.parallel_for(2, sibling_variable_step_loops, step=3, out=out)
    assert list(np.asarray(out)) == [sum(range(0, 10, 3)) + sum(range(10, 0, -3))] * 2


@pk.workunit
def atomics_with_literals(i, c, f):
    # Kokkos deduces one T from `&c(0)` (int64) and the value: a literal `1`
    # (int) matched no overload. atomic_max/min/sub have no void form in Kokkos 3.4.
    pk.atomic_add(c, [0], 1)
    pk.atomic_sub(c, [1], 2)
    pk.atomic_max(c, [2], i)
    pk.atomic_min(c, [3], -i)
    pk.atomic_fetch_mul(f, [0], 1)
    pk.atomic_add(f, [1], 1)


def test_atomics_take_literal_values():
    c = pk.View([4], pk.int64)
    f = pk.View([2], pk.float32)
    f[0] = 2.0
    pk.parallel_for(50, atomics_with_literals, c=c, f=f)
    assert list(np.asarray(c)) == [50, -100, 49, -49]
    assert list(np.asarray(f)) == [2.0, 50.0]


@pk.workunit
def missing_math_functions(i, x, out):
    # Kokkos 3.4 has no copysign, round, degrees or radians.
    out[i][0] = math.copysign(2.0, x[i])
    out[i][1] = pk.copysign(x[i], -1.0)
    out[i][2] = pk.round(x[i])
    out[i][3] = math.degrees(x[i]) + math.radians(90.0)
    out[i][4] = copysign(1.5, -x[i])  # noqa: F821  (PyKokkos' bare math names)


def test_math_functions_missing_from_kokkos():
    xs = [-2.5, 0.5, 3.0, -0.0]
    out = pk.View([4, 5], pk.double)
    pk.parallel_for(4, missing_math_functions, x=pk.array(np.array(xs)), out=out)
    expect = [[math.copysign(2.0, x), math.copysign(x, -1.0),
               math.copysign(math.floor(abs(x) + 0.5), x),
               math.degrees(x) + math.radians(90.0), math.copysign(1.5, -x)] for x in xs]
    np.testing.assert_allclose(np.asarray(out), expect)


@pk.workunit
def cpp_names(i, v, new, this, NULL):
    # Python names that are C++ keywords, alternative tokens, typedefs, macros
    # or names the generated code uses.
    xor = 1
    and_eq = 2
    bitor = 3
    int64_t = 4
    size_t = 5
    EOF = 6
    INT_MAX = 7
    errno = 8
    linux = 9
    f = 10
    Kokkos = 11
    std = 12
    printf = 13
    pk_local = 14
    u_new = 15
    delete = 16
    v[i] = (xor + and_eq + bitor + int64_t + size_t + EOF + INT_MAX + errno + linux + f
            + Kokkos + std + printf + pk_local + u_new + delete + new + this + NULL)


def test_names_that_are_reserved_in_cpp():
    v = pk.View([3], pk.double)
    pk.parallel_for(3, cpp_names, v=v, new=100, this=0.5, NULL=1000)
    assert list(np.asarray(v)) == [sum(range(1, 17)) + 100 + 0.5 + 1000] * 3


@pk.function
def first(r) -> float:
    return r[0]


@pk.workunit
def rebound_view_locals(i, A, out):
    # `row = ...` twice in one block was `auto row` declared twice; a view
    # local set in a loop was out of scope after it.
    row = A[0, :]
    row = A[1, :]
    out[i][0] = first(row)
    for k in range(A.extent(0)):
        row = A[k, :]
    out[i][1] = row[1]
    if i > 100:
        late = A[i, 1:]
    else:
        late = A[0, 2:]
    out[i][2] = late[0]


def test_view_locals_can_be_rebound():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    out = pk.View([2, 3], pk.double)
    pk.parallel_for(2, rebound_view_locals, A=pk.array(a.copy()), out=out)
    assert np.asarray(out).tolist() == [[4.0, 9.0, 2.0]] * 2


@pk.workunit
def wide_literals(i, out):
    # `1 << 40` and `100000 * 100000` were evaluated in 32-bit C++ int.
    out[i][0] = 1 << 40
    out[i][1] = 100000 * 100000
    out[i][2] = (1 << (i + 33)) - 1
    out[i][3] = 3 - 2**40 + 5000000000


def test_integer_literals_compute_in_64_bits():
    out = pk.View([2, 4], pk.int64)
    pk.parallel_for(2, wide_literals, out=out)
    assert np.asarray(out).tolist() == [
        [1 << 40, 100000 * 100000, (1 << (i + 33)) - 1, 3 - 2**40 + 5000000000] for i in range(2)]


@pk.function
def pick(V0, k: int) -> float:
    # A parameter named like the template parameter of view arguments ("V0").
    return V0[k]


@pk.workunit
def run(i, v):
    # A workunit named `run` made a functor struct `pk_run`, the entry point's name.
    v[i] = pick(v, i) + 1


def test_workunit_and_parameter_names_clear_of_generated_ones():
    v = pk.array(np.arange(3, dtype=np.float64))
    pk.parallel_for(3, run, v=v)
    assert list(np.asarray(v)) == [1.0, 2.0, 3.0]


@pk.workunit
def mixed_sign_64bit(i, u, e, out):
    # uint64 with int64 promotes to float64 (NumPy): `**` became pk::ipow<double>,
    # which does not compile.
    out[i][0] = u[i] ** e[i]
    out[i][1] = u[i] // e[i] + u[i] % e[i]
    out[i][2] = u[i] ** 2 + (u[i] | 1)


def test_uint64_mixed_with_int64():
    u = np.array([3, 4], dtype=np.uint64)
    e = np.array([2, -3], dtype=np.int64)
    out = np.zeros((2, 3))
    pk.parallel_for(2, mixed_sign_64bit, u=u, e=e, out=out)
    expect = [[float(u[k] ** e[k]) if e[k] >= 0 else float(u[k]) ** float(e[k]),
               float(u[k] // e[k] + u[k] % e[k]), float(u[k] ** 2 + (u[k] | 1))] for k in range(2)]
    np.testing.assert_allclose(out, expect)

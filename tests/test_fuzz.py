"""Differential fuzzer: random programs run eagerly, lazily with fusion and
lazily without it, each against NumPy. A program is a list of steps over four
1-D Views and one 2-D View; the steps cover standalone workunits, functors
writing members through methods, @pk.function helpers taking views,
classtypes, subviews of ranks 1 to 3 held as members and passed as arguments,
MDRange, Team and scan launches, atomics, NumPy arrays passed directly, host
reads and writes in between, Views created and dropped, and launches from
another thread. CI runs a fixed seed set; `make fuzz` runs many more
(PK_FUZZ_EXAMPLES)."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pykokkos as pk

pytestmark = pytest.mark.eager_only  # each program runs in every mode itself

R, C = 4, 6
M = R * C


@pk.workunit
def op_axpy(i, a, x, y):
    y[i] = a * x[i] + y[i]


@pk.workunit
def op_mul(i, x, y, z):
    z[i] = x[i] * y[i]


@pk.workunit
def op_scale(i, a, x, y):
    y[i] = a * x[i]


@pk.workunit
def op_shift(i, n, x, y):
    if i + 1 < n:
        y[i] = x[i + 1]


@pk.workunit
def op_gather(i, n, x, y):
    y[i] = x[(i * 7) % n]


@pk.workunit
def op_sum(i, acc, x):
    acc += x[i]


@pk.workunit
def op_max(i, acc, x):
    if x[i] > acc:
        acc = x[i]


@pk.workunit
def op_min(i, acc, x):
    acc = min(acc, x[i])


@pk.workunit
def op_prod(i, acc, x):
    if x[i] > 0.0:
        acc *= 2.0  # powers of two: exact in any order


@pk.workunit
def op_scan(i, acc, last_pass, x, y):
    acc += x[i]
    if last_pass:
        y[i] = acc


@pk.function
def fz_store(v: pk.View1D[pk.double], i: int, x: float):
    v[i] = x


@pk.workunit
def op_helper(i, x, y):
    fz_store(y, i, x[i] - 1.0)  # writes y only inside a helper that takes the view


@pk.functor
class FzPut:
    """Writes its member only through a @pk.function method."""

    def __init__(self, x, y, k):
        self.x: pk.View1D[pk.double] = x
        self.y: pk.View1D[pk.double] = y
        self.k: float = k

    @pk.function
    def put(self, i: int, v: float):
        self.y[i] = v

    @pk.workunit
    def work(self, i: int):
        self.put(i, self.k * self.x[i] + 1.0)


@pk.functor
class FzBlock:
    """A 2-D subview held as a member, updated row by row from a 1-D member."""

    def __init__(self, block, x):
        self.block: pk.View2D[pk.double] = block
        self.x: pk.View1D[pk.double] = x

    @pk.function
    def add_row(self, r: int):
        for c in range(self.block.extent(1)):
            self.block[r][c] += self.x[r * self.block.extent(1) + c]

    @pk.workunit
    def work(self, r: int):
        self.add_row(r)


@pk.classtype
class FzPair:
    def __init__(self, a: float, b: float):
        self.a = a
        self.b = b

    def combine(self) -> float:
        return self.a * self.b + self.a


@pk.workunit
def op_cls(i, s, x, y):
    p = FzPair(x[i], s)
    y[i] = p.combine()


@pk.workunit
def op_md(i, j, s, g, x):
    g[i][j] = s * g[i][j] + x[i * 6 + j]


@pk.workunit
def op_cube(i, j, k, s, c, x):
    c[i][j][k] = s * c[i][j][k] + x[i * 4 + j * 2 + k]


@pk.workunit
def op_running(i, acc: pk.Acc[pk.int64], x, y):
    y[acc] = x[i]  # reads the running total: Kokkos' value on Serial
    acc += 1


@pk.workunit
def op_md_scale(i, j, s, g):
    g[i][j] = g[i][j] * s


@pk.workunit
def op_md_sum(i, j, acc, g):
    acc += g[i][j]


@pk.workunit
def op_unrow(i, g, y):
    y[i] = g[i // 6][i % 6]


@pk.workunit
def op_team(tm, cols, g, y):
    r: int = tm.league_rank()

    def row(c: int, acc: pk.Acc[pk.double]):
        acc += g[r][c]

    t: float = pk.parallel_reduce(pk.TeamThreadRange(tm, cols), row)
    if tm.team_rank() == 0:
        y[r] = t


@pk.workunit
def op_atomic(i, x, y):
    pk.atomic_add(y, [(i * 5) % 4], x[i])


OPS = ["axpy", "mul", "shift", "gather", "sum", "scan", "new", "drop", "read",
       "method", "helper", "sub", "numpy", "hostw", "cls", "md", "mdsub", "mdsum",
       "unrow", "team", "atomic", "block", "thread", "threads", "hostg", "cube", "running", "again",
       "total", "scale", "max", "min", "prod"]
SCALES = [0.5, -2.0, 3.0]
steps = st.lists(
    st.tuples(st.sampled_from(OPS), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3),
              st.sampled_from(SCALES)),
    min_size=1, max_size=10)


def _view(a):
    v = pk.View(list(a.shape), pk.double)
    np.asarray(v)[...] = a
    return v


def run_pk(op, vs, g, a, b, c, s, g3=None):
    """One step on Views; returns an observation or None."""
    x, y, z = vs[a], vs[b], vs[c]
    if op == "axpy":
        pk.parallel_for(M, op_axpy, a=s, x=x, y=y)
    elif op == "mul":
        pk.parallel_for(M, op_mul, x=x, y=y, z=z)
    elif op == "scale":
        pk.parallel_for(M, op_scale, a=s, x=x, y=y)
    elif op == "shift":
        pk.parallel_for(M, op_shift, n=M, x=x, y=y)
    elif op == "gather":
        pk.parallel_for(M, op_gather, n=M, x=x, y=y)
    elif op == "sum":
        return pk.parallel_reduce(M, op_sum, x=x)
    elif op == "scan":
        return pk.parallel_scan(M, op_scan, x=x, y=y)
    elif op == "max":  # built-in reducers: fused with each other and with sums
        return pk.parallel_reduce(M, op_max, x=x, reducer=pk.Max)
    elif op == "min":
        return pk.parallel_reduce(M, op_min, x=x, reducer=pk.Min)
    elif op == "prod":
        return pk.parallel_reduce(M, op_prod, x=x, reducer=pk.Prod)
    elif op == "method":
        pk.parallel_for(M, FzPut(x, y, s).work)
    elif op == "helper":
        pk.parallel_for(M, op_helper, x=x, y=y)
    elif op == "sub":  # 1-D subviews aliasing their parents
        pk.parallel_for(M - 2, op_axpy, a=s, x=x[1:M - 1], y=y[0:M - 2])
    elif op == "numpy":  # a NumPy array passed directly
        pk.parallel_for(M, op_axpy, a=1.0, x=np.full(M, s), y=y)
    elif op == "cls":
        pk.parallel_for(M, op_cls, s=s, x=x, y=y)
    elif op == "md":
        pk.parallel_for(pk.MDRangePolicy([0, 0], [R, C]), op_md, s=s, g=g, x=x)
    elif op == "mdsub":  # a strided 2-D subview as an argument
        pk.parallel_for(pk.MDRangePolicy([0, 0], [R, C // 2]), op_md_scale, s=s, g=g[:, ::2])
    elif op == "mdsum":
        return pk.parallel_reduce(pk.MDRangePolicy([0, 0], [R, C]), op_md_sum, g=g)
    elif op == "unrow":
        pk.parallel_for(M, op_unrow, g=g, y=y)
    elif op == "team":
        pk.parallel_for(pk.TeamPolicy(R, pk.AUTO), op_team, cols=C, g=g, y=y)
    elif op == "atomic":
        pk.parallel_for(M, op_atomic, x=x, y=y)
    elif op == "running":  # a reduction that reads its accumulator (Serial: in order)
        return pk.parallel_reduce(pk.RangePolicy(pk.Serial, 0, M), op_running, x=x, y=y)
    elif op == "cube":  # a strided 3-D subview of the 3-D View as an argument
        pk.parallel_for(pk.MDRangePolicy([0, 0, 0], [2, 2, 2]), op_cube, s=s, c=g3[:, 1:, ::2], x=x)
    elif op == "block":  # a 2-D subview as a functor member
        pk.parallel_for(2, FzBlock(g[1:3, 2:5], x).work)
    elif op == "thread":  # a launch from another thread, joined before going on
        t = threading.Thread(target=pk.parallel_for, args=(M, op_axpy), kwargs=dict(a=s, x=x, y=y))
        t.start()
        t.join()
    elif op == "threads":  # two threads launching at once, writing different Views
        ts = [threading.Thread(target=pk.parallel_for, args=(M, op_axpy), kwargs=dict(a=s, x=x, y=y)),
              threading.Thread(target=pk.parallel_for, args=(M, op_mul), kwargs=dict(x=x, y=x, z=z))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    return None


def run_np(op, vs, g, a, b, c, s, g3=None):
    x, y, z = vs[a], vs[b], vs[c]
    if op in ("axpy", "thread"):
        y[:] = s * x + y
    elif op == "mul":
        z[:] = x * y
    elif op == "scale":
        y[:] = s * x
    elif op == "threads":
        y[:] = s * x + y
        z[:] = x * x
    elif op == "shift":
        y[:-1] = x[1:].copy()
    elif op == "gather":
        y[:] = x[(np.arange(M) * 7) % M].copy()
    elif op == "sum":
        return float(x.sum())
    elif op == "max":
        return float(x.max())
    elif op == "min":
        return float(x.min())
    elif op == "prod":
        return float(2.0 ** np.count_nonzero(x > 0.0))
    elif op == "scan":
        total = np.cumsum(x)
        y[:] = total
        return float(total[-1])
    elif op == "method":
        y[:] = s * x + 1.0
    elif op == "helper":
        y[:] = x - 1.0
    elif op == "sub":
        y[0:M - 2] = s * x[1:M - 1] + y[0:M - 2]
    elif op == "numpy":
        y[:] = y + s
    elif op == "cls":
        y[:] = x * s + x
    elif op == "md":
        g[:] = s * g + x.reshape(R, C)
    elif op == "mdsub":
        g[:, ::2] *= s
    elif op == "mdsum":
        return float(g.sum())
    elif op == "unrow":
        y[:] = g.ravel()
    elif op == "team":
        y[:R] = g.sum(axis=1)
    elif op == "atomic":
        np.add.at(y, (np.arange(M) * 5) % 4, x)
    elif op == "block":
        g[1:3, 2:5] += x[:6].reshape(2, 3)
    elif op == "running":
        y[:] = x
        return float(M)
    elif op == "cube":
        g3[:, 1:, ::2] = s * g3[:, 1:, ::2] + x[:8].reshape(2, 2, 2)
    return None


def interpret(program, use_pk):
    """Runs the program on pk Views (use_pk) or NumPy arrays; returns all observations."""
    rng = np.random.default_rng(1)
    init = [rng.integers(-4, 5, M).astype(np.float64) for _ in range(4)]
    ginit = rng.integers(-4, 5, (R, C)).astype(np.float64)
    g3init = rng.integers(-4, 5, (2, 3, 4)).astype(np.float64)
    fresh = (lambda a: _view(a)) if use_pk else (lambda a: a.copy())
    vs = [fresh(a) for a in init]
    g = fresh(ginit)
    g3 = fresh(g3init)
    seen = []
    last = None
    for step in program:
        op, a, b, c, s = step
        if op == "again":  # the last launch step three more times (exact repeats)
            if last is None:
                continue
            op, a, b, c, s = last
            for _ in range(2):
                got = (run_pk if use_pk else run_np)(op, vs, g, a, b, c, s, g3)
                if got is not None:
                    seen.append(got)
        if op in ("new", "drop"):  # a fresh View; the old one dies unless held elsewhere
            vs[a] = fresh(np.zeros(M))
        elif op == "read":
            seen.append(float(np.asarray(vs[a])[b]))
        elif op == "total":  # a sum demanded at once: what feeds it may stay pending
            seen.append(float((run_pk if use_pk else run_np)("sum", vs, g, a, b, c, s, g3)))
        elif op == "hostw":  # a host write between launches
            vs[a][b] = s
        elif op == "hostg":  # a host write to an element of the 2-D View
            g[b][c] = s
        else:
            got = (run_pk if use_pk else run_np)(op, vs, g, a, b, c, s, g3)
            if got is not None:
                seen.append(got)
            last = (op, a, b, c, s)
    finals = [np.asarray(v).copy() for v in vs] + [np.asarray(g).copy(), np.asarray(g3).copy()]
    return [float(o) for o in seen], finals


EXAMPLES = int(os.environ.get("PK_FUZZ_EXAMPLES", "30"))
# CI runs one fixed set; `make fuzz` draws new programs every run.
FIXED = os.environ.get("PK_FUZZ_RANDOM") != "1"


def distinct(program):
    """Operands of one step must differ where NumPy's semantics would alias."""
    out = []
    for op, a, b, c, s in program:
        b = b if b != a else (a + 1) % 4
        c = c if c not in (a, b) else min({0, 1, 2, 3} - {a, b})
        out.append((op, a, b, c, s))
    return out


def check(program, rtol=0.0):
    program = distinct(program)
    want_seen, want = interpret(program, use_pk=False)
    # eager, lazy with fusion, lazy without fusion: each must equal NumPy.
    for mode, lazy, fusing in (("eager", False, True), ("fused", True, True), ("unfused", True, False)):
        pk._native.set_lazy(lazy)
        pk._native.set_fusing(fusing)
        try:
            seen, finals = interpret(program, use_pk=True)
            pk.flush()
        finally:
            pk._native.set_lazy(False)
            pk._native.set_fusing(True)
        # A repeated program can overflow into inf and then NaN: NaN where
        # NumPy has NaN is equal, anywhere else it is not.
        assert np.allclose(seen, want_seen, rtol=rtol, atol=0, equal_nan=True), (mode, program, seen, want_seen)
        for w, got in zip(want, finals):
            assert np.array_equal(got, w, equal_nan=True), (mode, program, got, w)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=FIXED)
@given(steps)
def test_random_programs_eager_fused_unfused_numpy(program):
    check(program)


# Steps that make demand-driven flushes matter: producers that only write,
# sums demanded at once, reads, rewrites, host writes, Views that die.
DEMAND_OPS = ["scale", "mul", "total", "total", "read", "axpy", "hostw", "new", "again", "sum"]
demand_steps = st.lists(
    st.tuples(st.sampled_from(DEMAND_OPS), st.integers(0, 3), st.integers(0, 3),
              st.integers(0, 3), st.sampled_from(SCALES)),
    min_size=2, max_size=12)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=FIXED)
@given(demand_steps)
def test_random_programs_with_demanded_results(program):
    check(program)


def test_every_step_once_in_one_program():
    """Each kind of step at least once, in an order that makes them interact."""
    check([(op, k % 4, (k + 1) % 4, (k + 2) % 4, SCALES[k % 3]) for k, op in enumerate(OPS)])


def repeated(program, times=3):
    """The program run `times` times over the same Views, its scalars changed
    on each pass: flushes of one shape recur, so the plan cache replays
    (and PK_VERIFY plans each replay afresh too)."""
    out = []
    for t in range(times):
        out += [(op, a, b, c, SCALES[(SCALES.index(s) + t) % len(SCALES)]) for op, a, b, c, s in program]
    return out


@settings(max_examples=max(EXAMPLES // 2, 10), deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=FIXED)
@given(demand_steps)
def test_random_programs_repeated_replay_their_plans(program):
    # Three passes grow the values past what doubles hold exactly, so sums
    # taken in another order (a fused reduction's partial sums) may differ in
    # the last bits; a replayed plan gone wrong leaves values stale or unwritten.
    # Elements are still compared exactly.
    check(repeated(program), rtol=1e-13)

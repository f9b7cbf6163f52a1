"""PyKokkos' workload API (`@pk.workload`, `@pk.main`, `@pk.callback`,
`pk.execute`), chained assignment in kernels (with the atomic slot-claiming
form), and the host-side helpers workload programs use (`pk.printf`,
`pk.Rank`/`pk.Iterate`). Checked against NumPy; conftest runs each test eagerly
and lazily."""
import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.compiles

N = 50


@pk.workload
class Pipeline:
    """Fields of both kinds; a reduction's total stored in a field and read by
    a later workunit; callbacks in definition order."""

    def __init__(self, n):
        self.n: int = n
        self.scale: float = 0.5
        self.total: pk.double = 0
        self.x: pk.View1D[pk.double] = pk.View([n], pk.double)
        self.y: pk.View1D[pk.double] = pk.View([n], pk.double)
        self.seen = []

    @pk.main
    def run(self):
        pk.parallel_for(self.n, self.fill)
        self.total = pk.parallel_reduce(self.n, self.square_sum)
        pk.parallel_for(pk.MDRangePolicy([0], [self.n], rank=pk.Rank(1, pk.Iterate.Left, pk.Iterate.Right)),
                        self.normalise)

    @pk.callback
    def first(self):
        self.seen.append(("first", float(self.total)))

    @pk.callback
    def second(self):
        self.seen.append(("second", np.asarray(self.y).copy()))

    @pk.workunit
    def fill(self, i: int):
        self.x[i] = self.scale * i

    @pk.workunit
    def square_sum(self, i: int, acc: pk.Acc[pk.double]):
        acc += self.x[i] * self.x[i]

    @pk.workunit
    def normalise(self, i: int):
        self.y[i] = self.x[i] / self.total


def test_a_workload_runs_main_then_its_callbacks():
    w = Pipeline(N)
    pk.execute(pk.ExecutionSpace.Default, w)
    x = 0.5 * np.arange(N)
    total = float(np.sum(x * x))
    assert [name for name, _ in w.seen] == ["first", "second"]
    assert w.seen[0][1] == pytest.approx(total, rel=1e-12)
    np.testing.assert_allclose(w.seen[1][1], x / total, rtol=1e-12)


def test_execute_restores_the_default_space_and_checks_its_arguments():
    before = pk.get_default_space()
    pk.execute(pk.ExecutionSpace.Serial, Pipeline(4))
    assert pk.get_default_space() == before
    with pytest.raises(TypeError, match="@pk.workload"):
        pk.execute(pk.ExecutionSpace.Default, object())

    @pk.workload
    class TwoMains:
        @pk.main
        def a(self):
            pass

        @pk.main
        def b(self):
            pass

    with pytest.raises(TypeError, match="exactly one @pk.main"):
        pk.execute(pk.ExecutionSpace.Default, TwoMains())


@pk.workunit
def claim_slots(i, count, slots, out):
    idx: int = 0
    if i % 3 == 0:
        idx = count[0] = count[0] + 1
        slots[idx - 1] = i
    a = b = i * 2
    out[i] = a + b


def test_chained_assignment_and_claiming_slots_atomically():
    n = 3000
    count = pk.View([1], pk.int32, trait=pk.Trait.Atomic)
    slots = pk.View([n], pk.int32)
    out = pk.View([n], pk.int64)
    pk.parallel_for(n, claim_slots, count=count, slots=slots, out=out)
    want = np.arange(0, n, 3)
    assert int(count[0]) == len(want)  # no two threads claimed the same slot
    assert sorted(np.asarray(slots)[: len(want)].tolist()) == want.tolist()
    np.testing.assert_array_equal(np.asarray(out), 4 * np.arange(n))


def test_host_printf_formats_like_c(capsys):
    pk.printf("%d items, %.2lf each, %ld total%%\n", 3, 2.5, 7)
    assert capsys.readouterr().out == "3 items, 2.50 each, 7 total%\n"


@pk.workload
class Lambdas:
    """The three lambda forms PyKokkos' workloads use, closing over fields and locals."""

    def __init__(self, n):
        self.n: int = n
        self.a: pk.View1D[pk.double] = pk.View([n], pk.double)
        self.total: float = 0.0
        self.mixed: float = 0.0

    @pk.main
    def run(self):
        y = 1.5
        pk.parallel_for(self.n, lambda i: i * 2.0, self.a)            # a[i] = ...
        pk.parallel_for(self.n, lambda i: self.a[i] + y, self.a)
        self.total = pk.parallel_reduce(self.n, lambda i, acc: acc + self.a[i])
        self.mixed = pk.parallel_reduce(
            self.n, lambda i, acc: acc + self.a[i] - y * 2 + i)


def test_lambda_kernels_in_a_workload():
    w = Lambdas(20)
    pk.execute(pk.ExecutionSpace.Default, w)
    a = np.arange(20) * 2.0 + 1.5
    np.testing.assert_array_equal(np.asarray(w.a), a)
    assert float(w.total) == a.sum()
    assert float(w.mixed) == float(np.sum(a - 3.0 + np.arange(20)))


def test_a_reduction_lambda_must_add_to_its_accumulator():
    with pytest.raises(TypeError, match="returns acc \\+ value"):
        pk.parallel_reduce(4, lambda i, acc: acc * i)


n = "a module-level name a field shadows in main"


@pk.workload
class Stencil:
    """main reads fields by their bare names (`n`, `steps`), as upstream's
    ParRes stencil does; the module's own `n` is shadowed there only."""

    def __init__(self, n, steps):
        self.n: int = n
        self.steps: int = steps
        self.a: pk.View1D[pk.double] = pk.View([n], pk.double)

    @pk.main
    def run(self):
        for _ in range(steps):
            pk.parallel_for(pk.RangePolicy(1, n - 1), self.bump)

    @pk.workunit
    def bump(self, i: int):
        self.a[i] += i


def test_main_reads_fields_by_bare_name():
    w = Stencil(12, 3)
    pk.execute(pk.ExecutionSpace.Default, w)
    want = np.zeros(12)
    want[1:11] = 3 * np.arange(1, 11)
    np.testing.assert_array_equal(np.asarray(w.a), want)
    assert n.startswith("a module-level name")

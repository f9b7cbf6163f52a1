"""Launch-time extent checks: a range launch whose every work item indexes a
view at `i + c` is refused with an IndexError (the view, its extent, the
range, file:line) before it runs when the view is too short, eagerly and
lazily; guarded accesses (`if i < n`, a loop that may not run) are not
refused, and nothing else pending is lost. Without the check a read past the
end returns garbage and a write corrupts the heap."""
import os

import numpy as np
import pytest

import pykokkos as pk

HERE = os.path.basename(__file__)


@pk.workunit
def copy(i, x, y):
    y[i] = x[i]


@pk.workunit
def guarded(i, x, y, n):
    if i < n:
        y[i] = x[i]


@pk.workunit
def ahead(i, acc, x):
    acc += x[i + 1] - x[i - 1]


@pk.workunit
def rows(i, out, a, m):
    for j in range(m):
        out[i][j] = a[j] * i


@pk.functor
class Scale:
    def __init__(self, v):
        self.v = v

    @pk.workunit
    def run(self, i):
        self.v[i] = self.v[i] * 2.0


def test_a_view_shorter_than_the_range_is_refused_before_the_launch_runs():
    x = pk.array(np.arange(5.0))
    y = pk.View([10], pk.double)
    y.fill(-1.0)
    with pytest.raises(IndexError, match=rf"workunit 'copy' indexes view 'x' as x\[i\] \({'.*' + HERE}:\d+\) "
                                         r"in every work item of the range \[0, 10\), which reaches index 9; "
                                         r"'x' has 5 element\(s\)"):
        pk.parallel_for(10, copy, x=x, y=y)
    np.testing.assert_array_equal(np.asarray(y), -np.ones(10))  # nothing ran


def test_offsets_are_checked_at_both_ends():
    x = pk.array(np.arange(6.0) ** 2)
    with pytest.raises(IndexError, match=r"x\[i \+ 1\].*reaches index 6"):
        pk.parallel_reduce(pk.RangePolicy(1, 6), ahead, x=x)
    with pytest.raises(IndexError, match=r"x\[i - 1\].*reaches index -1"):
        pk.parallel_reduce(pk.RangePolicy(0, 5), ahead, x=x)
    a = np.arange(6.0) ** 2
    assert pk.parallel_reduce(pk.RangePolicy(1, 5), ahead, x=x) == (a[2:6] - a[0:4]).sum()


def test_guarded_accesses_and_empty_loops_are_not_refused():
    x = pk.array(np.arange(5.0))
    y = pk.View([10], pk.double)
    pk.parallel_for(10, guarded, x=x, y=y, n=5)
    np.testing.assert_array_equal(np.asarray(y)[:5], np.arange(5.0))
    out = pk.View([3, 4], pk.double)
    a = pk.array(np.arange(4.0))
    pk.parallel_for(5, rows, out=out, a=a, m=0)  # the loop never runs: out is not indexed
    with pytest.raises(IndexError, match=r"view 'out' as out\[i\]\[j\].*range \[0, 5\).*3 element"):
        pk.parallel_for(5, rows, out=out, a=a, m=4)
    pk.parallel_for(3, rows, out=out, a=a, m=4)
    np.testing.assert_array_equal(np.asarray(out), np.outer(np.arange(3.0), np.arange(4.0)))


def test_subviews_numpy_arrays_and_functor_members_count_their_own_extent():
    whole = pk.array(np.arange(12.0))
    with pytest.raises(IndexError, match=r"view 'x' .* 4 element"):
        pk.parallel_for(5, copy, x=whole[2:6], y=pk.View([5], pk.double))
    with pytest.raises(IndexError, match=r"view 'y' .* 3 element"):
        pk.parallel_for(4, copy, x=np.ones(4), y=np.zeros(3))
    v = pk.array(np.arange(4.0))
    with pytest.raises(IndexError, match=r"view 'v' as self\.v\[i\]"):
        pk.parallel_for(6, Scale(v).run)
    pk.parallel_for(4, Scale(v).run)
    np.testing.assert_array_equal(np.asarray(v), 2.0 * np.arange(4.0))


def test_a_refused_launch_loses_no_pending_work():
    x = pk.array(np.arange(8.0))
    y, z = pk.View([8], pk.double), pk.View([8], pk.double)
    pk.parallel_for(8, copy, x=x, y=y)  # pending under PK_FUSE=1
    with pytest.raises(IndexError):
        pk.parallel_for(9, copy, x=y, y=z)
    pk.parallel_for(8, copy, x=y, y=z)
    np.testing.assert_array_equal(np.asarray(z), np.arange(8.0))

"""Numbers a kernel refers to by name (module constants, closure values,
those of its @pk.function helpers) take Python semantics: a launch uses the
value the name has when it is launched, also when a lazy launch runs later."""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles

SCALE = 2.0
OFFSET = 1


@pk.function
def shifted(x: float) -> float:
    return x + OFFSET


@pk.workunit
def scale(i, v):
    v[i] = shifted(SCALE * i)


def test_rebinding_a_module_constant_takes_effect_at_the_next_launch():
    global SCALE, OFFSET
    n = 8
    a, b, c = (pk.View([n], pk.double) for _ in range(3))
    try:
        pk.parallel_for(n, scale, v=a)
        SCALE = 3.0                      # used by the workunit itself
        pk.parallel_for(n, scale, v=b)
        OFFSET = 10                      # used by its helper
        pk.parallel_for(n, scale, v=c)
    finally:
        SCALE, OFFSET = 2.0, 1
    i = np.arange(n)
    np.testing.assert_array_equal(np.asarray(a), 2.0 * i + 1)
    np.testing.assert_array_equal(np.asarray(b), 3.0 * i + 1)
    np.testing.assert_array_equal(np.asarray(c), 3.0 * i + 10)
    # Back to the first values: the first kernel again, same results.
    pk.parallel_for(n, scale, v=a)
    np.testing.assert_array_equal(np.asarray(a), 2.0 * i + 1)


def test_closure_values_are_read_at_each_launch():
    k = 5
    @pk.workunit
    def add_k(i, v):
        v[i] = v[i] + k

    v = pk.View([4], pk.int64)
    pk.parallel_for(4, add_k, v=v)
    k = 7
    pk.parallel_for(4, add_k, v=v)
    np.testing.assert_array_equal(np.asarray(v), np.full(4, 12))

"""Control flow: if/elif/else, for over range with 1, 2 and 3 arguments
(negative and variable steps), while, break, continue, pass, and an early
`return` that ends one work item."""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels

N = 12
K = 15


def py_control(i, step):
    r = [0] * K
    if i < 3:
        r[0] = 1
    elif i < 6:
        r[0] = 2
    elif i == 6:
        pass
    else:
        r[0] = 4
    s = 0
    for j in range(i):
        s += j
    r[1] = s
    s = 0
    for j in range(2, i):
        s += j * j
    r[2] = s
    s = 0
    for j in range(1, i + 5, 3):
        s += j
    r[3] = s
    s = 0
    for j in range(i, -1, -1):
        s = s * 2 + j
    r[4] = s
    s = 0
    for j in range(10, i, -3):
        s += j
    r[5] = s
    s = 0
    for j in range(-i, i, step):
        s += j + 100
    r[6] = s
    s = 0
    for j in range(i, -i, -step):
        s += 1
    r[7] = s
    k = 0
    while k * k < i:
        k += 1
    r[8] = k
    s = 0
    for j in range(100):
        if j % 2 == 0:
            continue
        if j > i:
            break
        s += j
    r[9] = s
    s = 0
    k = 0
    while True:
        k += 1
        if k % 3 == 0:
            continue
        s += k
        if k >= i:
            break
    r[10] = s
    last = -1
    for j in range(i):
        last = j
    r[11] = last
    s = 0
    for a in range(4):
        for b in range(a, 4):
            if b == 3:
                break
            s += a * 10 + b
    r[12] = s
    for k in range(i):
        pass
    k = i + 0.5      # a loop variable rebound to a float becomes a float
    r[14] = k * 2
    r[13] = 0 if i % 4 == 1 else 7
    return r


@pk.workunit
def control(i, step, out):
    if i < 3:
        out[i][0] = 1
    elif i < 6:
        out[i][0] = 2
    elif i == 6:
        pass
    else:
        out[i][0] = 4
    s = 0
    for j in range(i):
        s += j
    out[i][1] = s
    s = 0
    for j in range(2, i):
        s += j * j
    out[i][2] = s
    s = 0
    for j in range(1, i + 5, 3):
        s += j
    out[i][3] = s
    s = 0
    for j in range(i, -1, -1):
        s = s * 2 + j
    out[i][4] = s
    s = 0
    for j in range(10, i, -3):
        s += j
    out[i][5] = s
    s = 0
    for j in range(-i, i, step):
        s += j + 100
    out[i][6] = s
    s = 0
    for j in range(i, -i, -step):
        s += 1
    out[i][7] = s
    k = 0
    while k * k < i:
        k += 1
    out[i][8] = k
    s = 0
    for j in range(100):
        if j % 2 == 0:
            continue
        if j > i:
            break
        s += j
    out[i][9] = s
    s = 0
    k = 0
    while True:
        k += 1
        if k % 3 == 0:
            continue
        s += k
        if k >= i:
            break
    out[i][10] = s
    last = -1
    for j in range(i):
        last = j
    out[i][11] = last
    s = 0
    for a in range(4):
        for b in range(a, 4):
            if b == 3:
                break
            s += a * 10 + b
    out[i][12] = s
    for k in range(i):
        pass
    k = i + 0.5      # a loop variable rebound to a float becomes a float
    out[i][14] = k * 2
    if i % 4 == 1:
        return
    out[i][13] = 7


def test_control_flow_matches_python():
    for step in (2, 3):
        out = pk.View([N, K], pk.int64)
        pk.parallel_for(N, control, step=step, out=out)
        expect = np.array([py_control(i, step) for i in range(N)])
        np.testing.assert_array_equal(np.asarray(out), expect)


@pk.workunit
def loop_var_rebound(i, out):
    # Rebinding the loop variable in the body does not derail the loop (Python).
    total = 0
    for j in range(5):
        total += j
        j = 100
        total += j
    out[i] = total


def test_loop_variable_rebinding_does_not_change_iteration():
    out = pk.View([3], pk.int64)
    pk.parallel_for(3, loop_var_rebound, out=out)
    total = 0
    for j in range(5):
        total += j
        j = 100
        total += j
    assert list(np.asarray(out)) == [total] * 3


@pk.workunit
def early_return_reduce(i, acc, n):
    if i >= n:
        return
    acc += i


def test_early_return_in_reduction():
    assert pk.parallel_reduce(100, early_return_reduce, n=10) == sum(range(10))


@pk.workunit
def index_rebound(i, n, out):
    i -= 1  # Python lets a parameter be reassigned; the kernel then works on the copy
    if i < 0:
        i = n - 1
    out[i] = 10.0 * i


@pk.workunit
def index_after(i, out, src):
    out[i] = src[i] + 1.0


def test_the_work_index_may_be_reassigned_like_any_parameter():
    out, after = pk.View([6]), pk.View([6])
    pk.parallel_for(6, index_rebound, n=6, out=out)
    pk.parallel_for(6, index_after, out=after, src=out)  # reads out off the index: not fused wrongly
    want = np.zeros(6)
    for i in range(6):
        j = i - 1 if i >= 1 else 5
        want[j] = 10.0 * j
    np.testing.assert_array_equal(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(after), want + 1.0)

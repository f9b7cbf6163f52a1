"""Arithmetic with Python semantics: floor division and modulo toward -inf,
true division of ints, `**`, int() truncation, chained comparisons, and/or,
conditional expressions, bitwise operators and every augmented assignment."""
import math

import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels

A_INT = [7, -7, 7, -7, 0, 13, -13, 1, -1, 100, -100, 5]
B_INT = [2, 2, -2, -2, 3, 5, 5, 7, -7, 9, 9, -3]


@pk.workunit
def int_ops(i, a, b, out):
    x = a[i]
    y = b[i]
    out[i][0] = x // y
    out[i][1] = x % y
    out[i][2] = x + y * 3 - 1
    out[i][3] = x ** 2
    out[i][4] = y ** 3
    out[i][5] = -x
    out[i][6] = +x
    out[i][7] = abs(x)
    out[i][8] = x & 0xF
    out[i][9] = x | 6
    out[i][10] = x ^ y
    out[i][11] = x << 2
    out[i][12] = x >> 1
    out[i][13] = ~x
    out[i][14] = 1 if x < y < 10 else 0
    out[i][15] = 1 if x <= y != 3 else 0
    out[i][16] = 1 if 0 <= x < 10 and y > 0 or x == -100 else 0
    out[i][17] = 1 if not x > y else 0
    out[i][18] = x if x > y else y
    out[i][19] = x and y
    out[i][20] = x or y
    out[i][21] = int(x / y)
    out[i][22] = (x * 3) // -4
    out[i][23] = -x % 4
    out[i][24] = 2 ** 10
    out[i][25] = True + True
    out[i][26] = 7 // 2 + -7 // 2 + 7 % -3
    out[i][27] = 1 if x == y or x != -x else 0


def py_int_ops(x, y):
    return [
        x // y, x % y, x + y * 3 - 1, x ** 2, y ** 3, -x, +x, abs(x), x & 0xF, x | 6,
        x ^ y, x << 2, x >> 1, ~x,
        1 if x < y < 10 else 0,
        1 if x <= y != 3 else 0,
        1 if 0 <= x < 10 and y > 0 or x == -100 else 0,
        1 if not x > y else 0,
        x if x > y else y,
        x and y, x or y, int(x / y), (x * 3) // -4, -x % 4, 2 ** 10, True + True,
        7 // 2 + -7 // 2 + 7 % -3,
        1 if x == y or x != -x else 0,
    ]


def test_integer_operators_follow_python():
    n = len(A_INT)
    a = pk.array(np.array(A_INT, dtype=np.int64))
    b = pk.array(np.array(B_INT, dtype=np.int64))
    out = pk.View([n, 28], pk.int64)
    pk.parallel_for(n, int_ops, a=a, b=b, out=out)
    expect = np.array([py_int_ops(x, y) for x, y in zip(A_INT, B_INT)], dtype=np.int64)
    np.testing.assert_array_equal(np.asarray(out), expect)


# 1.0 // 0.1 is 9.0 in Python (floor(1.0 / 0.1) would be 10.0); -0.0 // 2.0 is -0.0
A_F = [7.5, -7.5, 7.5, -7.5, 0.25, 3.0, -3.0, 1e-3, 2.0, -0.5, 1.0, -0.0]
B_F = [2.0, 2.0, -2.0, -2.0, 0.1, 0.7, 0.7, 7.0, 0.5, 3.0, 0.1, 2.0]


@pk.workunit
def float_ops(i, a, b, ia, ib, out):
    x = a[i]
    y = b[i]
    out[i, 0] = x // y
    out[i, 1] = x % y
    out[i, 2] = x / y
    out[i, 3] = abs(x) ** y
    out[i, 4] = x ** 2
    out[i, 5] = int(x)
    out[i, 6] = int(-x)
    out[i, 7] = ia[i] / ib[i]
    out[i, 8] = 7 / 2
    out[i, 9] = ia[i] ** 0.5 if ia[i] >= 0 else -1.0
    out[i, 10] = 2.0 ** ib[i]
    out[i, 11] = float(ia[i]) / 4
    out[i, 12] = x - y * 0.5 + 1
    out[i, 13] = -x // 1.5
    out[i, 14] = 1.0 if 0.0 < x < 5.0 else 0.0
    out[i, 15] = x if x > y else y
    out[i, 16] = max(x, y, 1.25)
    out[i, 17] = min(x, y)
    out[i, 18] = max(ia[i], ib[i])
    out[i, 19] = min(ia[i], 3)
    out[i, 20] = bool(x) + bool(0.0)
    out[i, 21] = float(7) // 2
    out[i, 22] = -7.5 % 2


def py_float_ops(x, y, p, q):
    return [
        x // y, x % y, x / y, abs(x) ** y, x ** 2, int(x), int(-x), p / q, 7 / 2,
        p ** 0.5 if p >= 0 else -1.0, 2.0 ** q, float(p) / 4, x - y * 0.5 + 1, -x // 1.5,
        1.0 if 0.0 < x < 5.0 else 0.0, x if x > y else y, max(x, y, 1.25), min(x, y),
        max(p, q), min(p, 3), bool(x) + bool(0.0), float(7) // 2, -7.5 % 2,
    ]


def test_float_operators_follow_python():
    n = len(A_F)
    a = pk.array(np.array(A_F))
    b = pk.array(np.array(B_F))
    ia = pk.array(np.array(A_INT[:n], dtype=np.int32))
    ib = pk.array(np.array(B_INT[:n], dtype=np.int32))
    out = pk.View([n, 23], pk.double)
    pk.parallel_for(n, float_ops, a=a, b=b, ia=ia, ib=ib, out=out)
    expect = np.array([py_float_ops(x, y, p, q)
                       for x, y, p, q in zip(A_F, B_F, A_INT, B_INT)])
    np.testing.assert_allclose(np.asarray(out), expect, rtol=1e-14, atol=0)
    # floor division and modulo are exact, signs of zero included
    got = np.asarray(out)
    assert got[:, 0].tolist() == [x // y for x, y in zip(A_F, B_F)]
    assert [math.copysign(1, g) for g in got[:, 0]] == [math.copysign(1, x // y) for x, y in zip(A_F, B_F)]
    assert got[:, 1].tolist() == [x % y for x, y in zip(A_F, B_F)]


@pk.workunit
def aug_ops(i, a, b, out, fout):
    x = a[i]
    y = b[i]
    x += 3
    out[i][0] = x
    x -= y
    out[i][1] = x
    x *= 2
    out[i][2] = x
    x //= y
    out[i][3] = x
    x %= 7
    out[i][4] = x
    x **= 2
    out[i][5] = x
    x &= 0x1F
    out[i][6] = x
    x |= 64
    out[i][7] = x
    x ^= y
    out[i][8] = x
    x <<= 3
    out[i][9] = x
    x >>= 2
    out[i][10] = x
    # int local divided in place becomes a float, as in Python
    z = a[i]
    z /= 4
    fout[i][0] = z
    w = 1.5
    w += a[i]
    w -= 0.25
    w *= y
    w /= 2
    w //= 0.5
    w %= 3.5
    w **= 2
    fout[i][1] = w
    # view elements as targets
    out[i][11] = a[i]
    out[i][11] += 5
    out[i][11] -= 1
    out[i][11] *= 3
    out[i][11] //= 2
    out[i][11] %= 11
    out[i][11] **= 2
    out[i][11] &= 0xFF
    out[i][11] |= 1
    out[i][11] ^= 2
    out[i][11] <<= 1
    out[i][11] >>= 1
    fout[i][2] = a[i]
    fout[i][2] /= 8
    fout[i][2] += 0.5


def py_aug_ops(x0, y):
    res, fres = [], []
    x = x0
    x += 3; res.append(x)
    x -= y; res.append(x)
    x *= 2; res.append(x)
    x //= y; res.append(x)
    x %= 7; res.append(x)
    x **= 2; res.append(x)
    x &= 0x1F; res.append(x)
    x |= 64; res.append(x)
    x ^= y; res.append(x)
    x <<= 3; res.append(x)
    x >>= 2; res.append(x)
    z = x0
    z /= 4
    fres.append(z)
    w = 1.5
    w += x0; w -= 0.25; w *= y; w /= 2; w //= 0.5; w %= 3.5; w **= 2
    fres.append(w)
    e = x0
    e += 5; e -= 1; e *= 3; e //= 2; e %= 11; e **= 2; e &= 0xFF; e |= 1; e ^= 2; e <<= 1; e >>= 1
    res.append(e)
    f = float(x0)
    f /= 8; f += 0.5
    fres.append(f)
    return res, fres


def test_augmented_assignment_of_every_operator():
    n = len(A_INT)
    a = pk.array(np.array(A_INT, dtype=np.int64))
    b = pk.array(np.array(B_INT, dtype=np.int64))
    out = pk.View([n, 12], pk.int64)
    fout = pk.View([n, 3], pk.double)
    pk.parallel_for(n, aug_ops, a=a, b=b, out=out, fout=fout)
    ref = [py_aug_ops(x, y) for x, y in zip(A_INT, B_INT)]
    np.testing.assert_array_equal(np.asarray(out), np.array([r[0] for r in ref]))
    np.testing.assert_allclose(np.asarray(fout), np.array([r[1] for r in ref]), rtol=1e-14)


def test_reference_values_are_python_semantics():
    # Guard against a reference written with C semantics by mistake.
    assert -7 // 2 == -4 and -7 % 2 == 1 and 7 % -2 == -1
    assert math.isclose(-7.5 % 2, 0.5) and -7.5 // 2 == -4.0
    assert int(-3.7) == -3

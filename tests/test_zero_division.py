"""Integer `//` and `%` by zero in a kernel raise ZeroDivisionError naming the
workunit, the expression and its file:line, eagerly and fused, where C++
would kill the interpreter with SIGFPE; the runtime goes on working after it.
Float division keeps IEEE results (NumPy's), and nonzero divisors keep
Python's floor semantics (checked against NumPy)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykokkos as pk


@pk.workunit
def ifloordiv(i, x, y, d):
    y[i] = x[i] // d


@pk.workunit
def imod_sum(i, acc, x, d):
    acc += x[i] % d


@pk.workunit
def fdiv(i, x, y, d):
    y[i] = x[i] / d + x[i] // d


def test_floor_division_and_modulo_follow_python_for_nonzero_divisors():
    x = pk.array(np.arange(-7, 8, dtype=np.int64))
    for d in (3, -3, 1):
        y = pk.View([15], pk.int64)
        pk.parallel_for(15, ifloordiv, x=x, y=y, d=d)
        np.testing.assert_array_equal(np.asarray(y), np.arange(-7, 8) // d)
        assert pk.parallel_reduce(15, imod_sum, x=x, d=d) == int((np.arange(-7, 8) % d).sum())


def test_integer_division_by_zero_raises_zero_division_error():
    x = pk.array(np.arange(10, dtype=np.int64))
    y = pk.View([10], pk.int64)
    here = os.path.basename(__file__)
    with pytest.raises(ZeroDivisionError, match=rf"ifloordiv.*by zero.*{here}:\d+: x\[i\] // d"):
        pk.parallel_for(10, ifloordiv, x=x, y=y, d=0)
        np.asarray(y)  # a lazy launch fails where its result is demanded
    with pytest.raises(ZeroDivisionError, match=r"imod_sum.*x\[i\] % d"):
        float(pk.parallel_reduce(10, imod_sum, x=x, d=0))
    # Nothing is left behind: the next launches run and are right.
    pk.parallel_for(10, ifloordiv, x=x, y=y, d=2)
    np.testing.assert_array_equal(np.asarray(y), np.arange(10) // 2)
    assert pk.parallel_reduce(10, imod_sum, x=x, d=4) == int((np.arange(10) % 4).sum())


def test_float_division_by_zero_keeps_ieee_results():
    x = pk.array(np.array([-2.0, 0.0, 3.0]))
    y = pk.View([3], pk.double)
    pk.parallel_for(3, fdiv, x=x, y=y, d=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.array([-2.0, 0.0, 3.0]) / 0.0 + np.array([-2.0, 0.0, 3.0]) // 0.0
    np.testing.assert_array_equal(np.asarray(y), want)


NUMBA = textwrap.dedent("""
    import numpy as np
    from {module} import njit

    @njit
    def quotients(x, d):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = x[i] // d
        return out

    print(quotients(np.arange(6), 2).tolist())
    try:
        quotients(np.arange(6), 0)
        print("no error")
    except ZeroDivisionError:
        print("ZeroDivisionError")
""")


def numba_and_ours(tmp_path, template: str) -> list[str]:
    """The program's output under real Numba, then under pykokkos.numba."""
    pytest.importorskip("numba", reason="the reference is real Numba")
    outs = []
    for module in ("numba", "pykokkos.numba"):
        prog = tmp_path / f"prog_{module.replace('.', '_')}.py"
        prog.write_text(template.format(module=module))
        r = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    return outs


@pytest.mark.eager_only
def test_pykokkos_numba_raises_where_numba_does(tmp_path):
    outs = numba_and_ours(tmp_path, NUMBA)
    assert outs[0] == outs[1] == "[0, 0, 1, 1, 2, 2]\nZeroDivisionError\n"


@pytest.mark.device_only
def test_cuda_kernels_with_checked_divisions_go_through_nvrtc():
    """A kernel that divides by a launch scalar keeps NVRTC's fast build
    (device_checked.hpp), and its division by zero still raises."""
    from pathlib import Path

    test_integer_division_by_zero_raises_zero_division_error()
    kernels = Path(pk.config()["cache"]) / "kernels"
    assert any("pk_zdiv_record" in p.read_text() for p in kernels.glob("*.cu") if p.with_suffix(".cubin").exists())


NUMBA_PARALLEL = textwrap.dedent("""
    import numpy as np
    from {module} import njit, prange

    @njit(parallel=True)   # Numba's error_model is then "numpy": by zero, 0 (ints) and IEEE (floats)
    def parts(x, d, fx, fd):
        out = np.empty_like(x)
        fo = np.empty_like(fx)
        for i in prange(x.shape[0]):
            out[i] = x[i] // d + x[i] % d
            q = x[i]
            q //= d
            out[i] += q
            fo[i] = fx[i] // fd + fx[i] % fd
        return out, fo

    for d, fd in ((0, 0.0), (2, 0.5), (-3, -0.25)):
        print([a.tolist() for a in parts(np.arange(-3, 4), d, np.linspace(-1, 1, 7), fd)])
""")


@pytest.mark.eager_only
def test_pykokkos_numba_parallel_divides_by_zero_as_numba_does(tmp_path):
    outs = numba_and_ours(tmp_path, NUMBA_PARALLEL)
    assert outs[0] == outs[1]
    assert outs[0].splitlines()[0].startswith("[[0, 0, 0, 0, 0, 0, 0], [nan")

"""PK_BOUNDS_CHECK=1: a kernel indexing outside a View raises IndexError naming
the workunit, the view and the source line, and touches no memory outside
(without it, such a write corrupts the heap). Child processes: the switch is
read once per process."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.eager_only  # each child runs eagerly and lazily itself

PROGRAM = """
import numpy as np, pykokkos as pk

# Guarded, so the launch-time extent check (test_extent_checks.py) cannot
# tell before the launch: the kernel's own checks must catch these.
@pk.workunit
def write_past(i, v, x):
    if i >= 0:
        v[i] = x

@pk.workunit
def read_shifted(i, acc, v):
    if i >= 0:
        acc += v[i + 1]

import os  # the suite's space (make test-gpu: device kernels record on the device)
space = {"cuda": pk.Cuda, "serial": pk.Serial}.get(os.environ.get("PK_TEST_SPACE", ""))
if space is not None:
    pk.set_default_space(space)

for lazy in (False, True):
    pk._native.set_lazy(lazy)
    whole = pk.array(np.zeros(12))
    part = whole[1:11]                    # 10 elements inside a bigger allocation
    try:
        pk.parallel_for(11, write_past, v=part, x=7.0)   # one past the subview
        pk.flush()
        print("no error")
    except IndexError as e:
        print("IndexError:", e)
    print("outside untouched:", np.asarray(whole)[0] == 0 and np.asarray(whole)[11] == 0,
          "inside written:", (np.asarray(whole)[1:11] == 7).all())
    v = pk.array(np.arange(5.0))
    try:
        print(float(pk.parallel_reduce(5, read_shifted, v=v)))
    except IndexError as e:
        print("IndexError:", e)
    pk._native.set_lazy(False)
if space is pk.Cuda:  # the checked kernels went through NVRTC (device_bounds.hpp), not nvcc
    from pathlib import Path
    kernels = Path(pk.config()["cache"]) / "kernels"
    print("checked through NVRTC:", any("pk_oob_record" in p.read_text() for p in kernels.glob("*.cu")
                                        if p.with_suffix(".cubin").exists()))
"""


def test_an_index_outside_a_view_is_an_index_error(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = {**os.environ, "PK_BOUNDS_CHECK": "1"}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    if os.environ.get("PK_TEST_SPACE") == "cuda" and os.environ.get("PK_NVRTC", "1") != "0":
        assert out.pop() == "checked through NVRTC: True", r.stdout
    assert len(out) == 6, r.stdout
    for mode in (0, 3):  # eager, then lazy
        write, fence, read = out[mode:mode + 3]
        assert write.startswith("IndexError:") and "write_past" in write, write
        assert "index 10 is out of bounds for dimension 0 of view 'v' with size 10" in write, write
        assert f"{script}:9" in write, write
        assert fence == "outside untouched: True inside written: True", fence
        assert read.startswith("IndexError:") and "index 5" in read and f"{script}:14" in read, read


def test_the_debug_space_checks_bounds_without_the_switch():
    """PyKokkos' Debug space: Serial with checked view accesses, PK_BOUNDS_CHECK or not."""
    import numpy as np

    import pykokkos as pk

    @pk.workunit
    def write_past_debug(i, v, x):
        if i >= 0:  # guarded: the launch-time extent check leaves it to the kernel's
            v[i] = x

    for lazy in (False, True):
        pk._native.set_lazy(lazy)
        try:
            whole = pk.array(np.zeros(12))
            part = whole[1:11]
            policy = pk.RangePolicy(pk.ExecutionSpace.Debug, 0, 11)
            with pytest.raises(IndexError, match="index 10 is out of bounds .* view 'v' with size 10"):
                pk.parallel_for(policy, write_past_debug, v=part, x=7.0)
                pk.flush()
            assert np.asarray(whole)[0] == 0 and np.asarray(whole)[11] == 0
            assert (np.asarray(whole)[1:11] == 7).all()
            # Inside the bounds the Debug space computes what the others do.
            pk.parallel_for(pk.RangePolicy(pk.ExecutionSpace.Debug, 0, 10), write_past_debug, v=part, x=2.0)
            assert (np.asarray(part) == 2).all()
        finally:
            pk._native.set_lazy(False)

"""Host kernels are built for this machine's CPU (PK_MARCH, default native), yet give
NumPy's results bit for bit: no product is contracted into a fused multiply-add."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import pykokkos as pk

pytestmark = [pytest.mark.host_only]


@pk.workunit
def host_target_axpby(i, a, x, y, out):
    out[i] = a * x[i] + y[i] * y[i]


def test_products_are_rounded_before_they_are_added():
    # Values whose products are inexact: an FMA would keep the exact product and
    # round once, so some of these sums would differ in the last bit.
    rng = np.random.default_rng(7)
    x = rng.random(4096) * 3.0 + 1.0 / 3.0
    y = rng.random(4096) - 0.5
    out = np.zeros(4096)
    a = 1.0 / 7.0
    pk.parallel_for(4096, host_target_axpby, a=a, x=x, y=y, out=out)
    pk.fence()
    want = a * x + y * y
    assert np.array_equal(out, want), int(np.sum(out != want))


def _identity(env_extra: dict) -> str:
    import os

    env = dict(os.environ, **env_extra)
    code = "import pykokkos as pk, json; print(json.dumps(pk.config()['identity']))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_target_cpu_is_part_of_the_cache_key():
    # A kernel built for this CPU must not be found by a process building for
    # another target (a cache shared by different machines, or PK_MARCH=none).
    native = _identity({"PK_MARCH": "native"})
    generic = _identity({"PK_MARCH": "none"})
    other = _identity({"PK_MARCH": "x86-64-v2"})
    assert len({native, generic, other}) == 3
    assert _identity({}) == native

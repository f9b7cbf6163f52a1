"""Host kernels are built for this machine's CPU (PK_MARCH, default native), yet give
NumPy's results bit for bit: no product is contracted into a fused multiply-add."""
from __future__ import annotations

import json
import os
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


def _config(env_extra: dict) -> dict:
    env = dict(os.environ, **env_extra)
    code = "import pykokkos as pk, json; print(json.dumps(pk.config()))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _identity(env_extra: dict) -> str:
    return _config(env_extra)["identity"]


def test_the_target_cpu_is_part_of_the_cache_key():
    # A kernel built for this CPU must not be found by a process building for
    # another target (a cache shared by different machines, or PK_MARCH=none).
    native = _identity({"PK_MARCH": "native"})
    generic = _identity({"PK_MARCH": "none"})
    other = _identity({"PK_MARCH": "x86-64-v2"})
    assert len({native, generic, other}) == 3
    assert _identity({}) == native


def test_config_reports_the_host_target():
    # What another build (bench_examinimd's C++) takes to round as the kernels do.
    assert _config({"PK_MARCH": "none"})["host_target"] == "-ffp-contract=off"
    native = _config({"PK_MARCH": "native"})["host_target"].split()
    assert "-ffp-contract=off" in native and "-march=native" in native
    if "x86_64" in os.uname().machine:
        assert "-mno-fma" in native and "-mno-avx512f" in native


@pk.workunit
def host_target_product_plus(i, j, z, w, c: pk.complex128, out):
    out[i][j] = z[i][j] * w[i][j] + c


def test_complex_products_are_rounded_too():
    # g++ vectorizes Kokkos::complex's product, for a CPU with FMA, as
    # vfmaddsub even under -ffp-contract=off: the target must not offer FMA.
    rng = np.random.default_rng(11)
    z = (rng.random((64, 64)) - 0.5) + 1j * (rng.random((64, 64)) - 0.5)
    w = (rng.random((64, 64)) - 0.5) + 1j * (rng.random((64, 64)) - 0.5)
    out = np.zeros((64, 64), complex)
    c = complex(-0.745429, 0.11308)
    pk.parallel_for(pk.MDRangePolicy([0, 0], [64, 64]), host_target_product_plus, z=z, w=w, c=c, out=out)
    pk.fence()
    re = (z.real * w.real - z.imag * w.imag) + c.real
    im = (z.real * w.imag + z.imag * w.real) + c.imag
    assert np.array_equal(out.real, re), int(np.sum(out.real != re))
    assert np.array_equal(out.imag, im), int(np.sum(out.imag != im))

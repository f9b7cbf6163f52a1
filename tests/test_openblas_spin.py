"""`import pykokkos` shortens the spin of NumPy's OpenBLAS threads (see
pykokkos/_openblas.py) only where it can take effect and nobody chose a value:
each case runs in a fresh interpreter, since OpenBLAS reads the setting once."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PRINT = "import os; print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"


def _fresh(code: str, **env: str) -> str:
    e = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.parametrize(
    "code, env, expected",
    [
        # Imported before NumPy: set, and NumPy (loaded through pykokkos) saw it.
        ("import pykokkos, numpy; " + PRINT, {}, "22"),
        # The user's own value wins.
        ("import pykokkos; " + PRINT, {"OPENBLAS_THREAD_TIMEOUT": "9"}, "9"),
        # NumPy came first: OpenBLAS already read its settings, so none is set
        # that would claim an effect it cannot have.
        ("import numpy, pykokkos; " + PRINT, {}, "None"),
    ],
)
def test_openblas_spin_set_only_where_it_acts(code, env, expected):
    assert _fresh(code, **env) == expected

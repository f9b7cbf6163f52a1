"""`python -m pykokkos migrate`: the migrated program is plain PyKokkos (no
Numba left) and prints what the Numba program printed."""
import os
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.eager_only  # child processes with their own environment

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "numba" / "lennard_jones.py"


def run(*args, cwd=None):
    env = dict(os.environ)
    env.pop("PK_FUSE", None)
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_migrated_program_gives_the_same_output(tmp_path):
    out = tmp_path / "lj_pk.py"
    run("-m", "pykokkos", "migrate", str(EXAMPLE), "-o", str(out), "--args", "60")
    text = out.read_text()
    leftovers = [ln for ln in text.splitlines() if ln.startswith(("import numba", "from numba", "import pykokkos.numba",
                                                                 "@njit", "@numba")) or "prange(" in ln]
    assert leftovers == [], leftovers
    assert "@pk.workunit" in text and "def potential(cluster):" in text and "@pk.function" in text
    compile(text, str(out), "exec")
    assert run(str(out), "60") == run(str(EXAMPLE), "60")

"""pk.printf goes to C's stdout: run a program in a subprocess and read it."""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels

HERE = os.path.dirname(os.path.abspath(__file__))


def test_printf_output():
    r = subprocess.run([sys.executable, os.path.join(HERE, "printf_prog.py")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "item 0 of 3: x=0.000 v=0.5",
        "100% done   2.2|7   |ff|A",
        "no conversions",
        "item 1 of 3: x=0.500 v=1.5",
        "item 2 of 3: x=1.000 v=2.5",
    ]

"""Big host Views ask for transparent huge pages, as NumPy's arrays do
(memory/alloc.rs). The kernel marks an advised range `hg` in /proc/self/smaps
whatever THP's system setting, so the advice is checked there, in a fresh
process (in a long one, a View can land in heap memory an earlier NumPy
array already advised) and on the range the runtime advises: the View's
whole 2 MiB pages, which start on a 2 MiB boundary (NumPy advises from a
4 KiB one)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

# The child runs without PK_FUSE: one run, not one per mode.
pytestmark = [pytest.mark.skipif(not os.path.exists("/sys/kernel/mm/transparent_hugepage"),
                                 reason="the kernel has no transparent huge pages (Linux with THP built in)"),
              pytest.mark.eager_only]

CHILD = r"""
import numpy as np
import pykokkos as pk

HUGE = 2 << 20
v = pk.View([1 << 21], pk.double)  # 16 MiB
a = np.asarray(v)
a[:] = 1.0
assert float(a.sum()) == 1 << 21  # the memory itself is ordinary
first = -(-a.ctypes.data // HUGE) * HUGE  # the first whole 2 MiB page
lo = hi = None
for line in open("/proc/self/smaps"):
    head = line.split()[0]
    if "-" in head and ":" not in head:
        lo, hi = (int(x, 16) for x in head.split("-"))
    elif head == "VmFlags:" and lo <= first < hi:
        print(lo == first, "hg" in line.split()[1:])
"""


def test_big_view_advises_its_whole_huge_pages():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True).stdout
    # The mapping holding the View's first whole 2 MiB page starts there (the
    # advice split it off) and is marked for huge pages.
    assert out.split() == ["True", "True"]

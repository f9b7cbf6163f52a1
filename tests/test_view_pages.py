"""Big host Views ask for transparent huge pages, as NumPy's arrays do
(memory/alloc.rs): the kernel marks such a mapping `hg` in /proc/self/smaps,
whatever THP's system setting, so the advice is checked there."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="smaps is Linux's")


def _vm_flags(address: int) -> set[str]:
    """The VmFlags of the mapping that holds `address`."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= address < hi
            elif inside and head == "VmFlags:":
                return set(line.split()[1:])
    raise AssertionError(f"no mapping holds {address:#x}")


def test_big_view_advises_huge_pages():
    big = pk.View([1 << 21], pk.double)  # 16 MiB
    a = np.asarray(big)
    a[:] = 1.0
    assert "hg" in _vm_flags(a.ctypes.data + a.nbytes // 2)
    assert float(a.sum()) == 1 << 21  # the memory itself is ordinary

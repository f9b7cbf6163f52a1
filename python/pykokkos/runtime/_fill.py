"""`View.fill` on the GPU: one kernel over the view. Through the host, a
fill brings the view back from the device (a managed one migrates its pages
there) and sends all of it again before the next kernel reads it; ExaMiniMD
zeroes its forces this way every step. The kernels are decorated at the
first device fill, as BinSort's are."""

from __future__ import annotations

import numpy as np

from ._kernels import workunit
from ._launch import MDRangePolicy, RangePolicy, parallel_for
from ._types import Cuda

# Element types a kernel parameter holds exactly once NumPy has converted the
# value (uint64 past 2^63 does not fit the int64 a Python int becomes).
_KINDS = frozenset("biuf")


@workunit
def _fill1(i, v, x):
    v[i] = x


@workunit
def _fill2(i, j, v, x):
    v[i][j] = x


@workunit
def _fill3(i, j, k, v, x):
    v[i][j][k] = x


def fill(view, value, dtype: np.dtype) -> bool:
    """Fills `view` (on a device) with `value` converted as NumPy's fill
    converts it; False when a kernel cannot (the caller fills on the host)."""
    rank = view.rank()
    if dtype.kind not in _KINDS or dtype == np.uint64 or not 1 <= rank <= 3:
        return False
    one = np.empty(1, dtype)
    one.fill(value)  # NumPy's conversion and its errors
    x = one[0].item()
    shape = [view.extent(d) for d in range(rank)]
    if 0 in shape:
        return True
    kernel = (_fill1, _fill2, _fill3)[rank - 1]
    policy = RangePolicy(Cuda, 0, shape[0]) if rank == 1 else MDRangePolicy([0] * rank, shape, space=Cuda)
    parallel_for("View.fill", policy, kernel, v=view, x=x)
    return True

"""Kokkos' BinSort (`pk.BinSort`, `pk.BinOp1D`, `pk.BinOp3D`): keys put in bins
of equal width, a permutation that orders them by bin, and that permutation
applied to any View. Bins (Kokkos 3.4's bin arithmetic), the permutation and
its application run as kernels in parallel where the keys are
(_binsort_kernels.py: on the GPU nothing but one value comes to the host); within a bin,
entries keep their index order (one of the orders Kokkos' atomic fill may
give, and the same in every run), or are sorted by key when
`sort_within_bins` is set (NumPy on the host)."""

from __future__ import annotations

import numpy as np

from ._types import cuda_default
from ._views import View, array


def _kernels():
    """The sort's kernels, decorated at the first sort rather than at `import
    pykokkos` (a few ms of every program's start)."""
    from . import _binsort_kernels

    return _binsort_kernels


class BinOp:
    """Base of the bin operators: `bins(keys)` gives each entry's bin."""

    def __init__(self, keys, max_bins, min_value, max_value):
        self.keys, self.max_bins, self.min_value, self.max_value = keys, max_bins, min_value, max_value


class BinOp1D(BinOp):
    """`pk.BinOp1D(keys, nbins, min, max)`: bin = int(nbins / (max - min) * (key - min))."""

    def __init__(self, keys, max_bins: int, min_value, max_value):
        super().__init__(keys, int(max_bins), min_value, max_value)

    def bin_count(self) -> int:
        return self.max_bins + 1  # Kokkos keeps one bin past the last for key == max

    def bins(self, keys: np.ndarray) -> np.ndarray:
        mul = 1.0 * self.max_bins / (self.max_value - self.min_value)
        return (mul * (keys.astype(np.float64) - self.min_value)).astype(np.int64)


class BinOp3D(BinOp):
    """`pk.BinOp3D(keys, [nx, ny, nz], [min...], [max...])` on keys of shape (n, 3)."""

    def __init__(self, keys, max_bins, min_value, max_value):
        super().__init__(keys, [int(b) for b in max_bins], list(min_value), list(max_value))

    def bin_count(self) -> int:
        return int(np.prod(self.max_bins))  # unlike BinOp1D, no extra bin per dimension

    def bins(self, keys: np.ndarray) -> np.ndarray:
        k = keys.astype(np.float64)
        per = [
            (1.0 * b / (hi - lo) * (k[:, d] - lo)).astype(np.int64)
            for d, (b, lo, hi) in enumerate(zip(self.max_bins, self.min_value, self.max_value))
        ]
        nb = self.max_bins
        return (per[0] * nb[1] + per[1]) * nb[2] + per[2]


class BinSort:
    """`pk.BinSort(keys, [range_begin, range_end,] bin_op, sort_within_bins=False)`:
    the keys from range_begin to range_end (all of them by default)."""

    def __init__(self, keys, *args, sort_within_bins: bool = False):
        if len(args) >= 3:
            (self.range_begin, self.range_end, bin_op), rest = args[:3], args[3:]
        else:
            (bin_op,), rest = args[:1], args[1:]
            self.range_begin, self.range_end = 0, len(keys)
        self.keys, self.bin_op = keys, bin_op
        self.sort_within_bins = bool(rest[0]) if rest else sort_within_bins
        self._permute = self._count = self._offsets = None

    def create_permute_vector(self) -> None:
        keys = self.keys if isinstance(self.keys, View) else array(np.asarray(self.keys))
        if self.range_begin or self.range_end != keys.shape[0]:
            keys = keys[self.range_begin : self.range_end]
        n = self.bin_op.bin_count()
        if self.sort_within_bins and len(keys.shape) == 1:
            self._numpy_order(np.asarray(keys), n)
            return
        # Bins, then a stable counting sort, as kernels (_binsort_kernels.py).
        bins = _kernels().bins_of(self.bin_op, keys)
        order = _kernels().stable_order(bins, n, self.range_begin, cuda_default())
        if order is None:  # the bins and keys come to the host only to name the bad entry
            self._check(np.asarray(bins), lambda: np.asarray(keys), n)
        self._permute, self._count, self._offsets = order

    def _check(self, bins: np.ndarray, keys, n: int) -> None:
        """Every bin within [0, n); `keys()` gives the keys, to name the first
        entry outside."""
        bad = (bins < 0) | (bins >= n)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"pk.BinSort: key {keys()[i]} (entry {i}) lies outside the bin operator's range "
                f"[{self.bin_op.min_value}, {self.bin_op.max_value}]"
            )

    def _numpy_order(self, keys: np.ndarray, n: int) -> None:
        """`sort_within_bins`: ordered by bin, then by key, then by index."""
        bins = self.bin_op.bins(keys)
        self._check(bins, lambda: keys, n)
        order = np.lexsort((np.arange(len(bins)), keys, bins))
        count = np.bincount(bins, minlength=n)
        # Entries are named by their index in the keys (Kokkos' sort_order).
        self._permute = array((order + self.range_begin).astype(np.int32))
        self._count = array(count.astype(np.int32))
        self._offsets = array((np.cumsum(count) - count).astype(np.int32))

    def _need(self):
        if self._permute is None:
            self.create_permute_vector()

    def sort(self, values, values_range_begin: int = 0, values_range_end: int | None = None) -> None:
        """Reorders entries of `values` (along its first dimension) as Kokkos does:
        entry range_begin + i becomes entry values_range_begin - range_begin +
        permute[i]; only as many entries as the key range move."""
        self._need()
        n = self.range_end - self.range_begin
        if values_range_end is None:
            values_range_end = values_range_begin + n
        if values_range_end - values_range_begin != n:
            raise ValueError("pk.BinSort.sort: the values' range is not as long as the keys' range")
        shift = values_range_begin - self.range_begin
        if isinstance(values, View) and len(values.shape) in (1, 2):
            _kernels().permute(values, self._permute, shift, self.range_begin)
            return
        a = np.asarray(values)
        a[self.range_begin : self.range_begin + n] = a[np.asarray(self._permute) + shift].copy()

    def get_permute_vector(self) -> View:
        self._need()
        return self._permute

    def get_bin_count(self) -> View:
        self._need()
        return self._count

    def get_bin_offsets(self) -> View:
        self._need()
        return self._offsets

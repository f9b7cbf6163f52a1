"""BinSort's permutation as kernels: each entry's bin, then the permutation of
a stable sort by bin, on any space (Kokkos' own BinSort fills bins with
atomics, so its order within a bin changes from run to run). Two ways:
- on the host, a counting sort in chunks: each chunk counts its entries per
  bin, the counts become start offsets in bin-major, chunk-minor order, and
  each chunk places its entries in index order (few launches, no atomics);
  under 32k entries, one chunk: the whole sort in one work item, one launch;
- on the GPU, which needs parallelism over entries: counts by atomics and
  first positions by a scan; then, where no bin holds more than `SMALL`
  entries (ExaMiniMD's cells hold about 20 atoms), each entry takes a slot
  of its bin by an atomic and each bin sorts its few slots by index. A
  fuller bin takes the chunks instead."""

from __future__ import annotations

import numpy as np

from ._kernels import workunit
from ._launch import parallel_for, parallel_reduce, parallel_scan
from ._reducers import MinMax
from ._types import numpy_dtype
from ._views import View

# `pk.atomic_*` in the workunits below names the kernel language's built-ins,
# which the translator knows by the name `pk` (src/lower/names.rs); nothing is
# imported for them (this layer does not import the package above it).

# The most entries a bin sorts by insertion in one thread; past it, chunks.
SMALL = 64


@workunit
def _bins1(i, keys, bins, mul, lo):
    bins[i] = int(mul * (float(keys[i]) - lo))


@workunit
def _bins3(i, keys, bins, mx, my, mz, lx, ly, lz, ny, nz):
    bx = int(mx * (float(keys[i][0]) - lx))
    by = int(my * (float(keys[i][1]) - ly))
    bz = int(mz * (float(keys[i][2]) - lz))
    bins[i] = (bx * ny + by) * nz + bz


@workunit
def _tally(i, bins, counts, bad, nbins):
    b = bins[i]
    if b < 0 or b >= nbins:
        pk.atomic_add(bad, [0], 1)  # noqa: F821
    else:
        pk.atomic_add(counts, [b], 1)  # noqa: F821


@workunit
def _spread(b, acc, counts, bad):
    # min_val < 0: some entry lies outside the bins; max_val: the fullest bin.
    acc.min_val = min(acc.min_val, 0 - bad[0])
    acc.max_val = max(acc.max_val, counts[b])


@workunit
def _firsts(b, acc, last_pass, counts, offsets):
    if last_pass:
        offsets[b] = acc
    acc += counts[b]


@workunit
def _slot(i, bins, offsets, fill, perm, base):
    b = bins[i]
    k = pk.atomic_fetch_add(fill, [b], 1)  # noqa: F821
    perm[offsets[b] + k] = i + base


@workunit
def _order_bin(b, offsets, counts, perm):
    lo = offsets[b]
    for k in range(lo + 1, lo + counts[b]):
        v = perm[k]
        m = k - 1
        while m >= lo and perm[m] > v:
            perm[m + 1] = perm[m]
            m -= 1
        perm[m + 1] = v


@workunit
def _sort_one(k, bins, perm, counts, offsets, fill, bad, n, nbins, base):
    # The stable counting sort in one work item, where one chunk would take
    # every entry anyway: one launch in place of four, and the range check
    # done here rather than by NumPy on the host.
    for i in range(n):
        b = bins[i]
        if b < 0 or b >= nbins:
            bad[0] = 1
            return
        counts[b] += 1
    s = 0
    for b in range(nbins):
        offsets[b] = s
        s += counts[b]
    for i in range(n):
        b = bins[i]
        perm[offsets[b] + fill[b]] = i + base
        fill[b] += 1


@workunit
def _count(c, bins, counts, n, size):
    hi = min((c + 1) * size, n)
    for i in range(c * size, hi):
        counts[c][bins[i]] += 1


@workunit
def _totals(b, counts, total, chunks):
    s = 0
    for c in range(chunks):
        s += counts[c][b]
    total[b] = s


@workunit
def _starts(b, counts, offsets, chunks):
    s = offsets[b]
    for c in range(chunks):
        k = counts[c][b]
        counts[c][b] = s
        s += k


@workunit
def _scatter(c, bins, counts, perm, n, size, base):
    hi = min((c + 1) * size, n)
    for i in range(c * size, hi):
        b = bins[i]
        perm[counts[c][b]] = i + base
        counts[c][b] += 1


def bins_of(op, keys: View) -> View:
    """Each key's bin, computed as `op.bins` computes it (the same doubles)."""
    n = keys.shape[0]
    bins = View([n], np.int64)
    if len(keys.shape) == 1:
        mul = 1.0 * op.max_bins / (op.max_value - op.min_value)
        parallel_for(n, _bins1, keys=keys, bins=bins, mul=mul, lo=float(op.min_value))
    else:
        m = [1.0 * b / (hi - lo) for b, lo, hi in zip(op.max_bins, op.min_value, op.max_value)]
        lo = [float(v) for v in op.min_value]
        parallel_for(
            n,
            _bins3,
            keys=keys,
            bins=bins,
            mx=m[0],
            my=m[1],
            mz=m[2],
            lx=lo[0],
            ly=lo[1],
            lz=lo[2],
            ny=int(op.max_bins[1]),
            nz=int(op.max_bins[2]),
        )
    return bins


def stable_order(bins: View, nbins: int, base: int, device: bool) -> tuple[View, View, View] | None:
    """(permutation + base, count per bin, first position per bin), int32; None
    when some entry's bin lies outside [0, nbins) (the caller names it).
    `device`: the GPU's way (slots by atomics where the bins are small: one
    value comes to the host); otherwise the chunked sort alone, whose few
    launches cost a host run less (benches/bench_binsort.py: 2-3.5x here)."""
    n = bins.shape[0]
    perm = View([n], np.int32)
    if not device:
        if _chunks(n) == 1:
            counts, offsets, fill, bad = View([nbins], np.int32), View([nbins], np.int32), View([nbins], np.int32), View([1], np.int32)
            parallel_for(
                1, _sort_one, bins=bins, perm=perm, counts=counts, offsets=offsets, fill=fill, bad=bad, n=n, nbins=nbins, base=base
            )
            return None if bad[0] else (perm, counts, offsets)
        b = np.asarray(bins)  # host memory: no copy
        return None if ((b < 0) | (b >= nbins)).any() else _chunked(bins, None, perm, nbins, base)
    counts, offsets, bad = View([nbins], np.int32), View([nbins], np.int32), View([1], np.int32)
    parallel_for(n, _tally, bins=bins, counts=counts, bad=bad, nbins=nbins)
    spread = parallel_reduce(nbins, _spread, reducer=MinMax, counts=counts, bad=bad)
    if spread.min_val < 0:
        return None
    parallel_scan(nbins, _firsts, counts=counts, offsets=offsets)
    if spread.max_val > SMALL:
        return _chunked(bins, (counts, offsets), perm, nbins, base)
    fill = View([nbins], np.int32)
    parallel_for(n, _slot, bins=bins, offsets=offsets, fill=fill, perm=perm, base=base)
    parallel_for(nbins, _order_bin, offsets=offsets, counts=counts, perm=perm)
    return perm, counts, offsets


def _chunks(n: int) -> int:
    """How many chunks the host's counting sort of n entries takes (about 16k entries each, at most 64)."""
    return max(1, min(64, n // 16384))


def _chunked(bins: View, known, perm: View, nbins: int, base: int) -> tuple[View, View, View]:
    """The stable counting sort in chunks; `known`: (counts, offsets) if the
    caller has them, else None (the chunks' counts give them, on the host)."""
    n = bins.shape[0]
    chunks = _chunks(n)
    size = -(-n // chunks)
    per_chunk = View([chunks, nbins], np.int32)
    parallel_for(chunks, _count, bins=bins, counts=per_chunk, n=n, size=size)
    if known is None:
        counts, offsets = View([nbins], np.int32), View([nbins], np.int32)
        parallel_for(nbins, _totals, counts=per_chunk, total=counts, chunks=chunks)
        c = np.asarray(counts)
        np.asarray(offsets)[:] = np.cumsum(c) - c
    else:
        counts, offsets = known
    parallel_for(nbins, _starts, counts=per_chunk, offsets=offsets, chunks=chunks)
    parallel_for(chunks, _scatter, bins=bins, counts=per_chunk, perm=perm, n=n, size=size, base=base)
    return perm, counts, offsets


@workunit
def _gather1(i, src, tmp, perm, shift):
    tmp[i] = src[perm[i] + shift]


@workunit
def _gather2(i, src, tmp, perm, shift, m):
    for j in range(m):
        tmp[i][j] = src[perm[i] + shift][j]


@workunit
def _put1(i, tmp, dst, at):
    dst[at + i] = tmp[i]


@workunit
def _put2(i, tmp, dst, at, m):
    for j in range(m):
        dst[at + i][j] = tmp[i][j]


def permute(values: View, perm: View, shift: int, at: int) -> None:
    """values[at + i] = values[perm[i] + shift] for every i, as kernels (through
    a temporary, so entries read are the old ones)."""
    n = perm.shape[0]
    shape = list(values.shape)
    tmp = View([n] + shape[1:], numpy_dtype(values._dtype_code).type)
    if len(shape) == 1:
        parallel_for(n, _gather1, src=values, tmp=tmp, perm=perm, shift=shift)
        parallel_for(n, _put1, tmp=tmp, dst=values, at=at)
    else:
        parallel_for(n, _gather2, src=values, tmp=tmp, perm=perm, shift=shift, m=shape[1])
        parallel_for(n, _put2, tmp=tmp, dst=values, at=at, m=shape[1])

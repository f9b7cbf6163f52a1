"""The NVRTC form of CUDA kernels (src/codegen/device.rs): the Kokkos functor
compiled against device_shim.hpp instead of Kokkos' headers, dispatched by
kernels of our own.

On any machine: the form is built for the shapes it covers (fors over ranges
and multi-dimensional ranges, sums, the scalar built-in reducers) and refused
for the rest, and its C++ computes what NumPy does when g++ runs it
as one CUDA thread (the CUDA names it uses emulated, everything else exactly as
NVRTC gets it: the shim's views, strides, math and Python arithmetic).
On the GPU machine: new kernels go through NVRTC (a cubin lands in the cache),
and give NumPy's results and, for sums, the same bits as the nvcc path.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import pykokkos as pk
from pykokkos import _native
from pykokkos.runtime import _kernels

CUDA = 2  # the Cuda space's code in a Policy


@pk.workunit
def mix(i: int, a: float, x: pk.View1D[pk.double], m: pk.View2D[pk.double], out: pk.View1D[pk.double]):
    out[i] = a * x[i] + pk.sqrt(abs(m[i, 1])) + (i // 3) % 5 - x[i] // 0.25 + m[i, 0] % 1.5


@pk.workunit
def total(i: int, acc: pk.Acc[pk.double], x: pk.View1D[pk.double], m: pk.View2D[pk.double]):
    acc += x[i] * m[i, 2] + pk.exp(-x[i])


@pk.workunit
def with_printf(i: int, x: pk.View1D[pk.double]):
    pk.printf("%f\n", x[i])


@pk.workunit
def running_max(i: int, acc: pk.Acc[pk.double], x: pk.View1D[pk.double]):
    acc += x[i] if acc < 10.0 else 0.0


@pk.workunit
def grid2(i: int, j: int, a: float, m: pk.View2D[pk.double], out: pk.View2D[pk.double]):
    out[i, j] = a * m[i, j] + i - 2 * j


@pk.workunit
def cube(i: int, j: int, k: int, c: pk.View3D[pk.int64]):
    c[i, j, k] = i * 100 + j * 10 + k


@pk.workunit
def lowest(i: int, acc: pk.Acc[pk.double], x: pk.View1D[pk.double]):
    if x[i] < acc:
        acc = x[i]


@pk.workunit
def highest2(i: int, j: int, acc: pk.Acc[pk.double], m: pk.View2D[pk.double]):
    acc = max(acc, m[i, j])


@pk.workunit
def product(i: int, acc: pk.Acc[pk.int64], k: pk.View1D[pk.int64]):
    acc *= k[i]


@pk.workunit
def common_bits(i: int, acc: pk.Acc[pk.int64], k: pk.View1D[pk.int64]):
    acc &= k[i]


@pk.workunit
def any_set(i: int, acc: pk.Acc[pk.bool], flags: pk.View1D[pk.uint8]):
    acc = acc or flags[i]


@pk.workunit
def minloc(i: int, acc: pk.Acc[pk.double], x: pk.View1D[pk.double]):
    if x[i] < acc.val:
        acc.val = x[i]
        acc.loc = i


@pk.workunit
def maxloc(i: int, acc: pk.Acc[pk.float32], x: pk.View1D[pk.float32]):
    if x[i] > acc.val:
        acc.val = x[i]
        acc.loc = i


@pk.workunit
def minmax(i: int, acc: pk.Acc[pk.int32], k: pk.View1D[pk.int32]):
    acc.min_val = min(acc.min_val, k[i])
    acc.max_val = max(acc.max_val, k[i])


@pk.workunit
def minmaxloc(i: int, acc: pk.Acc[pk.double], x: pk.View1D[pk.double]):
    if x[i] < acc.min_val:
        acc.min_val = x[i]
        acc.min_loc = i
    if x[i] > acc.max_val:
        acc.max_val = x[i]
        acc.max_loc = i


@pk.workunit
def tallies(i: int, x: pk.View1D[pk.int64], h8: pk.View1D[pk.int8], h16: pk.View1D[pk.uint16],
            h32: pk.View1D[pk.int32], h64: pk.View1D[pk.int64], f: pk.View1D[pk.double], g: pk.View1D[pk.float],
            c: pk.View1D[pk.int64], bits: pk.View1D[pk.uint8], firsts: pk.View1D[pk.int64]):
    b: int = x[i] % 4
    pk.atomic_add(h8, [b], 1)
    pk.atomic_sub(h16, [b], 3)
    pk.atomic_max(h32, [b], x[i])
    pk.atomic_min(h64, [b], x[i])
    pk.atomic_add(f, [b], 0.25 * x[i])
    pk.atomic_max(g, [b], 0.5 * x[i])
    pk.atomic_increment(c, [4])
    pk.atomic_compare_exchange(c, [0], i - 1, i)
    bits[b] |= x[i] % 7
    firsts[i] = pk.atomic_fetch_add(c, [1], x[i])


@pk.workunit
def team_rows(m: pk.TeamMember, acc: pk.Acc[pk.double], x: pk.View2D[pk.double], out: pk.View1D[pk.double]):
    j: int = m.league_rank()

    def row(k: int, a: pk.Acc[pk.double]):
        a += x[j, k] * x[j, k]
    s: float = pk.parallel_reduce(pk.TeamThreadRange(m, x.extent(1)), row)
    tmp: pk.ScratchView1D[pk.double] = pk.ScratchView1D(m.team_scratch(0), 4)

    def put(k: int):
        tmp[k] = s + k
    pk.parallel_for(pk.ThreadVectorRange(m, 4), put)
    m.team_barrier()

    def one():
        out[j] = tmp[3] + m.team_size() + 10 * m.league_size()
    pk.single(pk.PerTeam(m), one)
    acc += s


@pk.workunit
def prefix(i: int, acc: pk.Acc[pk.double], last: bool, x: pk.View1D[pk.double], y: pk.View1D[pk.double]):
    acc += x[i]
    if last:
        y[i] = acc


@pk.workunit
def offsets(i: int, acc: pk.Acc[pk.int64], last: bool, k: pk.View1D[pk.int64], y: pk.View1D[pk.int64]):
    if last:
        y[i] = acc
    if k[i] > 2:
        acc += k[i] * 2
    else:
        acc -= 1


@pk.workunit
def doubling(i: int, acc: pk.Acc[pk.int64], last: bool, y: pk.View1D[pk.int64]):
    acc += acc + 1
    if last:
        y[i] = acc


@pk.workunit
def team_l1(m: pk.TeamMember, acc: pk.Acc[pk.double], x: pk.View2D[pk.double], out: pk.View1D[pk.double]):
    j: int = m.league_rank()
    big: pk.ScratchView1D[pk.double] = pk.ScratchView1D(m.team_scratch(1), x.extent(1))
    small: pk.ScratchView1D[pk.double] = pk.ScratchView1D(m.team_scratch(0), 1)

    def fill(k: int):
        big[k] = 2.0 * x[j, k]
    pk.parallel_for(pk.TeamThreadRange(m, x.extent(1)), fill)
    m.team_barrier()

    def add(k: int, a: pk.Acc[pk.double]):
        a += big[k]
    s: float = pk.parallel_reduce(pk.TeamThreadRange(m, x.extent(1)), add)
    if m.team_rank() == 0:
        small[0] = s
        out[j] = small[0] + big[x.extent(1) - 1]
        acc += s


@pk.workunit
def team_scan(m: pk.TeamMember, x: pk.View1D[pk.double]):
    pk.inclusive_scan(m, x)


@pk.workunit
def cmaths(i: int, c: complex, out: pk.View2D[pk.complex128], z: pk.View1D[pk.complex128],
           w: pk.View1D[pk.complex64], o32: pk.View1D[pk.complex64]):
    out[i, 0] = pk.sqrt(z[i]) + pk.exp(z[i]) * c - pk.log(z[i]) / w[i]
    out[i, 1] = pk.sin(z[i]) + pk.cos(z[i]) + pk.tan(z[i])
    out[i, 2] = pk.sinh(z[i]) - pk.cosh(z[i]) + pk.tanh(z[i])
    out[i, 3] = pk.asin(z[i]) + pk.acos(z[i]) + pk.atan(z[i])
    out[i, 4] = pk.asinh(z[i]) + pk.acosh(z[i]) + pk.atanh(z[i])
    out[i, 5] = z[i] ** w[i] + pk.log10(z[i]) + abs(z[i]) + np.conj(z[i]) * 2
    out[i, 6] = -z[i] / (z[i].imag + 1j) if z[i] != w[i] else z[i] * 0.5
    o32[i] = w[i] * w[i] - w[i] / 3 + w[i].real


@pk.workunit
def cdot(i: int, acc: pk.Acc[pk.complex128], z: pk.View1D[pk.complex128], w: pk.View1D[pk.complex64]):
    acc += z[i] * np.conj(w[i])


@pk.workunit
def team_cnorms(m: pk.TeamMember, acc: pk.Acc[pk.complex128], z: pk.View2D[pk.complex128]):
    j: int = m.league_rank()

    def row(k: int, a: pk.Acc[pk.complex128]):
        a += z[j, k] * z[j, k]
    s: pk.complex128 = pk.parallel_reduce(pk.TeamThreadRange(m, z.extent(1)), row)
    if m.team_rank() == 0:
        acc += s


@pk.workunit
def cbins(i: int, z: pk.View1D[pk.complex128], s: pk.View1D[pk.complex128], olds: pk.View1D[pk.complex128]):
    b: int = i % 3
    pk.atomic_add(s, [b], z[i])
    pk.atomic_sub(s, [3], z[i])
    pk.atomic_fetch_mul(s, [4], z[i])
    pk.atomic_exchange(s, [5], z[i])
    olds[i] = pk.atomic_fetch_add(s, [6], z[i] * 2)


def nvrtc_source(pattern: int, wu, n, lo=None, **kw) -> str | None:
    # Views of rank 2 and more name their layout where the emulation is given
    # C-ordered arrays: with Cuda the default space, a View made without one
    # is column-major (LayoutLeft), as in PyKokkos.
    hi = list(n) if isinstance(n, (list, tuple)) else [n]
    lo = lo or [0] * len(hi)
    return _native.generate_source(pattern, _native.Policy(lo, hi, CUDA), _kernels._capture(wu), kw, nvrtc=True)


EMULATION = r"""
#include <cmath>
#include <cstdio>
#include <cstring>
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
struct pk_dim3 { unsigned x, y, z; };
static pk_dim3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim{1, 1, 1}, gridDim{1, 1, 1};
template <class T> inline T __shfl_down_sync(unsigned, T v, int, int) { return v; }
template <class T> inline T __shfl_sync(unsigned, T v, int, int) { return v; }
inline void __syncthreads() {}
inline void __threadfence() {}
template <class T> inline T pk_emulated_rmw(T* p, T v, int op) {
  T o = *p;
  *p = op == 0 ? o + v : op == 1 ? (v > o ? v : o) : op == 2 ? (v < o ? v : o) : op == 3 ? v : o;
  return o;
}
template <class T> inline T atomicAdd(T* p, T v) { return pk_emulated_rmw(p, v, 0); }
template <class T> inline T atomicMax(T* p, T v) { return pk_emulated_rmw(p, v, 1); }
template <class T> inline T atomicMin(T* p, T v) { return pk_emulated_rmw(p, v, 2); }
template <class T> inline T atomicExch(T* p, T v) { return pk_emulated_rmw(p, v, 3); }
template <class T> inline T atomicCAS(T* p, T cmp, T v) { T o = *p; if (o == cmp) *p = v; return o; }
inline double __longlong_as_double(long long v) { double d; std::memcpy(&d, &v, 8); return d; }
"""

RUN_FOR = r"""
extern "C" void run_for(const pk_args* a) { pk_for(*a); }
"""
# Blocks of a scan one after another, each taking its ticket as it starts:
# later segments find the totals of earlier ones published.
RUN_SCAN = r"""
extern "C" void run_scan(const pk_args* a, unsigned blocks, char* out) {
  static pk_vt agg[1024];
  static unsigned flag[1024], ctl[4];
  gridDim.x = blocks;
  for (unsigned b = 0; b < blocks; ++b) { blockIdx.x = b; pk_scan(*a, agg, flag, ctl, out); }
  gridDim.x = 1;
  blockIdx.x = 0;
}
"""
RUN_REDUCE = r"""
extern "C" void run_reduce(const pk_args* a, char* out) {
  static pk_vt partial[1];
  static unsigned done = 0;
  pk_reduce(*a, partial, &done, out);
}
"""


class ViewArg(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("extent", ctypes.c_int64 * 8), ("stride", ctypes.c_int64 * 8)]


def view_arg(a: np.ndarray) -> ViewArg:
    v = ViewArg(a.ctypes.data)
    for d in range(a.ndim):
        v.extent[d] = a.shape[d]
        v.stride[d] = a.strides[d] // a.itemsize
    return v


def args_struct(views: list[np.ndarray], scalars: list[float], n, lo=None):
    class Args(ctypes.Structure):
        _fields_ = [("views", ViewArg * max(1, len(views))), ("scalars", ctypes.c_double * (2 * max(1, len(scalars)))),
                    ("lo", ctypes.c_int64 * 8), ("hi", ctypes.c_int64 * 8)]
    a = Args()
    for k, v in enumerate(views):
        a.views[k] = view_arg(v)
    for j, s in enumerate(scalars):
        a.scalars[2 * j] = s.real
        a.scalars[2 * j + 1] = s.imag if isinstance(s, complex) else 0.0
    for d, h in enumerate(n if isinstance(n, (list, tuple)) else [n]):
        a.hi[d] = h
        a.lo[d] = lo[d] if lo else 0
    return a


@pytest.fixture(scope="module")
def emulate(tmp_path_factory):
    """Builds an NVRTC source as host code; returns the loaded library."""
    gxx = shutil.which("g++") or pytest.skip("needs g++ (the host toolchain)")
    d = tmp_path_factory.mktemp("nvrtc")
    built: dict[str, ctypes.CDLL] = {}

    def build(name: str, src: str) -> ctypes.CDLL:
        if name in built:
            return built[name]
        cpp = d / f"{name}.cpp"
        # One emulated team's level-0 scratch (dynamic shared memory on the GPU).
        src = src.replace("extern __shared__ double pk_shmem[];", "static double pk_shmem[4096];")
        run = RUN_SCAN if "void __launch_bounds__(256) pk_scan(" in src else RUN_REDUCE if "pk_reduce" in src else RUN_FOR
        cpp.write_text(EMULATION + src + run)
        so = d / f"{name}.so"
        r = subprocess.run([gxx, "-std=c++17", "-O1", "-shared", "-fPIC", str(cpp), "-o", str(so)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]
        built[name] = ctypes.CDLL(str(so))
        return built[name]
    return build


@pytest.mark.parametrize("layout", ["right", "left"])
def test_the_nvrtc_form_of_a_for_computes_what_numpy_does(emulate, layout):
    n = 1000
    rng = np.random.default_rng(3)
    x = rng.uniform(-4, 4, n)
    m = rng.uniform(-9, 9, (n, 3))
    if layout == "left":
        m = np.asfortranarray(m)
    out = np.zeros(n)
    lay = pk.LayoutLeft if layout == "left" else pk.LayoutRight
    src = nvrtc_source(0, mix, n, a=1.5, x=pk.View([n], pk.double), m=pk.View([n, 3], pk.double, layout=lay),
                       out=pk.View([n], pk.double))
    assert src is not None and "Kokkos_Core" not in src
    lib = emulate(f"mix_{layout}", src)
    lib.run_for(ctypes.byref(args_struct([x, m, out], [1.5], n)))
    i = np.arange(n)
    want = 1.5 * x + np.sqrt(np.abs(m[:, 1])) + (i // 3) % 5 - x // 0.25 + m[:, 0] % 1.5
    np.testing.assert_array_equal(out, want)


def test_the_nvrtc_form_of_printf_prints_each_item(emulate, capfd):
    x = np.array([0.5, 1.5, 2.5])
    src = nvrtc_source(0, with_printf, 3, x=pk.View([3], pk.double))
    assert src is not None and "printf(" in src
    lib = emulate("with_printf", src)
    lib.run_for(ctypes.byref(args_struct([x], [], 3)))
    ctypes.CDLL(None).fflush(None)  # C's stdout, as the GPU's printf buffer reaches it
    assert capfd.readouterr().out.splitlines() == ["0.500000", "1.500000", "2.500000"]


def test_the_nvrtc_form_of_a_sum_computes_what_numpy_does(emulate):
    n = 777
    rng = np.random.default_rng(5)
    x, m = rng.random(n), rng.random((n, 3))
    src = nvrtc_source(1, total, n, x=pk.View([n], pk.double), m=pk.View([n, 3], pk.double, layout=pk.LayoutRight))
    assert src is not None and "pk_reduce" in src
    lib = emulate("total", src)
    out = (ctypes.c_double * 2)()
    lib.run_reduce(ctypes.byref(args_struct([x, m], [], n)), out)
    np.testing.assert_allclose(out[0], np.sum(x * m[:, 2] + np.exp(-x)), rtol=1e-12)


@pytest.mark.parametrize("layout", ["right", "left"])
def test_the_nvrtc_form_of_an_mdrange_for_computes_what_numpy_does(emulate, layout):
    rows, cols = 37, 11
    lo = [2, 3]  # a range that starts inside the views
    m = np.random.default_rng(7).uniform(-1, 1, (rows, cols))
    out = np.zeros((rows, cols))
    lay = pk.LayoutLeft if layout == "left" else pk.LayoutRight
    if layout == "left":
        m, out = np.asfortranarray(m), np.asfortranarray(out)
    src = nvrtc_source(0, grid2, [rows, cols], lo=lo, a=0.5, m=pk.View([rows, cols], pk.double, layout=lay),
                       out=pk.View([rows, cols], pk.double, layout=lay))
    assert src is not None
    lib = emulate(f"grid2_{layout}", src)
    lib.run_for(ctypes.byref(args_struct([m, out], [0.5], [rows, cols], lo=lo)))
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    want = np.where((i >= 2) & (j >= 3), 0.5 * m + i - 2 * j, 0.0)
    np.testing.assert_array_equal(out, want)


def test_every_item_of_a_rank_3_range_runs_once(emulate):
    shape = (4, 5, 6)
    c = np.full(shape, -1, dtype=np.int64)
    src = nvrtc_source(0, cube, list(shape), c=pk.View(list(shape), pk.int64, layout=pk.LayoutRight))
    lib = emulate("cube", src)
    lib.run_for(ctypes.byref(args_struct([c], [], list(shape))))
    i, j, k = np.indices(shape)
    np.testing.assert_array_equal(c, i * 100 + j * 10 + k)


def test_the_nvrtc_form_of_atomics_computes_what_a_sequential_run_does(emulate):
    # One emulated thread runs the items in order: every atomic must then
    # give the sequential result, and sub-word ones must leave their
    # neighbours in the word (four 1- and 2-byte bins share one) unchanged.
    n = 301
    x = np.random.default_rng(13).integers(0, 1000, n).astype(np.int64)
    h8, h16 = np.zeros(4, np.int8), np.full(4, 60000, np.uint16)
    h32, h64 = np.full(4, -1, np.int32), np.full(4, 1 << 40, np.int64)
    f, g = np.zeros(4), np.full(4, -1.0, np.float32)
    c, bits, firsts = np.zeros(5, np.int64), np.zeros(4, np.uint8), np.zeros(n, np.int64)
    arrays = [x, h8, h16, h32, h64, f, g, c, bits, firsts]
    views = {name: pk.View(list(a.shape), dt, **({"trait": pk.Atomic} if name == "bits" else {}))
             for name, a, dt in zip(["x", "h8", "h16", "h32", "h64", "f", "g", "c", "bits", "firsts"], arrays,
                                    [pk.int64, pk.int8, pk.uint16, pk.int32, pk.int64, pk.double, pk.float,
                                     pk.int64, pk.uint8, pk.int64])}
    src = nvrtc_source(0, tallies, n, **views)
    assert src is not None and "atomic_fetch_add" in src
    emulate("tallies", src).run_for(ctypes.byref(args_struct(arrays, [], n)))
    b = x % 4
    for k in range(4):
        mine = x[b == k]
        assert h8[k] == np.int8(len(mine))
        assert h16[k] == np.uint16((60000 - 3 * len(mine)) % 65536)
        assert h32[k] == max(-1, mine.max()) and h64[k] == min(1 << 40, mine.min())
        assert f[k] == np.sum(0.25 * mine) and g[k] == np.float32(max(-1.0, 0.5 * mine.max()))
        assert bits[k] == np.bitwise_or.reduce(mine % 7)
    assert c[4] == n and c[0] == n - 1
    np.testing.assert_array_equal(firsts, np.concatenate([[0], np.cumsum(x)[:-1]]))
    assert c[1] == x.sum()


def team_reduce_source(wu, league: int, cols: int) -> str | None:
    """The NVRTC form of a team reduction over x[league, cols] writing out[league]."""
    team = _native.Policy([0, 0, 0], [league, 1, 1], CUDA, True)
    views = {"x": pk.View([league, cols], pk.double, layout=pk.LayoutRight), "out": pk.View([league], pk.double)}
    return _native.generate_source(1, team, _kernels._capture(wu), views, nvrtc=True)


def test_the_nvrtc_form_of_a_team_reduction_computes_what_numpy_does(emulate):
    # One emulated thread per team (team size 1, vector length 1) runs every
    # league rank in turn: nested sums, vector fors, scratch, single, barrier.
    league, cols = 9, 13
    x = np.random.default_rng(17).uniform(-2, 2, (league, cols))
    out = np.zeros(league)
    src = team_reduce_source(team_rows, league, cols)
    assert src is not None and "pk_member" in src and "Kokkos_Core" not in src
    total = (ctypes.c_double * 2)()
    # hi: league, team size, vector length, level-0 scratch bytes per team.
    emulate("team_rows", src).run_reduce(ctypes.byref(args_struct([x, out], [], [league, 1, 1, 64])), total)
    rows = (x * x).sum(axis=1)
    np.testing.assert_allclose(total[0], rows.sum(), rtol=1e-13)
    np.testing.assert_allclose(out, rows + 3 + 1 + 10 * league, rtol=1e-13)


def test_the_nvrtc_form_of_level_1_scratch_takes_the_blocks_slice_of_global_memory(emulate):
    # One emulated block runs every league rank: its slice of level-1 scratch
    # (lo[7], hi[5] bytes a team) is reused rank after rank, as on the GPU.
    league, cols = 7, 9
    x = np.random.default_rng(23).uniform(-1, 1, (league, cols))
    out = np.zeros(league)
    src = team_reduce_source(team_l1, league, cols)
    assert src is not None and "team_scratch(1)" in src
    level1 = (ctypes.c_double * cols)()
    a = args_struct([x, out], [], [league, 1, 1, 8, 0, 8 * cols, 0])
    a.lo[7] = ctypes.addressof(level1)
    total = (ctypes.c_double * 2)()
    emulate("team_l1", src).run_reduce(ctypes.byref(a), total)
    np.testing.assert_allclose(total[0], 2 * x.sum(), rtol=1e-13)
    np.testing.assert_allclose(out, 2 * x.sum(axis=1) + 2 * x[:, -1], rtol=1e-13)
    assert level1[cols - 1] == 2 * x[-1, -1]  # the last rank's values, in the buffer given


def test_team_kernels_the_shim_lacks_keep_the_kokkos_path():
    team = _native.Policy([0, 0, 0], [4, 1, 1], CUDA, True)
    assert _native.generate_source(0, team, _kernels._capture(team_scan), {"x": pk.View([8], pk.double)},
                                   nvrtc=True) is None  # a team scan


# Pattern codes of the built-in reducers (python/pykokkos/runtime/_reducers.py).
PROD, MIN, MAX, LOR, BAND, MINLOC, MAXLOC, MINMAX, MINMAXLOC = 3, 4, 5, 7, 8, 10, 11, 12, 13


def run_reducer(emulate, name, pattern, wu, arr, out_type, n=None, **kw):
    n = arr.shape[0] if n is None else n
    src = nvrtc_source(pattern, wu, list(arr.shape) if arr.ndim > 1 else n, **kw)
    assert src is not None and "pk_reduce" in src
    out = (out_type * 4)()
    emulate(name, src).run_reduce(ctypes.byref(args_struct([arr], [], list(arr.shape) if arr.ndim > 1 else n)), out)
    return out[0]


def test_the_nvrtc_form_of_the_built_in_reducers_computes_what_numpy_does(emulate):
    rng = np.random.default_rng(11)
    x = rng.normal(size=1001)
    m = rng.normal(size=(13, 17))
    ints = rng.integers(1, 4, size=40).astype(np.int64)
    bits = rng.integers(0, 1 << 20, size=500).astype(np.int64) | 0b1001
    flags = np.zeros(300, dtype=np.uint8)
    flags[217] = 1
    v = lambda a, d: pk.View(list(a.shape), d)  # noqa: E731
    assert run_reducer(emulate, "lowest", MIN, lowest, x, ctypes.c_double, x=v(x, pk.double)) == x.min()
    assert run_reducer(emulate, "highest2", MAX, highest2, m, ctypes.c_double, m=v(m, pk.double)) == m.max()
    assert run_reducer(emulate, "product", PROD, product, ints, ctypes.c_int64, k=v(ints, pk.int64)) == np.prod(ints)
    got = run_reducer(emulate, "common_bits", BAND, common_bits, bits, ctypes.c_int64, k=v(bits, pk.int64))
    assert got == np.bitwise_and.reduce(bits)
    got = run_reducer(emulate, "any_set", LOR, any_set, flags, ctypes.c_uint8, flags=v(flags, pk.uint8))
    assert got == 1
    flags[217] = 0
    assert run_reducer(emulate, "any_set", LOR, any_set, flags, ctypes.c_uint8, flags=v(flags, pk.uint8)) == 0


def run_record(emulate, name, pattern, wu, arr, fields, n=None, **kw):
    """The result slots of a record reducer: (value dtype, is a location) a field."""
    n = arr.shape[0] if n is None else n
    src = nvrtc_source(pattern, wu, n, **kw)
    assert src is not None and "pk_reduce" in src
    out = (ctypes.c_uint64 * 4)()
    emulate(name, src).run_reduce(ctypes.byref(args_struct([arr], [], n)), out)
    raw = bytes(out)
    return [np.frombuffer(raw[8 * k:8 * k + np.dtype(d).itemsize], d)[0] for k, d in enumerate(fields)]


def test_the_nvrtc_form_of_the_record_reducers_finds_numpys_first_extremes(emulate):
    # Ties: the first index wins, whatever the grouping (NumPy's argmin/argmax).
    rng = np.random.default_rng(23)
    x = rng.normal(size=999)
    x[[5, 400, 998]] = x.min() - 1.0
    x[[7, 600]] = x.max() + 1.0
    f = x.astype(np.float32)
    k = rng.integers(-50, 50, size=999).astype(np.int32)
    v = lambda a, d: pk.View(list(a.shape), d)  # noqa: E731
    lo, lo_at = run_record(emulate, "minloc", MINLOC, minloc, x, [np.float64, np.int64], x=v(x, pk.double))
    assert (lo, lo_at) == (x.min(), 5)
    hi, hi_at = run_record(emulate, "maxloc", MAXLOC, maxloc, f, [np.float32, np.int64], x=v(f, pk.float32))
    assert (hi, hi_at) == (f.max(), 7)
    assert run_record(emulate, "minmax", MINMAX, minmax, k, [np.int32, np.int32], k=v(k, pk.int32)) == [k.min(), k.max()]
    got = run_record(emulate, "minmaxloc", MINMAXLOC, minmaxloc, x, [np.float64, np.float64, np.int64, np.int64],
                     x=v(x, pk.double))
    assert got == [x.min(), x.max(), 5, 7]
    # An empty range: Kokkos' identities (the extremes, the largest index).
    empty = run_record(emulate, "minloc", MINLOC, minloc, x, [np.float64, np.int64], n=0, x=v(x, pk.double))
    host = pk.parallel_reduce(pk.RangePolicy(0, 0), minloc, reducer=pk.MinLoc, x=pk.array(x))
    assert empty == [host.val, host.loc] == [np.finfo(np.float64).max, np.iinfo(np.int64).max]


def test_an_empty_range_gives_the_reducers_identity_as_the_kokkos_path_does(emulate):
    x = np.zeros(4)
    host = {
        MIN: pk.parallel_reduce(pk.RangePolicy(0, 0), lowest, reducer=pk.Min, x=pk.array(x)),
        PROD: pk.parallel_reduce(pk.RangePolicy(0, 0), product, reducer=pk.Prod, k=pk.array(x.astype(np.int64))),
    }
    assert run_reducer(emulate, "lowest", MIN, lowest, x, ctypes.c_double, n=0, x=pk.View([4], pk.double)) == host[MIN]
    got = run_reducer(emulate, "product", PROD, product, x.astype(np.int64), ctypes.c_int64, n=0,
                      k=pk.View([4], pk.int64))
    assert got == host[PROD] == 1


@pytest.mark.parametrize("blocks", [1, 3, 8])
def test_the_nvrtc_form_of_a_scan_computes_what_numpy_does(emulate, blocks):
    # Segments in turn (one emulated thread each): each segment's prefix comes
    # from the totals the earlier ones published.
    n = 1001
    x = np.random.default_rng(9).random(n)
    y = np.zeros(n)
    src = nvrtc_source(2, prefix, n, x=pk.View([n], pk.double), y=pk.View([n], pk.double))
    assert src is not None and "pk_scan" in src
    total = (ctypes.c_double * 2)()
    lib = emulate("prefix", src)
    lib.run_scan(ctypes.byref(args_struct([x, y], [], n)), blocks, total)
    np.testing.assert_allclose(y, np.cumsum(x), rtol=1e-12)
    np.testing.assert_allclose(total[0], x.sum(), rtol=1e-12)
    lib.run_scan(ctypes.byref(args_struct([x, y], [], n)), blocks, total)  # the counters were cleared
    np.testing.assert_allclose(y, np.cumsum(x), rtol=1e-12)
    k = np.random.default_rng(4).integers(0, 6, size=n).astype(np.int64)
    ky = np.zeros(n, dtype=np.int64)
    src = nvrtc_source(2, offsets, n, k=pk.View([n], pk.int64), y=pk.View([n], pk.int64))
    out = (ctypes.c_int64 * 2)()
    emulate("offsets", src).run_scan(ctypes.byref(args_struct([k, ky], [], n)), blocks, out)
    parts = np.where(k > 2, 2 * k, -1)
    np.testing.assert_array_equal(ky, np.cumsum(parts) - parts)  # exclusive
    assert out[0] == parts.sum()
    # Kokkos' own order for the host to compare with: an empty range totals zero.
    src = nvrtc_source(2, prefix, 0, x=pk.View([4], pk.double), y=pk.View([4], pk.double))
    total[0] = 7.0
    emulate("prefix", src).run_scan(ctypes.byref(args_struct([x, y], [], 0)), 1, total)
    assert total[0] == 0.0


def test_a_scan_that_does_more_than_add_keeps_the_kokkos_path():
    v = pk.View([8], pk.int64)
    assert nvrtc_source(2, doubling, 8, y=v) is None
    assert nvrtc_source(2, offsets, 8, k=v, y=v) is not None


def crandom(n: int, seed: int, dtype=np.complex128) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-0.9, 0.9, n) + 1j * rng.uniform(-0.9, 0.9, n)).astype(dtype)


def test_the_nvrtc_form_of_complex_arithmetic_and_math_computes_what_numpy_does(emulate):
    n = 500
    z, w = crandom(n, 1), crandom(n, 2, np.complex64)
    w[:7] = z[:7]  # equal to z: the other branch
    z = np.where(np.arange(n) < 7, w.astype(np.complex128), z)
    out, o32 = np.zeros((n, 7), np.complex128), np.zeros(n, np.complex64)
    c = 0.5 - 1.5j
    src = nvrtc_source(0, cmaths, n, c=c, out=pk.View([n, 7], pk.complex128, layout=pk.LayoutRight), z=pk.View([n], pk.complex128),
                       w=pk.View([n], pk.complex64), o32=pk.View([n], pk.complex64))
    assert src is not None and "Kokkos_Core" not in src
    emulate("cmaths", src).run_for(ctypes.byref(args_struct([out, z, w, o32], [c], n)))
    w64 = w.astype(np.complex128)
    want = np.stack([
        np.sqrt(z) + np.exp(z) * c - np.log(z) / w64,
        np.sin(z) + np.cos(z) + np.tan(z),
        np.sinh(z) - np.cosh(z) + np.tanh(z),
        np.arcsin(z) + np.arccos(z) + np.arctan(z),
        np.arcsinh(z) + np.arccosh(z) + np.arctanh(z),
        z ** w64 + np.log10(z) + np.abs(z) + np.conj(z) * 2,
        np.where(z != w64, -z / (z.imag + 1j), z * 0.5),
    ], axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(o32, w * w - w / np.float32(3) + w.real, rtol=1e-6)
    assert (out[:7, 6] == z[:7] * 0.5).all()


def test_the_nvrtc_form_of_complex128_atomics_computes_what_a_sequential_run_does(emulate):
    # 16 bytes: a lock per address around a plain read and write. One
    # emulated thread runs the items in order, so each result is the
    # sequential one, bins untouched by an operation keep their values, and
    # every lock is free again at the end (a lock left held would hang here).
    n = 301
    z = crandom(n, 5)
    s = np.zeros(7, np.complex128)
    s[3], s[4], s[5], s[6] = 10 - 2j, 1 + 0j, 7j, -1 + 1j
    olds = np.zeros(n, np.complex128)
    src = nvrtc_source(0, cbins, n, z=pk.View([n], pk.complex128), s=pk.View([7], pk.complex128),
                       olds=pk.View([n], pk.complex128))
    assert src is not None and "Kokkos::atomic_fetch_mul(&s(" in src and "Kokkos::atomic_exchange(&s(" in src
    want = s.copy()
    lib = emulate("cbins", src)
    lib.run_for(ctypes.byref(args_struct([z, s, olds], [], n)))
    # The sequential run in Python's complex arithmetic (IEEE doubles, the
    # same formulas as Kokkos::complex's add, subtract and multiply).
    bins, diff, prod, running = [0j, 0j, 0j], complex(want[3]), complex(want[4]), [complex(want[6])]
    for i, v in enumerate(z.tolist()):
        bins[i % 3] += v
        diff -= v
        prod *= v
        running.append(running[-1] + v * 2)
    assert s[:3].tolist() == bins and s[3] == diff and s[5] == z[-1]
    np.testing.assert_allclose(s[4], prod, rtol=1e-12)
    assert olds.tolist() == running[:-1] and s[6] == running[-1]


def test_the_nvrtc_form_of_complex_sums_computes_what_numpy_does(emulate):
    n = 999
    z, w = crandom(n, 3), crandom(n, 4, np.complex64)
    src = nvrtc_source(1, cdot, n, z=pk.View([n], pk.complex128), w=pk.View([n], pk.complex64))
    assert src is not None
    out = (ctypes.c_double * 2)()
    emulate("cdot", src).run_reduce(ctypes.byref(args_struct([z, w], [], n)), out)
    want = np.sum(z * np.conj(w.astype(np.complex128)))
    np.testing.assert_allclose(complex(out[0], out[1]), want, rtol=1e-12)
    league, cols = 6, 11
    m = crandom(league * cols, 5).reshape(league, cols)
    team = _native.Policy([0, 0, 0], [league, 1, 1], CUDA, True)
    src = _native.generate_source(1, team, _kernels._capture(team_cnorms),
                                  {"z": pk.View([league, cols], pk.complex128)}, nvrtc=True)
    assert src is not None
    emulate("team_cnorms", src).run_reduce(ctypes.byref(args_struct([m], [], [league, 1, 1, 0])), out)
    np.testing.assert_allclose(complex(out[0], out[1]), np.sum(m * m), rtol=1e-12)


class OobRecord(ctypes.Structure):
    _fields_ = [("set", ctypes.c_int), ("dim", ctypes.c_int), ("index", ctypes.c_longlong),
                ("extent", ctypes.c_longlong), ("view", ctypes.c_char * 64), ("where", ctypes.c_char * 256)]


def test_the_nvrtc_form_of_a_bounds_checked_kernel_records_the_first_index_outside(emulate, tmp_path):
    # PK_BOUNDS_CHECK is read once per process: the source comes from a child.
    prog = tmp_path / "gen.py"
    prog.write_text(textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        import pykokkos as pk
        from test_nvrtc import mix, nvrtc_source
        n = 10
        print(nvrtc_source(0, mix, n, a=1.5, x=pk.View([n], pk.double), m=pk.View([n, 3], pk.double),
                           out=pk.View([n], pk.double)))
    """))
    env = dict(os.environ, PK_BOUNDS_CHECK="1")
    r = subprocess.run([sys.executable, str(prog), os.path.dirname(__file__)], capture_output=True, text=True,
                       env=env, check=True)
    src = r.stdout
    assert "pk::at(" in src and "pk_oob_record" in src
    lib = emulate("mix_checked", src)
    rec = OobRecord.in_dll(lib, "pk_oob")
    ctypes.memset(ctypes.addressof(rec), 0, ctypes.sizeof(rec))  # as the runtime leaves it after a read
    x, m, out = np.arange(10.0), np.ones((10, 3)), np.zeros(10)
    lib.run_for(ctypes.byref(args_struct([x, m, out], [1.5], 10)))
    assert rec.set == 0  # inside: nothing recorded, everything written
    np.testing.assert_array_equal(out, 1.5 * x + 1 + (np.arange(10) // 3) % 5 - x // 0.25 + 1 % 1.5)
    short, guard = np.zeros(16), 7.25
    short[8:] = guard  # out's allocation past its extent of 8
    lib.run_for(ctypes.byref(args_struct([x, m, short[:8]], [1.5], 10)))
    assert (rec.set, rec.dim, rec.index, rec.extent, rec.view) == (1, 0, 8, 8, b"out")
    assert rec.where.decode().endswith(f"test_nvrtc.py:{mix.__code__.co_firstlineno + 2}")  # its body
    assert (short[8:] == guard).all()  # nothing written outside


def test_shapes_the_shim_does_not_cover_keep_the_kokkos_path():
    v = pk.View([8], pk.double)
    assert nvrtc_source(1, running_max, 8, x=v) is None  # reads its accumulator: not a sum
    assert nvrtc_source(MINLOC, minloc, 8, x=v) is not None  # a record accumulator, alone over a range
    host = _native.generate_source(0, _native.Policy([0], [8], 1), _kernels._capture(with_printf), {"x": v},
                                   nvrtc=True)
    assert host is None  # host kernels have no NVRTC form


@pytest.mark.device_only
def test_new_cuda_kernels_compile_through_nvrtc_and_match_the_nvcc_path(tmp_path):
    """New fors (1-D and 2-D, both layouts, one that prints), reductions (a sum, Min, Max, BAnd,
    MinLoc, an empty range), scans, team reductions (nested sums, scratch, single, atomics)
    level-1 scratch and complex numbers (a for, atomics, a sum, a team's nested sums); a reduction that spills when held
    to few registers is built without the hold
    through NVRTC and through nvcc give NumPy's values; cubins land, and NVRTC
    refuses none of the sources it was given."""
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent("""
        import os, sys, numpy as np, pykokkos as pk
        pk.set_default_space(pk.Cuda)

        @pk.workunit
        def fill(i: int, a: pk.View1D[pk.double]):
            a[i] = pk.sin(0.001 * i) + 1.0 / (i + 1)

        @pk.workunit
        def norm(i: int, acc: pk.Acc[pk.double], a: pk.View1D[pk.double]):
            acc += a[i] * a[i]

        @pk.workunit
        def say(i: int, k: int, a: pk.View1D[pk.double]):
            pk.printf("say %d %d %.1f\\n", k, i, a[i] * 0.0 + i)

        @pk.workunit
        def grid(i: int, j: int, m: pk.View2D[pk.double], s: pk.View2D[pk.double]):
            m[i, j] = 3.0 * i - j + s[i, j]

        @pk.workunit
        def low(i: int, j: int, acc: pk.Acc[pk.double], m: pk.View2D[pk.double]):
            if m[i, j] < acc:
                acc = m[i, j]

        @pk.workunit
        def high(i: int, acc: pk.Acc[pk.float], a: pk.View1D[pk.double]):
            acc = max(acc, float(a[i]))

        @pk.workunit
        def bits(i: int, acc: pk.Acc[pk.int64], k: pk.View1D[pk.int64]):
            acc &= k[i]

        @pk.workunit
        def lowloc(i: int, acc: pk.Acc[pk.double], a: pk.View1D[pk.double]):
            if a[i] < acc.val:
                acc.val = a[i]
                acc.loc = i

        @pk.workunit
        def cum(i: int, acc: pk.Acc[pk.int64], last: bool, k: pk.View1D[pk.int64], y: pk.View1D[pk.int64]):
            if last:
                y[i] = acc
            acc += k[i] % 1000

        @pk.workunit
        def cumf(i: int, acc: pk.Acc[pk.double], last: bool, a: pk.View1D[pk.double], y: pk.View1D[pk.double]):
            acc += a[i]
            if last:
                y[i] = acc

        @pk.workunit
        def rows(m: pk.TeamMember, acc: pk.Acc[pk.double], x: pk.View2D[pk.double], out: pk.View1D[pk.double],
                 h: pk.View1D[pk.int8], top: pk.View1D[pk.double]):
            j: int = m.league_rank()

            def sq(k: int, a: pk.Acc[pk.double]):
                a += x[j, k] * x[j, k]
            s: float = pk.parallel_reduce(pk.TeamThreadRange(m, x.extent(1)), sq)

            def lanes(k: int, a: pk.Acc[pk.double]):
                a += x[j, k]
            v: float = pk.parallel_reduce(pk.ThreadVectorRange(m, x.extent(1)), lanes)
            tmp: pk.ScratchView1D[pk.double] = pk.ScratchView1D(m.team_scratch(0), 4)

            def put(k: int):
                tmp[k] = s + v * k
            pk.parallel_for(pk.TeamThreadRange(m, 4), put)
            m.team_barrier()

            def one():
                out[j] = tmp[3]
                pk.atomic_add(h, [j % 3], 1)
                pk.atomic_max(top, [0], s)
            pk.single(pk.PerTeam(m), one)
            if m.team_rank() == 0:
                acc += s

        @pk.workunit
        def cwave(i: int, z: pk.View1D[pk.complex128], w: pk.View1D[pk.complex64]):
            z[i] = pk.exp(1j * 0.001 * i) * pk.sqrt(z[i]) + pk.log10(z[i]) / (z[i] + 2) - pk.atanh(z[i] * 0.5)
            w[i] = w[i] * w[i] / (w[i] + 3) + 1

        @pk.workunit
        def cbin(i: int, z: pk.View1D[pk.complex128], bins: pk.View1D[pk.complex128]):
            pk.atomic_add(bins, [i % 5], z[i])

        @pk.workunit
        def cfetch(i: int, z: pk.View1D[pk.complex128], tot: pk.View1D[pk.complex128],
                   olds: pk.View1D[pk.complex128]):
            olds[i] = pk.atomic_fetch_add(tot, [0], z[i])

        @pk.workunit
        def cnorm(i: int, acc: pk.Acc[pk.complex128], z: pk.View1D[pk.complex128]):
            acc += z[i] * z[i]

        @pk.workunit
        def crows(m: pk.TeamMember, acc: pk.Acc[pk.complex128], z: pk.View2D[pk.complex128],
                  out: pk.View1D[pk.complex128]):
            j: int = m.league_rank()

            def row(k: int, a: pk.Acc[pk.complex128]):
                a += z[j, k] * z[j, k]
            s: pk.complex128 = pk.parallel_reduce(pk.TeamThreadRange(m, z.extent(1)), row)

            def lanes(k: int, a: pk.Acc[pk.complex128]):
                a += z[j, k]
            v: pk.complex128 = pk.parallel_reduce(pk.ThreadVectorRange(m, z.extent(1)), lanes)
            if m.team_rank() == 0:
                out[j] = v
                acc += s

        @pk.workunit
        def heavy(i: int, acc: pk.Acc[pk.double], x: pk.View1D[pk.double], n: int):
            c0: float = x[i]
            c1: float = x[(i + 1) % n]
            c2: float = x[(i + 2) % n]
            c3: float = x[(i + 3) % n]
            c4: float = x[(i + 4) % n]
            c5: float = x[(i + 5) % n]
            c6: float = x[(i + 6) % n]
            c7: float = x[(i + 7) % n]
            c8: float = x[(i + 8) % n]
            c9: float = x[(i + 9) % n]
            c10: float = x[(i + 10) % n]
            c11: float = x[(i + 11) % n]
            acc += (c0 * c11 + c1 * c10 + c2 * c9 + c3 * c8 + c4 * c7 + c5 * c6) / (
                1.0 + c0 * c1 * c2 * c3 * c4 * c5 * c6 * c7 * c8 * c9 * c10 * c11)

        # A reduction too heavy for 32 registers a thread: held to them it spills,
        # so it is built again without the hold (kernels.rs nvrtc_load).
        hs = np.random.default_rng(0).uniform(0.5, 1.5, 100_000)
        hr = pk.parallel_reduce(hs.size, heavy, x=pk.array(hs), n=hs.size)
        c = [np.roll(hs, -k) for k in range(12)]
        hw = np.sum(sum(c[k] * c[11 - k] for k in range(6)) / (1.0 + np.prod(c, axis=0)))
        assert abs(hr - hw) <= 1e-12 * abs(hw), (hr, hw)
        if os.environ.get("PK_NVRTC") == "1":
            import glob
            kdir = os.path.join(pk.config()["cache"], "kernels")
            heads = {open(f).readline().strip() for f in glob.glob(kdir + "/*.cu") if "pk_wu_heavy" in open(f).read()}
            assert "#define PK_REDUCE_MIN_BLOCKS 1" in heads, heads

        @pk.workunit
        def l1rows(m: pk.TeamMember, acc: pk.Acc[pk.double], x: pk.View2D[pk.double]):
            j: int = m.league_rank()
            big: pk.ScratchView1D[pk.double] = pk.ScratchView1D(m.team_scratch(1), x.extent(1))

            def fill(k: int):
                big[k] = x[j, k] * x[j, k]
            pk.parallel_for(pk.TeamThreadRange(m, x.extent(1)), fill)
            m.team_barrier()

            def add(k: int, a: pk.Acc[pk.double]):
                a += big[k]
            s: float = pk.parallel_reduce(pk.TeamThreadRange(m, x.extent(1)), add)
            if m.team_rank() == 0:
                acc += s

        # Level-1 scratch (global memory, a slice per block), more than shared memory holds.
        ls = np.random.default_rng(4).uniform(-1, 1, (500, 10_000))
        for team in (8, 32):
            pol = pk.TeamPolicy(500, team)
            pol.set_scratch_size(1, pk.PerTeam(ls.shape[1] * 8))
            lt = pk.parallel_reduce(pol, l1rows, x=pk.array(ls))
            assert abs(lt - (ls * ls).sum()) <= 1e-11 * lt, (lt, (ls * ls).sum())

        # Complex numbers: a for, a sum, a team's nested sums over threads and lanes.
        rng = np.random.default_rng(11)
        zs = rng.uniform(-1, 1, 100_000) + 1j * rng.uniform(-1, 1, 100_000)
        ws = (rng.uniform(-1, 1, 100_000) + 1j * rng.uniform(-1, 1, 100_000)).astype(np.complex64)
        z, w = pk.array(zs.copy()), pk.array(ws.copy())
        pk.parallel_for(zs.size, cwave, z=z, w=w)
        zw = np.exp(1j * 0.001 * np.arange(zs.size)) * np.sqrt(zs) + np.log10(zs) / (zs + 2) - np.arctanh(zs * 0.5)
        np.testing.assert_allclose(np.asarray(z), zw, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(w), ws * ws / (ws + 3) + 1, rtol=1e-5)
        np.testing.assert_allclose(pk.parallel_reduce(zs.size, cnorm, z=z), np.sum(zw * zw), rtol=1e-12)
        # complex128 atomics (a lock per address): bins of a histogram of complex values,
        # and fetches, which see each other's sums.
        bins = pk.View([5], pk.complex128)
        pk.parallel_for(zs.size, cbin, z=z, bins=bins)
        np.testing.assert_allclose(np.asarray(bins), [zw[np.arange(zw.size) % 5 == k].sum() for k in range(5)],
                                   rtol=1e-10)
        ints = np.arange(20_000) % 7 + 1j * (np.arange(20_000) % 5)
        tot, olds = pk.View([1], pk.complex128), pk.View([ints.size], pk.complex128)
        pk.parallel_for(ints.size, cfetch, z=pk.array(ints), tot=tot, olds=olds)
        # In some order, each fetch saw the sum of those before it (exact: small integers).
        from collections import Counter
        seen = np.asarray(olds)
        assert tot[0] == ints.sum()
        assert Counter((seen + ints).tolist()) == Counter(seen.tolist()) - Counter([0j]) + Counter([ints.sum()])
        zm = zw[:77 * 300].reshape(300, 77)
        cout = pk.View([300], pk.complex128)
        for team, vector in ((8, 4), (3, 2)):
            ct = pk.parallel_reduce(pk.TeamPolicy(300, team, vector), crows, z=pk.array(zm), out=cout)
            np.testing.assert_allclose(ct, np.sum(zm * zm), rtol=1e-12)
            np.testing.assert_allclose(np.asarray(cout), zm.sum(axis=1), rtol=1e-12)

        league, cols = 200, 77
        xs = np.random.default_rng(3).integers(-8, 8, size=(league, cols)).astype(np.float64)
        x, out = pk.array(xs), pk.View([league], pk.double)
        for team, vector in ((8, 4), (pk.AUTO, 1), (3, 2)):
            h, top = pk.View([3], pk.int8), pk.View([1], pk.double)
            top[0] = -1.0
            pol = pk.TeamPolicy(league, team, vector)
            pol.set_scratch_size(0, pk.PerTeam(pk.ScratchView1D[pk.double].shmem_size(4)))
            t = pk.parallel_reduce(pol, rows, x=x, out=out, h=h, top=top)
            sq, sm = (xs * xs).sum(axis=1), xs.sum(axis=1)
            # A team rank's vector lanes share its value (Kokkos): s counts once a team.
            assert t == sq.sum(), (t, sq.sum(), vector)
            np.testing.assert_array_equal(np.asarray(out), sq + 3 * sm)
            np.testing.assert_array_equal(np.asarray(h), np.bincount(np.arange(league) % 3))
            assert top[0] == sq.max()

        n = 3_000_001
        a = pk.View([n], pk.double)
        pk.parallel_for(n, fill, a=a)
        r = pk.parallel_reduce(n, norm, a=a)
        pk.parallel_for(3, say, k=7, a=a)
        pk.fence()
        i = np.arange(n)
        ref = np.sin(0.001 * i) + 1.0 / (i + 1)
        # CUDA's sin is within 2 ulp of NumPy's, not equal to it.
        np.testing.assert_allclose(np.asarray(a), ref, rtol=1e-14, atol=1e-15)
        assert abs(r - np.dot(ref, ref)) <= 1e-12 * r
        # A 2-D for over a range inside the views, in both layouts; Min over it.
        shape, lo, hi = (1000, 777), [3, 5], [1000, 770]
        s = np.random.default_rng(1).normal(size=shape)
        mins = []
        for lay in (pk.LayoutRight, pk.LayoutLeft):
            m, sv = pk.View(list(shape), pk.double, layout=lay), pk.View(list(shape), pk.double, layout=lay)
            sv[:] = s
            pk.parallel_for(pk.MDRangePolicy(lo, hi), grid, m=m, s=sv)
            ii, jj = np.indices(shape)
            inside = (ii >= lo[0]) & (jj >= lo[1]) & (jj < hi[1])
            np.testing.assert_array_equal(np.asarray(m), np.where(inside, 3.0 * ii - jj + s, 0.0))
            mins.append(pk.parallel_reduce(pk.MDRangePolicy(lo, hi), low, reducer=pk.Min, m=m))
            assert mins[-1] == (3.0 * ii - jj + s)[inside].min()
        top = pk.parallel_reduce(n, high, reducer=pk.Max, a=a)
        assert top == np.float32(ref.max())
        k = pk.array(np.random.default_rng(2).integers(0, 1 << 40, size=5000) | 0b101)
        assert pk.parallel_reduce(5000, bits, reducer=pk.BAnd, k=k) == np.bitwise_and.reduce(np.asarray(k))
        # Scans: exclusive over integers (exact), inclusive over doubles, twice
        # (the kernel leaves its counters cleared), over a sub-range, and empty.
        ks = np.random.default_rng(5).integers(0, 1 << 30, size=n)
        kv, ky = pk.array(ks), pk.View([n], pk.int64)
        parts = ks % 1000
        for _ in range(2):
            scanned = pk.parallel_scan(n, cum, k=kv, y=ky)
            np.testing.assert_array_equal(np.asarray(ky), np.cumsum(parts) - parts)
            assert scanned == parts.sum()
        fy = pk.View([n], pk.double)
        ftot = pk.parallel_scan(pk.RangePolicy(10, n - 7), cumf, a=a, y=fy)
        # Segments add in another order than NumPy: within rounding of the running total.
        np.testing.assert_allclose(np.asarray(fy)[10:n - 7], np.cumsum(ref[10:n - 7]), rtol=1e-12, atol=1e-13 * ftot)
        assert abs(ftot - ref[10:n - 7].sum()) <= 1e-12 * ftot
        assert pk.parallel_scan(pk.RangePolicy(0, 0), cum, k=kv, y=ky) == 0
        # A record reducer: the value and its first index.
        ml = pk.parallel_reduce(n, lowloc, reducer=pk.MinLoc, a=a)
        assert (ml.val, ml.loc) == (ref.min(), int(np.argmin(ref))), ml
        # Empty ranges give Kokkos' identities.
        empty = pk.parallel_reduce(pk.RangePolicy(0, 0), high, reducer=pk.Max, a=a)
        assert empty == -np.finfo(np.float32).max
        print(repr(r), repr(mins), repr(top), repr(empty), repr(scanned), repr(tuple(ml)))
    """))
    base = dict(os.environ, PK_FUSE="0")
    if os.environ.get("PK_CACHE_DIR"):  # the Kokkos build stays where it is: only kernels are new
        base["PK_CACHE_DIR"] = os.environ["PK_CACHE_DIR"]
    runs, start = {}, time.time() - 1
    for nvrtc in ("1", "0"):
        r = subprocess.run([sys.executable, str(script)], env=dict(base, PK_NVRTC=nvrtc), capture_output=True,
                           text=True, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-3000:]
        # printf lines, in whatever order the threads made them.
        lines = r.stdout.splitlines()
        says = sorted(line for line in lines if line.startswith("say "))
        assert says == ["say 7 0 0.0", "say 7 1 1.0", "say 7 2 2.0"], r.stdout[-3000:]
        runs[nvrtc] = [line for line in lines if not line.startswith("say ")][-1]
    cubins = list(_kernel_dir().glob("*.cubin"))
    assert cubins, "no kernel went through NVRTC"
    # A source the shim claims to cover that NVRTC refuses is a shim bug (it
    # would quietly cost nvcc's seconds): none may be refused.
    refused = [p for p in _kernel_dir().glob("*.nvrtc-rejected") if p.stat().st_mtime >= start]
    assert not refused, refused[0].read_text()[:3000]
    # Different reduction orders may differ in the last bits of a sum; both match
    # NumPy above. Min and Max are exact, and equal.
    (r1, rest1), (r0, rest0) = (runs[k].split(" ", 1) for k in ("1", "0"))
    assert abs(float(r1) - float(r0)) <= 1e-12 * abs(float(r0))
    assert rest1 == rest0


def _kernel_dir():
    from pathlib import Path
    return Path(pk.config()["cache"]) / "kernels"

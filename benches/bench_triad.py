"""(c) STREAM-style triad a = b + s*c over 2^24 doubles: pk vs plain C++/OpenMP.

The C++ baseline is compiled here, in this run, with the compiler pk uses and
`-O3 -fopenmp` (no -march, as pk's own flags), runs with the same number of
OpenMP threads as pk's Kokkos, first-touches its arrays in parallel and times
itself with omp_get_wtime. It stays alive and runs on request, so pk and C++
runs alternate one by one and load from other processes hits both alike; the
figure is the best time of 20 runs each. GB/s counts 24 bytes per element
(read b, c; write a).

pk's side fills its Views with a parallel init kernel too, but pk.View memory
has already been zeroed - and so first-touched - by the allocating thread
(Rust's alloc_zeroed with 64-byte alignment is malloc + memset).
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
import pykokkos as pk  # noqa: E402

N = 1 << 24
PAIRS = 20
PAUSE_S = 0.02

CPP = r"""
#include <cstdio>
#include <cstdlib>
#include <omp.h>

__attribute__((noinline))
void triad(double* a, const double* b, const double* c, double s, long n) {
  #pragma omp parallel for
  for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

int main(int argc, char** argv) {
  long n = std::atol(argv[1]);
  double* a = (double*)std::aligned_alloc(64, n * sizeof(double));
  double* b = (double*)std::aligned_alloc(64, n * sizeof(double));
  double* c = (double*)std::aligned_alloc(64, n * sizeof(double));
  #pragma omp parallel for
  for (long i = 0; i < n; ++i) { a[i] = 0.0; b[i] = 1.0; c[i] = 2.0; }
  triad(a, b, c, 3.0, n);  // warm-up
  std::printf("ready %d\n", omp_get_max_threads());
  std::fflush(stdout);
  // Each input line "k" asks for k timed runs; an empty line or EOF ends.
  char line[64];
  while (std::fgets(line, sizeof line, stdin)) {
    int runs = std::atoi(line);
    if (runs <= 0) break;
    for (int r = 0; r < runs; ++r) {
      double t0 = omp_get_wtime();
      triad(a, b, c, 3.0, n);
      double t1 = omp_get_wtime();
      std::printf("%.9f\n", t1 - t0);
    }
    std::fflush(stdout);
  }
  return a[n - 1] == 7.0 ? 0 : 3;
}
"""


# The same loop as a shared library, called through ctypes on pk's own Views:
# the difference to pk then is only generated code + Kokkos dispatch (same
# process, same OpenMP thread pool, same memory).
CPP_LIB = r"""
#include <omp.h>
extern "C" double triad_timed(double* a, const double* b, const double* c, double s, long n) {
  double t0 = omp_get_wtime();
  #pragma omp parallel for
  for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
  return omp_get_wtime() - t0;
}
"""


@pk.workunit
def init(i, a, b, c):
    a[i] = 0.0
    b[i] = 1.0
    c[i] = 2.0


@pk.workunit
def triad(i, a, b, c, s):
    a[i] = b[i] + s * c[i]


def build_cpp_lib(workdir: str):
    src = os.path.join(workdir, "triad_lib.cpp")
    lib = os.path.join(workdir, "triad_lib.so")
    with open(src, "w") as f:
        f.write(CPP_LIB)
    cmd = [pk.config()["compiler"], "-std=c++17", "-O3", "-fopenmp", "-fPIC", "-shared", src, "-o", lib]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    fn = ctypes.CDLL(lib).triad_timed
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_double, ctypes.c_long]
    return fn


def build_cpp(workdir: str) -> tuple[str, list[str]]:
    src = os.path.join(workdir, "triad.cpp")
    exe = os.path.join(workdir, "triad")
    with open(src, "w") as f:
        f.write(CPP)
    cmd = [pk.config()["compiler"], "-std=c++17", "-O3", "-fopenmp", src, "-o", exe]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return exe, cmd


class CppTriad:
    """The C++ baseline as a separate process that times runs on request, so
    that pk and C++ runs can alternate one by one under the same conditions."""

    def __init__(self, exe: str, threads: int):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        self.p = subprocess.Popen([exe, str(N)], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        ready = self.p.stdout.readline().split()
        if not ready or ready[0] != "ready":
            raise RuntimeError("C++ triad did not start")
        self.threads = int(ready[1])

    def run(self, runs: int) -> list[float]:
        self.p.stdin.write(f"{runs}\n")
        self.p.stdin.flush()
        return [float(self.p.stdout.readline()) for _ in range(runs)]

    def close(self) -> None:
        self.p.stdin.write("\n")
        self.p.stdin.close()
        if self.p.wait(timeout=60) != 0:
            raise RuntimeError("C++ triad computed a wrong result")


def run_pk(a, b, c, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        pk.parallel_for(N, triad, a=a, b=b, c=c, s=3.0)
        pk.fence()
        out.append(time.perf_counter() - t0)
    return out


def main(pairs: int = PAIRS) -> dict:
    threads = pk._native.initialize()  # Kokkos' thread count (OMP_NUM_THREADS or all cores)
    a, b, c = (pk.View([N], pk.double) for _ in range(3))
    pk.parallel_for(N, init, a=a, b=b, c=c)  # parallel first touch
    pk.parallel_for(N, triad, a=a, b=b, c=c, s=3.0)  # warm-up (and compile if new)
    pk.fence()
    check = float(a.to_numpy()[N - 1]) if hasattr(a, "to_numpy") else float(a[N - 1])
    if check != 7.0:
        raise RuntimeError(f"pk triad computed {check}, expected 7.0")

    with tempfile.TemporaryDirectory(prefix="pk-bench-triad-") as d:
        exe, cmd = build_cpp(d)
        lib_triad = build_cpp_lib(d)
        ptrs = [np.asarray(v).ctypes.data for v in (a, b, c)]
        cpp = CppTriad(exe, threads)
        pk_t, cpp_t, lib_t = [], [], []
        try:
            for k in range(pairs):
                # Alternate single runs (and which side goes first); the pause
                # lets the other side's idle OpenMP threads stop spinning.
                for side in ((0, 1, 2) if k % 2 == 0 else (2, 1, 0)):
                    if side == 0:
                        pk_t += run_pk(a, b, c, 1)
                    elif side == 1:
                        cpp_t += cpp.run(1)
                    else:
                        lib_t.append(lib_triad(*ptrs, 3.0, N))
                    time.sleep(PAUSE_S)
        finally:
            cpp.close()

    gb = 3 * 8 * N / 1e9
    pk_best, cpp_best = min(pk_t), min(cpp_t)
    pk_t.sort()
    cpp_t.sort()
    return {
        "n": N,
        "threads": threads,
        "cpp_threads": cpp.threads,
        "runs_each": len(pk_t),
        "pk_best_ms": pk_best * 1e3,
        "cpp_best_ms": cpp_best * 1e3,
        "pk_median_ms": pk_t[len(pk_t) // 2] * 1e3,
        "cpp_median_ms": cpp_t[len(cpp_t) // 2] * 1e3,
        "pk_gbs": gb / pk_best,
        "cpp_gbs": gb / cpp_best,
        "pk_fraction_of_cpp": cpp_best / pk_best,
        "cpp_inproc_best_ms": min(lib_t) * 1e3,
        "pk_fraction_of_cpp_inproc": min(lib_t) / pk_best,
        "cpp_command": " ".join(cmd[:1] + cmd[1:4]),
    }


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k:22s} {v:.3f}" if isinstance(v, float) else f"{k:22s} {v}")

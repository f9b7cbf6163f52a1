"""The never-slower rows of bench_lazy.py counted in instructions, not time.

Where lazy mode has nothing to fuse (a read after every launch or two; tiny
chains the adaptive bypass runs at once), lazy and eager do the same kernels
and differ only by bookkeeping, so their times differ by less than this
machine's timing noise. Instructions are deterministic: each step runs under
valgrind's callgrind (one OpenMP thread) N and 2N times in each mode in fresh
processes, and the difference of the two counts is the cost of N steps, with
the process's start-up (import, kernel loads) cancelled out.

`python benches/bench_instructions.py` (needs valgrind; about three minutes). Rows: loop (map +
reduction read), alone (large launches each flushed alone), tiny (7-map chain + sum), small (a tiny
launch and an element read), total (a reduction's total passed to the next launch), access (host
element reads, no launch); `python benches/bench_instructions.py total small` runs only those.
Prints instructions per step, lazy and eager, and their ratio.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))

STEP = r"""
import sys
sys.path.insert(0, {here!r})
import pykokkos as pk
import bench_lazy as b
kind, n = sys.argv[1], int(sys.argv[2])
if kind == "loop":
    v = pk.View([100], pk.double)
    def step():
        pk.parallel_for(100, b.scale, v=v, a=1.0)
        float(pk.parallel_reduce(100, b.total, v=v))
elif kind == "alone":
    v = pk.View([1 << 15], pk.double)
    def step():
        pk.parallel_for(1 << 15, b.scale, v=v, a=1.0)
        v[3]
        float(pk.parallel_reduce(1 << 15, b.total, v=v))
elif kind == "small":  # a tiny launch, an element read after it
    v = pk.View([100], pk.double)
    def step():
        pk.parallel_for(100, b.scale, v=v, a=1.0)
        v[3]
elif kind == "total":  # a reduction's total passed to the next launch (ExaMiniMD's thermostat);
    v = pk.View([1 << 15], pk.double)  # large enough to be recorded: the total is a lazy one
    def step():
        t = pk.parallel_reduce(1 << 15, b.total, v=v)
        pk.parallel_for(1 << 15, b.scale, v=v, a=t)  # (zeros: the total stays 0)
elif kind == "access":  # host element reads, no launch
    v, m = pk.View([100], pk.double), pk.View([10, 10], pk.double)
    def step():
        v[3]
        m[2, 3]
else:
    step = b._tiny_chain_step()
for _ in range(3000):  # kernels built, the adaptive choices settled
    step()
for _ in range(n):
    step()
pk.flush()
"""

# Steps per run (N): enough that N steps outweigh the run-to-run wobble of
# start-up (a few thousand instructions), few enough for valgrind.
ROWS = {"loop": 20000, "alone": 1000, "tiny": 2000, "small": 20000, "total": 1000, "access": 20000}


def count(script: str, kind: str, n: int, lazy: bool) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        # PK_MARCH=none: valgrind does not decode AVX-512, which -march=native may emit.
        env = dict(os.environ, PK_FUSE="1" if lazy else "0", OMP_NUM_THREADS="1", PYTHONHASHSEED="0", PK_MARCH="none")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, script,
                        kind, str(n)], env=env, check=True, capture_output=True)
        with open(out) as f:
            total = int(re.search(r"^summary:\s*(\d+)", f.read(), re.M).group(1))
        # Ours: the extension and the kernels (the interpreter's share moves
        # with where objects land in its dicts, by a percent either way).
        listing = subprocess.run(["callgrind_annotate", "--threshold=100", out], capture_output=True, text=True,
                                 check=True).stdout
        ours = sum(int(m.group(1).replace(",", "")) for m in re.finditer(r"^\s*([\d,]+) .*$", listing, re.M)
                   if "_native.abi3.so" in m.group(0) or "pykokkos-fuse/kernels/" in m.group(0))
        return total, ours


def main() -> int:
    if shutil.which("valgrind") is None:
        print("bench_instructions: needs valgrind (not installed here); nothing measured")
        return 0
    rows = {k: n for k, n in ROWS.items() if k in sys.argv[1:]} or ROWS  # rows named on the command line, or all
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "step.py")
        with open(script, "w") as f:
            f.write(STEP.format(here=HERE))
        jobs = [(k, m * n, lazy) for k, n in rows.items() for m in (1, 2) for lazy in (True, False)]
        with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
            counts = dict(zip(jobs, pool.map(lambda j: count(script, *j), jobs)))
    print("instructions per step (callgrind, one OpenMP thread): all, and ours (extension + kernels)")
    for k, n in rows.items():
        for part, name in ((0, "all"), (1, "ours")):
            per = {lazy: (counts[(k, 2 * n, lazy)][part] - counts[(k, n, lazy)][part]) / n for lazy in (True, False)}
            print(f"  {k:6s} {name:5s} lazy {per[True]:9.0f}  eager {per[False]:9.0f}  "
                  f"lazy - eager {per[True] - per[False]:+6.0f}  lazy / eager {per[True] / per[False]:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One new kernel, an empty compile cache, several ranks: what each rank waits.

Runs tests/mpi_ranks/compile_once.py (every rank launches the same new kernel)
under mpiexec three ways, each with a fresh cache, and reads the compile events
of each rank's trace:
  1 rank;
  2 ranks sharing one cache (the default: one rank compiles under the key's
  lock, the other waits and loads);
  2 ranks with a cache each (what happens without the lock: both compile, and
  the two compilers share the cores).
Usage: python benches/bench_mpi_compile.py  (needs the mpi extra: mpi4py, MPICH)
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pykokkos as pk

HERE = Path(__file__).resolve().parent
PROGRAM = HERE.parent / "tests" / "mpi_ranks" / "compile_once.py"
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")


def run(ranks: int, shared: bool, tmp: Path) -> list[tuple[bool, float]]:
    """(built here, seconds) of the new kernel's compile event, per rank."""
    stem = tmp / f"t{ranks}{'s' if shared else 'p'}"
    # Each rank's cache: one folder, or one per rank (through a wrapper that
    # picks it by rank before pykokkos is imported).
    caches = tmp / f"cache{ranks}{'s' if shared else 'p'}"
    env = dict(os.environ, PK_KOKKOS_ROOT=pk.config()["kokkos"])
    env.pop("PK_FUSE", None)
    code = (f"import os, runpy, sys; from mpi4py import MPI; r = MPI.COMM_WORLD.Get_rank(); "
            f"d = {str(caches)!r} + ('' if {shared} else f'/{{r}}'); os.makedirs(d, mode=0o700, exist_ok=True); "
            f"os.environ['PK_CACHE_DIR'] = d; sys.argv = [{str(PROGRAM)!r}, {str(stem)!r}]; "
            f"runpy.run_path({str(PROGRAM)!r}, run_name='__main__')")
    r = subprocess.run([MPIEXEC, "-n", str(ranks), sys.executable, "-c", code], env=env,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(r.stdout[-2000:] + r.stderr[-2000:])
    out = []
    for f in sorted(glob.glob(f"{stem}.*.jsonl")):
        for line in open(f):
            e = json.loads(line)
            if e.get("ev") == "compile" and e.get("kernel") == "brand_new":
                out.append((not e["cached"], e["us"] / 1e6))
    return out


def main() -> None:
    if MPIEXEC is None:
        raise SystemExit("mpiexec not found: install the mpi extra (pip install .[mpi])")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        print("one new kernel, empty cache (seconds each rank spent in the compile step)")
        for ranks, shared, what in ((1, True, "1 rank"),
                                    (2, True, "2 ranks, one shared cache (lock per key)"),
                                    (2, False, "2 ranks, a cache each (no sharing)")):
            events = run(ranks, shared, tmp)
            built = sum(b for b, _ in events)
            parts = ", ".join(f"rank {k}: {s:.2f} s ({'compiled' if b else 'waited, loaded'})"
                              for k, (b, s) in enumerate(events))
            print(f"  {what}: {built} compile(s); {parts}")


if __name__ == "__main__":
    main()

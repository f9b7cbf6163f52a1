"""Strong scaling over the GPUs of one host: the heat example (one halo row each
way per step, a global residual) and conjugate gradients (a halo row and two
global dot products per iteration) on 1, 2, 4, ... GPUs, for each grid size,
each halo path the machine allows (pykokkos.mpi.halo_paths: host copies, CUDA
IPC between the GPUs of one host, a CUDA-aware MPI), eager and fused, in one run.

Each cell is one `mpiexec -n K python -m mpi4py examples/mpi/<program> N STEPS
--cuda`: ms per step (the slowest rank's loop time / steps) and, in brackets,
the parallel efficiency against the 1-GPU run of the same row (t1 / (K tK)).
Every run of a row must end in the same result: the heat grid's checksum bit
for bit, CG's residual after a fixed number of iterations to 1e-9 (its dot
products add up in another order on another number of ranks).

    python benches/bench_gpus.py [--gpus 4] [--sizes 8192,20480] [--steps 100] [--programs heat,cg]

MPIEXEC names the launcher (default: `mpiexec` on the PATH), e.g.
`MPIEXEC="mpirun --allow-run-as-root"` for Open MPI as root. Exit status 1 if a
run failed, ranks shared a GPU while enough were present, or results differ.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "mpi"
PROGRAMS = {"heat": "heat2d.py", "cg": "cg2d.py"}
TIME = re.compile(r"^(\d+) rank\(s\), .*?, ([\d.]+) ms per (?:step|iteration)", re.M)
HEAT_SUM = re.compile(r"grid checksum (\w+)")
CG_RES = re.compile(r"relative residual ([\d.e+-]+)")
GPU = re.compile(r"^rank (\d+)/\d+ .*?, (GPU \d+|no GPU), CUDA-aware MPI: (yes|no)", re.M)


def gpus() -> int:
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


RUN_TIMEOUT_S = 600


def run(program: str, ranks: int, n: int, steps: int, fuse: bool, halos: str, cuda: bool) -> tuple[str, int]:
    launcher = shlex.split(os.environ.get("MPIEXEC", "mpiexec"))
    extra = ["--tol", "0"] if program == "cg" else []  # CG: exactly `steps` iterations
    cmd = [*launcher, "-n", str(ranks), sys.executable, "-m", "mpi4py", str(EXAMPLES / PROGRAMS[program])]
    cmd += [str(n), str(steps), *(["--cuda"] if cuda else []), *extra, "--halos", halos]
    # A hung run (a rank waiting for a message that never comes) must not stall the
    # table: past the limit the launcher and its ranks (one process group) are killed.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=dict(os.environ, PK_FUSE="1" if fuse else "0"), start_new_session=True)
    try:
        out, _ = p.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return f"{out}\ntimed out after {RUN_TIMEOUT_S} s", 124
    return out, p.returncode


def result(program: str, out: str):
    if program == "heat":
        m = HEAT_SUM.search(out)
        return m.group(1) if m else None
    m = CG_RES.search(out)
    return float(m.group(1)) if m else None


def same(program: str, a, b) -> bool:
    if program == "heat":
        return a == b
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=0, help="the most GPUs to use (default: all present)")
    ap.add_argument("--sizes", default="8192,20480", help="grid sizes N (N x N), comma-separated")
    ap.add_argument("--steps", type=int, default=100, help="steps (heat) or iterations (CG) a run")
    ap.add_argument("--programs", default="heat,cg", help="heat, cg or both")
    ap.add_argument("--host", action="store_true", help="ranks on the host's cores instead (a check of this script)")
    a = ap.parse_args()
    present = gpus()
    top = a.gpus or present or 1
    counts = [k for k in (1, 2, 4, 8) if k <= top]
    sizes = [int(s) for s in a.sizes.split(",") if s]
    programs = [p for p in a.programs.split(",") if p]
    launcher = os.environ.get("MPIEXEC", "mpiexec")
    print(f"{present} GPU(s) here; runs on {', '.join(map(str, counts))}; {a.steps} steps; launcher: {launcher}")
    failed = False
    missing: set[str] = set()
    table = []
    for program in programs:
        for n in sizes:
            for halos in ("host", "ipc", "mpi"):
                if halos in missing:
                    continue
                for fuse in (False, True):
                    cells, first = [], None
                    for k in counts:
                        out, rc = run(program, k, n, a.steps, fuse, halos, not a.host)
                        if "is not available here" in out:
                            missing.add(halos)  # (pykokkos.mpi.halo_paths: not on this machine)
                            break
                        placed = GPU.findall(out)
                        t, res = TIME.search(out), result(program, out)
                        devices = {d for _, d, _ in placed}
                        if rc != 0 or not t or res is None:
                            print(out[-3000:])
                            failed = True
                            cells.append(None)
                            continue
                        if not a.host and present >= k and len(devices) < k:
                            print(f"{program} {n}: {k} ranks share {sorted(devices)} although {present} GPUs are present")
                            failed = True
                        if first is None:
                            first = res
                        elif not same(program, first, res):
                            print(f"{program} {n} on {k} GPUs ended in {res}, on 1 in {first}")
                            failed = True
                        cells.append(float(t.group(2)))
                    if halos in missing:
                        print(f"halo path {halos}: not available here (pykokkos.mpi.halo_paths)")
                        break
                    table.append((program, n, halos, "fused" if fuse else "eager", cells))
                    print(format_row(*table[-1], counts), flush=True)
    print()
    print(header(counts))
    for row in table:
        print(format_row(*row, counts))
    if table:
        print("each row ended in the same result on every number of GPUs" if not failed else "FAILED")
    return 1 if failed or not table else 0


def header(counts: list[int]) -> str:
    return f"{'program':>7} {'grid':>6} {'halos':>8} {'mode':>6} " + " ".join(
        f"{f'{k} GPU' + ('s' if k > 1 else '') + ' ms':>18}" for k in counts
    )


def format_row(program, n, halos, mode, cells, counts) -> str:
    one = cells[0] if cells else None
    parts = []
    for k, c in zip(counts, cells):
        if c is None:
            parts.append(f"{'failed':>18}")
        elif k == 1 or not one:
            parts.append(f"{c:18.3f}")
        else:
            parts.append(f"{c:10.3f} ({one / (k * c):.2f})")
    return f"{program:>7} {n:>6} {halos:>8} {mode:>6} " + " ".join(parts)


if __name__ == "__main__":
    sys.exit(main())

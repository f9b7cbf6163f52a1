"""The heat example on 1 and 2 GPUs: time per step, speedup and parallel
efficiency, eager and fused, for each halo path the MPI library allows.

Each row is one `mpiexec -n 2 ... examples/mpi/heat2d.py N STEPS --cuda --speedup`:
the 2-rank run, then rank 0 alone on its GPU in the same process (the 1-GPU
baseline, measured side by side), and the check that both end in the same
grid bit for bit. Halos go through host copies ("staging") always, and as
device memory ("device") where pykokkos.mpi.cuda_aware() says the MPI library
takes it.

    python benches/bench_gpus.py [N] [STEPS]        # default 40960 100: two 12.5 GiB grids

MPIEXEC names the launcher (default: `mpiexec` on the PATH), e.g.
`MPIEXEC="mpirun --allow-run-as-root"` for Open MPI as root. Exit status 1 if a
run failed, ranks shared a GPU while two were present, or the grids differ.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

HEAT = Path(__file__).resolve().parents[1] / "examples" / "mpi" / "heat2d.py"
STEP = re.compile(r"^(\d+) rank\(s\), .*?: .*?, ([\d.]+) ms per step", re.M)
ALONE = re.compile(r"^1 rank: ([\d.]+) ms per step", re.M)
GPU = re.compile(r"^rank (\d+)/\d+ .*?, (GPU \d+|no GPU), CUDA-aware MPI: (yes|no)", re.M)


def gpus() -> int:
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def run(n: int, steps: int, fuse: bool, staging: bool) -> tuple[str, int]:
    launcher = shlex.split(os.environ.get("MPIEXEC", "mpiexec"))
    cmd = [
        *launcher,
        "-n",
        "2",
        sys.executable,
        "-m",
        "mpi4py",
        str(HEAT),
        str(n),
        str(steps),
        "--cuda",
        "--speedup",
        *(["--staging"] if staging else []),
    ]
    env = dict(os.environ, PK_FUSE="1" if fuse else "0")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return r.stdout + r.stderr, r.returncode


def main() -> int:
    args = [int(a) for a in sys.argv[1:3]]
    n = args[0] if args else 40960
    steps = args[1] if len(args) > 1 else 100
    present = gpus()
    print(
        f"heat2d {n}x{n} doubles ({2 * n * n * 8 / 2**30:.1f} GiB for u and v), {steps} steps; "
        f"{present} GPU(s) here; launcher: {os.environ.get('MPIEXEC', 'mpiexec')}"
    )
    failed = False
    aware = None
    rows = []
    for staging in (True, False):
        if not staging and aware is False:
            print("device path: not run (this MPI library is not CUDA-aware)")
            break
        for fuse in (False, True):
            out, rc = run(n, steps, fuse, staging)
            placed = GPU.findall(out)
            if aware is None and placed:
                aware = placed[0][2] == "yes"
                print("\n".join(line for line in out.splitlines() if line.startswith("rank ")))
            two, alone = STEP.search(out), ALONE.search(out)
            devices = {d for _, d, _ in placed}
            if rc != 0 or not two or not alone or "equal to the 1-rank run" not in out:
                print(out[-3000:])
                failed = True
                continue
            if present >= 2 and len(devices) < 2:
                print(f"ranks share {devices} although {present} GPUs are present")
                failed = True
            one_ms, two_ms = float(alone.group(1)), float(two.group(2))
            rows.append(
                (
                    "staging" if staging else "device",
                    "fused" if fuse else "eager",
                    one_ms,
                    two_ms,
                    one_ms / two_ms,
                    one_ms / two_ms / 2,
                    ", ".join(sorted(devices)),
                )
            )
    print(f"{'halos':>8} {'mode':>6} {'1 GPU ms':>9} {'2 GPUs ms':>10} {'speedup':>8} {'efficiency':>10}  ranks on")
    for h, m, one, two, sp, eff, dev in rows:
        print(f"{h:>8} {m:>6} {one:9.3f} {two:10.3f} {sp:8.2f} {eff:10.2f}  {dev}")
    if rows:
        print("every run ended in the same grid on 2 GPUs as on 1 (bit for bit)" if not failed else "FAILED")
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())

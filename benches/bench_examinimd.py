"""`make bench-md`: the paper's program at every size. The C++ Kokkos
ExaMiniMD (github ECP-copa/ExaMiniMD) built against this project's Kokkos
with -O3 for this CPU (as the runtime's own kernels), against PyKokkos' Python ExaMiniMD (examples/ExaMiniMD/standalone of
kokkos/pykokkos) on this runtime, eager and PK_FUSE=1, on the same generated
inputs, OMP_NUM_THREADS threads: the medians of alternated runs of each
program's own loop time (its PERFORMANCE line), and whether the thermo output
of every run equals the C++ one. Both programs are fetched outside this tree
and named by path; nothing of them is kept here.

    python benches/bench_examinimd.py --cxx <ExaMiniMD checkout> --py <pykokkos checkout> [--space Cuda]

`--space Cuda` (the GPU machine, scripts/gpu/bench_md.sh): the C++ program is
built with the CUDA Kokkos' nvcc_wrapper and runs on the GPU, as
Kokkos' default space; the Python one runs with PK_EXA_SPACE=Cuda, its own
switch to the Cuda space (with managed memory, as it asks).

`--cpus 0,1` pins every run to those CPUs. Unpinned on the GPU machine, runs
of one program differed by up to 40% (0.020 to 0.028 s at 2,048 atoms x 100),
more than the programs differ; bench_md.sh pins them to two CPUs local to
the GPU.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# (fcc cells per side: 4 n^3 atoms, steps)
SIZES = [(40, 100), (16, 100), (8, 100), (8, 1000)]

INPUT = """units lj
atom_style atomic
newton off
lattice fcc 0.8442
region box block 0 {n} 0 {n} 0 {n}
create_box 1 box
create_atoms 1 box
mass 1 2.0
velocity all create 1.4 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify delay 0 every 20 check no
fix 1 all nve
thermo 10
run {steps}
"""


def kokkos_prefix() -> str:
    import pykokkos as pk

    return pk.config()["kokkos"]


def host_flags() -> str:
    """The C++ program's flags: -O3 and the ones the runtime builds its host
    kernels with (pk.config()["host_target"]: the CPU, PK_MARCH, no product
    fused into an addition), so the thermo output can match to the last digit.
    Asked of a child: this process, which times the programs, runs no runtime."""
    code = "import pykokkos as pk; print(pk.config()['host_target'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return "-O3 " + out.stdout.strip().splitlines()[-1]


def build_cxx(src: Path, work: Path, space: str) -> Path:
    """ExaMiniMD's own CMake build against this project's Kokkos, host_flags(), no MPI."""
    if space == "Cuda":
        return build_cxx_cuda(src, work)
    flags = host_flags()
    build = work / ("build-cxx" + "".join(c if c.isalnum() else "_" for c in flags))
    exe = build / "src" / "ExaMiniMD"
    if exe.exists():
        return exe
    cmake = [tool("cmake")]
    subprocess.run(cmake + ["-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DUSE_MPI=OFF",
                            f"-DCMAKE_CXX_FLAGS={flags}", f"-DKokkos_DIR={kokkos_prefix()}/lib/cmake/Kokkos"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(cmake + ["--build", str(build), "-j", str(os.cpu_count() or 2)], check=True,
                   stdout=subprocess.DEVNULL)
    return exe


def build_cxx_cuda(src: Path, work: Path) -> Path:
    """The same sources through the CUDA Kokkos' nvcc_wrapper, -O3, no MPI, one
    object per file in parallel. Not through ExaMiniMD's CMake: Kokkos 3.4's
    exported CUDA targets do not resolve under a newer CMake (a missing
    CUDA::cudart_static_deps, a driver target without a location)."""
    from concurrent.futures import ThreadPoolExecutor

    build = work / "build-cxx-cuda"
    exe = build / "ExaMiniMD"
    if exe.exists():
        return exe
    build.mkdir(parents=True, exist_ok=True)
    import pykokkos as pk

    prefix, arch = pk.config()["kokkos"], pk.config()["cuda_arch"]  # what our kernels are built with
    cxx = [f"{prefix}/bin/nvcc_wrapper", "-std=c++17", "-O3", f"-arch={arch}", "--expt-extended-lambda",
           "-Xcompiler", "-fopenmp", f"-I{prefix}/include", f"-I{src / 'src'}"]
    cxx += [f"-I{d}" for d in (src / "src").iterdir() if d.is_dir()]
    sources = sorted((src / "src").rglob("*.cpp"))

    def compile_one(cpp: Path) -> Path:
        obj = build / (cpp.relative_to(src / "src").as_posix().replace("/", "_") + ".o")
        subprocess.run(cxx + ["-c", str(cpp), "-o", str(obj)], check=True, stdout=subprocess.DEVNULL)
        return obj

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        objs = list(pool.map(compile_one, sources))
    subprocess.run(cxx + [str(o) for o in objs] + ["-o", str(exe), f"-L{prefix}/lib", f"-Wl,-rpath,{prefix}/lib",
                                                   "-lkokkoscontainers", "-lkokkoscore", "-lcuda", "-ldl"],
                   check=True, stdout=subprocess.DEVNULL)
    return exe


def tool(name: str) -> str:
    """A build tool from PATH, else the one pip put beside this Python."""
    import shutil

    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.exists() else name)


def parse(out: str) -> tuple[float, list[str]]:
    """(loop seconds, thermo lines without their time columns)."""
    time = None
    thermo = []
    for line in out.splitlines():
        if line.endswith("PERFORMANCE"):
            time = float(line.split("|")[1].split()[0])
        parts = line.split()
        if len(parts) >= 5 and parts[0].isdigit() and "|" not in line:
            thermo.append(" ".join(parts[:4]))  # step, T, PE, ETot (the time columns differ)
    if time is None:
        raise RuntimeError("no PERFORMANCE line in:\n" + out[-2000:])
    return time, thermo


CPUS: set[int] | None = None  # --cpus: every run pinned to these


def pin() -> None:
    if CPUS:
        os.sched_setaffinity(0, CPUS)


def run(cmd: list[str], cwd: Path, env: dict) -> tuple[float, list[str]]:
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600, preexec_fn=pin)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    return parse(r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cxx", required=True, help="a checkout of github.com/ECP-copa/ExaMiniMD")
    ap.add_argument("--py", required=True, help="a checkout of github.com/kokkos/pykokkos (its examples/ExaMiniMD)")
    ap.add_argument("--runs", type=int, default=3, help="alternated runs per program and size (median)")
    ap.add_argument("--sizes", default="", help="comma-separated n:steps (4 n^3 atoms), default all four")
    ap.add_argument("--no-fill", action="store_true", help="run the Python program without --fill")
    ap.add_argument("--space", choices=("OpenMP", "Cuda"), default="OpenMP", help="where both programs run")
    ap.add_argument("--cpus", default="", help="comma-separated CPUs every run is pinned to")
    a = ap.parse_args()
    global CPUS
    CPUS = {int(c) for c in a.cpus.split(",") if c} or None
    work = Path(tempfile.gettempdir()) / "pk-bench-md"
    work.mkdir(exist_ok=True)
    exe = build_cxx(Path(a.cxx).resolve(), work, a.space)
    py_dir = Path(a.py).resolve() / "examples" / "ExaMiniMD" / "standalone"
    sizes = [tuple(int(x) for x in s.split(":")) for s in a.sizes.split(",") if s] or SIZES
    threads = os.environ.get("OMP_NUM_THREADS", "2")
    base = dict(os.environ, OMP_NUM_THREADS=threads)
    py_env = dict(base, PK_EXA_SPACE="Cuda") if a.space == "Cuda" else base
    print(f"ExaMiniMD, LJ: C++ Kokkos vs Python on pykokkos-fuse; space {a.space}, OMP_NUM_THREADS={threads}, "
          f"medians of {a.runs} alternated runs of each program's loop time"
          + (f"; pinned to CPUs {sorted(CPUS)}" if CPUS else "")
          + ("" if a.space == "Cuda" else f"; C++ built with {host_flags()}"))
    print(f"{'system':>18s} | {'C++':>9s} | {'Python eager':>18s} | {'Python PK_FUSE=1':>18s} | thermo    | "
          "spread (slowest run / fastest - 1): C++, eager, fused")
    for n, steps in sizes:
        inp = work / f"in.lj.{n}.{steps}"
        inp.write_text(INPUT.format(n=n, steps=steps))
        # --fill: forces are zeroed by `f.fill(0)`, as C++ does with deep_copy; without it
        # the Python program zeroes them with a loop of 3N element writes from Python.
        py = [sys.executable, "src/main.py", "-il", str(inp)] + ([] if a.no_fill else ["--fill"])
        progs = {"cxx": ([str(exe), "-il", str(inp)], work, base),
                 "eager": (py, py_dir, dict(py_env, PK_FUSE="0")),
                 "fused": (py, py_dir, dict(py_env, PK_FUSE="1"))}
        times = {k: [] for k in progs}
        thermo = {k: [] for k in progs}
        for k, p in progs.items():  # a first run each: compiles, warms caches; not timed
            run(*p)
        for _ in range(a.runs):
            for k, p in progs.items():
                t, th = run(*p)
                times[k].append(t)
                thermo[k].append(th)
        med = {k: statistics.median(v) for k, v in times.items()}
        same = all(th == thermo["cxx"][0] for k in progs for th in thermo[k])
        atoms = 4 * n ** 3
        print(f"{atoms:>9,d} x {steps:<6d} | {med['cxx']:8.3f}s | {med['eager']:8.3f}s ({med['eager'] / med['cxx']:.2f}x) | "
              f"{med['fused']:8.3f}s ({med['fused'] / med['cxx']:.2f}x) | {'identical' if same else 'DIFFERS  '} | "
              + ", ".join(f"{max(times[k]) / min(times[k]) - 1:.0%}" for k in progs),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

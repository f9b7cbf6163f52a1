"""(b) Cold compile and warm load, each in fresh processes.

cold: a new, empty PK_CACHE_DIR (in a temp dir). The first launch there builds
      the precompiled Kokkos header, the kernel, the support library, and
      starts Kokkos; a second, different kernel then pays only its own compile.
      With PK_LOG=info the Rust side logs each stage's time; we parse those
      lines (best effort) for a breakdown.
warm: the same cache, new processes: the first launch finds the .so on disk.
      Measured as a user sees it (first launch call to return), and split into
      toolchain probe (pk.config()), Kokkos start (pk.initialize()) and the
      remaining launch (translate + cache lookup + dlopen + run).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import kokkos_env  # noqa: E402

WARM_PROCESSES = 7

# --- child side: runs in a fresh interpreter --------------------------------

def _child(mode: str) -> None:
    import time

    t0 = time.perf_counter()
    import pykokkos as pk
    t_import = time.perf_counter() - t0

    @pk.workunit
    def first(i, a, b, c, s):
        a[i] = b[i] + s * c[i]

    @pk.workunit
    def second(i, a, b, c, s):
        a[i] = b[i] * s - c[i]

    n = 1000
    a, b, c = (pk.View([n], pk.double) for _ in range(3))
    out = {"import_s": t_import}
    clock = time.perf_counter
    if mode == "cold":
        t = clock()
        pk.parallel_for(n, first, a=a, b=b, c=c, s=2.0)
        out["first_s"] = clock() - t
        t = clock()
        pk.parallel_for(n, second, a=a, b=b, c=c, s=2.0)
        out["second_s"] = clock() - t
    elif mode == "warm":
        t = clock()
        pk.parallel_for(n, first, a=a, b=b, c=c, s=2.0)
        out["first_launch_s"] = clock() - t
        t = clock()
        pk.parallel_for(n, first, a=a, b=b, c=c, s=2.0)
        out["second_launch_s"] = clock() - t
    elif mode == "warm-split":
        t = clock()
        pk.config()
        out["toolchain_s"] = clock() - t
        t = clock()
        pk.initialize()
        out["kokkos_init_s"] = clock() - t
        t = clock()
        pk.parallel_for(n, first, a=a, b=b, c=c, s=2.0)
        out["load_launch_s"] = clock() - t
    print("PKBENCH " + json.dumps(out))


# --- parent side -------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SPAN = re.compile(r"(\w+)\{([^}]*)\}: close time\.busy=([0-9.]+)(ns|µs|us|ms|s) ")
_SCALE = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def _spans(stderr: str) -> list[tuple[str, str, float]]:
    """(span name, fields, seconds) of each closed span in a PK_LOG=info log."""
    found = []
    for line in _ANSI.sub("", stderr).splitlines():
        # Nested spans print as parent:child{...}; the last one is the span closing.
        line = re.sub(r"\w+(\{[^}]*\})?:(?=\w+(\{|:))", "", line)
        m = _SPAN.search(line)
        if m:
            found.append((m.group(1), m.group(2), float(m.group(3)) * _SCALE[m.group(4)]))
        else:
            m = re.search(r"(kokkos_initialize): close time\.busy=([0-9.]+)(ns|µs|us|ms|s) ", line)
            if m:
                found.append((m.group(1), "", float(m.group(2)) * _SCALE[m.group(3)]))
    return found


def _run(mode: str, cache: str, log: bool = False) -> tuple[dict, str]:
    env = kokkos_env()
    env["PK_CACHE_DIR"] = cache
    env.pop("PK_LOG", None)
    if log:
        env["PK_LOG"] = "info"
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode],
                       env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"bench_compile child '{mode}' failed:\n{p.stdout}\n{p.stderr}")
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("PKBENCH ")][-1]
    return json.loads(line[len("PKBENCH "):]), p.stderr


def main(warm_processes: int = WARM_PROCESSES) -> dict:
    tmp = tempfile.mkdtemp(prefix="pk-bench-cache-")
    try:
        cold, log = _run("cold", tmp, log=True)
        fig = {
            "cold_first_kernel_s": cold["first_s"],
            "cold_second_kernel_s": cold["second_s"],
        }
        spans = _spans(log)
        compiles = [t for name, fields, t in spans if name == "compile" and "support" not in fields]
        for name, fields, t in spans:
            if name == "precompile_header":
                fig["cold_pch_build_s"] = t
            elif name == "compile" and "support" in fields:
                fig["cold_support_lib_s"] = t
            elif name == "kokkos_initialize":
                fig["cold_kokkos_init_total_s"] = t
        if len(compiles) >= 2:
            fig["cold_first_kernel_compile_s"] = compiles[0]
            fig["cold_second_kernel_compile_s"] = compiles[1]

        warm, split = [], []
        for _ in range(warm_processes):  # interleaved, so load changes hit both alike
            warm.append(_run("warm", tmp)[0])
            split.append(_run("warm-split", tmp)[0])
        med = lambda rows, k: statistics.median(r[k] for r in rows)  # noqa: E731
        fig.update({
            "warm_first_launch_ms": med(warm, "first_launch_s") * 1e3,
            "warm_first_launch_min_ms": min(r["first_launch_s"] for r in warm) * 1e3,
            "warm_second_launch_ms": med(warm, "second_launch_s") * 1e3,
            "warm_split_toolchain_ms": med(split, "toolchain_s") * 1e3,
            "warm_split_kokkos_init_ms": med(split, "kokkos_init_s") * 1e3,
            "warm_split_load_launch_ms": med(split, "load_launch_s") * 1e3,
            "import_pykokkos_ms": med(warm + split, "import_s") * 1e3,
            "warm_processes": warm_processes,
            "warm_first_launch_all_ms": [round(r["first_launch_s"] * 1e3, 2) for r in warm],
        })
        return fig
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(sys.argv[2])
    else:
        for k, v in main().items():
            print(f"{k:32s} {v:.4f}" if isinstance(v, float) else f"{k:32s} {v}")

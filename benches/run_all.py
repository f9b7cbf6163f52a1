"""Runs every benchmark in one process (children where a fresh process is the
point) and prints one table of figures, targets and ratios. `make bench` runs it.

Results also go to benches/last_results.json (not tracked by git).
Timing figures are never asserted: they depend on the machine and its load.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_checks  # noqa: E402
import bench_compile  # noqa: E402
import bench_fusion  # noqa: E402
import bench_host_access  # noqa: E402
import bench_trace  # noqa: E402
import bench_launch  # noqa: E402
import bench_lazy  # noqa: E402
import bench_md  # noqa: E402
import bench_translate  # noqa: E402
import bench_triad  # noqa: E402
from _util import slower_by_chance  # noqa: E402

# Order matters: the compile benchmark spawns fresh processes and is run before
# this process starts Kokkos' OpenMP threads; the triad runs last.
BENCHES = [
    ("compile", bench_compile),
    ("translate", bench_translate),
    ("launch", bench_launch),
    ("lazy", bench_lazy),
    ("triad", bench_triad),
    ("fusion", bench_fusion),
    ("host", bench_host_access),
    ("md", bench_md),
    ("trace", bench_trace),
    ("checks", bench_checks),
]

# (bench, key, label, unit, target) with target = ("<=", x) | (">=", x) | None
ROWS = [
    ("host", None, "(h) host element access, View against NumPy (same shapes, one run; rows repeat as in loops)", None, None),
    ("host", "eager:v[i]:ratio", "eager v[i]: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "eager:v[i]_write:ratio", "eager v[i] = x: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "eager:m[i,j]:ratio", "eager m[i,j]: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "eager:m[i,j]_write:ratio", "eager m[i,j] = x: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "eager:m[i][j]:ratio", "eager m[i][j]: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "eager:m[i][j]_write:ratio", "eager m[i][j] = x: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "eager:t[e][j][i]:ratio", "eager t[e][j][i]: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "eager:t[e][j][i]_write:ratio", "eager t[e][j][i] = x: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "lazy:v[i]:ratio", "lazy v[i]: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "lazy:v[i]_write:ratio", "lazy v[i] = x: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "lazy:m[i,j]:ratio", "lazy m[i,j]: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "lazy:m[i,j]_write:ratio", "lazy m[i,j] = x: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "lazy:m[i][j]:ratio", "lazy m[i][j]: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "lazy:m[i][j]_write:ratio", "lazy m[i][j] = x: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "lazy:t[e][j][i]:ratio", "lazy t[e][j][i]: pk / NumPy", "x", ("<=", 2.0)),
    ("host", "lazy:t[e][j][i]_write:ratio", "lazy t[e][j][i] = x: pk / NumPy", "x", ("<=", 2.0)),
    ("checks", None, "(j) safety checks (issue 39): integer division tested for zero, launch-time extent check", None, None),
    ("checks", "divmod_ms", "x[i] // d + x[i] % d, d a launch scalar, 2^22 int64", "ms", None),
    ("checks", "rowcol_ms", "stencil index math k // (n - 2), k % (n - 2), 2046^2 items", "ms", None),
    ("checks", "launch_us", "cached 1-element launch of 3 views (extent check on each)", "us", None),
    ("trace", None, "(i) profiling traces: recording's cost (same loop traced / untraced - 1)", None, None),
    ("trace", "eager_big_overhead", "eager, kernels over 2^20 doubles", "x", ("<=", 0.05)),
    ("trace", "lazy_big_overhead", "PK_FUSE=1, kernels over 2^20 doubles", "x", ("<=", 0.05)),
    ("trace", "eager_tiny_overhead", "eager, 10-element kernels (about 3 us a launch)", "x", None),
    ("trace", "lazy_tiny_overhead", "PK_FUSE=1, 10-element kernels", "x", None),
    ("launch", None, "(a) launch of a cached trivial kernel, 1 element", None, None),
    ("launch", "pk_launch_us", "pk.parallel_for, median", "us", ("<=", 10.0)),
    ("launch", "pk_launch_mean_us", "pk.parallel_for, mean (incl. scheduler outliers)", "us", None),
    ("launch", "pk_launch_p99_us", "pk.parallel_for, 99th percentile", "us", None),
    ("launch", "pk_native_launch_us", "_native.launch directly (no Python wrapper)", "us", None),
    ("launch", "pk_launch_serial_us", "same, pk.Serial space (no OpenMP fork/join)", "us", None),
    ("launch", "pk_launch_numpy_args_us", "pk.parallel_for with NumPy arrays as args", "us", None),
    ("launch", "numpy_add_us", "np.add(x, y, out=z), 1 element, median", "us", None),
    ("launch", "pk_over_numpy", "ratio pk launch / np.add", "x", None),
    ("launch", "view_new_us", "pk.View([64], pk.double), made and dropped, median", "us", None),
    ("launch", "view_new_over_numpy_zeros", "ratio pk.View / np.zeros(64)", "x", None),
    ("launch", "pk_launch_13_args_us", "13 keyword args as ExaMiniMD's (views, a subview, scalars)", "us", None),
    ("launch", "pk_launch_13_over_3_args_us", "  its cost above the 3-argument launch", "us", ("<=", 1.0)),
    ("launch", "view_slice_us", "v[i, :] of a 2-D View (a subview), median", "us", ("<=", 1.0)),
    ("launch", "numpy_slice_us", "NumPy's a[i, :], median", "us", None),
    ("launch", "halo_copy_800_us", "ExaMiniMD's halo copy, 800 items, a contiguous run per thread", "us", None),
    ("launch", "halo_copy_800_dealt_us", "  the same copy dealt out in small chunks (items of unequal cost)", "us", None),
    ("launch", "halo_copy_dealt_over_runs", "  ratio dealt / runs", "x", None),
    ("compile", None, "(b) compile (new cache dir) and warm load (new process)", None, None),
    ("compile", "cold_first_kernel_s", "first kernel incl. precompiled header build", "s", None),
    ("compile", "cold_pch_build_s", "  of which: precompiled header", "s", None),
    ("compile", "cold_first_kernel_compile_s", "  of which: kernel compile", "s", None),
    ("compile", "cold_support_lib_s", "  of which: support library compile", "s", None),
    ("compile", "cold_second_kernel_s", "second new kernel (first launch)", "s", None),
    ("compile", "warm_first_launch_ms", "warm load: first launch in a new process, median", "ms", ("<=", 20.0)),
    ("compile", "warm_first_launch_min_ms", "warm load: best process", "ms", None),
    ("compile", "warm_split_toolchain_ms", "  split: toolchain probe (pk.config())", "ms", None),
    ("compile", "warm_split_kokkos_init_ms", "  split: Kokkos start (pk.initialize())", "ms", None),
    ("compile", "warm_split_load_launch_ms", "  split: rest of 1st launch (translate+dlopen+run)", "ms", None),
    ("compile", "import_pykokkos_ms", "import pykokkos (not in the figure above)", "ms", None),
    ("triad", None, "(c) triad a = b + s*c, 2^24 doubles", None, None),
    ("triad", "pk_best_ms", "pk kernel, best", "ms", None),
    ("triad", "cpp_best_ms", "plain C++/OpenMP, best", "ms", None),
    ("triad", "pk_median_ms", "pk kernel, median", "ms", None),
    ("triad", "cpp_median_ms", "plain C++/OpenMP, median", "ms", None),
    ("triad", "pk_gbs", "pk bandwidth (24 B/element)", "GB/s", None),
    ("triad", "cpp_gbs", "C++ bandwidth (24 B/element)", "GB/s", None),
    ("triad", "pk_fraction_of_cpp", "pk as a fraction of C++ (best vs best)", "x", (">=", 0.90)),
    ("triad", "cpp_inproc_best_ms", "same C++ loop in this process on pk's Views (ctypes)", "ms", None),
    ("triad", "pk_fraction_of_cpp_inproc", "pk as a fraction of that (codegen + dispatch only)", "x", None),
    ("lazy", None, "(e) lazy runtime (PK_FUSE=1): recording and flushing", None, None),
    ("lazy", "record_us", "record one launch (pk.parallel_for), median", "us", ("<=", 1.0)),
    ("lazy", "record_p99_us", "record one launch, 99th percentile", "us", None),
    ("lazy", "eager_launch_us", "same launch eagerly (incl. kernel), median", "us", ("<=", 2.0)),
    ("lazy", "flush1000_chain_ms", "flush of 1,000 pending launches, one chain", "ms", None),
    ("lazy", "eager1000_chain_ms", "the same 1,000 launches run eagerly", "ms", None),
    ("lazy", "flush_overhead_chain_us", "flush minus eager, per launch (chain)", "us", None),
    ("lazy", "flush1000_indep_ms", "flush of 1,000 independent pending launches", "ms", None),
    ("lazy", "eager1000_indep_ms", "the same 1,000 launches run eagerly", "ms", None),
    ("lazy", "flush_overhead_indep_us", "flush minus eager, per launch (independent)", "us", None),
    ("lazy", "loop_read_lazy_us", "loop of map + reduce + read of the total, lazy, per iteration", "us", None),
    ("lazy", "loop_read_eager_us", "the same loop eagerly, per iteration", "us", None),
    ("lazy", "loop_read_lazy_over_eager", "loop: lazy / eager (never slower)", "x", ("<=", 1.0)),
    ("lazy", "loop_mid_lazy_us", "the same loop over 2^18 doubles, lazy (map and reduction fused)", "us", None),
    ("lazy", "loop_mid_eager_us", "the same over 2^18 doubles, eagerly", "us", None),
    ("lazy", "loop_mid_lazy_over_eager", "loop over 2^18: lazy / eager (never slower)", "x", ("<=", 1.0)),
    ("lazy", "alone_lazy_us", "map + element read, then reduce + read, 2^15 doubles: lazy (each flush one launch)", "us", None),
    ("lazy", "alone_eager_us", "the same eagerly", "us", None),
    ("lazy", "alone_lazy_over_eager", "flushes of one launch: lazy / eager (never slower)", "x", ("<=", 1.0)),
    ("lazy", "tiny_chain_lazy_us", "7 maps + sum over 64 doubles + read, lazy, per iteration", "us", None),
    ("lazy", "tiny_chain_eager_us", "the same eagerly, per iteration", "us", None),
    ("lazy", "tiny_chain_lazy_over_eager", "tiny chain: lazy / eager (never slower)", "x", ("<=", 1.0)),
    ("lazy", "unread_stream_lazy_us", "a fresh program's 12,000 launches nothing reads until the end, lazy, per launch", "us", None),
    ("lazy", "unread_stream_eager_us", "the same eagerly", "us", None),
    ("lazy", "unread_stream_lazy_over_eager", "unread stream: lazy / eager", "x", None),
    ("lazy", "forced_fused_cached_us", "tiny chain always fused (adaptive off), plan cache on, per iteration", "us", None),
    ("lazy", "forced_fused_uncached_us", "the same, plan cache off (every flush planned)", "us", None),
    ("lazy", "plan_cache_speedup", "plan cache: uncached / cached", "x", (">=", 1.0)),
    ("fusion", None, "(f2) map into a View still referenced, then its reduction (2^24 doubles)", None, None),
    ("fusion", "live_eager_ms", "eager: 2 kernels", "ms", None),
    ("fusion", "live_fused_ms", "PK_FUSE=1: one kernel, t's map deferred (t not stored)", "ms", None),
    ("fusion", "live_fused_speedup", "eager / fused", "x", (">=", 1.0)),
    ("fusion", "live_read_eager_ms", "the same, then t[0] read: eager", "ms", None),
    ("fusion", "live_read_fused_ms", "the same, fused (the cost model stops deferring)", "ms", None),
    ("fusion", "live_read_speedup", "eager / fused, t read", "x", (">=", 1.0)),
    ("fusion", "stats_eager_ms", "max, min, sum of one View, each read in turn: eager (3 passes)", "ms", None),
    ("fusion", "stats_fused_ms", "the same, fused: one multi-value reduction", "ms", None),
    ("fusion", "stats_speedup", "eager / fused, statistics", "x", (">=", 1.0)),
    ("fusion", "dot_pk_ms", "dot as a pk reduction", "ms", None),
    ("fusion", "dot_numpy_ms", "np.dot", "ms", None),
    ("fusion", "dot_pk_over_numpy", "pk / np.dot", "x", ("<=", 1.0)),
    ("fusion", None, "(f) fusion (PK_FUSE=1) vs eager, 2^24 doubles unless stated", None, None),
    ("fusion", "chain2_speedup", "k=2 map chain, temporaries die: speedup (ideal 2)", "x", None),
    ("fusion", "chain4_speedup", "k=4 map chain: speedup (ideal 4)", "x", None),
    ("fusion", "chain8_eager_ms", "k=8 map chain, eager", "ms", None),
    ("fusion", "chain8_fused_ms", "k=8 map chain, fused", "ms", None),
    ("fusion", "chain8_speedup", "k=8 map chain: speedup (ideal 8)", "x", (">=", 4.0)),
    ("fusion", "babel_eager_ms", "BabelStream copy,mul,add,triad,dot: eager", "ms", None),
    ("fusion", "babel_fused_ms", "BabelStream sequence: fused", "ms", None),
    ("fusion", "babel_speedup", "BabelStream sequence: speedup (ideal 2)", "x", None),
    ("fusion", "babel_fused_kernels", "kernels the BabelStream sequence became", "", None),
    ("fusion", "many_eager_s", "100,000 launches of a 10-element kernel + 1 read: eager", "s", None),
    ("fusion", "many_fused_s", "same, fused (record + flush)", "s", ("<=", 1.0)),
    ("fusion", "compile_single_s", "compile of one new single-launch kernel", "s", None),
    ("fusion", "compile_region_s", "compile of one new 2-launch fused region", "s", None),
    ("md", None, "(g) 2-D host kernels over 2048^2 doubles", None, None),
    ("md", "sum2_ms", "2-D sum (MDRangePolicy)", "ms", None),
    ("md", "sum1_ms", "1-D sum of the same bytes", "ms", None),
    ("md", "sum2_over_sum1", "2-D sum / 1-D sum (was 2.6 through Kokkos' MDRange)", "x", ("<=", 1.5)),
    ("md", "sum2_over_numpy", "2-D sum / NumPy's sum", "x", ("<=", 1.0)),
    ("md", "stencil_ms", "5-point stencil (MDRangePolicy)", "ms", None),
    ("md", "stencil_over_numpy", "stencil / NumPy's slicing form", "x", ("<=", 1.0)),
    ("translate", None, "(d) parse + translate, 30-line workunit", None, None),
    ("translate", "generate_source_us", "generate_source (parse cached; incl. name resolution)", "us", ("<=", 1000.0)),
    ("translate", "generate_source_fresh_us", "generate_source on a fresh workunit (parse+resolve+translate)", "us", ("<=", 1000.0)),
    ("translate", "parse_us", "parse only (Workunit.params(), fresh workunit)", "us", None),
    ("translate", "resolve_us", "Python-side name resolution only", "us", None),
    ("translate", "translate_only_us", "translate excl. resolution and parse (derived)", "us", None),
    ("translate", "decorate_us", "@pk.workunit decorator (once per definition)", "us", None),
]


def _fmt(v) -> str:
    if isinstance(v, float):
        a = abs(v)
        return f"{v:.3f}" if a < 10 else f"{v:.1f}" if a < 1000 else f"{v:.0f}"
    return str(v)


def _machine() -> dict:
    cxx = ""
    try:
        import pykokkos as pk

        compiler = pk.config()["compiler"]
        cxx = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except Exception:  # noqa: BLE001
        pass
    import numpy as np

    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "compiler": cxx,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "(unset)"),
        "loadavg_start": os.getloadavg()[0],
    }


def main() -> int:
    t_start = time.perf_counter()
    meta = _machine()
    results: dict = {}
    errors: dict = {}
    secs: dict = {}
    for name, mod in BENCHES:
        t0 = time.perf_counter()
        print(f"running {name} ...", file=sys.stderr, flush=True)
        try:
            results[name] = mod.main()
        except Exception:  # noqa: BLE001
            errors[name] = traceback.format_exc()
            print(errors[name], file=sys.stderr)
        secs[name] = time.perf_counter() - t0
    meta["loadavg_end"] = os.getloadavg()[0]
    meta["total_s"] = time.perf_counter() - t_start

    print()
    print(f"pykokkos-fuse benchmarks  {meta['date']}  {meta['host']}: {meta['cpus']} CPUs, "
          f"Python {meta['python']}, NumPy {meta['numpy']}, {meta['compiler']}")
    threads = results.get("triad", results.get("launch", {})).get("threads", "?")
    print(f"Kokkos OpenMP threads: {threads} (OMP_NUM_THREADS={meta['omp_num_threads']}); "
          f"load average {meta['loadavg_start']:.2f} at start, {meta['loadavg_end']:.2f} at end; "
          f"total {meta['total_s']:.0f} s")
    w = 66
    print()
    print(f"{'figure':{w}s} {'value':>9s} {'unit':5s} {'target':>9s} {'value/target':>12s}  status")
    print("-" * (w + 48))
    summary = []
    for bench, key, label, unit, target in ROWS:
        if key is None:
            took = f"  [{secs[bench]:.1f} s]" if bench in secs else ""
            print(f"{label}{took}")
            if bench in errors:
                print("    FAILED: " + errors[bench].strip().splitlines()[-1])
            continue
        v = results.get(bench, {}).get(key)
        if v is None:
            continue
        tgt = ratio = status = ""
        if target:
            op, x = target
            tgt = f"{op} {_fmt(x)}"
            ratio = f"{v / x:.2f}"
            ok = v <= x if op == "<=" else v >= x
            status = "met" if ok else "MISSED"
            pairs = results.get(bench, {}).get(f"{key}_pairs")
            if not ok and pairs:
                # A side-by-side ratio just past its bound, the first slower
                # in too few pairs to tell from the machine's noise.
                slower, n = pairs
                if slower_by_chance(slower, n) >= 0.05:
                    status = f"tie: slower in {slower}/{n} pairs"
            summary.append((label, status))
        print(f"  {label:{w - 2}s} {_fmt(v):>9s} {unit:5s} {tgt:>9s} {ratio:>12s}  {status}")
    print("-" * (w + 48))
    missed = [lbl for lbl, s in summary if s == "MISSED"]
    ties = [f"{lbl} ({s[5:]})" for lbl, s in summary if s.startswith("tie")]
    met = len(summary) - len(missed) - len(ties)
    print(f"targets met: {met}/{len(summary)}" + (f"; ties within noise: {'; '.join(ties)}" if ties else "") +
          (f"; missed: {'; '.join(missed)}" if missed else ""))
    if meta["loadavg_start"] > 0.5 * (meta["cpus"] or 1):
        print("note: the machine was busy when this run started (load average above half the CPUs): "
              "timings are pessimistic; best-of figures are the least affected.")

    out = {"meta": meta, "results": results, "errors": errors, "bench_seconds": secs}
    with open(os.path.join(HERE, "last_results.json"), "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
    print(f"results written to {os.path.join(HERE, 'last_results.json')}")
    if "--json-line" in sys.argv:  # every row's figure, one line (benches/ab.py compares two builds)
        print(json.dumps({f"{b}:{k}": results[b][k] for b, k, *_ in ROWS
                          if k is not None and isinstance(results.get(b, {}).get(k), (int, float))}))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m pykokkos`: replay and summarize profiling traces, and look after
the compile cache. `python -m pykokkos <command> --help` explains each."""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import tempfile


def _replay(args) -> int:
    import pykokkos as pk
    from .tools._replay import Replayer
    from .runtime._tracefile import load

    trace = load(args.trace)
    if args.compile_only:
        return _compile_only(trace, args)
    modes = {"fuse": [True], "nofuse": [False], "both": [False, True]}[args.mode]
    results = {}
    for fused in modes:
        best, report = float("inf"), None
        # An untimed pass first: kernels compile, and Kokkos starts its threads
        # with the first kernel a process runs. It runs on the recorded data,
        # as the timed passes do: kernels whose loops depend on the data (a
        # neighbour list's counts) could run far longer on zeroed memory.
        pk._native.set_lazy(fused)
        Replayer(trace, space=args.space, scale=args.scale).run()
        pk._native.set_lazy(False)
        for _ in range(args.repeat):
            pk._native.set_lazy(fused)
            r = Replayer(trace, space=args.space, scale=args.scale)
            with tempfile.TemporaryDirectory() as d:
                with pk.trace.record(os.path.join(d, "replay.jsonl")) as p:
                    r.run()
                replayed = load(p)
                kernels = replayed.of("kernel")
                if args.chrome:
                    from .runtime._chrome import write

                    base, ext = os.path.splitext(args.chrome)
                    write(replayed, args.chrome if len(modes) == 1 else f"{base}.{'fused' if fused else 'unfused'}{ext}")
            took = sum(k["us"] for k in kernels) / 1e6
            if took < best:
                best, report = took, (kernels, r)
            pk._native.set_lazy(False)
        kernels, r = report
        name = "fused" if fused else "unfused"
        results[name] = best
        print(f"{name}: {len(kernels)} kernel run(s), kernel time {best * 1e3:.3f} ms (best of {args.repeat})")
        per = collections.defaultdict(lambda: [0, 0.0])
        for k in kernels:
            per[k["name"]][0] += 1
            per[k["name"]][1] += k["us"]
        for n, (c, us) in sorted(per.items(), key=lambda kv: -kv[1][1])[:10]:
            print(f"  {us / 1e3:10.3f} ms  x{c:<5d} {n}")
        bad = r.check()
        if r.data:
            rounded = f", {r.rounded} within rounding on {args.space}" if r.rounded else ""
            print(
                "  final buffers: "
                + ("equal to the recording" if not bad else "DIFFER: " + ", ".join(bad))
                + f" ({r.compared} of {len(r.buffers)} compared{rounded})"
            )
            if bad:
                return 1
    if len(results) == 2 and results["fused"] > 0:
        print(f"unfused / fused kernel time: {results['unfused'] / results['fused']:.2f}x")
    return 0


def _compile_only(trace, args) -> int:
    """Builds every kernel and fused region the trace needs, runs none."""
    import time

    import pykokkos as pk
    from .tools._replay import Replayer
    from .runtime._tracefile import load

    t0 = time.perf_counter()
    pk._native.set_build_only(True)
    pk._native.set_lazy(args.mode != "nofuse")
    try:
        with tempfile.TemporaryDirectory() as d:
            with pk.trace.record(os.path.join(d, "prewarm.jsonl")) as p:
                Replayer(trace, space=args.space, fill=False).run()
            compiles = load(p).of("compile")
    finally:
        pk._native.set_lazy(False)
        pk._native.set_build_only(False)
    built = [c for c in compiles if not c["cached"] and c["kernel"] != "support"]
    hits = [c for c in compiles if c["cached"] and c["kernel"] != "support"]
    print(f"compiled {len(built)} kernel(s), {len(hits)} already in the cache, in {time.perf_counter() - t0:.2f} s")
    return 0


def _summary(args) -> int:
    from .runtime._tracefile import load

    traces = sorted((load(p) for p in args.traces), key=lambda t: t.header.get("rank", 0))
    bound = None
    for t in traces:
        bound = _summary_one(t, args, bound)
    if len(traces) > 1:
        _summary_ranks(traces, args.top)
    return 0


def _summary_one(t, args, bound):
    """One trace's summary; returns the byte bound it used (measured once)."""
    launches, kernels, compiles = t.of("launch"), t.of("kernel"), t.of("compile")
    total = sum(k["us"] for k in kernels)
    built = [c for c in compiles if not c["cached"]]
    comp = sum(c["us"] for c in built)
    end = max((e["t_us"] for e in t.events), default=0.0)
    rank = f" (rank {t.header['rank']} of {t.header['ranks']})" if "rank" in t.header else ""
    print(f"{t.path}{rank}: {len(launches)} launches recorded, {len(kernels)} kernels run, {len(t.of('flush'))} flushes")
    print(
        f"kernel time {total / 1e3:.3f} ms; compile {comp / 1e3:.1f} ms for {len(built)} kernel(s) "
        f"({100 * comp / end if end else 0:.0f}% of the {end / 1e6:.3f} s recorded), "
        f"{len(compiles) - len(built)} cache hit(s)"
    )
    reloads = sum(len(e.get("reload", {})) for e in launches)
    if t.header.get("data"):
        print(f"stored data: {reloads} buffer(s) stored again after the host wrote them (element writes, NumPy edits, messages received)")
    moved = collections.defaultdict(int)
    for e in launches:
        moved[e["label"]] += sum(a["bytes"][1] - a["bytes"][0] for a in e["args"] if a["kind"] == "view")
    per = collections.defaultdict(lambda: [0, 0.0])
    built_by = collections.defaultdict(set)  # "nvrtc" or "kokkos" (older traces: neither)
    for k in kernels:
        per[k["name"]][0] += 1
        per[k["name"]][1] += k["us"]
        built_by[k["name"]].add(k.get("via"))
    # The bound of the space the trace's kernels ran on (a Cuda trace against the GPU).
    space = collections.Counter(e["space"] for e in launches).most_common(1)
    space = space[0][0] if space else None
    if bound is None:
        bound = args.bandwidth or _copy_bandwidth(space)
        print(
            f"byte bound: {bound:.1f} GB/s ({'given' if args.bandwidth else 'a copy kernel measured now'}"
            f"{'' if args.bandwidth or not space else ' on ' + space})"
        )
    print(f"{'time (ms)':>10s} {'runs':>6s}  {'GB/s':>7s}  {'of bound':>8s}  kernel")
    for n, (c, us) in sorted(per.items(), key=lambda kv: -kv[1][1])[: args.top]:
        labels = n[len("fused(") : -1].split("+") if n.startswith("fused(") else [n]
        b = sum(moved.get(x, 0) for x in labels) / max(1, sum(1 for e in launches if e["label"] in labels)) * c
        rate = b / us / 1e3 if us > 0 else 0.0
        # A GPU kernel NVRTC built (the device shim) is marked: the others are Kokkos'.
        mark = " [nvrtc]" if "nvrtc" in built_by[n] else ""
        print(f"{us / 1e3:10.3f} {c:6d}  {rate:7.2f}  {100 * rate / bound:7.1f}%  {n}{mark}")
    return bound


def _summary_ranks(traces, top: int) -> None:
    """Several ranks' traces side by side: each kernel's time on the fastest
    and slowest rank (the imbalance a strong-scaling run loses to)."""
    per = collections.defaultdict(lambda: [0.0] * len(traces))
    for r, t in enumerate(traces):
        for k in t.of("kernel"):
            per[k["name"]][r] += k["us"]
    ranks = [t.header.get("rank", r) for r, t in enumerate(traces)]
    sizes = {t.header.get("ranks") for t in traces} - {None}
    missing = f"; ranks of {max(sizes)}: {len(traces)} given" if sizes and max(sizes) != len(traces) else ""
    print(f"all ranks ({', '.join(map(str, ranks))}{missing}):")
    print(f"{'min (ms)':>10s} {'max (ms)':>10s} {'max/min':>8s}  kernel")
    for n, t in sorted(per.items(), key=lambda kv: -max(kv[1]))[:top]:
        lo, hi = min(t), max(t)
        print(f"{lo / 1e3:10.3f} {hi / 1e3:10.3f} {hi / lo if lo > 0 else float('inf'):8.2f}  {n}")


def _merge(args) -> int:
    from .runtime._chrome import merge
    from .runtime._tracefile import load

    traces = sorted((load(p) for p in args.traces), key=lambda t: t.header.get("rank", 0))
    merge(traces, args.chrome)
    ranks = [t.header.get("rank") for t in traces]
    print(f"wrote {args.chrome}: {len(traces)} trace(s), ranks {ranks}")
    return 0


def _copy_bandwidth(space: str | None = None) -> float:
    """GB/s of a parallel copy kernel on this machine (bytes read plus written),
    in the given execution space (default: the default space)."""
    import pykokkos as pk
    from .tools._bandwidth import copy_bandwidth

    if space in ("Cuda", "OpenMP", "Serial"):
        pk.set_default_space(getattr(pk, space))
    return copy_bandwidth()


def _cache(args) -> int:
    import pykokkos as pk

    root = pk.config()["cache"]
    kernels = os.path.join(root, "kernels")
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(kernels) for f in fs) if os.path.isdir(kernels) else 0
    if args.action == "where":
        print(root)
    elif args.action == "size":
        n = len([f for f in os.listdir(kernels) if f.endswith(".so")]) if os.path.isdir(kernels) else 0
        print(f"{kernels}: {n} kernels, {size / 2**20:.1f} MiB")
    else:
        if not args.yes:
            print(f"would remove {kernels} ({size / 2**20:.1f} MiB); add --yes to do it")
            return 1
        shutil.rmtree(kernels, ignore_errors=True)
        print(f"removed {kernels}")
    return 0


def _explain(args) -> int:
    from .runtime._tracefile import load

    t = load(args.trace)
    labels = {e["seq"]: e["label"] for e in t.of("launch") if e["seq"] is not None}
    if args.dot:
        _dot(t, labels, args.dot)
    for k, f in enumerate(t.of("flush")):
        at = f" at {f['site']}" if f.get("site") else ""
        print(f"flush {k} ({f['demand']['kind']}{at}): {len(f['launches'])} launch(es) -> {len(f['regions'])} kernel(s)")
        for r, reg in enumerate(f["regions"]):
            names = "+".join(labels.get(s, "?") for s in reg["seqs"])
            dead = f", {len(reg['dead_temporaries'])} buffer(s) in registers" if reg["dead_temporaries"] else ""
            kept = reg.get("deferred") or []
            pending = f", {len(kept)} launch(es) left pending" if kept else ""
            print(f"  region {r}: {names}{dead}{pending}")
        if f.get("overwritten"):
            print(f"  dropped unrun (overwritten): {len(f['overwritten'])} launch(es)")
    return 0


def _dot(t, labels, path: str) -> None:
    """Each flush a cluster, each region a cluster in it, each launch a node;
    edges in program order within a region (the order its bodies run)."""
    lines = ["digraph trace {", "  rankdir=LR; node [shape=box, fontsize=10];"]
    for k, f in enumerate(t.of("flush")):
        lines.append(f'  subgraph cluster_f{k} {{ label="flush {k} ({f["demand"]["kind"]})";')
        for r, reg in enumerate(f["regions"]):
            lines.append(f'    subgraph cluster_f{k}_r{r} {{ label="kernel {r}"; style=filled; fillcolor="#eef";')
            for s in reg["seqs"]:
                lines.append(f'      n{s} [label="{labels.get(s, "?")} #{s}"];')
            lines += [f"      n{a} -> n{b};" for a, b in zip(reg["seqs"], reg["seqs"][1:])]
            lines.append("    }")
        lines.append("  }")
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    if shutil.which("dot"):
        import subprocess

        subprocess.run(["dot", "-Tsvg", path, "-o", os.path.splitext(path)[0] + ".svg"], check=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pykokkos", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("replay", help="run a trace's launches again and time them")
    r.add_argument("trace")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--fuse", dest="mode", action="store_const", const="fuse", help="lazy and fused (default)")
    g.add_argument("--no-fuse", dest="mode", action="store_const", const="nofuse", help="one kernel per launch")
    g.add_argument("--both", dest="mode", action="store_const", const="both", help="unfused, then fused")
    r.set_defaults(mode="fuse")
    r.add_argument("--space", choices=["OpenMP", "Serial", "Cuda"], help="run every launch in this space")
    r.add_argument("--repeat", type=int, default=1, help="replays per mode; the best is reported")
    r.add_argument("--scale", type=float, default=1.0, help="scale of the generated data (no stored data)")
    r.add_argument("--rules", help="fusion rules directory (as PK_FUSION_RULES)")
    r.add_argument("--disable", help="rules (and passes) to switch off, comma-separated (as PK_FUSION_DISABLE)")
    r.add_argument("--chrome", help="also write the replay as Chrome trace events (Perfetto) to this file")
    r.add_argument(
        "--compile-only", action="store_true", help="build every kernel and fused region the trace needs, run none (prewarms the cache)"
    )
    r.set_defaults(func=_replay)
    t = sub.add_parser("trace", help="inspect a trace")
    ts = t.add_subparsers(dest="what", required=True)
    s = ts.add_parser("summary", help="top kernels, compile share, bytes moved (several ranks' traces: side by side)")
    s.add_argument("traces", nargs="+")
    s.add_argument("--top", type=int, default=10)
    s.add_argument("--bandwidth", type=float, help="the byte bound in GB/s (default: measured with a copy kernel)")
    s.set_defaults(func=_summary)
    g = ts.add_parser("merge", help="the traces of several MPI ranks as one Chrome trace (a process per rank)")
    g.add_argument("traces", nargs="+")
    g.add_argument("--chrome", required=True, help="the Chrome trace file to write")
    g.set_defaults(func=_merge)
    u = sub.add_parser("tune", help="replay under rule variants; write the fastest rule set")
    u.add_argument("trace")
    u.add_argument("--out", default="tuned-rules", help="rules directory to write (default tuned-rules)")
    u.add_argument("--repeat", type=int, default=3)
    u.set_defaults(func=lambda a: __import__("pykokkos.tools._tune", fromlist=["tune"]).tune(a.trace, a.out, a.repeat))
    e = sub.add_parser("explain", help="the regions each flush of a trace formed")
    e.add_argument("trace")
    e.add_argument("--dot", help="also write the flushes' launches and regions as Graphviz DOT (and SVG if dot is installed)")
    e.set_defaults(func=_explain)
    m = sub.add_parser("migrate", help="rewrite a Numba program as PyKokkos source (runs it once to learn types)")
    m.add_argument("program", help="the Numba program (its `import numba` resolves to pykokkos.numba)")
    m.add_argument("-o", "--output", help="where to write the PyKokkos program (default: stdout)")
    m.add_argument("--args", default="", help="the program's command line for that run, as one string")
    m.set_defaults(func=lambda a: __import__("pykokkos.tools._migrate", fromlist=["main"]).main(a))
    d = sub.add_parser(
        "doctor", help="what this machine offers (compiler, Kokkos, CUDA, cache, MPI, Numba), and the fix for anything missing"
    )
    d.set_defaults(func=lambda a: __import__("pykokkos.tools._doctor", fromlist=["doctor"]).doctor())
    c = sub.add_parser("cache", help="the compile cache: where, size, clear")
    c.add_argument("action", choices=["where", "size", "clear"])
    c.add_argument("--yes", action="store_true", help="really clear")
    c.set_defaults(func=_cache)
    args = ap.parse_args(argv)
    from .runtime._tracefile import TraceError

    if args.command == "replay" and (args.rules or args.disable):
        # Rules are read once per process, at its start: replay in a fresh one.
        env = dict(os.environ)
        if args.rules:
            env["PK_FUSION_RULES"] = args.rules
        if args.disable:
            env["PK_FUSION_DISABLE"] = args.disable
        rest = [a for a in (argv if argv is not None else sys.argv[1:])]
        for flag in ("--rules", "--disable"):
            while flag in rest:
                k = rest.index(flag)
                del rest[k : k + 2]
            rest = [a for a in rest if not a.startswith(flag + "=")]
        import subprocess

        return subprocess.run([sys.executable, "-m", "pykokkos", *rest], env=env).returncode

    try:
        return args.func(args)
    except TraceError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""Chrome trace event output (Perfetto, chrome://tracing) from a profiling
trace: spans for recording each launch, planning each flush, each compile
and each kernel, in microseconds; a fused kernel's launches are nested in it
(each shown with an equal share of the kernel's time: Kokkos times the fused
kernel, not its parts). Kernel names are the labels Kokkos Tools see."""

from __future__ import annotations

import json

from ._tracefile import Trace

_THREADS = {1: "launches (record)", 2: "flushes (plan)", 3: "compile", 4: "kernels"}


def events(trace: Trace) -> list[dict]:
    out = [{"ph": "M", "pid": 0, "tid": t, "name": "thread_name", "args": {"name": n}} for t, n in _THREADS.items()]
    out.append({"ph": "M", "pid": 0, "tid": 0, "name": "process_name", "args": {"name": "pykokkos-fuse"}})

    def span(name, tid, end, dur, cat, args=None):
        dur = max(float(dur), 0.001)
        out.append(
            {"ph": "X", "pid": 0, "tid": tid, "name": name, "cat": cat, "ts": round(end - dur, 3), "dur": round(dur, 3), "args": args or {}}
        )

    for e in trace.events:
        t = float(e["t_us"])
        if e["ev"] == "launch":
            span(
                f"record {e['label']}",
                1,
                t,
                e.get("record_us", 0.0),
                "record",
                {"pattern": e["pattern"], "seq": e["seq"], "space": e["space"]},
            )
        elif e["ev"] == "flush":
            span(
                "flush",
                2,
                t,
                e.get("plan_us", 0.0),
                "plan",
                {"demand": e["demand"]["kind"], "launches": len(e["launches"]), "kernels": len(e["regions"])},
            )
        elif e["ev"] == "compile":
            name = f"{'cache hit' if e['cached'] else 'compile'} {e['kernel']}"
            span(name, 3, t, e["us"], "compile", {"key": e.get("key")})
        elif e["ev"] == "kernel":
            name, us = e["name"], float(e["us"])
            span(name, 4, t, us, "kernel", {"bodies": e.get("bodies", 1)})
            if name.startswith("fused(") and e.get("bodies", 1) > 1:
                parts = name[len("fused(") : -1].split("+")
                share = us / len(parts)
                for k, part in enumerate(parts):
                    span(part, 4, t - us + share * (k + 1), share, "fused launch", {"approximate_share": True})
    return out


def write(trace: Trace, path: str) -> None:
    with open(path, "w") as f:
        json.dump({"traceEvents": events(trace), "displayTimeUnit": "ms"}, f)


def merge(traces: list[Trace], path: str) -> None:
    """The traces of several MPI ranks in one Chrome file: a process per rank."""
    out = []
    for k, t in enumerate(traces):
        rank = t.header.get("rank", k)
        for e in events(t):
            e["pid"] = rank
            if e.get("name") == "process_name":
                e["args"] = {"name": f"rank {rank}"}
            out.append(e)
    with open(path, "w") as f:
        json.dump({"traceEvents": out, "displayTimeUnit": "ms"}, f)

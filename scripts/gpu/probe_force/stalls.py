"""An eager trace taken without CUDA_LAUNCH_BLOCKING, over the time-step loop:
how long each launch call took on the host (a call that waited for the GPU
stands out), and the host time before each kernel's launch."""

import collections
import json
import sys

events = [json.loads(line) for line in open(sys.argv[1])]
events = [e for e in events if e.get("ev") in ("launch", "kernel", "flush")]
# The loop: from the second force kernel on (before it: set-up and the first step).
forces = [k for k, e in enumerate(events) if e["ev"] == "kernel" and e["name"] == "fullneigh_for"]
events = events[forces[1] + 1 :]
calls, gaps, last_end = [], [], None
by, gap_to = collections.defaultdict(list), collections.defaultdict(list)
for e in events:
    if e["ev"] == "launch" and last_end is not None:
        gaps.append(e["t_us"] - last_end)
        gap_to[e["workunit"]["name"]].append(e["t_us"] - last_end)
    if e["ev"] == "kernel":
        calls.append((e["us"], e["name"]))
        by[e["name"]].append(e["us"])
        last_end = e["t_us"]
span = events[-1]["t_us"] - events[0]["t_us"]
print(
    f"{sys.argv[1]}: {len(calls)} kernels over {span / 1e3:.1f} ms; launch calls "
    f"{sum(c[0] for c in calls) / 1e3:.1f} ms, host between launches {sum(gaps) / 1e3:.1f} ms"
)
print("longest launch calls (us, kernel):", [(round(u), n) for u, n in sorted(calls, reverse=True)[:12]])
for title, table in (("launch calls", by), ("host time before each kernel's launch", gap_to)):
    print(f"{title}: name count total_ms median_us max_us")
    for n, us in sorted(table.items(), key=lambda kv: -sum(kv[1]))[:12]:
        us.sort()
        print(f"  {n:32s} {len(us):5d} {sum(us) / 1e3:8.2f} {us[len(us) // 2]:8.1f} {us[-1]:9.1f}")

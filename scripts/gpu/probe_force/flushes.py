"""What a trace's lazy path did: flushes by demand and site, recording and planning time."""

import collections
import json
import sys

for path in sys.argv[1:]:
    sites = collections.Counter()
    flushes, launches, at_once = 0, 0, 0
    rec = plan = kern = 0.0
    for line in open(path):
        e = json.loads(line)
        ev = e.get("ev")
        if ev == "flush":
            flushes += 1
            plan += e.get("plan_us") or 0
            site = (e.get("site") or "").rsplit("/", 1)[-1]
            sites[(e["demand"]["kind"], site, len(e.get("launches", [])))] += 1
        elif ev == "launch":
            launches += 1
            rec += e.get("record_us") or 0
            at_once += e.get("seq") is None
        elif ev == "kernel":
            kern += e.get("us") or 0
    print(
        f"{path}: {launches} launches ({at_once} run at once), {flushes} flushes; "
        f"record/submit {rec / 1e3:.1f} ms, planning {plan / 1e3:.1f} ms, kernel events {kern / 1e3:.1f} ms"
    )
    for k, v in sites.most_common(12):
        print(f"  {v:5d}  {k}")

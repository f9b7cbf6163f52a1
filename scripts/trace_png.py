"""Draws a Chrome trace (PK_TRACE_CHROME, `replay --chrome`) as a timeline PNG
laid out as Perfetto shows it: one track per thread, nested spans stacked under
their parent, names written in the spans wide enough to hold them.
`make trace-png` runs the demo with PK_TRACE_CHROME and draws docs/perfetto-demo.png.

    python scripts/trace_png.py run.json out.png [--window START_MS END_MS | --last-ms MS]
"""

from __future__ import annotations

import argparse
import json
import zlib

from PIL import Image, ImageDraw, ImageFont

WIDTH, ROW, LABEL, TOP = 1600, 22, 170, 40
COLORS = {
    "record": (117, 160, 219),
    "plan": (234, 160, 72),
    "compile": (196, 98, 98),
    "kernel": (96, 170, 112),
    "fused launch": (155, 205, 160),
}


def tracks(events):
    """{tid: [(depth, span), ...]} with spans nested by containment, as Perfetto stacks them."""
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    out = {}
    for tid in sorted({e["tid"] for e in events if e.get("ph") == "X"}):
        spans = sorted((e for e in events if e.get("ph") == "X" and e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"]))
        stack, rows = [], []
        for s in spans:
            # 10 ns of slack: the event times are rounded to the nanosecond.
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= s["ts"] + 0.01:
                stack.pop()
            rows.append((len(stack), s))
            stack.append(s)
        out[tid] = (names.get(tid, f"thread {tid}"), rows)
    return out


def draw(events, path, window=None, last_ms=None):
    xs = [e for e in events if e.get("ph") == "X"]
    t0 = t_first = min(e["ts"] for e in xs)
    t1 = max(e["ts"] + e["dur"] for e in xs)
    if window:
        t0, t1 = t0 + window[0] * 1e3, t0 + window[1] * 1e3
    elif last_ms:
        t0 = max(t0, t1 - last_ms * 1e3)
    tr = tracks(events)
    depth = {tid: 1 + max((d for d, _ in rows), default=0) for tid, (_, rows) in tr.items()}
    height = TOP + sum(depth.values()) * ROW + 10 * len(tr) + 20
    img = Image.new("RGB", (WIDTH, height), (255, 255, 255))
    g = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    scale = (WIDTH - LABEL - 10) / max(t1 - t0, 1e-9)
    # Time axis in milliseconds.
    span_ms = (t1 - t0) / 1e3
    raw = span_ms / 8
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    k = 0
    while k * step <= span_ms:
        x = LABEL + k * step * 1e3 * scale
        g.line([(x, TOP - 8), (x, height)], fill=(230, 230, 230))
        g.text((x + 2, TOP - 22), f"{(t0 - t_first) / 1e3 + k * step:.4g} ms", fill=(80, 80, 80), font=font)
        k += 1
    y = TOP
    for tid, (name, rows) in tr.items():
        g.rectangle([0, y, LABEL - 6, y + depth[tid] * ROW], fill=(245, 245, 245))
        g.text((6, y + 4), name, fill=(20, 20, 20), font=font)
        for d, s in rows:
            a, b = s["ts"], s["ts"] + s["dur"]
            if b < t0 or a > t1:
                continue
            xa = LABEL + max(a - t0, 0) * scale
            xb = max(LABEL + min(b - t0, t1 - t0) * scale, xa + 1)
            top = y + d * ROW
            g.rectangle([xa, top + 1, xb, top + ROW - 2], fill=_color(s), outline=(60, 60, 60) if xb - xa > 3 else None)
            label = s["name"]
            while label and g.textlength(label, font=font) > xb - xa - 4:
                label = label[:-2]
            if len(label) >= 3:
                g.text((xa + 2, top + 5), label, fill=(0, 0, 0), font=font)
        y += depth[tid] * ROW + 10
    img.save(path, optimize=True)


def _color(s):
    base = COLORS.get(s.get("cat"), (150, 150, 150))
    # Perfetto colours slices by name: vary each category's colour a little per name.
    h = zlib.crc32(s["name"].encode()) % 40 - 20
    return tuple(max(0, min(255, c + h)) for c in base)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("png")
    ap.add_argument("--window", nargs=2, type=float, metavar=("START_MS", "END_MS"))
    ap.add_argument("--last-ms", type=float, help="draw only the run's last milliseconds")
    a = ap.parse_args()
    with open(a.trace) as f:
        data = json.load(f)
    draw(data["traceEvents"] if isinstance(data, dict) else data, a.png, a.window, a.last_ms)
    print(f"wrote {a.png}")

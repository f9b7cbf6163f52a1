"""Reading a profiling trace (the format trace.py writes; docs/trace-format.md):
the header is checked for the format and version, every event for the fields
its kind needs; a bad line is a TraceError naming the file, line and field."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

FORMAT, VERSION = "pykokkos-fuse-trace", 1

# The fields each event kind must have.
REQUIRED = {
    "launch": ("workunit", "label", "pattern", "space", "policy", "args", "seq"),
    "flush": ("demand", "launches", "regions"),
    "kernel": ("name", "us"),
    "compile": ("kernel", "cached", "us"),
    "host_data": ("buffer", "file"),
    "dropped": ("seqs", "buffers"),
}


class TraceError(ValueError):
    """A trace that cannot be read: truncated, another version, or edited."""


@dataclass
class Trace:
    path: str
    header: dict
    events: list = field(default_factory=list)

    def of(self, kind: str) -> list:
        return [e for e in self.events if e["ev"] == kind]


def load(path: str) -> Trace:
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        raise TraceError(f"{path}: {e.strerror}") from None
    if not lines:
        raise TraceError(f"{path}: empty file, not a trace")
    header = _parse(path, 1, lines[0])
    if header.get("format") != FORMAT:
        raise TraceError(f"{path}:1: not a pykokkos-fuse trace (format {header.get('format')!r})")
    if header.get("version") != VERSION:
        raise TraceError(
            f"{path}:1: trace format version {header.get('version')!r}; this pykokkos-fuse reads version {VERSION} (record the run again)"
        )
    t = Trace(path, header)
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        e = _parse(path, n, line)
        kind = e.get("ev")
        if kind not in REQUIRED:
            raise TraceError(f"{path}:{n}: unknown event kind {kind!r}")
        for f in REQUIRED[kind]:
            if f not in e:
                raise TraceError(f"{path}:{n}: {kind} event without its '{f}' field")
        e["_line"] = n
        t.events.append(e)
    return t


def _parse(path: str, n: int, line: str) -> dict:
    try:
        v = json.loads(line)
    except json.JSONDecodeError as e:
        raise TraceError(f"{path}:{n}: not JSON ({e.msg} at column {e.colno}); the trace may be truncated") from None
    if not isinstance(v, dict):
        raise TraceError(f"{path}:{n}: an event must be a JSON object")
    return v

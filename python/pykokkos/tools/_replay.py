"""`python -m pykokkos replay TRACE`: runs a trace's launches again.

Buffers are rebuilt from the stored data (PK_TRACE_DATA=1) or filled with
deterministic values of the right shapes and dtypes; workunits are taken
from their modules (imported by path, so a program must guard its main with
`if __name__ == "__main__"`), checked against the recorded source digest.
Pending launches are flushed where the recorded run flushed.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import textwrap
import time

import numpy as np

from .. import _native
from ..runtime._rng import RandomPool
from ..runtime._tracefile import Trace, TraceError


def _own_module(path: str):
    """The dotted name of `path` if it is a module of a pykokkos package (of
    any installation: the recording run's may be another), else None."""
    parts = [os.path.splitext(os.path.basename(path))[0]]
    d = os.path.dirname(os.path.abspath(path))
    while os.path.exists(os.path.join(d, "__init__.py")):
        parts.insert(0, os.path.basename(d))
        d = os.path.dirname(d)
    return ".".join(parts) if len(parts) > 1 and parts[0] == "pykokkos" else None


class _Stream(RandomPool):
    """A random pool argument: the recorded stream (a pool to the runtime, which
    knows pools by their class)."""

    def __init__(self, stream: int):  # (no seed: the stream was recorded)
        self.stream = stream

    def __pk_random_stream__(self) -> int:
        return self.stream


class Replayer:
    def __init__(self, trace: Trace, space: str | None = None, scale: float = 1.0, fill: bool = True):
        self.trace, self.space, self.scale, self.fill = trace, space, scale, fill
        self.modules: dict = {}
        self.targets: dict = {}
        self.buffers: dict = {}
        self.bases = _shared_buffers(trace)
        self.keep: list = []  # NumPy views of shared buffers that N-D views wrap
        self.data = trace.header.get("data")
        if self.data and not os.path.isabs(self.data):
            self.data = os.path.join(os.path.dirname(os.path.abspath(trace.path)), os.path.basename(self.data))

    # --- workunits ---------------------------------------------------------
    def _module(self, path: str, line: int):
        if path not in self.modules:
            if not os.path.exists(path):
                raise TraceError(f"{self.trace.path}:{line}: the program {path} is not there to replay from")
            if not self.modules:
                # Its imports resolve as in the recorded run: the script's folder
                # first, and after this interpreter's own the folders the run's
                # sys.path had (a launcher may have added some).
                argv, cwd = self.trace.header.get("argv") or [""], self.trace.header.get("cwd") or ""
                script = os.path.join(cwd, argv[0]) if argv[0] else ""
                for d in (os.path.dirname(script), os.path.dirname(os.path.abspath(path))):
                    if d and os.path.isdir(d) and d not in sys.path:
                        sys.path.insert(0, d)
                sys.path += [d for d in self.trace.header.get("sys_path", []) if os.path.isdir(d) and d not in sys.path]
            own = _own_module(path)
            if own is not None:
                # A workunit of the runtime itself (pk.BinSort's kernels): this
                # installation's module, imported in its package (it imports
                # relatively).
                self.modules[path] = importlib.import_module(own)
                return self.modules[path]
            spec = importlib.util.spec_from_file_location(f"_pk_replay_{len(self.modules)}", path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = mod
            spec.loader.exec_module(mod)
            self.modules[path] = mod
        return self.modules[path]

    def _target(self, e: dict):
        wu = e["workunit"]
        key = (wu["file"], wu["name"], wu["line"], wu["method"])
        if key in self.targets:
            return self.targets[key]
        if wu["file"].startswith("<pykokkos lambda ") and "source" in e:
            fn = self._lambda(e)
            self.targets[key] = (fn, None)
            return fn, None
        mod = self._module(wu["file"], e["_line"])
        found = None
        places = [(mod.__dict__, None)] + [(vars(c), c) for c in mod.__dict__.values() if isinstance(c, type)]
        for ns, owner in places:
            fn = ns.get(wu["name"])
            fn = getattr(fn, "__func__", fn)
            if not inspect.isfunction(fn) or (owner is not None) != wu["method"]:
                continue
            # The recorded line is the decorator's or the def's.
            if found is None or abs(fn.__code__.co_firstlineno - wu["line"]) <= 1:
                found = (fn, owner)
        if found is None:
            raise TraceError(f"{self.trace.path}:{e['_line']}: workunit '{wu['name']}' is no longer in {wu['file']}")
        fn, owner = found
        text = textwrap.dedent("".join(inspect.getsourcelines(fn)[0]))
        if _native.hash_text(text) != wu["source_hash"]:
            raise TraceError(
                f"{self.trace.path}:{e['_line']}: the source of workunit '{wu['name']}' in "
                f"{wu['file']} changed since the trace was recorded"
            )
        self.targets[key] = (fn, owner)
        return fn, owner

    def _lambda(self, e: dict):
        """A lambda kernel's workunit, rebuilt from the source the trace holds,
        in the namespace of the module the lambda was written in."""
        import linecache

        from ..runtime._kernels import workunit

        wu, src = e["workunit"], e["source"]
        if _native.hash_text(src) != wu["source_hash"]:
            raise TraceError(f"{self.trace.path}:{e['_line']}: the source of lambda kernel '{wu['name']}' does not match its digest")
        real = wu["file"][len("<pykokkos lambda ") : -1].rsplit(":", 1)[0]
        mod = self._module(real, e["_line"])
        linecache.cache[wu["file"]] = (len(src), None, src.splitlines(True), wu["file"])
        ns: dict = {}
        exec(compile(src, wu["file"], "exec"), mod.__dict__, ns)
        fn = ns[wu["name"]]
        return workunit(fn)

    # --- buffers -----------------------------------------------------------
    def _base(self, buf: int, dtype: str, length: int):
        """One 1-D View for a buffer that 1-D views share (subviews of it)."""
        if buf not in self.buffers:
            a = {"buffer": buf, "dtype": dtype, "shape": [length], "strides": [1], "offset": 0, "layout": "right"}
            self.buffers[buf] = (None, self._fresh(a))
        return self.buffers[buf][1]

    def _view(self, a: dict, line: int):
        import pykokkos as pk  # noqa: F401

        if a["buffer"] in self.bases:
            dtype, length = self.bases[a["buffer"]]
            base = self._base(a["buffer"], dtype, length)
            size = np.dtype(dtype).itemsize
            if a["rank"] > 1:
                # An N-D view of the shared memory: NumPy's strided view of the base,
                # wrapped (its launches run in order with the base's, as for any NumPy memory).
                flat = np.asarray(base)[a["offset"] // size :]
                self.keep.append(flat)
                return pk.asarray(
                    np.lib.stride_tricks.as_strided(flat, shape=tuple(a["shape"]), strides=tuple(x * size for x in a["strides"]))
                )
            o, n, s = a["offset"] // size, a["shape"][0], a["strides"][0]
            return base[o : o + n] if s == 1 else base[o : o + (n - 1) * s + 1 : s]
        geo = (a["dtype"], tuple(a["shape"]), tuple(a["strides"]), a["offset"])
        known = self.buffers.get(a["buffer"])
        if known is not None:
            if known[0] != geo:
                raise TraceError(
                    f"{self.trace.path}:{line}: buffer #{a['buffer']} is used through views of "
                    "different dtypes or negative strides; replay does not rebuild such aliasing"
                )
            return known[1]
        v = self._fresh(a)
        self.buffers[a["buffer"]] = (geo, v)
        return v

    def _fresh(self, a: dict):
        """A View of the argument's shape, filled from the stored data or
        with deterministic values."""
        import pykokkos as pk

        dtype = getattr(pk, a["dtype"])
        layout = pk.LayoutLeft if a["layout"] == "left" else pk.LayoutRight
        v = pk.View(list(a["shape"]), dtype, layout=layout)
        if not self.fill:  # compile-only: the memory is never touched
            return v
        arr = np.asarray(v)
        stored = self.data and os.path.exists(os.path.join(self.data, f"{a['buffer']}.in"))
        if stored:
            path = os.path.join(self.data, f"{a['buffer']}.in")
            arr[...] = _window(_read(path), arr.dtype, a, path)
        else:
            rng = np.random.default_rng(len(self.buffers))
            if arr.dtype.kind in "fc":
                arr[...] = rng.random(arr.shape) * self.scale
            elif arr.dtype.kind == "b":
                arr[...] = rng.random(arr.shape) < 0.5
            else:
                arr[...] = rng.integers(0, 8, arr.shape)
        return v

    def _args(self, e: dict) -> dict:
        out = {}
        for a in e["args"]:
            if a["kind"] == "view":
                out[a["name"]] = self._view(a, e["_line"])
            elif a["kind"] == "random_pool":
                out[a["name"]] = _Stream(a["stream"])
            elif a["kind"] == "scalar":
                val = a["value"]
                if isinstance(val, list):
                    val = complex(*val)
                out[a["name"]] = val if a["weak"] else np.dtype(a["dtype"]).type(val)
            else:
                raise TraceError(f"{self.trace.path}:{e['_line']}: argument '{a.get('name')}' of an unknown kind")
        return out

    def other_space(self) -> bool:
        """The replay runs launches in a space other than the recording's."""
        return bool(self.space) and any(e["space"] != self.space for e in self.trace.of("launch"))

    # --- launches ----------------------------------------------------------
    def _policy(self, e: dict):
        import pykokkos as pk

        space = getattr(pk.ExecutionSpace, self.space or e["space"])
        p = e["policy"]
        if p["kind"] == "range":
            return pk.RangePolicy(space, p["begin"][0], p["end"][0])
        if p["kind"] == "mdrange":
            return pk.MDRangePolicy(space, p["begin"], p["end"])
        end = p["end"]
        pol = pk.TeamPolicy(space, end[0], end[1] if end[1] > 0 else pk.AUTO, end[2])
        if len(end) > 6:
            for level in (0, 1):
                pol.set_scratch_size(level, pk.PerTeam(end[3 + 2 * level]), pk.PerThread(end[4 + 2 * level]))
        return pol

    def launch(self, e: dict):
        import pykokkos as pk

        fn, owner = self._target(e)
        args = self._args(e)
        for buf, name in e.get("reload", {}).items():  # the host wrote it since
            self._load(int(buf), name, e)
        policy = self._policy(e)
        if e["workunit"]["method"]:
            obj = object.__new__(owner)
            for k, v in args.items():
                setattr(obj, k, v)
            target, kw = getattr(obj, fn.__name__), {}
        else:
            target, kw = fn, args
        pattern = e["pattern"]
        if pattern == "for":
            return pk.parallel_for(e["label"], policy, target, **kw)
        if pattern == "scan":
            return pk.parallel_scan(e["label"], policy, target, **kw)
        reducer = pattern.split(":")[1] if ":" in pattern else None
        return pk.parallel_reduce(e["label"], policy, target, reducer=reducer, **kw)

    def _use_of(self, buf: int) -> dict:
        """A launch event that used `buf` (for its geometry)."""
        return next(e for e in self.trace.of("launch") if any(a.get("buffer") == buf for a in e["args"]))

    def _load(self, buf: int, name: str, e: dict) -> None:
        if not self.fill or not self.data:
            return
        v = self.buffers[buf][1]
        arr = np.asarray(v)
        meta = _meta(v, buf, self) if buf in self.bases else next(a for a in e["args"] if a.get("buffer") == buf)
        path = os.path.join(self.data, name)
        arr[...] = _window(_read(path), arr.dtype, meta, path)

    def run(self) -> float:
        """Every launch, flushing where the recording flushed; seconds taken."""
        flushes_after = set()
        last = None
        for e in self.trace.events:
            if e["ev"] == "launch":
                last = e["_line"]
            elif e["ev"] == "flush" and last is not None:
                flushes_after.add(last)
        t0 = time.perf_counter()
        for e in self.trace.events:
            if e["ev"] == "launch":
                self.launch(e)
                if e["_line"] in flushes_after:
                    _native.flush()
            elif e["ev"] == "host_data" and e["buffer"] in self.buffers:
                # Host writes after the buffer's last launch, as recording ended.
                self._load(e["buffer"], e["file"], self._use_of(e["buffer"]))
        _native.flush()
        return time.perf_counter() - t0

    def check(self) -> list[str]:
        """Buffers whose final contents differ from the recording (data mode);
        `self.compared` counts those it could compare."""
        bad = []
        self.compared = self.rounded = 0
        if not self.data:
            return bad
        # Buffers whose writes the recorded run dropped unrun (the View died
        # unread): what they held at the end was never observable.
        dropped = {b for e in self.trace.of("dropped") for b in e["buffers"]}
        for buf, (_, v) in self.buffers.items():
            f = os.path.join(self.data, f"{buf}.out")
            if os.path.exists(f) and buf not in dropped:
                self.compared += 1
                a = np.asarray(v)
                want = _window(_read(f), a.dtype, _meta(v, buf, self), f)
                if np.array_equal(a, want, equal_nan=a.dtype.kind in "fc"):
                    continue
                if a.dtype.kind in "fc" and self.other_space() and _close(a, want):
                    self.rounded += 1
                    continue
                bad.append(f"buffer #{buf}")
        return bad


def _close(a: np.ndarray, want: np.ndarray) -> bool:
    """Equal but for rounding: another space contracts a * b + c into one
    fused multiply-add (CUDA does) and may reduce in another order."""
    eps = np.finfo(a.dtype).eps
    scale = max(float(np.max(np.abs(want), initial=0.0)), np.finfo(a.dtype).tiny)
    return bool(np.allclose(a, want, rtol=1024 * eps, atol=1024 * eps * scale, equal_nan=True))


def _meta(v, buf, r) -> dict:
    if buf in r.bases:
        dtype, length = r.bases[buf]
        return {"dtype": dtype, "shape": [length], "strides": [1], "offset": 0}
    for e in r.trace.of("launch"):
        for a in e["args"]:
            if a.get("buffer") == buf:
                return a
    raise KeyError(buf)


def _shared_buffers(trace: Trace) -> dict:
    """Buffers that views of one dtype share through different offsets,
    strides or shapes: buffer -> (dtype, elements the views reach)."""
    seen: dict = {}
    for e in trace.of("launch"):
        for a in e["args"]:
            if a["kind"] == "view":
                seen.setdefault(a["buffer"], []).append(a)
    out = {}
    for buf, uses in seen.items():
        geos = {(a["dtype"], tuple(a["shape"]), tuple(a["strides"]), a["offset"]) for a in uses}
        if len(geos) > 1 and len({a["dtype"] for a in uses}) == 1 and all(x >= 0 for a in uses for x in a["strides"]):
            size = np.dtype(uses[0]["dtype"]).itemsize
            reach = (
                max(
                    a["offset"] // size + sum((n - 1) * st for n, st in zip(a["shape"], a["strides"])) + 1
                    for a in uses
                    if all(n > 0 for n in a["shape"])
                )
                if any(all(n > 0 for n in a["shape"]) for a in uses)
                else 1
            )
            out[buf] = (uses[0]["dtype"], reach)
    return out


def _read(path: str) -> np.ndarray:
    try:
        raw = np.fromfile(path, dtype=np.uint8)
    except OSError as err:
        raise TraceError(f"stored data {path}: {err.strerror or err}") from None
    raw.flags.writeable = False
    return raw


def _window(raw: np.ndarray, dtype: np.dtype, a: dict, path: str = "stored data") -> np.ndarray:
    """The elements a view argument sees in a buffer's stored bytes."""
    size = dtype.itemsize
    lo = a["offset"] + sum((n - 1) * st * size for n, st in zip(a["shape"], a["strides"]) if st < 0)
    hi = a["offset"] + size + sum((n - 1) * st * size for n, st in zip(a["shape"], a["strides"]) if st > 0)
    if any(n == 0 for n in a["shape"]):
        return np.empty(tuple(a["shape"]), dtype=dtype)
    if lo < 0 or hi > raw.size:
        raise TraceError(
            f"{path} holds {raw.size} bytes, but the view stored in it reaches bytes [{lo}, {hi}): the trace's data is incomplete"
        )
    body = raw[a["offset"] :]  # the offset is in bytes
    flat = body[: body.size - body.size % dtype.itemsize].view(dtype)
    return np.lib.stride_tricks.as_strided(flat, shape=tuple(a["shape"]), strides=tuple(s * dtype.itemsize for s in a["strides"])).copy()

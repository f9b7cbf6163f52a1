"""(d) Parse + translate time of a 30-line workunit.

Figures (all per call, median of individually timed calls):
  generate_source       pk._native.generate_source(...) on the same workunit:
                        its parse is cached after the first call, so this is
                        Python-side name resolution + argument typing + lowering
                        + C++ generation.
  generate_source_fresh the same on a freshly captured workunit each time:
                        parse + resolve + translate (what a first launch does
                        before it looks at the disk cache).
  parse                 Workunit.params() on a fresh workunit: the Rust parse alone.
  resolve               pykokkos.runtime._kernels._resolve(fn): the Python side of name
                        resolution alone.
  translate_only        generate_source - resolve (derived): argument typing +
                        lowering + C++ generation.
  decorate              @pk.workunit itself (inspect.getsourcelines + capture);
                        paid once per definition, never per launch.
Fresh workunits are built before the timed loop, so their construction is not timed.
"""
from __future__ import annotations

import inspect
import math
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pykokkos as pk  # noqa: E402
from pykokkos.runtime import _kernels  # noqa: E402
from _util import per_call_us, timed_calls_us  # noqa: E402


def smooth(i, out, x, y, w, n_iter, alpha, beta, lo, hi):
    acc: float = 0.0
    xi: float = x[i]
    yi: float = y[i]
    count: int = 0
    for k in range(n_iter):
        t: float = alpha * xi + beta * yi
        if t > hi:
            t = hi
        elif t < lo:
            t = lo
        else:
            count += 1
        acc += t * w[k % 4]
        xi = xi * 0.5 + yi * 0.25
        yi = math.sqrt(abs(yi) + 1.0)
    j: int = i + 1
    while j < i + 3:
        acc = acc + 0.5 * math.exp(-abs(xi - yi) * j)
        j += 1
    m: float = max(acc, 0.0)
    if count > 0 and m != 0.0:
        m = m / count
    s: float = 0.0
    for q in range(4):
        s += w[q] * w[q]
    out[i] = m + math.log(1.0 + s) - min(xi, yi)
    x[i] = xi
    y[i] = yi


SOURCE_LINES = 31  # def line + 30 body lines


def _fresh_factory(fn):
    """Builds fresh native workunits from `fn`'s source as the decorator does, but
    reads the source once (inspect.getsourcelines costs ~2 ms per call)."""
    lines, first = inspect.getsourcelines(fn)
    text = textwrap.dedent("".join(lines))
    indent = len(lines[0]) - len(lines[0].lstrip())
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    return lambda: pk._native.Workunit(fn, fn.__name__, text, filename, first, indent)


def main(calls: int = 2000) -> dict:
    n = 64
    views = {k: pk.View([n], pk.double) for k in ("out", "x", "y", "w")}
    kw = dict(views, n_iter=5, alpha=0.5, beta=0.25, lo=-1.0, hi=1.0)
    wu = pk.workunit(smooth)
    nat = wu.__pk_workunit__
    src = pk._native.generate_source(0, n, nat, kw)  # parse once, check it translates

    gen = per_call_us(lambda: pk._native.generate_source(0, n, nat, kw), calls, warmup=50)
    # The names smooth's local annotations read (`acc: float`), as the runtime's parse hands them over.
    resolve = per_call_us(lambda: _kernels._resolve(smooth, ["float", "int"]), calls, warmup=50)
    fresh = _fresh_factory(smooth)
    fresh_gen = timed_calls_us(lambda w: pk._native.generate_source(0, n, w, kw),
                               [fresh() for _ in range(calls)])
    fresh_parse = timed_calls_us(lambda w: w.params(), [fresh() for _ in range(calls)])
    decorate = per_call_us(lambda: pk.workunit(smooth), 100, warmup=5)

    return {
        "workunit_lines": SOURCE_LINES,
        "cpp_lines": src.count("\n"),
        "generate_source_us": gen["median"],
        "generate_source_min_us": gen["min"],
        "generate_source_fresh_us": fresh_gen["median"],
        "parse_us": fresh_parse["median"],
        "resolve_us": resolve["median"],
        "translate_only_us": gen["median"] - resolve["median"],
        "decorate_us": decorate["median"],
    }


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k:26s} {v:.2f}" if isinstance(v, float) else f"{k:26s} {v}")

"""report(): each jitted function of the process and how it last ran."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ran:
    name: str
    where: str  # file:line of the def
    how: str  # "kokkos", "numba", "python" or "not called"
    why: str  # why it was not offloaded ("" when it was)


class Report(list):
    """A list of Ran, shown as a table."""

    def __str__(self) -> str:
        if not self:
            return "pykokkos.numba: no jitted functions"
        w = max(len("function"), *(len(r.name) for r in self))
        lines = [f"{'function':{w}s}  {'ran as':10s}  defined at"]
        for r in self:
            lines.append(f"{r.name:{w}s}  {r.how:10s}  {r.where}")
            if r.why:
                lines.append(" " * (w + 2) + "  because " + r.why.splitlines()[0])
        return "\n".join(lines)

    __repr__ = __str__


def report() -> Report:
    """How each jitted function last ran: as Kokkos kernels ("kokkos"), under
    the real Numba ("numba"), as plain Python ("python"), or "not called"."""
    from ._dispatch import ALL
    from ._fallback import where

    out = Report()
    for d in ALL:
        if getattr(d, "generated", False):  # a stencil's functions: their caller's row says how they ran
            continue
        why = d.why.get(d.last_key, "")
        out.append(Ran(d.py_func.__qualname__, where(d.py_func), d.last_ran or "not called", why))
    return out

"""Team scratch declared on the workunit: `@pk.workunit(scratch=[(dtype, size_fn[, level])])`.

Each entry asks for one 1-D scratch allocation of `size_fn(p)` elements of
`dtype` per team, at level 0 (the default) or 1. `p` sees the launch's
keyword arguments, then the functor's members, then the policy's
league_size/team_size/vector_length, so `lambda p: p.team_size` reads the
kernel's `team_size` argument (or the policy's team size when none is passed).
The launch adds these sizes to whatever the policy already asks for with
set_scratch_size, on a copy: the caller's policy is left as it was.
"""

from __future__ import annotations

from .. import _native
from ._types import PerTeam, PerThread, ScratchView1D


def check_entries(entries) -> list:
    """The entries of `scratch=`, validated at decoration time."""
    if not isinstance(entries, (list, tuple)):
        raise TypeError("scratch= takes a list of (dtype, size_function) or (dtype, size_function, level)")
    out = []
    for e in entries:
        if not isinstance(e, tuple) or len(e) not in (2, 3) or not callable(e[1]):
            raise TypeError(f"scratch= entry {e!r}: write (dtype, lambda p: <elements>[, level])")
        level = e[2] if len(e) == 3 else 0
        if level not in (0, 1):
            raise ValueError(f"scratch= entry {e!r}: the level is 0 or 1 (Kokkos' two scratch levels)")
        out.append((e[0], e[1], level))
    return out


class _Params:
    """What a scratch size function sees as `p`."""

    def __init__(self, kwargs, obj, policy):
        self._sources = (kwargs, vars(obj) if obj is not None else {})
        self._policy = policy

    def __getattr__(self, name):
        for src in self._sources:
            if name in src:
                return src[name]
        if name in ("league_size", "team_size", "vector_length"):
            return getattr(self._policy, name)
        raise AttributeError(f"a scratch size function asked for p.{name}, but the launch passes no '{name}'")


def sized_policy(policy, entries, kwargs, obj):
    """A copy of the team `policy` with the scratch the entries ask for added."""
    if not isinstance(policy, _native.Policy) or not _native.Policy.team.__get__(policy):
        raise TypeError("a workunit declared with scratch= must be launched with a pk.TeamPolicy")
    sizes = list(_native.Policy.scratch_sizes.__get__(policy))  # per team / per thread, levels 0 and 1
    p = _Params(kwargs, obj, policy)
    for dtype, size_fn, level in entries:
        n = int(size_fn(p))
        if n < 0:
            raise ValueError(f"a scratch size function returned {n} elements")
        sizes[2 * level] += ScratchView1D[dtype].shmem_size(n)
    copy = _native.Policy.__new__(type(policy), list(policy.begin), list(policy.end), _native.Policy.space.__get__(policy), True)
    for level in (0, 1):
        copy.set_scratch_size(level, PerTeam(sizes[2 * level]), PerThread(sizes[2 * level + 1]))
    return copy

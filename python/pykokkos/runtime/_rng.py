"""Random number pools for `pk.rand(dtype)` inside kernels.

A pool is a seed and a launch counter: every launch it is passed to gets a
stream of its own (the seed mixed with the counter), and every work item of
that launch seeds its own generator from the stream and its indices. So
the numbers a program draws depend only on the seed and the order of its
launches: not on the thread count, the execution space, or PK_FUSE=1. Draws
are uniform: floats in [0, 1), signed integers in [0, max), unsigned ones
over all their values, as Kokkos' `rand<>` gives.

Both pool kinds share one generator (xorshift64*); `num_states` is accepted
for compatibility and has no effect, since no state is shared between items.
"""

from __future__ import annotations

import itertools

_MASK = (1 << 64) - 1


def _splitmix(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


class RandomPool:
    """`pk.Random_XorShift64_Pool(seed, num_states)`: pass it to a launch (a
    keyword argument, or a functor member) and call `pk.rand(pk.double)` in
    the workunit."""

    def __init__(self, seed: int, num_states: int = 1):
        self.seed = int(seed)
        self.num_states = int(num_states)
        self._launches = itertools.count()

    def __pk_random_stream__(self) -> int:
        """The stream of the next launch (the runtime asks for it by this name)."""
        return _splitmix(_splitmix(self.seed & _MASK) ^ next(self._launches))

    def __repr__(self) -> str:
        return f"pk.{type(self).__name__}(seed={self.seed}, num_states={self.num_states})"


class Random_XorShift64_Pool(RandomPool):  # noqa: N801  (Kokkos' name)
    pass


class Random_XorShift1024_Pool(RandomPool):  # noqa: N801  (Kokkos' name)
    pass


def rand(dtype):
    """Only inside a workunit: `pk.rand(pk.double)` draws from the launch's pool."""
    raise RuntimeError("pk.rand(dtype) is only meaningful inside a @pk.workunit that is passed a random pool")

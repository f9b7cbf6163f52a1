"""`pykokkos.interface.parallel_dispatch.convert_arrays` (newer PyKokkos): the
NumPy (and CuPy) arrays among a launch's keyword arguments as Views of the same
memory, in place, as a launch takes them. A dtype the workunit's annotation
disagrees with is then refused by the launch, naming the dtype it expects."""

from __future__ import annotations

import numpy as np

from ..runtime._views import View


def convert_arrays(kwargs: dict, workunit=None, space=None) -> None:
    """Replaces each array value of `kwargs` by a View of its memory (`workunit`
    and `space` are accepted as upstream's; Views work in every space)."""
    import pykokkos as pk

    for key, value in kwargs.items():
        if isinstance(value, View):
            continue
        if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
            kwargs[key] = pk.asarray(value)


__all__ = ["convert_arrays"]

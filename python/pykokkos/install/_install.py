"""The first kernel of a fresh install builds Kokkos: `pip install` of the
package is all a user runs (the build happens once per cache folder, under
kokkos_setup's lock, so processes starting together build it once)."""

from __future__ import annotations

import time


def install_kokkos(cuda: bool) -> None:
    """Called by the runtime when a kernel needs Kokkos and none is installed."""
    import shutil  # here, not at `import pykokkos` (it brings the compression modules: ms)

    from . import kokkos_setup

    if cuda and not shutil.which("nvcc"):
        raise RuntimeError(
            "the CUDA build of Kokkos (PK_KOKKOS_CUDA=1) needs nvcc, the CUDA toolkit's compiler, "
            "on PATH; without a GPU toolkit, unset PK_KOKKOS_CUDA for the host build"
        )
    t0 = time.time()
    kind = "Serial+OpenMP+CUDA" if cuda else "Serial+OpenMP"
    kokkos_setup.say(
        f"Kokkos {kokkos_setup.KOKKOS_VERSION} ({kind}) is not built yet in "
        f"{kokkos_setup.cache_root()}: building it once, a few minutes on 2 cores "
        "(`python -m pykokkos.install.kokkos_setup` does the same ahead of time)"
    )
    try:
        kokkos_setup.ensure(cuda)
    except SystemExit:  # kokkos_setup.fail: its reason is on stderr already
        raise RuntimeError("building Kokkos failed: see the [kokkos] lines above") from None
    kokkos_setup.say(f"Kokkos ready after {time.time() - t0:.0f} s; later processes find it at once")

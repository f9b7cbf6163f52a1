"""Source fixes that Kokkos 3.4.01 (April 2021) needs to build with CUDA 13 and run on Hopper.

`apply_all(src, say)` edits an extracted Kokkos source tree in place. Each fix is a small
function that replaces one anchor text; running it twice is harmless (a fix whose result
is already present is skipped), and a fix whose anchor is missing raises `PatchError`
with a sentence naming the file and what was expected, so a different Kokkos release
fails at once instead of halfway through a CUDA build. See shared/notes/kokkos.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

Say = Callable[[str], None]

# Marks every edit, so that idempotence checks (and a reader of the patched tree) can find them.
MARK = "pykokkos-fuse CUDA 13 fix"


class PatchError(RuntimeError):
    pass


def _replace(src: Path, rel: str, anchor: str, replacement: str, what: str, say: Say) -> None:
    """Replaces the one occurrence of `anchor` in src/rel by `replacement`, unless done before."""
    path = src / rel
    if not path.is_file():
        raise PatchError(
            f"CUDA 13 fix '{what}': {rel} does not exist under {src}; this is not the Kokkos 3.4.01 source tree the fix was written for."
        )
    text = path.read_text()
    if replacement in text:
        say(f"fix '{what}' already applied to {rel}")
        return
    count = text.count(anchor)
    if count != 1:
        raise PatchError(
            f"CUDA 13 fix '{what}': expected the anchor text exactly once in {rel}, "
            f"found it {count} times; the Kokkos source differs from 3.4.01.\n"
            f"anchor:\n{anchor}"
        )
    path.write_text(text.replace(anchor, replacement))
    say(f"fix '{what}' applied to {rel}")


def fix_nvcc_wrapper_default_arch(src: Path, say: Say) -> None:
    # nvcc_wrapper adds `-arch=$default_arch` whenever its caller passes no -arch; the
    # hard-coded sm_35 (Kepler) was dropped by CUDA 12/13, so every such compile fails
    # ("Unsupported gpu architecture 'compute_35'"). sm_80 matches the Kokkos_ARCH_AMPERE80
    # build and is accepted by CUDA 11 to 13; callers (our kernels) pass -arch=sm_XY anyway.
    _replace(
        src,
        "bin/nvcc_wrapper",
        'default_arch="sm_35"\n',
        f'default_arch="sm_80"  # {MARK}: CUDA 13 has no sm_35\n',
        "nvcc_wrapper default arch",
        say,
    )


def fix_cuda_half(src: Path, say: Say) -> None:
    # Kokkos' CUDA half_t wraps `__half` and relies on conversions/operators of
    # cuda_fp16.h that CUDA 13 changed, so the header no longer compiles. Skipping it for
    # CUDA >= 13 makes Kokkos_Half.hpp define its portable float-backed half_t instead
    # (KOKKOS_IMPL_HALF_TYPE_DEFINED stays unset). We use no half precision.
    _replace(
        src,
        "core/src/Cuda/Kokkos_Cuda_Half.hpp",
        "#if !(defined(KOKKOS_COMPILER_CLANG) && KOKKOS_COMPILER_CLANG < 900) && \\\n",
        f"// {MARK}: the __half-based half_t does not compile with CUDA >= 13.\n"
        "#if !(defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 13) && \\\n"
        "    !(defined(KOKKOS_COMPILER_CLANG) && KOKKOS_COMPILER_CLANG < 900) && \\\n",
        "CUDA half_t",
        say,
    )


def fix_mem_prefetch(src: Path, say: Say) -> None:
    # CUDA 13 removed cudaMemPrefetchAsync(ptr, bytes, int device, stream); the call now
    # takes a cudaMemLocation and a flags word: (ptr, bytes, location, flags, stream).
    _replace(
        src,
        "core/src/Cuda/Kokkos_CudaSpace.cpp",
        "    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, space.cuda_device(),\n"
        "                                        space.cuda_stream()));\n",
        f"#if CUDART_VERSION >= 13000  // {MARK}: new cudaMemPrefetchAsync signature\n"
        "    cudaMemLocation loc = {};\n"
        "    loc.type = cudaMemLocationTypeDevice;\n"
        "    loc.id = space.cuda_device();\n"
        "    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, loc, 0, space.cuda_stream()));\n"
        "#else\n"
        "    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, space.cuda_device(),\n"
        "                                        space.cuda_stream()));\n"
        "#endif\n",
        "cudaMemPrefetchAsync",
        say,
    )


def fix_graph_instantiate(src: Path, say: Say) -> None:
    # CUDA 12 replaced cudaGraphInstantiate(exec*, graph, errNode*, log, logSize) by
    # cudaGraphInstantiate(exec*, graph, flags); the error-node/log variant is gone.
    _replace(
        src,
        "core/src/Cuda/Kokkos_Cuda_Graph_Impl.hpp",
        "    CUDA_SAFE_CALL(cudaGraphInstantiate(&m_graph_exec, m_graph, &error_node,\n"
        "                                        error_log, error_log_size));\n",
        f"#if CUDART_VERSION >= 12000  // {MARK}: (exec*, graph, flags) since CUDA 12\n"
        "    (void)error_node;\n"
        "    (void)error_log;\n"
        "    CUDA_SAFE_CALL(cudaGraphInstantiate(&m_graph_exec, m_graph, 0));\n"
        "#else\n"
        "    CUDA_SAFE_CALL(cudaGraphInstantiate(&m_graph_exec, m_graph, &error_node,\n"
        "                                        error_log, error_log_size));\n"
        "#endif\n",
        "cudaGraphInstantiate",
        say,
    )


def fix_arch_check(src: Path, say: Say) -> None:
    # Kokkos 3.4 knows no Hopper arch, so the library is built for Ampere (sm_80, with
    # PTX that the driver JIT-compiles for sm_90). Kokkos::Cuda::initialize aborts unless
    # the compiled major version equals the device's ("compiled for 8.0 ... on 9.0").
    # Accept any compiled version not newer than the device: that is what CUDA supports.
    _replace(
        src,
        "core/src/Cuda/Kokkos_Cuda_Instance.cpp",
        "    if (compiled_major != cudaProp.major || compiled_minor > cudaProp.minor) {\n",
        f"    // {MARK}: PTX of an older major version runs (JIT) on newer devices.\n"
        "    if (compiled_major > cudaProp.major ||\n"
        "        (compiled_major == cudaProp.major &&\n"
        "         compiled_minor > cudaProp.minor)) {\n",
        "compute capability check",
        say,
    )


def fix_install_rpath(src: Path, say: Say) -> None:
    # With the Ninja generator (and CMake 4 on the GPU machine) the install step fails
    # rewriting the RPATH of libkokkoscore.so; building with the install RPATH from the
    # start avoids the rewrite. kokkos_setup.py also passes -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON;
    # this default keeps a hand-configured build of the patched tree working too.
    _replace(
        src,
        "CMakeLists.txt",
        "  cmake_minimum_required(VERSION 3.16 FATAL_ERROR)\n",
        "  cmake_minimum_required(VERSION 3.16 FATAL_ERROR)\n"
        f"  # {MARK}: Ninja's install step cannot rewrite the RPATH\n"
        "  IF(NOT DEFINED CMAKE_BUILD_WITH_INSTALL_RPATH)\n"
        "    SET(CMAKE_BUILD_WITH_INSTALL_RPATH ON)\n"
        "  ENDIF()\n",
        "install RPATH",
        say,
    )


FIXES = (
    fix_nvcc_wrapper_default_arch,
    fix_cuda_half,
    fix_mem_prefetch,
    fix_graph_instantiate,
    fix_arch_check,
    fix_install_rpath,
)


def apply_all(src: Path, say: Say = lambda _m: None) -> None:
    """Applies every fix to the Kokkos source tree at `src` (idempotent)."""
    src = Path(src)
    if not (src / "CMakeLists.txt").is_file():
        raise PatchError(f"{src} is not a Kokkos source tree (no CMakeLists.txt)")
    for fix in FIXES:
        fix(src, say)


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: cuda_patches.py <kokkos source dir>")
    apply_all(Path(sys.argv[1]), lambda m: print(f"[kokkos] {m}", file=sys.stderr))

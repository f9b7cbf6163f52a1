"""`pk.compile_into_module(path, source, module_name[, space])`: builds a
pybind11 C++ module against this process's Kokkos and imports it (PyKokkos'
way to bring hand-written Kokkos code into a program).

The module is compiled with the toolchain the kernels use and linked to the
same Kokkos libraries, so Kokkos objects it creates live in this process's
Kokkos. It is written to `path/<module_name>/<space>/`, as PyKokkos does.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

from .. import _native
from ._types import ExecutionSpace


def compile_into_module(path, source, module_name: str, executionSpace: ExecutionSpace = ExecutionSpace.Default):
    try:
        import pybind11
    except ImportError:
        raise ImportError(
            "pk.compile_into_module builds pybind11 modules: install pybind11 (pip install pybind11) in this environment"
        ) from None
    if not module_name.isidentifier():
        raise ValueError(f"module name {module_name!r} is not a Python identifier")
    cfg = dict(_native.toolchain_info())
    space = executionSpace
    if space is ExecutionSpace.Default:
        from ._launch import get_default_space

        space = get_default_space()
    out_dir = Path(path) / module_name / space.name
    out_dir.mkdir(parents=True, exist_ok=True)
    cpp = out_dir / f"{module_name}.cpp"
    text = "".join(source) if isinstance(source, (list, tuple)) else str(source)
    cpp.write_text(text)
    lib = out_dir / f"{module_name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    kokkos = Path(cfg["kokkos"])
    includes = [pybind11.get_include(), sysconfig.get_paths()["include"], str(kokkos / "include")]
    cuda = "CUDA" in cfg.get("kokkos_config", "")
    flags = ["-std=c++17", "-O2", "-shared"]
    flags += ["-Xcompiler", "-fPIC,-fopenmp", "--expt-extended-lambda"] if cuda else ["-fPIC", "-fopenmp"]
    libdir = kokkos / "lib"
    link = [f"-L{libdir}", "-lkokkoscontainers", "-lkokkoscore", f"-Wl,-rpath,{libdir}"]
    cmd = [*shlex.split(cfg["compiler"]), *flags, *(f"-I{i}" for i in includes), str(cpp), "-o", str(lib), *link]
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    if done.returncode != 0:
        raise _native.CompileError(f"compile_into_module: {module_name} did not compile ({cpp}):\n{done.stderr[-4000:]}")
    spec = importlib.util.spec_from_file_location(module_name, lib)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[module_name] = module
    return module

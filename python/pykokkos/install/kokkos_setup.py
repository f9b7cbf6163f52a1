#!/usr/bin/env python3
"""Build Kokkos 3.4.01 once into a per-user cache and print its prefix.

The source comes from the `pykokkos-base==0.0.7` sdist on PyPI (it bundles Kokkos
3.4.01 under external/kokkos); Debian's Kokkos is Serial-only, so we build our own.
The sdist is fetched by URL from the index's JSON metadata because `pip download`
tries to build the package's metadata and hangs. Reruns are free: a finished prefix
carries a stamp file and is reused as is.

`PK_KOKKOS_ROOT=<prefix>` skips all of this and uses an existing install.
`PK_KOKKOS_SDIST=<file>` uses a local copy of the sdist (machines with no network); it is
checked against the pinned sha256 below, as is every download.
With `nvcc` on PATH a second prefix with Serial+OpenMP+CUDA is built beside the host one
(`PK_NO_CUDA=1` skips it); `--cuda-only` / `--host-only` build just one of the two.
`--print-sdist` only fetches (or finds) the verified sdist and prints its path.
`PK_BUILD_JOBS` sets the build's parallelism (default: all cores).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

SDIST = "pykokkos-base"
SDIST_VERSION = "0.0.7"
SDIST_FILE = f"{SDIST}-{SDIST_VERSION}.tar.gz"
# sha256 of pykokkos-base-0.0.7.tar.gz as PyPI lists it: checked for downloads and local copies.
SDIST_SHA256 = "6339daced1e81a2748f381847d8717cd77d824407da3c263b9491b5630c642b0"
KOKKOS_VERSION = "3.4.01"
INDEX = os.environ.get("PK_PYPI_INDEX", "https://pypi.org/pypi")


def say(msg: str) -> None:
    print(f"[kokkos] {msg}", file=sys.stderr, flush=True)


def fail(msg: str) -> "None":
    say(f"error: {msg}")
    sys.exit(1)


def make_private(d: Path) -> None:
    """Creates `d` 0700 (parents as the umask says), or checks an existing one is
    the user's own folder and tightens its mode."""
    d.parent.mkdir(parents=True, exist_ok=True)
    try:
        d.mkdir(mode=0o700)
        return
    except FileExistsError:
        pass
    st = d.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        fail(f"{d} exists but is not a folder owned by you: the cache will not use it")
    if st.st_mode & 0o077:
        d.chmod(0o700)


def private_root(d: Path) -> Path:
    """The same rule as the runtime's (src/compile/trust.rs): a folder of the user's
    own as is; a missing one created 0700; a sticky shared one (as /tmp) gets a
    private per-user folder inside; any other shared one is refused."""
    try:
        st = d.stat()
    except FileNotFoundError:
        make_private(d)
        return d
    if not stat.S_ISDIR(st.st_mode):
        fail(f"cache folder {d} is not a folder")
    if st.st_uid == os.geteuid() and not st.st_mode & 0o022:
        return d
    if not st.st_mode & stat.S_ISVTX:
        fail(
            f"cache folder {d} can be written by other users and has no sticky bit: they could "
            "replace anything built there, so it is not used; point PK_CACHE_DIR at a folder of "
            "your own (or at a sticky shared folder such as /tmp)"
        )
    mine = d / f"pykokkos-fuse-{os.geteuid()}"
    make_private(mine)
    return mine


def cache_root() -> Path:
    explicit = os.environ.get("PK_CACHE_DIR")
    if explicit:
        return private_root(Path(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    root = Path(base) / "pykokkos-fuse"
    make_private(root)
    return root


@contextlib.contextmanager
def locked(root: Path, name: str):
    """An exclusive lock across processes: one set-up builds, the others wait and
    then find its result."""
    locks = root / "locks"
    make_private(locks)
    with open(locks / f"{name}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def require_compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if not cxx or not shutil.which(cxx):
        fail("no C++ compiler found: install g++ (Debian: `apt-get install g++`) or set CXX.")
    return cxx


def ensure_build_tools() -> tuple[str, str]:
    """cmake and ninja from PATH, else from pip (they ship as wheels)."""
    cmake, ninja = shutil.which("cmake"), shutil.which("ninja")
    if cmake and ninja:
        return cmake, ninja
    say("installing cmake and ninja with pip ...")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "cmake", "ninja"], check=True)
    bindir = Path(sys.executable).parent
    cmake = shutil.which("cmake") or str(bindir / "cmake")
    ninja = shutil.which("ninja") or str(bindir / "ninja")
    for tool in (cmake, ninja):
        if not Path(tool).exists():
            fail(f"{tool} not found after `pip install cmake ninja`")
    return cmake, ninja


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_sdist(dest: Path) -> Path:
    """The verified sdist: PK_KOKKOS_SDIST, else a cached copy, else downloaded."""
    local = os.environ.get("PK_KOKKOS_SDIST")
    if local:
        path = Path(local).expanduser()
        if not path.is_file():
            fail(f"PK_KOKKOS_SDIST={local} is not a file")
        got = sha256_of(path)
        if got != SDIST_SHA256:
            fail(f"PK_KOKKOS_SDIST={local}: sha256 {got} is not the pinned {SDIST_SHA256} of {SDIST_FILE}")
        say(f"using local sdist {path}")
        return path
    target = dest / SDIST_FILE
    if target.exists() and sha256_of(target) == SDIST_SHA256:
        return target
    with urllib.request.urlopen(f"{INDEX}/{SDIST}/json", timeout=60) as r:
        meta = json.load(r)
    files = meta.get("releases", {}).get(SDIST_VERSION, [])
    entries = [u for u in files if u["packagetype"] == "sdist"]
    if not entries:
        fail(f"the index lists no sdist for {SDIST}=={SDIST_VERSION}")
    url, sha = entries[0]["url"], entries[0]["digests"]["sha256"]
    if sha != SDIST_SHA256:
        fail(f"the index gives sha256 {sha} for {url}, not the pinned {SDIST_SHA256}")
    say(f"downloading {url}")
    tmp = target.with_suffix(".part")
    with urllib.request.urlopen(url, timeout=120) as r, open(tmp, "wb") as out:
        shutil.copyfileobj(r, out)
    got = sha256_of(tmp)
    if got != SDIST_SHA256:
        tmp.unlink()
        fail(f"sha256 mismatch for {url}: expected {SDIST_SHA256}, got {got}")
    tmp.rename(target)
    return target


def extract_kokkos(sdist: Path, work: Path) -> Path:
    src = work / "kokkos-src"
    if (src / "CMakeLists.txt").exists():
        return src
    say(f"extracting Kokkos {KOKKOS_VERSION} from {sdist.name}")
    prefix = f"{SDIST}-{SDIST_VERSION}/external/kokkos/"
    tmp = work / "kokkos-src.part"
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(sdist) as tar:
        members = []
        for m in tar.getmembers():
            if m.name.startswith(prefix) and len(m.name) > len(prefix):
                m.name = m.name[len(prefix) :]
                members.append(m)
        tar.extractall(tmp, members=members, filter="data")
    tmp.rename(src)
    return src


def patch_for_cuda13(src: Path) -> None:
    """Source fixes Kokkos 3.4.01 needs for CUDA 13 on Hopper (see shared/notes/kokkos.md)."""
    # (Only the CUDA build needs it.) As a module of the package (the first
    # kernel's install) it is a sibling; run as a script, main() put this
    # folder on sys.path.
    if __package__:
        from .cuda_patches import PatchError, apply_all
    else:
        from cuda_patches import PatchError, apply_all

    try:
        apply_all(src, say)
    except PatchError as e:
        fail(str(e))


def cmake_build(src: Path, build: Path, prefix: Path, cuda: bool, staging: Path) -> None:
    """Configures for `prefix` (any path the install bakes in is the final one) and
    installs into `staging`."""
    cmake, ninja = ensure_build_tools()
    cxx = require_compiler()
    args = [
        cmake,
        "-S",
        str(src),
        "-B",
        str(build),
        "-G",
        "Ninja",
        f"-DCMAKE_MAKE_PROGRAM={ninja}",
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DCMAKE_CXX_STANDARD=17",
        "-DBUILD_SHARED_LIBS=ON",
        "-DCMAKE_POSITION_INDEPENDENT_CODE=ON",
        # Ninja's install step rewrites RPATHs and fails on some CMake versions without this.
        "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
        "-DCMAKE_INSTALL_LIBDIR=lib",
        "-DKokkos_ENABLE_SERIAL=ON",
        "-DKokkos_ENABLE_OPENMP=ON",
        "-DKokkos_ENABLE_TESTS=OFF",
        "-DKokkos_ENABLE_EXAMPLES=OFF",
    ]
    if cuda:
        args += [
            f"-DCMAKE_CXX_COMPILER={src / 'bin' / 'nvcc_wrapper'}",
            "-DKokkos_ENABLE_CUDA=ON",
            "-DKokkos_ENABLE_CUDA_LAMBDA=ON",
            "-DKokkos_ARCH_AMPERE80=ON",
        ]
    else:
        args.append(f"-DCMAKE_CXX_COMPILER={cxx}")
    jobs = os.environ.get("PK_BUILD_JOBS") or str(os.cpu_count() or 2)
    say("configuring (cmake) ...")
    run_logged(args, build / "configure.log")
    say(f"compiling with {jobs} jobs (a few minutes on 2 cores) ...")
    run_logged([cmake, "--build", str(build), "-j", jobs], build / "build.log", progress=True)
    say("installing ...")
    run_logged([cmake, "--install", str(build), "--prefix", str(staging)], build / "install.log")


def run_logged(cmd: list[str], log: Path, progress: bool = False) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        last = 0.0
        for line in proc.stdout:
            out.write(line)
            # Ninja prints "[k/n] ..." lines: echo at most one per second as progress.
            if progress and line.startswith("[") and time.time() - last > 1.0:
                say(line.split("]")[0] + "]")
                last = time.time()
        rc = proc.wait()
    if rc != 0:
        tail = "".join(log.read_text().splitlines(True)[-25:])
        fail(f"`{' '.join(cmd[:3])} ...` failed (exit {rc}); full log: {log}\n{tail}")


def ensure(cuda: bool) -> Path:
    root = cache_root()
    name = f"kokkos-{KOKKOS_VERSION}-{'cuda' if cuda else 'host'}"
    prefix = root / name
    stamp = prefix / ".pk-complete"
    if stamp.exists():
        return prefix
    with locked(root, "setup"):
        if stamp.exists():  # built by another set-up while this one waited
            say(f"Kokkos {KOKKOS_VERSION} was built by another process in {prefix}")
            return prefix
        build_into(root, name, prefix, cuda)
    return prefix


def build_into(root: Path, name: str, prefix: Path, cuda: bool) -> None:
    """Builds and installs into a temporary prefix, then renames it into place: a
    build killed halfway leaves no prefix that a later run would use."""
    work = root / "build"
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    sdist = fetch_sdist(work)
    src = extract_kokkos(sdist, work)
    if cuda:
        cuda_src = work / "kokkos-src-cuda"
        if not cuda_src.exists():
            # Patch a private copy, then rename: an interrupted run leaves no half-patched tree.
            tmp = work / "kokkos-src-cuda.part"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(src, tmp)
            patch_for_cuda13(tmp)
            tmp.rename(cuda_src)
        patch_for_cuda13(cuda_src)  # idempotent: checks an existing copy is fully patched
        src = cuda_src
    build = work / f"build-{name}"
    staging = root / f".{name}.part"
    shutil.rmtree(staging, ignore_errors=True)
    cmake_build(src, build, prefix, cuda, staging)
    (staging / ".pk-complete").write_text(json.dumps({"version": KOKKOS_VERSION, "cuda": cuda}))
    shutil.rmtree(prefix, ignore_errors=True)  # an unfinished prefix of an older version
    staging.rename(prefix)
    say(f"Kokkos {KOKKOS_VERSION} ({'Serial+OpenMP+CUDA' if cuda else 'Serial+OpenMP'}) installed in {prefix} ({time.time() - t0:.0f} s)")


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    args = sys.argv[1:]
    unknown = [a for a in args if a not in ("--cuda-only", "--host-only", "--print-sdist")]
    if unknown:
        fail(f"unknown arguments {unknown}; use --cuda-only, --host-only or --print-sdist")
    if "--print-sdist" in args:
        root = cache_root()
        with locked(root, "setup"):
            work = root / "build"
            work.mkdir(parents=True, exist_ok=True)
            print(fetch_sdist(work))
        return
    explicit = os.environ.get("PK_KOKKOS_ROOT")
    if explicit:
        if not (Path(explicit) / "include" / "KokkosCore_config.h").exists():
            fail(f"PK_KOKKOS_ROOT={explicit} has no include/KokkosCore_config.h")
        print(explicit)
        return
    if "--cuda-only" in args:
        if not shutil.which("nvcc"):
            fail("--cuda-only needs nvcc on PATH (the CUDA toolkit)")
        print(ensure(cuda=True))
        return
    prefix = ensure(cuda=False)
    if "--host-only" not in args and shutil.which("nvcc") and os.environ.get("PK_NO_CUDA") != "1":
        print(ensure(cuda=True))
    print(prefix)


if __name__ == "__main__":
    main()

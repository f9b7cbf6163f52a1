"""What the kernel cache may load (issue: a cache that is safe to share). A
cached library is code that runs as the user: only libraries in a private
folder, owned by the user, not writable by others, and matching the record
written when they were built are loaded; anything else is rebuilt after one
warning. Concurrent set-ups and compiles never break each other, and a
compile killed halfway leaves nothing a later run would load. Child processes,
each with its own cache (PK_CACHE_DIR) and the shared Kokkos (PK_KOKKOS_ROOT)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import child_env, kernel_dir, kernel_sos, run_script, seed_precompiled_header, write_script

pytestmark = [pytest.mark.eager_only, pytest.mark.host_only]

SETUP = Path(__file__).resolve().parents[1] / "python" / "pykokkos" / "install" / "kokkos_setup.py"

PLANT = """
    import sys
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def plant_a(i, a, x, y):
        y[i] = a * x[i] + y[i]

    @pk.workunit
    def plant_b(i, a, x, y):
        y[i] = a * x[i] - y[i]

    y = np.ones(4)
    for name in sys.argv[1:]:
        pk.parallel_for(4, {"a": plant_a, "b": plant_b}[name], a=2.0, x=np.arange(4.0), y=y)
    print(y.tolist())
"""
A_ONCE = [1.0, 3.0, 5.0, 7.0]  # 2 * arange(4) + 1, by NumPy's rules by hand


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def _library_of(cache: Path, workunit: str) -> Path:
    """The cached library whose generated source holds `workunit`."""
    for so in kernel_sos(cache):
        if workunit in (kernel_dir(cache) / so).with_suffix(".cpp").read_text():
            return kernel_dir(cache) / so
    raise AssertionError(f"no library for {workunit}")


@pytest.fixture
def planted(tmp_path, toolchain):
    """A cache with both kernels built; returns (cache, script, env, a.so, b.so)."""
    cache = tmp_path / "cache"
    seed_precompiled_header(cache, toolchain)
    script = write_script(tmp_path, "plant.py", PLANT)
    env = child_env(cache, toolchain)
    r = run_script(script, env, "a", "b")
    assert r.returncode == 0, r.stderr
    return cache, script, env, _library_of(cache, "plant_a"), _library_of(cache, "plant_b")


def test_new_cache_folders_are_private_and_entries_carry_a_record(planted):
    cache, _, _, a, _ = planted
    assert _mode(kernel_dir(cache)) == 0o700
    record = json.loads(a.with_suffix(".json").read_text())
    assert record["key"] == a.stem and len(record["blake3"]) == 64
    assert record["package"].startswith("pykokkos-fuse ")
    assert not _mode(a) & 0o022 and not _mode(a.with_suffix(".json")) & 0o022



def _replace_with(a: Path, b: Path, forged_record: bool) -> None:
    shutil.copyfile(b, a)
    if forged_record:
        rec = json.loads(a.with_suffix(".json").read_text())
        b_rec = json.loads(b.with_suffix(".json").read_text())
        rec["blake3"] = b_rec["blake3"]  # b's hash under a's key: the hash check passes
        a.with_suffix(".json").write_text(json.dumps(rec))


SCENARIOS = {
    # what is planted, and the reason the warning must give
    "another kernel's bytes": (False, None, "do not match the hash recorded"),
    "no build record": (False, "drop-record", "it has no build record"),
    "writable by the group": (True, "g+w", "others can write it (mode 664)"),
    "owned by another user": (True, "chown", "owned by uid 65534, not by you"),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_planted_library_is_not_loaded_and_the_kernel_still_runs_right(planted, scenario):
    cache, script, env, a, b = planted
    forged, tweak, reason = SCENARIOS[scenario]
    if tweak == "chown" and os.geteuid() != 0:
        pytest.skip("needs root: only root can make a file owned by another user")
    _replace_with(a, b, forged)
    if tweak == "drop-record":
        a.with_suffix(".json").unlink()
    elif tweak == "g+w":
        a.chmod(0o664)
    elif tweak == "chown":
        os.chown(a, 65534, 65534)
    r = run_script(script, env, "a")
    assert r.returncode == 0, r.stderr
    # plant_b's code under plant_a's key would give 2*x - 1.
    assert json.loads(r.stdout) == A_ONCE, (scenario, r.stdout)
    assert r.stderr.count("pykokkos: warning: not loading cached kernel") == 1, r.stderr
    assert str(a) in r.stderr and reason in r.stderr, r.stderr
    # Rebuilt as a trusted entry: the next run loads it silently.
    again = run_script(script, env, "a")
    assert again.returncode == 0 and json.loads(again.stdout) == A_ONCE
    assert "warning" not in again.stderr, again.stderr
    assert a.stat().st_uid == os.geteuid() and not _mode(a) & 0o022


def _config_cache(tmp_path, toolchain, folder: Path):
    script = write_script(tmp_path, "where.py", "import pykokkos as pk\nprint(pk.config()['cache'])\n")
    return run_script(script, child_env(folder, toolchain))


def test_a_sticky_shared_folder_gets_a_private_per_user_folder(tmp_path, toolchain):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    r = _config_cache(tmp_path, toolchain, shared)
    assert r.returncode == 0, r.stderr
    mine = shared / f"pykokkos-fuse-{os.geteuid()}"
    assert r.stdout.strip() == str(mine)
    assert _mode(mine) == 0o700
    # The Kokkos set-up applies the same rule (it installs where the runtime looks).
    out = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(SETUP.parent)!r}); "
                          "import kokkos_setup; print(kokkos_setup.cache_root())"],
                         env={**os.environ, "PK_CACHE_DIR": str(shared)}, capture_output=True, text=True)
    assert out.stdout.strip() == str(mine), out.stderr


def test_a_shared_folder_without_the_sticky_bit_is_refused(tmp_path, toolchain):
    shared = tmp_path / "open"
    shared.mkdir()
    shared.chmod(0o777)
    r = _config_cache(tmp_path, toolchain, shared)
    assert r.returncode != 0
    assert f"cache folder {shared} can be written by other users and has no sticky bit" in r.stderr, r.stderr
    assert os.listdir(shared) == []  # nothing was built or planted there
    out = subprocess.run([sys.executable, str(SETUP), "--host-only"], capture_output=True, text=True,
                         env={**os.environ, "PK_CACHE_DIR": str(shared)})
    assert out.returncode != 0 and "no sticky bit" in out.stderr, out.stderr


SLOW_CXX = """#!{python}
# The real compiler, started late: a kernel compile takes long enough to be killed.
import os, sys, time
args = sys.argv[1:]
if "-shared" in args and not any("support-" in a for a in args):
    open({marker!r}, "w").close()
    time.sleep(30)
os.execv({real!r}, [{real!r}] + args)
"""


def test_a_compile_killed_halfway_leaves_nothing_that_loads_and_is_rebuilt(tmp_path, toolchain):
    from conftest import real_compiler

    cache = tmp_path / "cache"
    marker = tmp_path / "compiling"
    slow = tmp_path / "slow-cxx"
    slow.write_text(SLOW_CXX.format(python=sys.executable, marker=str(marker), real=real_compiler(toolchain)))
    slow.chmod(0o755)
    script = write_script(tmp_path, "plant.py", PLANT)
    ident = write_script(tmp_path, "ident.py", "import pykokkos as pk\nprint(pk.config()['identity'])\n")
    env = child_env(cache, toolchain, CXX=str(slow))
    probe = run_script(ident, env)
    assert probe.returncode == 0, probe.stderr
    seed_precompiled_header(cache, toolchain, identity=probe.stdout.strip())
    child = subprocess.Popen([sys.executable, str(script), "a"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 120
    while not marker.exists():
        assert child.poll() is None and time.time() < deadline, child.communicate()
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGKILL)  # the runtime and its compiler, mid-compile
    child.communicate()
    assert kernel_sos(cache) == set()  # nothing under a name a later run would load
    env_fast = child_env(cache, toolchain)
    seed_precompiled_header(cache, toolchain)
    r = run_script(script, env_fast, "a")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == A_ONCE
    assert len(kernel_sos(cache)) == 1 and "warning" not in r.stderr, r.stderr


def test_two_set_ups_at_once_on_an_empty_cache_build_kokkos_once(tmp_path):
    sdist = Path(os.environ.get("PK_KOKKOS_SDIST", "")) if os.environ.get("PK_KOKKOS_SDIST") else None
    if sdist is None:
        import pykokkos as pk

        sdist = Path(pk.config()["cache"]) / "build" / "pykokkos-base-0.0.7.tar.gz"
    assert sdist.is_file(), f"make setup leaves the verified Kokkos sdist at {sdist}"
    cache = tmp_path / "fresh"
    env = {**os.environ, "PK_CACHE_DIR": str(cache), "PK_KOKKOS_SDIST": str(sdist), "PK_BUILD_JOBS": "2"}
    env.pop("PK_KOKKOS_ROOT", None)
    procs = [subprocess.Popen([sys.executable, str(SETUP), "--host-only"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == str(cache / "kokkos-3.4.01-host"), out
    errs = "".join(err for _, err in outs)
    assert errs.count("configuring (cmake)") == 1, errs  # one build ...
    assert errs.count("was built by another process") == 1, errs  # ... the other waited for it
    prefix = cache / "kokkos-3.4.01-host"
    assert (prefix / ".pk-complete").exists() and (prefix / "lib" / "libkokkoscore.so").exists()
    assert [f for f in os.listdir(cache) if f.endswith(".part")] == []

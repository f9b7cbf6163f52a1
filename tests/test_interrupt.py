"""Ctrl-C (SIGINT) stops a program as it stops plain Python: a host kernel at
its next chunk boundary (it ran in part, and says so), lazily between the
kernels of a flush (what ran is done, the rest stays pending and is said to),
and during a compile (the compiler is stopped and nothing of the build stays
in the cache). Child
processes get the signal; each then checks its results against NumPy."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

import pykokkos as pk

pytestmark = [pytest.mark.eager_only, pytest.mark.host_only("signals a host process while its kernels run")]

LOOP = textwrap.dedent("""
    import os
    import sys
    import numpy as np
    import pykokkos as pk

    if os.environ.get("LOOP_CUDA"):
        pk.set_default_space(pk.Cuda)

    @pk.workunit
    def slow(i, y, s, reps):
        for k in range(reps):
            y[i] = y[i] + s

    @pk.workunit
    def follow(i, z, y, reps):
        for k in range(reps):
            z[i] = z[i] + y[i]

    n, reps, steps = 1 << 15, int(os.environ.get("LOOP_REPS", "6000")), 40
    y, z = pk.View([n], pk.double), pk.View([n], pk.double)
    # Every kernel (fused ones too) is compiled before the signal comes: the
    # same steps on other views, so a cold cache does not turn the stop
    # between kernels into a stop during a compile.
    wy, wz = pk.View([n], pk.double), pk.View([n], pk.double)
    for it in range(steps):
        pk.parallel_for(n, slow, y=wy, s=1.0, reps=1)
        pk.parallel_for(n, follow, z=wz, y=wy, reps=1)
    pk.flush()
    print("ready", flush=True)
    done = 0
    try:
        for it in range(steps):
            pk.parallel_for(n, slow, y=y, s=1.0, reps=reps)
            pk.parallel_for(n, follow, z=z, y=y, reps=1)
            done += 1
        print("recorded", pk.pending(), flush=True)
        print("value", float(np.asarray(y)[0]))
    except KeyboardInterrupt as e:
        notes = "|".join(getattr(e, "__notes__", [])).replace(chr(10), "|")
        print("interrupted", done, pk.pending(), notes, flush=True)
    # Whatever was interrupted, every launch made runs at most once, and
    # each work item is at the end of one of them (never half-way through).
    y0, z0 = float(np.asarray(y)[0]), float(np.asarray(z)[0])
    states = sorted(set(zip(np.asarray(y).tolist(), np.asarray(z).tolist())))
    print("final", done, y0, z0, ";".join(f"{a},{b}" for a, b in states))
""")


def signal_after(tmp_path, program, line: str, delay: float, env=None):
    """Runs `program`, sends SIGINT `delay` seconds after it prints `line`."""
    prog = tmp_path / "prog.py"
    prog.write_text(program)
    # The child starts with SIGINT's default disposition: a shell that runs
    # these tests in the background ignores SIGINT, and Python keeps it ignored.
    p = subprocess.Popen([sys.executable, str(prog)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=dict(os.environ, **(env or {})),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    for out in p.stdout:
        seen.append(out)
        if out.startswith(line):
            break
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    rest, err = p.communicate(timeout=300)
    return p.returncode, "".join(seen) + rest, err


def expected(done: int, reps: int = 6000):
    """y[0] and z[0] after `done` whole steps (z adds y after each step)."""
    y = z = 0.0
    for _ in range(done):
        y += reps
        z += y
    return y, z


def states(out: str):
    """The distinct (y, z) pairs over the work items at the program's end."""
    last = out.splitlines()[-1].split()
    return [tuple(float(v) for v in p.split(",")) for p in last[4].split(";")]


def test_eager_ctrl_c_stops_the_running_kernel_part_way(tmp_path):
    rc, out, err = signal_after(tmp_path, LOOP, "ready", 0.5, {"PK_FUSE": "0"})
    assert rc == 0, err
    inter = next(line for line in out.splitlines() if line.startswith("interrupted"))
    done = int(inter.split()[1])
    assert done < 40, out
    # The kernel under way stopped at a chunk boundary (or ended): each item
    # either ran it or not. The step under way may have run its first
    # launch, or part of it: y a step ahead of z there; or, stopped in its
    # second launch, all of it for the items that launch reached.
    whole = (expected(done), (expected(done + 1)[0], expected(done)[1]), expected(done + 1))
    assert set(states(out)) <= set(whole), out


def test_lazy_ctrl_c_stops_the_flush_and_says_what_is_left(tmp_path):
    rc, out, err = signal_after(tmp_path, LOOP, "recorded", 0.5, {"PK_FUSE": "1"})
    assert rc == 0, err
    inter = next(line for line in out.splitlines() if line.startswith("interrupted"))
    _, done, pending, note = inter.split(" ", 3)
    assert int(done) == 40, out
    if note.startswith("interrupted between the kernels of a flush"):
        # Between two kernels: the rest stays pending and ran at the next read,
        # so the results are those of all 40 steps.
        assert int(pending) > 0
        assert note == f"interrupted between the kernels of a flush: {pending} launch(es) did not run and are " \
                       "still pending"
        assert states(out) == [expected(40)], out
        return
    # Inside a kernel (a fused run of steps): stopped at a chunk boundary; its
    # launches and what depends on them are dropped and named, never rerun.
    assert "was stopped part way: some of its work items ran, the others did not" in note, out
    assert "launches that depended on it or ran in part with it were dropped: 'slow' at " in note, out
    left = int(note.split(" launch(es) that do not depend")[0].rsplit("|", 1)[-1]) if "still pending" in note else 0
    assert int(pending) == left, out
    # Every item is at the end of a whole number of steps, at most 40.
    full = [expected(k) for k in range(41)]
    assert all(s in full for s in states(out)), out
    assert len(states(out)) >= 1


LONG = textwrap.dedent("""
    import os
    import signal
    import numpy as np
    import pykokkos as pk

    if os.environ.get("OWN_HANDLER"):
        seen = []
        signal.signal(signal.SIGINT, lambda s, f: seen.append(s))

    @pk.workunit
    def slow(i, y, s, reps):
        for k in range(reps):
            y[i] = y[i] + s

    n, reps = 1 << 16, 2_000_000
    y = pk.View([n], pk.double)
    pk.parallel_for(n, slow, y=y, s=1.0, reps=1)
    pk.flush()
    if os.environ.get("REINSTALL"):
        # What ipykernel does around each Jupyter cell: Python puts its own C
        # handler back, in place of the one the runtime chained in front.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    print("ready", flush=True)
    try:
        # About 30 s on 2 cores when it runs to its end.
        pk.parallel_for(n, slow, y=y, s=1.0, reps=reps)
        pk.flush()
        print("ran", pk.pending())
    except KeyboardInterrupt as e:
        print("interrupted", pk.pending(), "|".join(getattr(e, "__notes__", [])))
    a = np.asarray(y)
    print("items", int((a == reps + 1).sum()), int((a == 1).sum()), n)
""")


@pytest.mark.parametrize("fuse,reinstall", [("0", ""), ("1", ""), ("0", "1")])
def test_ctrl_c_stops_one_long_host_kernel_part_way(tmp_path, fuse, reinstall):
    """One kernel of about 30 s: Ctrl-C stops it at a chunk boundary, so some
    items ran whole and the others not at all (none is half-way), and the
    launch is said to have run in part. Also after the program set SIGINT's
    handler again, as Jupyter does for each cell."""
    rc, out, err = signal_after(tmp_path, LONG, "ready", 0.5, {"PK_FUSE": fuse, "REINSTALL": reinstall})
    assert rc == 0, err
    inter = next(line for line in out.splitlines() if line.startswith("interrupted"))
    assert "was stopped part way: some of its work items ran, the others did not" in inter, out
    assert inter.split()[1] == "0", out
    ran, untouched, n = (int(v) for v in out.splitlines()[-1].split()[1:])
    assert ran + untouched == n and 0 < untouched, out


def test_a_program_that_handles_sigint_gets_the_long_kernel_run_whole(tmp_path):
    """A program's own SIGINT handler keeps the program going: the tasks
    skipped when the signal came run after all, each item exactly once."""
    program = LONG.replace("2_000_000", "100_000")
    rc, out, err = signal_after(tmp_path, program, "ready", 0.3, {"OWN_HANDLER": "1"})
    assert rc == 0, err
    assert "ran 0" in out, out
    ran, untouched, n = (int(v) for v in out.splitlines()[-1].split()[1:])
    assert (ran, untouched) == (n, 0), out


def test_a_compile_interrupted_leaves_nothing_in_the_cache(tmp_path):
    token = uuid.uuid4().hex[:12]
    program = textwrap.dedent(f"""
        import pykokkos as pk

        @pk.workunit
        def fresh_{token}(i, y):
            y[i] = i * 3.0 + 1.0

        import os
        y = pk.View([10], pk.double)
        print("pid", os.getpid(), flush=True)
        print("compiling", flush=True)
        try:
            pk.parallel_for(10, fresh_{token}, y=y)
            print("not interrupted")
        except KeyboardInterrupt as e:
            print("interrupted", "|".join(getattr(e, "__notes__", [])))
    """)
    kernels = os.path.join(pk.config()["cache"], "kernels")
    rc, out, err = signal_after(tmp_path, program, "compiling", 0.3)
    assert rc == 0, err
    assert "interrupted a kernel compile was interrupted (nothing was cached)" in out, out + err
    # Its own temporaries only (named with its pid): the cache is shared with
    # the other test workers, whose compiles may be under way.
    pid = out.split("pid ", 1)[1].split()[0]
    mine = [f for f in os.listdir(kernels) if f".{pid}." in f and (f.endswith(".tmp.so") or f.endswith(".tmp.cpp"))]

    def its_source(f):  # (another worker's file may go while this looks)
        try:
            return f.endswith(".cpp") and token in open(os.path.join(kernels, f)).read()
        except OSError:
            return False
    left = mine + [f for f in os.listdir(kernels) if its_source(f)]
    assert left == []
    # The next run builds it and gets the right values.
    again = tmp_path / "again.py"
    again.write_text(program.replace('print("not interrupted")',
                                     'import numpy as np; print("values", np.asarray(y).tolist())'))
    r = subprocess.run([sys.executable, str(again)], capture_output=True, text=True)
    assert f"values {[i * 3.0 + 1.0 for i in range(10)]}" in r.stdout, r.stdout + r.stderr


def test_a_fused_kernel_build_interrupted_leaves_its_launches_pending(tmp_path):
    """Ctrl-C while a flush compiles its fused kernel: nothing of the region ran,
    all of it stays pending (said so), and the next read runs it: the values are
    those of an uninterrupted run."""
    token = uuid.uuid4().hex[:12]
    program = textwrap.dedent(f"""
        import numpy as np
        import pykokkos as pk

        @pk.workunit
        def first_{token}(i, y):
            y[i] = i * 2.0

        @pk.workunit
        def second_{token}(i, z, y):
            z[i] = y[i] + 1.0

        y, z = pk.View([10], pk.double), pk.View([10], pk.double)
        pk.parallel_for(10, first_{token}, y=y)
        pk.parallel_for(10, second_{token}, z=z, y=y)
        print("compiling", flush=True)
        try:
            pk.flush()
            print("not interrupted")
        except KeyboardInterrupt as e:
            print("interrupted", pk.pending(), "|".join(getattr(e, "__notes__", [])))
        print("values", np.asarray(z).tolist())
    """)
    rc, out, err = signal_after(tmp_path, program, "compiling", 0.3, {"PK_FUSE": "1"})
    assert rc == 0, err
    assert "interrupted 2 interrupted while a kernel of the flush was compiled: 2 launch(es) did not run and " \
           "are still pending" in out, out + err
    assert f"values {[i * 2.0 + 1.0 for i in range(10)]}" in out, out

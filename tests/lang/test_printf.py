"""pk.printf goes to C's stdout: run a program in a subprocess and read it."""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels

HERE = os.path.dirname(os.path.abspath(__file__))


def test_printf_output():
    r = subprocess.run([sys.executable, os.path.join(HERE, "printf_prog.py")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "item 0 of 3: x=0.000 v=0.5",
        "100% done   2.2|7   |ff|A",
        "no conversions",
        "item 1 of 3: x=0.500 v=1.5",
        "item 2 of 3: x=1.000 v=2.5",
    ]


def _lines_on_a_terminal(script: str, env: dict) -> list[str]:
    """The program's stdout as a terminal shows it (C's stdio and Python's are
    both line-buffered there, so lines come out in the order they are made)."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, script], stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    _, err = p.communicate(timeout=300)
    os.close(master)
    assert p.returncode == 0, err.decode()[-3000:]
    return out.decode().replace("\r\n", "\n").splitlines()


@pytest.mark.eager_only  # the mode is the child's (PK_FUSE)
@pytest.mark.parametrize("fuse", ["0", "1"])
def test_printf_lines_come_when_the_kernel_was_launched(fuse):
    # Lazy mode records launches; one that prints runs at once (with the
    # pending fill it reads), so its lines are not held back to the next read.
    # The adaptive bypass is off: every launch is recorded.
    env = dict(os.environ, PK_FUSE=fuse, PK_FUSION_DISABLE="adaptive")
    got = _lines_on_a_terminal(os.path.join(HERE, "printf_order_prog.py"), env)
    assert got == ["python 0", "kernel 0", "python 1", "kernel 1", "python 2", "kernel 2",
                   "v[0] = 0.0", "v[1] = 1.5", "end"]

"""Ctrl-C during a lazy flush of Cuda kernels (make test-gpu): the flush stops
between kernels, what did not run stays pending and runs at the next read,
results as if never interrupted (test_interrupt.py's program on the GPU)."""
import pytest

from test_interrupt import LOOP, expected, signal_after

pytestmark = [pytest.mark.eager_only, pytest.mark.device_only]

REPS = 20_000_000  # each slow kernel runs tens of milliseconds on the GPU: the flush lasts seconds


def test_lazy_ctrl_c_stops_a_cuda_flush_between_kernels(tmp_path):
    rc, out, err = signal_after(tmp_path, LOOP, "recorded", 0.5,
                                {"PK_FUSE": "1", "LOOP_CUDA": "1", "LOOP_REPS": str(REPS)})
    assert rc == 0, err
    inter = next(line for line in out.splitlines() if line.startswith("interrupted"))
    _, done, pending, *note = inter.split(" ", 3)
    note = note[0] if note else ""
    assert int(done) == 40, out
    # The signal lands while the flush's fused kernel compiles (NVRTC), between
    # two kernels, or (the whole loop fused into one kernel already cached)
    # while that kernel runs: then Python raises when it returns, with nothing
    # pending. In no case did anything half-run or get lost.
    assert note in ("", f"interrupted between the kernels of a flush: {pending} launch(es) did not run and are "
                    "still pending", f"interrupted while a kernel of the flush was compiled: {pending} launch(es) "
                    "did not run and are still pending"), out
    assert (int(pending) > 0) == bool(note), out
    final = out.splitlines()[-1].split()
    assert (float(final[2]), float(final[3])) == expected(40, REPS), out

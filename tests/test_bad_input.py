"""Bad input never takes the interpreter down: random wrong arguments for
launches, reductions and View constructors (types, dtypes, shapes, ranks,
ranges, None, lists, read-only, strided and reversed arrays, zero divisors),
eagerly and lazily, run in a child process (tests/bad_input_child.py); every
case gives NumPy's result or raises a Python exception, and the child ends
normally: no signal, no hang, no other exit status. A sample here;
`make fuzz` runs PK_FUZZ_BAD_EXAMPLES batches of new random cases."""
import json
import os
import pathlib
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.eager_only, pytest.mark.host_only("child processes on the host")]

EXAMPLES = int(os.environ.get("PK_FUZZ_BAD_EXAMPLES", "4"))
FIXED = os.environ.get("PK_FUZZ_RANDOM") != "1"
CHILD = pathlib.Path(__file__).with_name("bad_input_child.py")

sizes = st.sampled_from([0, 1, 3, 8, 17])
dtypes = st.sampled_from(["f8", "f4", "i8", "i4", "u1", "b"])
arrays = st.one_of(
    st.tuples(st.just("view"), sizes, dtypes),
    st.tuples(st.just("numpy"), sizes, dtypes, st.sampled_from(["plain", "strided", "readonly", "2d", "reversed"])),
    st.tuples(st.just("list"), sizes),
    st.tuples(st.just("number"), st.sampled_from([0, 1.5, -2])),
    st.tuples(st.just("none")),
    st.tuples(st.just("text")),
)
policies = st.one_of(
    st.tuples(st.just("n"), st.sampled_from([0, 1, 3, 8, 17, -1, 2**40])),
    st.tuples(st.just("range"), st.sampled_from([0, 2, 5, -3]), st.sampled_from([0, 3, 8, 17])),
    st.tuples(st.just("float"), st.just(2.5)),
    st.tuples(st.just("none")),
)
scalars = st.sampled_from([2.0, 0, -1, None, "x", [1.0], 1.0e300])
cases = st.one_of(
    st.fixed_dictionaries({"kind": st.just("view"),
                           "shape": st.one_of(st.lists(st.sampled_from([0, 1, 4, -1, 2**62]), max_size=3),
                                              st.sampled_from([5, -2, 2.5, None, "3"])),
                           "dtype": st.sampled_from(["double", "float32", "int32", "uint8", "bool", "complex128",
                                                     "nonsense", None, 7])}),
    st.fixed_dictionaries({"kind": st.just("axpy"), "policy": policies, "a": scalars, "x": arrays, "y": arrays}),
    st.fixed_dictionaries({"kind": st.just("total"), "policy": policies, "x": arrays}),
    st.fixed_dictionaries({"kind": st.just("quotient"), "policy": policies,
                           "x": st.tuples(st.just("numpy"), sizes, st.sampled_from(["i8", "i4"]), st.just("plain")),
                           "y": st.tuples(st.just("view"), sizes, st.sampled_from(["i8", "i4"])),
                           "d": st.sampled_from([0, 3, -2, 0.0])}),
)


@pytest.mark.parametrize("fuse", ["0", "1"], ids=["eager", "lazy"])
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=FIXED)
@given(batch=st.lists(cases, min_size=12, max_size=12))
def test_bad_input_gives_numpys_result_or_a_python_exception(batch, fuse):
    r = subprocess.run([sys.executable, str(CHILD)], input=json.dumps(batch), capture_output=True, text=True,
                       env=dict(os.environ, PK_FUSE=fuse), timeout=600)
    lines = r.stdout.splitlines()
    done = len([line for line in lines if line.split()[0].isdigit()])
    assert r.returncode == 0 and lines[-1:] == ["end"], (
        f"exit status {r.returncode} after {done} case(s); next case: "
        f"{json.dumps(batch[done]) if done < len(batch) else None}\n{r.stderr[-3000:]}")

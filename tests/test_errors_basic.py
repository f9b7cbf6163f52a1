"""Errors: kernels outside the subset, type errors, and wrong launch arguments.

Kernel errors must name this file and the exact line of the offending code; launch
argument mistakes are plain TypeErrors, raised before anything is compiled.
"""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.eager_only

import pykokkos as pk

THIS_FILE = __file__


def line_of(marker: str) -> int:
    """1-based line number of the unique line of this file ending in the comment `# marker`."""
    with open(THIS_FILE) as f:
        hits = [n for n, text in enumerate(f, 1) if text.rstrip().endswith("# " + marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def assert_located(err: BaseException, marker: str) -> None:
    line = line_of(marker)
    text = str(err)
    assert f'File "{THIS_FILE}", line {line}' in text, text


# --- kernels outside the subset (KernelSyntaxError) ------------------------------------


@pk.workunit
def uses_comprehension(i, x):
    t = i + 1
    x[i] = [k for k in range(3)][0] + t  # ERR-comprehension


@pk.workunit
def uses_try(i, x):
    x[i] = 1.0
    try:  # ERR-try
        x[i] = 2.0
    except Exception:
        pass


@pk.function
def helper_with_matmul(a: float) -> float:
    b: float = a
    return b @ b  # ERR-helper


@pk.workunit
def calls_bad_helper(i, x):
    x[i] = helper_with_matmul(x[i])


def make_nested_workunit():
    @pk.workunit
    def nested(i, x):
        x[i] = 0.0
        with open("f") as f:  # ERR-nested
            x[i] = 1.0

    return nested


@pytest.mark.parametrize(
    "wu,marker",
    [
        (uses_comprehension, "ERR-comprehension"),
        (uses_try, "ERR-try"),
        (calls_bad_helper, "ERR-helper"),
        (make_nested_workunit(), "ERR-nested"),
    ],
    ids=["comprehension", "try", "in-pk-function", "indented-def"],
)
def test_unsupported_syntax_is_located(wu, marker):
    x = np.zeros(4)
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.parallel_for(4, wu, x=x)
    err = info.value
    assert isinstance(err, SyntaxError)
    assert_located(err, marker)
    # SyntaxError's own fields point at the same place, for tracebacks.
    assert err.filename == THIS_FILE
    assert err.lineno == line_of(marker)
    assert err.text is not None and marker in err.text
    np.testing.assert_array_equal(x, np.zeros(4))  # nothing ran
    # The error is stable: a second launch reports it again.
    with pytest.raises(pk.KernelSyntaxError) as again:
        pk.parallel_for(4, wu, x=x)
    assert str(again.value) == str(err)


# --- type errors inside kernels (KernelTypeError) ----------------------------------------


@pk.workunit
def too_many_indices(i, x):
    t = 1.0
    x[i, i] = t  # ERR-indices


@pk.workunit
def undefined_name(i, x):
    x[i] = 2.0
    x[i] = not_defined_anywhere + 1  # ERR-undefined


@pk.workunit
def annotated_view(
    i: int,
    v: pk.View1D[pk.int32],  # ERR-annotation
):
    v[i] = 1


@pytest.mark.parametrize(
    "wu,kwargs,marker",
    [
        (too_many_indices, {"x": np.zeros(3)}, "ERR-indices"),
        (undefined_name, {"x": np.zeros(3)}, "ERR-undefined"),
        (annotated_view, {"v": np.zeros(3)}, "ERR-annotation"),  # float64 given, int32 declared
    ],
    ids=["indices", "undefined-name", "annotation-mismatch"],
)
def test_type_errors_are_located(wu, kwargs, marker):
    with pytest.raises(pk.KernelTypeError) as info:
        pk.parallel_for(3, wu, **kwargs)
    assert isinstance(info.value, TypeError)
    assert_located(info.value, marker)
    assert wu.__name__ in str(info.value)


@pk.workunit
def fill_ones(i, x):
    x[i] = 1.0


@pk.workunit
def counts(i, acc):  # ERR-counts-def
    acc += 1


def test_annotated_view_accepts_the_declared_type():
    v = np.zeros(3, np.int32)
    pk.parallel_for(3, annotated_view, v=v)
    np.testing.assert_array_equal(v, [1, 1, 1])


def test_reduce_without_accumulator_parameter():
    # The workunit has no accumulator: the error must say so (not misreport 'x').
    with pytest.raises(TypeError) as info:
        pk.parallel_reduce(3, fill_ones, x=np.zeros(3))
    assert "accumulator" in str(info.value), str(info.value)


def test_reduce_without_any_parameter_beyond_index():
    with pytest.raises(pk.KernelTypeError) as info:
        pk.parallel_reduce(pk.MDRangePolicy([0, 0], [2, 2]), counts)
    assert "counts" in str(info.value)
    assert_located(info.value, "ERR-counts-def")
    assert pk.parallel_reduce(5, counts) == 5.0


def test_mdrange_with_too_few_index_parameters():
    # fill-style workunit with one index, launched over two dimensions.
    with pytest.raises(TypeError) as info:
        pk.parallel_for(pk.MDRangePolicy([0, 0], [2, 2]), fill_ones, x=np.zeros(3))
    assert "index" in str(info.value), str(info.value)


# --- launch argument mistakes: plain TypeErrors ---------------------------------------------


@pk.workunit
def two_args(i, x, y):
    y[i] = x[i]


def not_decorated(i, x):
    x[i] = 1.0


def _check_untouched(y):
    np.testing.assert_array_equal(y, np.zeros(3))


def test_missing_keyword_argument():
    y = np.zeros(3)
    with pytest.raises(TypeError) as info:
        pk.parallel_for(3, two_args, y=y)
    assert type(info.value) is TypeError
    assert "'x'" in str(info.value)
    _check_untouched(y)


def test_unexpected_keyword_argument():
    y = np.zeros(3)
    with pytest.raises(TypeError) as info:
        pk.parallel_for(3, two_args, x=np.ones(3), y=y, z=np.ones(3))
    assert type(info.value) is TypeError
    assert "z" in str(info.value)
    _check_untouched(y)


def test_positional_kernel_arguments_are_rejected():
    y = np.zeros(3)
    with pytest.raises(TypeError) as info:
        pk.parallel_for(3, two_args, np.ones(3), y)
    assert type(info.value) is TypeError
    _check_untouched(y)
    with pytest.raises(TypeError):
        pk.parallel_for(3)
    with pytest.raises(TypeError):
        pk.parallel_reduce(3)
    with pytest.raises(TypeError):
        pk.parallel_scan()


def test_non_decorated_workunit():
    x = np.zeros(3)
    with pytest.raises(TypeError) as info:
        pk.parallel_for(3, not_decorated, x=x)
    assert type(info.value) is TypeError
    assert "not_decorated" in str(info.value)
    with pytest.raises(TypeError):
        pk.parallel_reduce(3, not_decorated, x=x)
    with pytest.raises(TypeError):
        pk.parallel_for(3, 42, x=x)
    _check_untouched(x)


def test_bad_policy_and_argument_values():
    x, y = np.ones(3), np.zeros(3)
    with pytest.raises(TypeError):
        pk.parallel_for(1.5, two_args, x=x, y=y)
    with pytest.raises(TypeError):
        pk.parallel_for(3, two_args, x="not an array", y=y)
    with pytest.raises(TypeError):
        pk.parallel_for(3, two_args, x=2**70, y=y)  # does not fit in 64 bits
    with pytest.raises(TypeError):
        pk.parallel_for(3, two_args, x=np.ones(3, np.complex128), y=y)
    with pytest.raises(TypeError):
        pk.RangePolicy(1, 2, 3, 4)
    with pytest.raises(ValueError):
        pk.MDRangePolicy([0, 0], [1])
    _check_untouched(y)
    # After all that, the workunit still works.
    pk.parallel_for(3, two_args, x=x, y=y)
    np.testing.assert_array_equal(y, x)


def test_decorating_a_non_function():
    with pytest.raises(TypeError):
        pk.workunit(42)


def test_an_unknown_fusion_switch_is_an_error_at_import():
    import os
    import subprocess
    import sys

    def imports(disable: str):
        env = dict(os.environ, PK_FUSION_DISABLE=disable)
        return subprocess.run([sys.executable, "-c", "import pykokkos"], env=env, capture_output=True,
                              text=True, timeout=120)

    r = imports("vertical, vertcal")  # a typo would otherwise switch nothing off
    assert r.returncode != 0
    assert "PK_FUSION_DISABLE names 'vertcal'" in r.stderr and "horizontal" in r.stderr and "tape" in r.stderr
    assert imports("vertical,tape,dead_temporaries,adaptive_cost").returncode == 0

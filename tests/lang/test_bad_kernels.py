"""Kernels outside the kernel language are rejected before any C++ exists, with
the right exception, the user's file and line, and a plain sentence."""
import inspect
import os
import re

import pytest
import pykokkos as pk

from . import bad_kernels as bk

SYN, TYP = pk.KernelSyntaxError, pk.KernelTypeError

# Raised at the launch call: in lazy mode the same errors come at the flush,
# naming the launch site (tests/test_lazy.py covers that path).
pytestmark = pytest.mark.eager_only

# (kernel, exception, message fragment[, object holding the '# ERR' line])
CASES = [
    ("string_local", SYN, "strings are only allowed as the format of pk.printf"),
    ("list_literal", SYN, "tuples and lists are only allowed"),
    ("dict_literal", SYN, "dict literals are not supported"),
    ("set_literal", SYN, "set literals are not supported"),
    ("list_comprehension", SYN, "comprehensions are not supported"),
    ("generator_expression", SYN, "comprehensions are not supported"),
    ("dict_comprehension", SYN, "comprehensions are not supported"),
    ("try_except", SYN, "'try' is not supported"),
    ("with_block", SYN, "'with' is not supported"),
    ("lambda_expr", SYN, "lambda is not supported"),
    ("global_stmt", SYN, "'global' is not supported"),
    ("nonlocal_stmt", TYP, "nonlocal 'total' names no variable of this kernel"),
    ("unknown_call", TYP, "'frobnicate' is not a function kernels can call"),
    ("plain_python_function", TYP, "'not_a_kernel_function' is not a function kernels can call"),
    # A plain function of the kernel's module is compiled as a helper (newer PyKokkos), its errors at its lines.
    ("plain_helper_not_kernel_code", SYN, "strings are only allowed", "plain_helper_with_a_string"),
    ("undefined_name", TYP, "name 'not_defined_anywhere' is not defined"),
    ("unsupported_global_value", TYP, "name 'DATA' is not defined"),
    ("too_many_indices", TYP, "1 dimension(s) but is indexed with 2 indices"),
    ("too_few_indices", TYP, "assign to view elements"),
    ("view_as_scalar", TYP, "needs a number, but this is a View1D[float64]"),
    ("assign_read_only_argument", TYP, "'x' is a launch argument and is read-only"),
    ("float_index", TYP, "a view index must be an integer"),
    ("range_with_float", TYP, "range() needs integers"),
    ("is_operator", SYN, "'is' compares object identity"),
    ("in_operator", SYN, "'in' is not supported"),
    ("f_string", SYN, "f-strings are not supported"),
    ("walrus", SYN, "walrus operator"),
    ("nested_def", TYP, "'helper' is a nested def: it can only be the body of a nested pk.parallel_for"),
    ("class_def", SYN, "a class definition is not supported"),
    ("import_stmt", SYN, "'import' is not supported"),
    ("from_import", SYN, "'import' is not supported"),
    ("del_stmt", SYN, "'del' is not supported"),
    ("raise_stmt", SYN, "'raise' is not supported"),
    ("assert_stmt", SYN, "'assert' is not supported"),
    ("yield_expr", SYN, "yield are not supported"),
    ("star_args", SYN, "*args is not supported"),
    ("star_star_kwargs", SYN, "**kwargs is not supported"),
    ("tuple_unpacking", SYN, "tuple unpacking is not supported"),
    ("while_else", SYN, "'while ... else' is not supported"),
    ("for_over_view", SYN, "kernels loop only over 'range(...)'"),
    ("print_call", SYN, "print() is not available in kernels"),
    ("none_value", SYN, "'None' is not a kernel value"),
    ("matmul_operator", SYN, "matrix multiplication '@' is not supported"),
    ("slice_with_step", SYN, "slices with a step are not supported"),
    ("keyword_argument", SYN, "keyword argument 'y=' is not supported"),
    ("star_call", SYN, "'*' argument unpacking is not supported"),
    ("bitwise_on_float", TYP, "bitwise operators need integer"),
    ("bitwise_uint64_int64", TYP, "bitwise operators on uint64 and int64 have no common integer type"),
    ("invert_float", TYP, "'~' needs an integer operand"),
    ("return_value", SYN, "a workunit cannot return a value"),
    ("view_rebinds_number", TYP, "a kernel local keeps one kind of value"),
    ("extent_out_of_range", TYP, "extent(1) of a view with 1 dimension(s)"),
    ("fence_in_kernel", SYN, "pk.fence() is a host call"),
    ("printf_non_literal", TYP, "pk.printf needs a string literal"),
    ("printf_count", TYP, "format has 2 conversion(s) but 1 value(s)"),
    ("unknown_math", TYP, "'frobnicate' is not a supported math function"),
    ("bad_annotation", TYP, "unsupported annotation"),
    ("attribute_of_number", TYP, "attribute '.modulus' is not supported"),
    ("method_on_view", TYP, "'.fill(...)' is not a function kernels can call"),
    ("len_of_number", TYP, "len() needs a view"),
    ("complex_literal", TYP, "a complex number does not convert to a real type"),
    ("match_stmt", SYN, "'match' is not supported"),
    ("range_as_value", SYN, "range(...) is only allowed as the iterable of a 'for' loop"),
    ("compare_with_string", TYP, "a comparison needs a number, but this is a string"),
    ("min_of_one", TYP, "min() in a kernel takes two or more numbers"),
    ("atomic_on_number", TYP, "the first argument of pk.atomic_add must be a view"),
    ("atomic_index_count", TYP, "the view has 2 dimension(s) but 1 index(es) were given"),
    ("assign_to_subview", TYP, "assign to view elements"),
    ("error_inside_function", TYP, "attribute '.missing' is not supported", "helper_with_error"),
    ("function_arity", TYP, "one_arg() takes 1 argument(s) but 2 were given"),
    ("recursion", SYN, "recursion is not supported", "fact"),
    ("classtype_field", TYP, "classtype Pair has no field 'c'"),
    ("classtype_arity", TYP, "Pair() takes 2 argument(s)"),
    ("bool_op_on_view", TYP, "'and'/'or' needs a number"),
    ("reduce_acc_assign", TYP, "assign to the accumulator 'acc' with 'acc += ...'"),
    ("WritesMember", TYP, "functor member 'self.count' is read-only"),
    ("UnknownMember", TYP, "the functor has no member 'w'"),
]

LOCATION = re.compile(r'File "(.*)", line (\d+), column (\d+)')


def marked_line(obj):
    """The file line of the `# ERR` comment inside obj's source."""
    lines, first = inspect.getsourcelines(obj)
    hits = [k for k, text in enumerate(lines) if "# ERR" in text]
    assert len(hits) == 1, f"{obj} needs exactly one '# ERR' marker"
    return first + hits[0], lines[hits[0]]


def launch(name):
    obj = getattr(bk, name)
    v = pk.View([4], pk.double)
    m = pk.View([4, 4], pk.double)
    if isinstance(obj, type):
        pk.parallel_for(4, obj(v).work)
    elif name.startswith("reduce_"):
        pk.parallel_reduce(4, obj, v=v, m=m, x=1.5, n=3)
    else:
        pk.parallel_for(4, obj, v=v, m=m, x=1.5, n=3)


def test_corpus_is_large_and_fully_marked():
    assert len(CASES) >= 40
    names = {c[0] for c in CASES}
    kernels = {n for n, o in vars(bk).items()
               if hasattr(o, "__pk_workunit__") and not getattr(o, "__pk_function__", False)
               or getattr(o, "__pk_functor__", False)}
    assert kernels <= names, f"bad kernels without a case: {kernels - names}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_kernel_is_rejected_at_its_line(case):
    name, exc, fragment = case[:3]
    holder = getattr(bk, case[3] if len(case) > 3 else name)
    if isinstance(holder, type):
        holder = holder.work
    line, text = marked_line(holder)
    with pytest.raises(exc) as info:
        launch(name)
    msg = str(info.value)
    assert fragment in msg
    loc = LOCATION.search(msg)
    assert loc, msg
    assert os.path.samefile(loc.group(1), bk.__file__)
    assert int(loc.group(2)) == line, msg
    # The offending source line and a caret under a column of it follow.
    col = int(loc.group(3))
    shown = msg.splitlines()
    assert shown[-2].strip() == text.strip()
    assert shown[-1].index("^") == col - 1 + 4
    if exc is SYN:
        assert info.value.lineno == line

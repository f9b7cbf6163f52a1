"""Kernels outside the kernel language, for test_bad_kernels.py.

Every kernel marks the line its error must point at with an `# ERR` comment.
They share the signature (i, v, m, x, n): v a 1-D double view, m a 2-D double
view, x a Python float and n a Python int. Keep this file free of anything
that would move lines around for no reason: the tests compute lines from it.
"""
import math
import os  # noqa: F401  (referenced by a bad kernel)

import pykokkos as pk

COUNTER = 0
DATA = [1, 2, 3]


# A plain function of another module is no kernel helper (one of this module is).
from json import dumps as not_a_kernel_function  # noqa: E402


@pk.workunit
def string_local(i, v, m, x, n):
    s = "hello"  # ERR
    v[i] = x


@pk.workunit
def list_literal(i, v, m, x, n):
    a = [[1, 2], [3, 4]]  # ERR
    v[i] = x


@pk.workunit
def dict_literal(i, v, m, x, n):
    d = {"a": 1}  # ERR
    v[i] = x


@pk.workunit
def set_literal(i, v, m, x, n):
    s = {1, 2}  # ERR
    v[i] = x


@pk.workunit
def list_comprehension(i, v, m, x, n):
    a = [j * 2 for j in range(3)]  # ERR
    v[i] = x


@pk.workunit
def generator_expression(i, v, m, x, n):
    v[i] = sum(j for j in range(n))  # ERR


@pk.workunit
def dict_comprehension(i, v, m, x, n):
    d = {j: j for j in range(3)}  # ERR


@pk.workunit
def try_except(i, v, m, x, n):
    try:  # ERR
        v[i] = x
    except IndexError:
        pass


@pk.workunit
def with_block(i, v, m, x, n):
    with open("f") as fh:  # ERR
        v[i] = x


@pk.workunit
def lambda_expr(i, v, m, x, n):
    f = lambda a: a + 1  # ERR  # noqa: E731
    v[i] = x


@pk.workunit
def global_stmt(i, v, m, x, n):
    global COUNTER  # ERR
    v[i] = COUNTER


def make_nonlocal():
    total = 0

    @pk.workunit
    def nonlocal_stmt(i, v, m, x, n):
        nonlocal total  # ERR
        v[i] = x

    return nonlocal_stmt


nonlocal_stmt = make_nonlocal()


@pk.workunit
def unknown_call(i, v, m, x, n):
    v[i] = frobnicate(x)  # ERR  # noqa: F821


@pk.workunit
def plain_python_function(i, v, m, x, n):
    v[i] = not_a_kernel_function(x)  # ERR


@pk.workunit
def undefined_name(i, v, m, x, n):
    v[i] = x + not_defined_anywhere  # ERR  # noqa: F821


@pk.workunit
def unsupported_global_value(i, v, m, x, n):
    v[i] = DATA  # ERR


@pk.workunit
def too_many_indices(i, v, m, x, n):
    v[i, 0] = x  # ERR


@pk.workunit
def too_few_indices(i, v, m, x, n):
    m[i] = x  # ERR


@pk.workunit
def view_as_scalar(i, v, m, x, n):
    y = v + 1  # ERR


@pk.workunit
def assign_read_only_argument(i, v, m, x, n):
    x = 2.0  # ERR
    v[i] = x


@pk.workunit
def float_index(i, v, m, x, n):
    v[x] = 1.0  # ERR


@pk.workunit
def range_with_float(i, v, m, x, n):
    for j in range(x):  # ERR
        v[i] += 1


@pk.workunit
def is_operator(i, v, m, x, n):
    if x is n:  # ERR
        v[i] = x


@pk.workunit
def in_operator(i, v, m, x, n):
    if x in v:  # ERR
        v[i] = x


@pk.workunit
def f_string(i, v, m, x, n):
    pk.printf(f"{x}\n")  # ERR


@pk.workunit
def walrus(i, v, m, x, n):
    if (y := x + 1) > 2:  # ERR
        v[i] = y


@pk.workunit
def nested_def(i, v, m, x, n):
    def helper(a):
        return a
    v[i] = helper(x)  # ERR


@pk.workunit
def class_def(i, v, m, x, n):
    class Local:  # ERR
        pass
    v[i] = x


@pk.workunit
def import_stmt(i, v, m, x, n):
    import os  # ERR  # noqa: F811
    v[i] = x


@pk.workunit
def from_import(i, v, m, x, n):
    from math import sqrt  # ERR
    v[i] = sqrt(x)


@pk.workunit
def del_stmt(i, v, m, x, n):
    y = x
    del y  # ERR


@pk.workunit
def raise_stmt(i, v, m, x, n):
    if x < 0:
        raise ValueError("negative")  # ERR


@pk.workunit
def assert_stmt(i, v, m, x, n):
    assert x > 0  # ERR


@pk.workunit
def yield_expr(i, v, m, x, n):
    yield x  # ERR


@pk.workunit
def star_args(i, v, m, x, n, *rest):  # ERR
    v[i] = x


@pk.workunit
def star_star_kwargs(i, v, m, x, n, **more):  # ERR
    v[i] = x


@pk.workunit
def tuple_unpacking(i, v, m, x, n):
    a, b = x, n  # ERR


@pk.workunit
def while_else(i, v, m, x, n):
    while x > 0:  # ERR
        break
    else:
        v[i] = x


@pk.workunit
def for_over_view(i, v, m, x, n):
    for e in v:  # ERR
        v[i] += e


@pk.workunit
def print_call(i, v, m, x, n):
    print(x)  # ERR


@pk.workunit
def none_value(i, v, m, x, n):
    y = None  # ERR


@pk.workunit
def matmul_operator(i, v, m, x, n):
    y = m @ m  # ERR


@pk.workunit
def slice_with_step(i, v, m, x, n):
    w = v[::2]  # ERR


@pk.workunit
def keyword_argument(i, v, m, x, n):
    v[i] = math.pow(x, y=2.0)  # ERR


@pk.workunit
def star_call(i, v, m, x, n):
    v[i] = max(*v)  # ERR


@pk.workunit
def bitwise_on_float(i, v, m, x, n):
    v[i] = x & 1  # ERR


@pk.workunit
def bitwise_uint64_int64(i, v, m, x, n):
    u = pk.uint64(n)
    v[i] = u & i  # ERR


@pk.workunit
def invert_float(i, v, m, x, n):
    v[i] = ~x  # ERR


@pk.workunit
def return_value(i, v, m, x, n):
    return x  # ERR


@pk.workunit
def view_rebinds_number(i, v, m, x, n):
    a = 1.0
    a = v  # ERR


@pk.workunit
def extent_out_of_range(i, v, m, x, n):
    v[i] = v.extent(1)  # ERR


@pk.workunit
def fence_in_kernel(i, v, m, x, n):
    pk.fence()  # ERR


@pk.workunit
def printf_non_literal(i, v, m, x, n):
    pk.printf(x)  # ERR


@pk.workunit
def printf_count(i, v, m, x, n):
    pk.printf("%d and %d\n", i)  # ERR


@pk.workunit
def unknown_math(i, v, m, x, n):
    v[i] = math.frobnicate(x)  # ERR


@pk.workunit
def bad_annotation(i, v, m, x, n):
    y: list = 3  # ERR


@pk.workunit
def attribute_of_number(i, v, m, x, n):
    v[i] = x.modulus  # ERR


@pk.workunit
def method_on_view(i, v, m, x, n):
    v.fill(0.0)  # ERR


@pk.workunit
def len_of_number(i, v, m, x, n):
    v[i] = len(x)  # ERR


@pk.workunit
def complex_literal(i, v, m, x, n):
    v[i] = x * 1j  # ERR


@pk.workunit
def match_stmt(i, v, m, x, n):
    match n:  # ERR
        case 1:
            v[i] = x


@pk.workunit
def range_as_value(i, v, m, x, n):
    r = range(3)  # ERR


@pk.workunit
def compare_with_string(i, v, m, x, n):
    if x == "a":  # ERR
        v[i] = x


@pk.workunit
def min_of_one(i, v, m, x, n):
    v[i] = min(x)  # ERR


@pk.workunit
def atomic_on_number(i, v, m, x, n):
    pk.atomic_add(x, [0], 1.0)  # ERR


@pk.workunit
def atomic_index_count(i, v, m, x, n):
    pk.atomic_add(m, [i], 1.0)  # ERR


@pk.workunit
def assign_to_subview(i, v, m, x, n):
    v[1:3] = x  # ERR


@pk.function
def helper_with_error(a):
    return a.missing  # ERR


@pk.workunit
def error_inside_function(i, v, m, x, n):
    v[i] = helper_with_error(x)


@pk.function
def one_arg(a: float) -> float:
    return a


@pk.workunit
def function_arity(i, v, m, x, n):
    v[i] = one_arg(x, n)  # ERR


@pk.function
def fact(k: int) -> int:
    if k <= 1:
        return 1
    return k * fact(k - 1)  # ERR


@pk.workunit
def recursion(i, v, m, x, n):
    v[i] = fact(n)


@pk.classtype
class Pair:
    def __init__(self, a: float, b: float):
        self.a = a
        self.b = b


@pk.workunit
def classtype_field(i, v, m, x, n):
    p = Pair(x, x)
    v[i] = p.c  # ERR


@pk.workunit
def classtype_arity(i, v, m, x, n):
    p = Pair(x)  # ERR


@pk.workunit
def bool_op_on_view(i, v, m, x, n):
    if v and x > 0:  # ERR
        v[i] = x


@pk.workunit
def reduce_acc_assign(i, acc, v, m, x, n):
    acc = x  # ERR


@pk.functor
class WritesMember:
    def __init__(self, v):
        self.v = v
        self.count = 0

    @pk.workunit
    def work(self, i):
        self.count = i  # ERR


@pk.functor
class UnknownMember:
    def __init__(self, v):
        self.v = v

    @pk.workunit
    def work(self, i):
        self.v[i] = self.w  # ERR


def plain_helper_with_a_string(a):
    s = "text"  # ERR
    return a + len(s)


@pk.workunit
def plain_helper_not_kernel_code(i, v, m, x, n):
    v[i] = plain_helper_with_a_string(x)

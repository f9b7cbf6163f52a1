"""Whole-array expressions and NumPy reductions as kernels.

`B[2:n-2, 2:n-2] += W[2, 2] * A[2:n-2, 0:n-4] + ...` becomes one kernel over
the target's shape: every array operand is read at `offset + index * step` per
dimension (step 0 where NumPy broadcasts), scalars are kernel arguments or are
computed in the kernel. Offsets, steps and shapes are computed on the host at
each call (rt.Region), so one compiled kernel serves every slice bound.
"""

from __future__ import annotations

import ast

import numpy as np

from ._errors import unsupported
from ._kbody import NP_RENAME, KernelBody, pk_type, vectorized_call
from ._typer import Arr

ELEMENTWISE_NP = {
    "sqrt",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "log1p",
    "expm1",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "abs",
    "absolute",
    "fabs",
    "floor",
    "ceil",
    "trunc",
    "power",
    "arctan2",
    "hypot",
    "minimum",
    "maximum",
    "fmin",
    "fmax",
    "where",
    "square",
    "negative",
    "sign",
    "isnan",
    "isinf",
    "isfinite",
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "conj",
    "conjugate",
    "real",
    "imag",
    "rint",
    "cbrt",
    "copysign",
    "fmod",
    "logical_and",
    "logical_or",
    "logical_not",
    "logical_xor",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "equal",
    "not_equal",
    "floor_divide",
    "remainder",
    "mod",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "invert",
    "bitwise_not",
    "deg2rad",
    "rad2deg",
    "degrees",
    "radians",
}
NP_BINARY = {
    "add": ast.Add,
    "subtract": ast.Sub,
    "multiply": ast.Mult,
    "divide": ast.Div,
    "true_divide": ast.Div,
    "floor_divide": ast.FloorDiv,
    "remainder": ast.Mod,
    "mod": ast.Mod,
    "bitwise_and": ast.BitAnd,
    "bitwise_or": ast.BitOr,
    "bitwise_xor": ast.BitXor,
}
NP_COMPARE = {"greater": ast.Gt, "greater_equal": ast.GtE, "less": ast.Lt, "less_equal": ast.LtE, "equal": ast.Eq, "not_equal": ast.NotEq}
# NumPy names of kernel math the kernel language spells otherwise.
NP_MATH = {"deg2rad": "radians", "rad2deg": "degrees"}


def _truth(x: ast.expr) -> ast.expr:
    return ast.Compare(x, [ast.NotEq()], [ast.Constant(0)])


def name(n: str, ctx=None) -> ast.Name:
    return ast.Name(n, ctx or ast.Load())


def call(f: str, args, kw=None) -> ast.Call:
    return ast.Call(ast.parse(f, mode="eval").body, list(args), kw or [])


class Expr:
    """One array expression being turned into a kernel body and its host set-up."""

    def __init__(self, t, pre: list):
        self.t = t
        self.pre = pre  # host statements emitted before the launch
        self.params: list[str] = []  # kernel parameters after the indices
        self.kwargs: list[ast.keyword] = []  # the launch's keyword arguments
        self.regions: list[str] = []  # host names of the operand Regions
        self.prefix: dict[str, str] = {}  # host Region name -> the kernel's view parameter
        self.plain: dict = {}  # id of a region read -> the same read at the work index
        self.plain_ok = True
        self.rank = 0

    def err(self, node, msg):
        return unsupported(self.t.ctx, node, msg)

    def region(self, base: ast.expr, key, node) -> tuple[str, str, int]:
        """A host Region for `base[key]`; (kernel name of the view, host region name, array rank)."""
        bt = self.t.type_of(base)
        if not isinstance(base, ast.Name) or not isinstance(bt, Arr):
            raise self.err(node, "array expressions may slice named arrays only")
        r = self.t.fresh("r")
        v = self.t.fresh(base.id)
        args = [base] if key is None else [base, _host_key(key)]
        self.pre.append(ast.Assign([name(r, ast.Store())], call("rt.Region", args)))
        self.regions.append(r)
        self.prefix[r] = v
        for d in range(bt.ndim):
            self.params += [f"{v}_o{d}", f"{v}_s{d}"]
        self.params.insert(len(self.params) - 2 * bt.ndim, v)
        return v, r, bt.ndim

    def index(self, v: str, key, ndim: int, node) -> ast.expr:
        """The kernel's read of operand v at the current work indices."""
        idx = key.elts if isinstance(key, ast.Tuple) else ([] if key is None else [key])
        idx = list(idx) + [ast.Slice()] * (ndim - len(idx))
        kept = sum(isinstance(i, ast.Slice) for i in idx)
        if kept > self.rank:
            raise self.err(node, "this operand has more dimensions than the result")
        lead = self.rank - kept
        out, m = [], 0
        for d, i in enumerate(idx):
            off = name(f"{v}_o{d}")
            if isinstance(i, ast.Slice):
                step = ast.BinOp(name(f"i{m + lead}"), ast.Mult(), name(f"{v}_s{d}"))
                out.append(ast.BinOp(off, ast.Add(), step))
                m += 1
            else:
                out.append(off)
        node = ast.Subscript(name(v), ast.Tuple(out, ast.Load()) if len(out) > 1 else out[0], ast.Load())
        # Where the region is the whole array at the result's shape the read is
        # v[i0, i1, ...]: the work index, which the fusion engine can fuse.
        if kept == ndim == self.rank:
            ix = [name(f"i{d}") for d in range(ndim)]
            self.plain[id(node)] = ast.Subscript(name(v), ast.Tuple(ix, ast.Load()) if ndim > 1 else ix[0], ast.Load())
        else:
            self.plain_ok = False
        return node

    def plain_form(self, tree):
        """tree with every region read at the work index (valid when rt.plain holds)."""
        plain = self.plain

        class Swap(ast.NodeTransformer):
            def visit_Subscript(self, n):
                if id(n) in plain:
                    return plain[id(n)]
                return self.generic_visit(n)

        return Swap().visit(tree)  # the general kernel's text is already emitted

    def plain_params(self):
        return [p for p in self.params if not any(p == f"{v}_o{d}" or p == f"{v}_s{d}" for v in self.prefix.values() for d in range(8))]

    def plain_kwargs(self):
        return [ast.keyword(v, ast.Attribute(name(r), "view", ast.Load())) for r, v in self.prefix.items()]

    def element(self, e) -> ast.expr:
        """The kernel expression computing one element of e."""
        t = self.t.type_of(e)
        if not isinstance(t, Arr):
            return self.scalar(e)
        if isinstance(e, ast.Name):
            v, _, nd = self.region(e, None, e)
            return self.index(v, None, nd, e)
        if isinstance(e, ast.Subscript) and not isinstance(e.slice, (ast.Tuple, ast.Slice)) and isinstance(self.t.type_of(e.slice), Arr):
            return self._on_host(e, t)  # a[mask]: its own array first
        if isinstance(e, ast.Subscript):
            v, _, nd = self.region(e.value, e.slice, e)
            return self.index(v, e.slice, nd, e)
        if isinstance(e, ast.BinOp):
            return ast.BinOp(self.in_loop(e.left, t), e.op, self.in_loop(e.right, t))
        if isinstance(e, ast.UnaryOp):
            return ast.UnaryOp(e.op, self.element(e.operand))
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            return ast.Compare(self.element(e.left), e.ops, [self.element(e.comparators[0])])
        if isinstance(e, ast.Call):
            kind = self.t.names.callee(e.func)
            if kind is not None and kind[0] == "np" and kind[1] in ELEMENTWISE_NP and not e.keywords:
                f = kind[1]
                args = [self.in_loop(a, t) if f in NP_BINARY else self.element(a) for a in e.args]
                if f == "where":
                    return ast.IfExp(args[0], args[1], args[2])
                if f in NP_BINARY:
                    return ast.BinOp(args[0], NP_BINARY[f](), args[1])
                if f == "negative":
                    return ast.UnaryOp(ast.USub(), args[0])
                if f in NP_COMPARE:
                    return ast.Compare(args[0], [NP_COMPARE[f]()], [args[1]])
                if f in ("logical_and", "logical_or"):
                    op = ast.And() if f == "logical_and" else ast.Or()
                    return ast.BoolOp(op, [_truth(a) for a in args])
                if f == "logical_xor":
                    return ast.Compare(_truth(args[0]), [ast.NotEq()], [_truth(args[1])])
                if f == "logical_not":
                    return ast.UnaryOp(ast.Not(), _truth(args[0]))
                if f in ("invert", "bitwise_not"):
                    return ast.UnaryOp(ast.Invert(), args[0]) if self.t.type_of(e).dtype != "bool" else ast.UnaryOp(ast.Not(), args[0])
                if f == "square":
                    return ast.BinOp(args[0], ast.Mult(), args[0])
                return call(f"np.{NP_RENAME.get(f, NP_MATH.get(f, f))}", args)
            if kind is not None and kind[0] == "np" and isinstance(getattr(np, kind[1], None), np.ufunc):
                raise self.err(e, f"np.{kind[1]} is not supported in array expressions")
            if kind is not None and kind[0] == "math":
                return call(f"math.{kind[1]}", [self.element(a) for a in e.args])
            if kind is not None and kind[0] == "vectorize":
                return vectorized_call(self.t, kind[1], e.args, [self.t.type_of(a) for a in e.args], e, self.element)
            if isinstance(e.func, ast.Attribute) and e.func.attr == "astype":
                return ast.Call(pk_type(t.dtype), [self.element(e.func.value)], [])
            # Anything else with an array value (a helper's result, an allocation)
            # is computed on the host first, then read like a named array.
            return self._on_host(e, t)
        raise self.err(e, f"{ast.unparse(e)[:40]} is not an elementwise array expression pykokkos.numba supports")

    def _on_host(self, e, t) -> ast.expr:
        value = self.t.host_expr(_copy(e), self.pre)  # e stays as written, for typing
        tmp = self.t.fresh("a")
        self.t.env[tmp] = t
        self.pre.append(ast.Assign([name(tmp, ast.Store())], value))
        v, _, nd = self.region(name(tmp), None, e)
        return self.index(v, None, nd, e)

    def in_loop(self, e, out: Arr) -> ast.expr:
        """An operand of an arithmetic ufunc, cast to the float loop Numba runs
        it in (float32 ** 0.5 computes in float64, float32 * 2 in float32)."""
        t = self.t.type_of(e)
        el = self.element(e)
        if np.dtype(out.dtype).kind not in "fc":
            return el
        dt = t.dtype if isinstance(t, Arr) else t
        if dt == out.dtype or isinstance(e, ast.Constant) and np.dtype(out.dtype) == np.float64:
            return el
        return ast.Call(pk_type(out.dtype), [el], [])

    def scalar(self, e) -> ast.expr:
        """A scalar operand: computed in the kernel when it only reads names and
        array elements, otherwise computed on the host first."""
        if _kernel_safe(e, self.t):
            for n in sorted({x.id for x in ast.walk(e) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}):
                if (n in self.t.env or n in self.t.params) and n not in self.params:
                    self.params.append(n)
                    self.kwargs.append(ast.keyword(n, name(n)))
            body = KernelBody(self.t, self.t.env, self.t.fresh)
            return body.visit(_copy(e))
        value = self.t.host_expr(_copy(e), self.pre)
        s = self.t.fresh("s")
        self.pre.append(ast.Assign([name(s, ast.Store())], value))
        self.params.append(s)
        self.kwargs.append(ast.keyword(s, name(s)))
        return name(s)


def _copy(e):
    return ast.parse(ast.unparse(e), mode="eval").body


def _host_key(key) -> ast.expr:
    """A subscript's key as a host value: slices written out as slice(...)."""
    items = key.elts if isinstance(key, ast.Tuple) else [key]
    out = []
    for i in items:
        if isinstance(i, ast.Slice):
            out.append(call("slice", [i.lower or ast.Constant(None), i.upper or ast.Constant(None), i.step or ast.Constant(None)]))
        else:
            out.append(i)
    return ast.Tuple(out, ast.Load())


def _kernel_safe(e, t) -> bool:
    for x in ast.walk(e):
        if isinstance(x, ast.Call):
            kind = t.names.callee(x.func)
            if kind is None or kind[0] in ("helper", "vectorize", "stencil") or (kind[0] == "np" and kind[1] not in ELEMENTWISE_NP):
                return False
        if isinstance(x, ast.Subscript) and isinstance(t.type_of(x), Arr):
            return False
    return True


def workunit(t, kname: str, indices: list[str], params: list, body: list, acc: str | None = None, acc_name: str = "acc") -> None:
    """Adds `@pk.workunit def kname(<indices>, [acc: pk.Acc[<acc>]], <params>)` to
    the module; params are names or ast.arg (annotated scalars)."""
    args = [ast.arg(i) for i in indices]
    if acc is not None:
        args.append(ast.arg(acc_name, ast.Subscript(ast.parse("pk.Acc", mode="eval").body, pk_type(acc), ast.Load())))
    args += [p if isinstance(p, ast.arg) else ast.arg(p) for p in params]
    fdef = ast.FunctionDef(kname, ast.arguments([], args, None, [], [], None, []), body or [ast.Pass()], [name("pk.workunit")], None)
    t.module.add(fdef)


def _workunit(t, kname, rank, params, body, acc=None):
    workunit(t, kname, [f"i{d}" for d in range(rank)], params, body, acc)


def assign(t, target, value, op=None, new: str | None = None) -> list[ast.stmt]:
    """Host statements that evaluate `value` elementwise into `target` (a
    Name or sliced Subscript; with `op`, `target op= value`), or into a new
    array bound to `new`."""
    pre: list[ast.stmt] = []
    x = Expr(t, pre)
    rt_ty = t.type_of(value)
    if new is not None:
        x.rank = rt_ty.ndim if isinstance(rt_ty, Arr) else 0
    else:
        tt = t.type_of(target)
        x.rank = tt.ndim
    # Reading the target elsewhere than where it is written needs a copy first (NumPy's semantics).
    if new is None and _reads_other_part(target, value):
        tmp = t.fresh("tmp")
        t.env[tmp] = Arr(t.type_of(target).dtype, x.rank)
        out = assign(t, None, value, None, new=tmp)
        return out + assign(t, target, name(tmp), op)
    elem = x.element(value)
    shape = t.fresh("shape")
    if new is not None:
        dt = rt_ty.dtype
        operands = [name(r) for r in x.regions]
        pre.append(ast.Assign([name(shape, ast.Store())], call("rt.shape_of", operands)))
        pre.append(ast.Assign([name(new, ast.Store())], call("rt.zeros", [name(shape), ast.Constant(dt)])))
        tv, tr = t.fresh("out"), None
        store = ast.Subscript(
            name(tv), ast.Tuple([name(f"i{d}") for d in range(x.rank)], ast.Load()) if x.rank > 1 else name("i0"), ast.Store()
        )
        x.params.insert(0, tv)
        launch_kw = [ast.keyword(tv, name(new))]
    else:
        base = target.value if isinstance(target, ast.Subscript) else target
        key = target.slice if isinstance(target, ast.Subscript) else None
        operands = [name(r) for r in x.regions]
        tv, tr, nd = x.region(base, key, target)
        store = x.index(tv, key, nd, target)
        store.ctx = ast.Store()
        kw = [ast.keyword("target", name(tr))]
        pre.append(ast.Assign([name(shape, ast.Store())], call("rt.shape_of", operands, kw)))
        launch_kw = []
    if op is not None:
        read = _copy(store)
        if id(store) in x.plain:
            x.plain[id(read)] = _copy(x.plain[id(store)])
        elem = ast.BinOp(read, op, elem)
    return pre + launches(t, x, shape, "expr", [ast.Assign([store], elem)], None, launch_kw, None)


def launches(t, x, shape: str, what: str, body, acc, extra_kw, result: str | None) -> list[ast.stmt]:
    """The launch of a kernel over `shape` (a reduce when `result` names its
    total), and where every region may turn out whole, a variant reading at the
    work index chosen at run time (rt.plain): only that form can fuse."""
    pattern = "pk.parallel_reduce" if result else "pk.parallel_for"
    kname = t.kernel_name(what)
    _workunit(t, kname, x.rank, x.params, body, acc=acc)
    kw = list(extra_kw) + x.kwargs
    for r in x.regions:
        kw.append(ast.keyword(None, call(f"{r}.args", [ast.Constant(x.prefix[r]), name(shape)])))

    def stmt(k, kws):
        c = call(pattern, [call("rt.policy", [name(shape)]), name(k)], kws)
        return ast.Assign([name(result, ast.Store())], c) if result else ast.Expr(c)

    general = stmt(kname, kw)
    if not x.plain_ok:
        return [general]
    plain_name = t.kernel_name(what + "_whole")
    body = x.plain_form(ast.Module(body, [])).body
    _workunit(t, plain_name, x.rank, x.plain_params(), body, acc=acc)
    fast = stmt(plain_name, list(extra_kw) + x.kwargs + x.plain_kwargs())
    return [ast.If(call("rt.plain", [name(shape), *[name(r) for r in x.regions]]), [fast], [general])]


def _reads_other_part(target, value) -> bool:
    base = target.value if isinstance(target, ast.Subscript) else target
    if not isinstance(base, ast.Name):
        return False
    want = ast.dump(target)
    for node in ast.walk(value):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == base.id:
            if ast.dump(node) != want:
                return True
        if isinstance(node, ast.Name) and node.id == base.id and isinstance(target, ast.Subscript):
            parents = [p for p in ast.walk(value) if isinstance(p, ast.Subscript) and p.value is node]
            if not parents:
                return True
    return False

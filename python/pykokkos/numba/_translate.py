"""One jitted function, typed by one call, as a PyKokkos module: workunits for
its loops and array expressions, and a host function that launches them.

translate() is the whole pipeline: parse -> type -> split the body into host
statements and kernels -> emit. Host statements stay Python; a `prange` loop
becomes parallel_for or parallel_reduce; serial loops become one-work-item
kernels (compiled, as Numba compiles them); whole-array expressions and NumPy
reductions become kernels over their shape (see _arrayexpr.py).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from . import _arrayexpr, _host, _serial
from ._errors import Source, unsupported
from ._names import Names
from ._normalize import normalize
from ._typer import Arr, Typer, type_of_value

HEADER = "import math\n\nimport numpy as np\n\nimport pykokkos as pk\nfrom pykokkos.numba import rt\n"


def parse(fn) -> tuple[ast.FunctionDef, Source]:
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise TypeError(f"cannot read the source of {fn.__name__!r}: jitted functions must be defined in a file") from None
    text = "".join(lines)
    indent = len(lines[0]) - len(lines[0].lstrip())
    text = textwrap.dedent(text)
    tree = ast.parse(text)
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef,)):
        raise TypeError(f"{fn.__name__!r} is not a plain function definition")
    fdef.decorator_list = []
    src = Source(inspect.getsourcefile(fn) or fn.__code__.co_filename, first, text.splitlines(True), indent)
    return fdef, src


class Module:
    """The generated module: kernels and host functions, each emitted once."""

    def __init__(self):
        self.defs: list[str] = []
        self.taken: set[str] = set()
        self.device: dict = {}  # (helper, arg types) -> pk.function name
        self.host: dict = {}  # (helper, arg types) -> host function name

    def name(self, base: str) -> str:
        k, n = 0, base
        while n in self.taken:
            k += 1
            n = f"{base}_{k}"
        self.taken.add(n)
        return n

    def add(self, node: ast.AST):
        ast.fix_missing_locations(node)
        self.defs.append(ast.unparse(node))

    def text(self) -> str:
        return HEADER + "\n\n" + "\n\n\n".join(self.defs) + "\n"


class Translation:
    """The state of translating one function (or helper) for one signature."""

    def __init__(self, fn, arg_types: tuple, module: Module, is_helper, device=False):
        self.fn = fn
        self.fdef, self.ctx = parse(fn)
        self.names = Names(fn, self.ctx, is_helper)
        self.module = module
        self.is_helper = is_helper
        self.top = False  # the function its user calls (translate() says so), not a helper
        self.device = device
        params = self.fdef.args
        if params.vararg or params.kwarg or params.kwonlyargs or params.posonlyargs:
            raise unsupported(self.ctx, self.fdef, "jitted functions take plain positional parameters")
        self.params = [a.arg for a in params.args]
        normalize(self.fdef, self.names, dict(zip(self.params, arg_types)))
        if len(arg_types) != len(self.params):
            raise TypeError(f"{fn.__name__}() takes {len(self.params)} arguments but {len(arg_types)} were given")
        self.arg_types = dict(zip(self.params, arg_types))
        check_subset(self.fdef, self.ctx)
        typer = Typer(self.names, self.arg_types, self.helper_return)
        self.env = typer.run(self.fdef.body)
        self.returns = typer.returns
        self.counter = 0
        # Names of the arrays the translation allocates (fresh("a")): new memory no argument aliases.
        self.made: set = set()

    # -- services for the emitters ---------------------------------------
    def type_of(self, e, env=None):
        t = Typer(self.names, env if env is not None else self.env, self.helper_return)
        return t.expr(e)

    def host_expr(self, e, pre: list):
        """`e` as host code (statements it needs go to `pre`): how the kernel
        emitters compute what no kernel can hold, without importing the host layer."""
        return _host.HostBody(self).expr(e, pre)

    def fresh(self, base: str) -> str:
        self.counter += 1
        n = f"{base}_{self.counter}"
        while n in self.env or n in self.params:
            self.counter += 1
            n = f"{base}_{self.counter}"
        if base == "a":
            self.made.add(n)
        return n

    def kernel_name(self, what: str) -> str:
        return self.module.name(f"{self.fn.__name__}_{what}")

    def helper_return(self, helper, arg_types, node):
        return helper_translation(helper, arg_types, self.module, self.is_helper, node, self.ctx).returns

    def _helper(self, table: dict, name: str, emit, helper, arg_types, node) -> str:
        """The emitted name of a jitted helper for these argument types (emitted once)."""
        key = (helper, tuple(arg_types))
        if key not in table:
            t = helper_translation(helper, arg_types, self.module, self.is_helper, node, self.ctx)
            fname = self.module.name(name)
            emit(t, fname)  # recorded once emitted: a helper no kernel takes stays refused on a second try
            table[key] = fname
        return table[key]

    def device_helper(self, helper, arg_types, node) -> str:
        """The @pk.function for a jitted helper called from a kernel with these types."""
        return self._helper(self.module.device, f"{helper.py_func.__name__}_fn", _serial.emit_function, helper, arg_types, node)

    def host_helper(self, helper, arg_types, node) -> str:
        """The host function for a jitted helper called from host code."""
        return self._helper(self.module.host, f"_{helper.py_func.__name__}", _host.emit_host_function, helper, arg_types, node)


REFUSED = {
    ast.Dict: "dict literals",
    ast.Set: "set literals",
    ast.ListComp: "list comprehensions",
    ast.DictComp: "dict comprehensions",
    ast.SetComp: "set comprehensions",
    ast.GeneratorExp: "generators",
    ast.Lambda: "lambdas",
    ast.Starred: "star arguments",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Await: "await",
    ast.JoinedStr: "f-strings",
    ast.Try: "try statements",
    ast.With: "with statements",
    ast.ClassDef: "classes",
    ast.FunctionDef: "nested functions",
    ast.Global: "global statements",
    ast.Nonlocal: "nonlocal statements",
    ast.Import: "imports",
    ast.ImportFrom: "imports",
    ast.Delete: "del statements",
    ast.List: "list literals",
    ast.NamedExpr: "the walrus operator",
    ast.MatMult: "the @ operator",
}


def _array_literals(fdef) -> set:
    """ids of the list displays that are np.array([...]) / np.asarray([...]) arguments (nested too)."""
    ok: set = set()
    for node in ast.walk(fdef):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("array", "asarray")
            and node.args
            and isinstance(node.args[0], (ast.List, ast.Tuple))
        ):
            ok |= {id(x) for x in ast.walk(node.args[0]) if isinstance(x, (ast.List, ast.Tuple))}
    return ok


def check_subset(fdef: ast.FunctionDef, ctx: Source) -> None:
    """Refuses constructs no kernel can hold before anything is typed."""
    literals = _array_literals(fdef)
    for node in ast.walk(fdef):
        if node is fdef or id(node) in literals:
            continue
        what = REFUSED.get(type(node))
        if what is not None:
            raise unsupported(
                ctx,
                node,
                f"{what} are not supported by pykokkos.numba (use arrays, loops and scalars)"
                if not what.endswith("operator") and what not in ("yield", "await")
                else f"{what} is not supported by pykokkos.numba",
            )


_STACK: list = []


def helper_translation(helper, arg_types, module, is_helper, node, ctx) -> Translation:
    fn = helper.py_func
    if fn in _STACK:
        raise unsupported(ctx, node, f"recursive calls ({fn.__name__}) are not supported")
    _STACK.append(fn)
    try:
        return Translation(fn, tuple(arg_types), module, is_helper)
    finally:
        _STACK.pop()


def translate(fn, args: tuple, is_helper) -> tuple[str, str]:
    """(module text, name of the host function) for fn called with these arguments."""
    arg_types = []
    for a in args:
        t = type_of_value(a)
        if t is None:
            raise TypeError(
                f"{fn.__name__}(): arguments of type {type(a).__name__} are not supported (NumPy arrays, numbers and tuples of numbers are)"
            )
        arg_types.append(t)
    module = Module()
    module.name(fn.__name__)
    t = Translation(fn, tuple(arg_types), module, is_helper)
    t.top = True
    body = "_" + fn.__name__
    module.taken.add(body)
    _host.emit_host_function(t, body)
    _host.emit_caller(t, fn.__name__, body)
    return module.text(), fn.__name__


__all__ = ["translate", "Translation", "Module", "Arr", "_arrayexpr"]

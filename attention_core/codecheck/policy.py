"""What the learner's code may do: compiled by RestrictedPython under our policy, run with a short
list of builtins and a whitelisted ``np``. Runs only inside the worker process (worker.py).

Three layers, each of which would stop the attacks of docs/code-check.md on its own for the part
it covers:

1. **Compile time** (RestrictedPython's transformer, subclassed): no name or attribute starting
   with ``_`` (so no dunder walk such as ``().__class__.__bases__``), no ``exec``/``eval``/
   ``compile``/``open``/``getattr``/``globals``/… (refused by name, with the line), no import but
   ``numpy``, no class definitions. Every attribute read becomes ``_getattr_(obj, name)``, every
   subscript write ``_write_(obj)[k] = v``, every ``print`` a call on our bounded collector.
2. **Run time, attributes** (:func:`guarded_getattr`): a whitelist per type. ``np`` is a proxy
   (:class:`NumpyProxy`) that has only the array functions of :data:`NP_FUNCTIONS`; an array has
   only the attributes and methods of :data:`ARRAY_ATTRIBUTES` and :data:`ARRAY_METHODS` (no
   ``tofile``, ``dump``, ``ctypes``, ``data``, ``base``, ``view``, ``setflags`` …); lists, dicts,
   tuples and strings have their plain methods but ``str.format``/``format_map`` (which walk
   attributes inside the format string); everything else has none.
3. **Run time, values**: every function of ``np`` and every array method is wrapped so that an
   array of Python objects (``dtype=object``, which would let NumPy call whatever it holds) is
   refused as soon as it is made.

Refusals carry a code and a name (:class:`NotAllowed`, :class:`Refusal`) so that the page can say
them in the learner's language; :data:`REFUSAL_TEXT` has the English the command line prints.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass
from types import FunctionType

import numpy as np

LEARNER_FILE = "<your code>"  # the file name of the learner's code in line numbers and frames
MAX_SOURCE_CHARS = 20_000
MAX_PRINTED_CHARS = 10_000

# np.<name> the learner may use: creation, arithmetic, reductions, shapes. No file, foreign-code or
# callback entry points (load, save, fromfile, loadtxt, genfromtxt, memmap, ctypeslib, lib,
# frompyfunc, vectorize, apply_along_axis, set_printoptions …) and no submodule (testing, f2py …).
NP_FUNCTIONS = frozenset(
    """
    array asarray zeros ones full zeros_like ones_like full_like eye identity arange linspace
    tri triu tril diag diagonal trace
    exp log log2 log10 sqrt square power abs absolute sign floor ceil round clip tanh
    maximum minimum max min amax amin sum mean std var prod cumsum cumprod argmax argmin
    add subtract multiply divide true_divide negative reciprocal
    where isinf isnan isfinite isneginf isposinf nan_to_num
    logical_not logical_and logical_or allclose isclose array_equal
    all any count_nonzero sort argsort
    matmul dot einsum outer transpose swapaxes moveaxis reshape ravel squeeze expand_dims
    concatenate stack hstack vstack split array_split broadcast_to tile repeat shape ndim size
    """.split()
)
NP_CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan, "newaxis": None}
# Types, unwrapped: NumPy needs the type itself for dtype=np.float64 (their attributes stay closed).
NP_TYPES = {
    "float64": np.float64,
    "float32": np.float32,
    "int64": np.int64,
    "int32": np.int32,
    "bool_": np.bool_,
}

ARRAY_ATTRIBUTES = frozenset({"shape", "ndim", "size", "T", "dtype"})
ARRAY_METHODS = frozenset(
    """
    reshape transpose swapaxes sum max min mean std var prod cumsum argmax argmin argsort
    copy astype flatten ravel squeeze dot clip any all round item tolist fill repeat
    """.split()
)
PLAIN_METHODS = {
    list: frozenset("append extend insert pop remove clear index count copy reverse sort".split()),
    dict: frozenset("keys values items get copy update pop setdefault clear".split()),
    tuple: frozenset({"index", "count"}),
    # no format/format_map: '{0.__class__}'.format(x) reads attributes the compiler never sees
    str: frozenset(
        """
        join split rsplit splitlines strip lstrip rstrip upper lower title capitalize replace
        startswith endswith find count ljust rjust center zfill isdigit isalpha isspace
        """.split()
    ),
}
EXCEPTION_ATTRIBUTES = frozenset({"args"})

# Refused at compile time by name, wherever they appear (the learner reads "open is not available"
# with the line, instead of a NameError at run time).
FORBIDDEN_NAMES = frozenset(
    """
    exec eval compile open getattr setattr delattr hasattr globals locals vars dir type input
    breakpoint help exit quit memoryview object super classmethod staticmethod property
    """.split()
)
ALLOWED_IMPORTS = frozenset({"numpy"})

REFUSAL_TEXT = {
    "syntax": "line {line}: this is not valid Python: {name}",
    "underscore_name": 'line {line}: names starting with "_" are not allowed here ({name})',
    "underscore_attribute": 'line {line}: attributes starting with "_" are not allowed here (.{name})',
    "forbidden_name": "line {line}: {name} is not available in the check",
    "import": "line {line}: import {name} is not allowed: the check offers only numpy (import numpy as np)",
    "class": "line {line}: class definitions are not needed here ({name})",
    "policy": "line {line}: not allowed here: {name}",
    "too_long": "the code is longer than {name} characters",
    "np_attribute": "line {line}: np.{name} is not available in the check (array maths only)",
    "attribute": "line {line}: .{name} is not available in the check",
    "object_array": "line {line}: arrays of Python objects (dtype=object) are not allowed",
    "write": "line {line}: only items of arrays, lists and dicts may be assigned ({name})",
}


@dataclass(frozen=True)
class Refusal:
    """One reason the code is not run (``code`` keys :data:`REFUSAL_TEXT`), with the learner's line."""

    line: int | None
    code: str
    name: str

    def text(self) -> str:
        return REFUSAL_TEXT[self.code].format(
            line=self.line if self.line is not None else "?", name=self.name
        )


class NotAllowed(Exception):
    """Raised in the learner's code by the run-time guards; the worker reports its code and name."""

    def __init__(self, code: str, name: str) -> None:
        super().__init__(REFUSAL_TEXT[code].format(line="?", name=name).split(": ", 1)[-1])
        self.code = code
        self.name = name


# RestrictedPython's own messages, mapped to our codes: (pattern, code); the name is group 1.
_RP_MESSAGES = (
    (re.compile(r'"(.*)" is an invalid variable name because it starts with "_"'), "underscore_name"),
    (re.compile(r'"(.*)" is an invalid attribute name because it starts with "_"'), "underscore_attribute"),
    (re.compile(r"(?:SyntaxError|IndentationError|TabError): (.*) at statement"), "syntax"),
    (re.compile(r'"(.*)" is a restricted name'), "attribute"),
    (re.compile(r"(Exec|Eval) calls are not allowed"), "forbidden_name"),
)
_LINE = re.compile(r"^Line (\d+|None): ")


def refusal_from_message(message: str) -> Refusal:
    """A RestrictedPython error string (``Line N: …``) as a :class:`Refusal`."""
    found = _LINE.match(message)
    line = int(found.group(1)) if found and found.group(1).isdigit() else None
    rest = message[found.end() :] if found else message
    for pattern, code in _RP_MESSAGES:
        hit = pattern.search(rest)
        if hit:
            name = hit.group(1).lower() if code == "forbidden_name" else hit.group(1)
            return Refusal(line, code, name)
    return Refusal(line, "policy", rest[:200])


def _transformer_class():
    from RestrictedPython import RestrictingNodeTransformer

    class LearnerPolicy(RestrictingNodeTransformer):
        """RestrictedPython's policy plus ours: names by list, imports of numpy only, no classes."""

        def visit_Name(self, node: ast.Name):
            if node.id in FORBIDDEN_NAMES:
                self.error(node, f"forbidden_name:{node.id}")
            return super().visit_Name(node)

        def visit_Import(self, node: ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED_IMPORTS:
                    self.error(node, f"import:{alias.name}")
            return super().visit_Import(node)

        def visit_ImportFrom(self, node: ast.ImportFrom):
            if node.level or node.module not in ALLOWED_IMPORTS:
                self.error(node, f"import:{'.' * node.level}{node.module or ''}")
            return super().visit_ImportFrom(node)

        def visit_ClassDef(self, node: ast.ClassDef):
            self.error(node, f"class:{node.name}")
            return node

    return LearnerPolicy


_OUR_CODES = ("forbidden_name:", "import:", "class:")


def compile_learner(source: str):
    """``(code, refusals)``: the compiled module, or None and why not (a tuple of Refusal)."""
    from RestrictedPython import compile_restricted_exec

    if len(source) > MAX_SOURCE_CHARS:
        return None, (Refusal(None, "too_long", str(MAX_SOURCE_CHARS)),)
    try:
        result = compile_restricted_exec(source, filename=LEARNER_FILE, policy=_transformer_class())
    except (RecursionError, MemoryError, ValueError) as err:  # nesting too deep, NUL bytes
        return None, (Refusal(None, "syntax", type(err).__name__),)
    refusals = []
    for message in result.errors:
        found = _LINE.match(message)
        rest = message[found.end() :] if found else message
        ours = next((c for c in _OUR_CODES if rest.startswith(c)), None)
        if ours:
            line = int(found.group(1)) if found and found.group(1).isdigit() else None
            refusals.append(Refusal(line, ours[:-1], rest[len(ours) :]))
        else:
            refusals.append(refusal_from_message(message))
    unique = tuple(dict.fromkeys(refusals))  # RestrictedPython may report one name twice
    if unique or result.code is None:
        return None, unique or (Refusal(None, "syntax", "?"),)
    return result.code, ()


# --- run time ----------------------------------------------------------------------------------


def _safe(value):
    """Refuse arrays that hold Python objects (NumPy would call whatever they hold)."""
    if isinstance(value, np.ndarray) and value.dtype.hasobject:
        raise NotAllowed("object_array", "dtype=object")
    if isinstance(value, tuple) and any(isinstance(v, np.ndarray) and v.dtype.hasobject for v in value):
        raise NotAllowed("object_array", "dtype=object")
    return value


def _checked(function, name: str):
    def call(*args, **kwargs):
        return _safe(function(*args, **kwargs))

    call.__name__ = call.__qualname__ = name
    return call


class NumpyProxy:
    """What ``import numpy as np`` gives the learner: only the names listed above, nothing else.

    Attribute access on the proxy itself is the whitelist, because ``from numpy import x`` reads
    attributes with Python's own getattr, not through the policy's guard.
    """

    __slots__ = ()

    def __getattr__(self, name: str):
        if name in NP_FUNCTIONS:
            return _checked(getattr(np, name), name)
        if name in NP_CONSTANTS:
            return NP_CONSTANTS[name]
        if name in NP_TYPES:
            return NP_TYPES[name]
        raise NotAllowed("np_attribute", name)

    def __repr__(self) -> str:
        return "<numpy for the check: array maths only>"


NP = NumpyProxy()


def guarded_getattr(obj, name: str, default=None):
    """``obj.name`` in the learner's code: the whitelist by type (see the module docstring)."""
    if not isinstance(name, str) or name.startswith("_"):
        raise NotAllowed("attribute", str(name))
    if obj is NP:
        return getattr(NP, name)
    if isinstance(obj, (np.ndarray, np.generic)):
        if name in ARRAY_ATTRIBUTES:
            return getattr(obj, name)
        if name in ARRAY_METHODS:
            return _checked(getattr(obj, name), name)
        raise NotAllowed("attribute", name)
    allowed = PLAIN_METHODS.get(type(obj))
    if allowed is not None and name in allowed:
        return getattr(obj, name)
    if isinstance(obj, BaseException) and name in EXCEPTION_ATTRIBUTES:
        return getattr(obj, name)
    raise NotAllowed("attribute", name)


class _ItemWriter:
    """What ``_write_(obj)`` returns: item assignment goes through, attribute assignment does not."""

    __slots__ = ("target",)

    def __init__(self, target) -> None:
        object.__setattr__(self, "target", target)

    def __setitem__(self, key, value) -> None:
        self.target[key] = value

    def __delitem__(self, key) -> None:
        del self.target[key]

    def __setattr__(self, name, value) -> None:
        raise NotAllowed("write", "." + str(name))

    __delattr__ = __setattr__


def guarded_write(obj):
    if isinstance(obj, (np.ndarray, list, dict)):
        return _ItemWriter(obj)
    raise NotAllowed("write", type(obj).__name__)


def guarded_getitem(obj, key):
    return _safe(obj[key])


def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if name in ALLOWED_IMPORTS and not level:
        return NP
    raise NotAllowed("import", name)


_INPLACE = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "@=": operator.imatmul,
    "&=": operator.iand,
    "|=": operator.ior,
    "^=": operator.ixor,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
}


def inplace(op: str, target, value):
    return _safe(_INPLACE[op](target, value))


def apply(function, *args, **kwargs):
    return function(*args, **kwargs)


class Printed:
    """Everything the learner prints, cut at :data:`MAX_PRINTED_CHARS` (one buffer for all scopes)."""

    def __init__(self, limit: int = MAX_PRINTED_CHARS) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.cut = False

    def write(self, text: str) -> None:
        room = self.limit - self.size
        if room <= 0:
            self.cut = True
            return
        if len(text) > room:
            text, self.cut = text[:room], True
        self.parts.append(text)
        self.size += len(text)

    def text(self) -> str:
        return "".join(self.parts)

    def collector(self, _getattr_=None) -> _PrintScope:
        return _PrintScope(self)


class _PrintScope:
    """RestrictedPython makes one per function that prints; all of them write to one :class:`Printed`."""

    __slots__ = ("out",)

    def __init__(self, out: Printed) -> None:
        self.out = out

    def _call_print(self, *objects, sep=" ", end="\n", **ignored) -> None:
        sep = sep if isinstance(sep, str) else " "
        end = end if isinstance(end, str) else "\n"
        if self.out.size >= self.out.limit:  # do not even turn a huge array into text
            self.out.cut = True
            return
        self.out.write(sep.join(str(o) for o in objects) + end)

    def __call__(self) -> str:
        return self.out.text()


BUILTINS = {
    f.__name__: f
    for f in (
        abs, all, any, bool, dict, divmod, enumerate, filter, float, int, isinstance, len, list, map,
        max, min, pow, range, repr, reversed, round, slice, sorted, str, sum, tuple, zip,
        ArithmeticError, AssertionError, Exception, IndexError, KeyError, NotImplementedError,
        TypeError, ValueError, ZeroDivisionError,
    )
}  # fmt: skip


def learner_globals(printed: Printed) -> dict:
    """A fresh namespace for one run of the learner's module: our builtins and guards only."""
    from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence

    return {
        "__builtins__": {**BUILTINS, "__import__": guarded_import},
        "__name__": "learner",
        "_getattr_": guarded_getattr,
        "_getitem_": guarded_getitem,
        "_getiter_": iter,
        "_write_": guarded_write,
        "_inplacevar_": inplace,
        "_apply_": apply,
        "_print_": printed.collector,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
    }


def learner_function(namespace: dict, name: str):
    """The learner's own ``def name(...)`` from their module, or None (a name bound to anything else
    is not theirs to offer: ``attention = np.matmul`` is not a function of the contract)."""
    value = namespace.get(name)
    if isinstance(value, FunctionType) and value.__code__.co_filename == LEARNER_FILE:
        return value
    return None

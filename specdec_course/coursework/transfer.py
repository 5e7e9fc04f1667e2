"""Plain data across process boundaries: answers out of the kernel, calls to and from submitted functions.

``export`` runs in the submission's kernel and writes JSON. Only exact built-in data types cross:
numbers, strings, ``None``, ``...``, fractions, containers of them, numpy arrays and scalars of
numeric dtypes, and instances of the trusted packages' dataclasses (such as ``VerifiedRound``),
rebuilt field by field; a subclass that overrides ``==`` arrives as "cannot be transferred". A
function crosses as its source code; the globals it uses cross the same way, and a module or a
library function crosses as its name. ``decode`` turns data back into Python and never runs
submitted code; functions are compiled again only in the sandboxed process that runs them
(``function_host``), never where the tests run. So nothing the submission patched in its kernel
(numpy, ``specdec_lib``, the grader, ``builtins``) reaches the checks. JSON is read without ever
unpickling, so no file can make the grader run code by being loaded.
"""

from __future__ import annotations

import base64
import builtins
import dataclasses
import importlib
import inspect
import json
import linecache
import symtable
import textwrap
import types
from fractions import Fraction

TRUSTED_PACKAGES = frozenset(
    {
        "numpy",
        "scipy",
        "specdec_lib",
        "math",
        "cmath",
        "fractions",
        "numbers",
        "statistics",
        "itertools",
        "functools",
        "collections",
        "operator",
        "random",
        "typing",
        "dataclasses",
    }
)
_SCALARS = (int, float, str, bool, type(None))
_CONTAINERS = {list: "list", tuple: "tuple", set: "set", frozenset: "frozenset"}


def free_names(code: str) -> set[str]:
    """Names a test case reads but does not define itself (the answers and data it needs).

    >>> sorted(free_names("import numpy as np\\nr = np.asarray(residual)\\nassert all(x > 0 for x in r), p"))
    ['p', 'residual']
    """
    names: set[str] = set()

    def visit(table, bound):
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if (
                symbol.is_referenced()
                and (symbol.is_global() or table.get_type() == "module")
                and name not in bound
            ):
                names.add(name)
        for child in table.get_children():
            visit(child, bound)

    top = symtable.symtable(code, "<test>", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    visit(top, bound)
    return {name for name in names if not hasattr(builtins, name)}


# --- in the submission's kernel -------------------------------------------------------------------


def _is_trusted(module_name) -> bool:
    return isinstance(module_name, str) and module_name.split(".")[0] in TRUSTED_PACKAGES


_BIT_GENERATORS = frozenset({"PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"})


def encode(value, todo=None):
    """``value`` as JSON-ready plain data; functions only when ``todo`` collects the globals they read.

    >>> encode((1, 0.5, None))
    {'$': 'tuple', 'v': [1, 0.5, None]}
    >>> encode(print)
    Traceback (most recent call last):
    TypeError: a builtins.builtin_function_or_method (only plain data crosses here)
    """
    kind = type(value)
    if kind in _SCALARS:
        return (
            value
            if kind is not float or value == value and abs(value) != float("inf")
            else {"$": "float", "v": repr(value)}
        )
    if value is Ellipsis:
        return {"$": "ellipsis"}
    if kind is complex:
        return {"$": "complex", "v": [value.real, value.imag]}
    if kind is Fraction:
        return {"$": "fraction", "v": [value.numerator, value.denominator]}
    if kind in _CONTAINERS:
        return {"$": _CONTAINERS[kind], "v": [encode(item, todo) for item in value]}
    if kind is dict:
        return {"$": "dict", "v": [[encode(k, todo), encode(v, todo)] for k, v in value.items()]}
    if dataclasses.is_dataclass(kind) and _is_trusted(kind.__module__):
        fields = {f.name: encode(getattr(value, f.name), todo) for f in dataclasses.fields(value)}
        return {"$": "dataclass", "module": kind.__module__, "qualname": kind.__qualname__, "v": fields}
    if kind is types.ModuleType and _is_trusted(value.__name__):
        return {"$": "module", "name": value.__name__}
    import numpy as np

    if kind is np.ndarray or isinstance(value, np.generic) and kind.__module__ == "numpy":
        # the value's own methods, not numpy's functions, which the submission may have replaced
        if value.dtype.kind not in "biufc":
            raise TypeError(f"a numpy {'array' if kind is np.ndarray else 'scalar'} of dtype {value.dtype}")
        return {
            "$": "ndarray" if kind is np.ndarray else "npscalar",
            "dtype": value.dtype.str,
            "shape": value.shape,
            "data": base64.b64encode(value.tobytes()).decode(),
        }
    if kind is np.random.Generator and type(value.bit_generator).__name__ in _BIT_GENERATORS:
        state = value.bit_generator.state
        return {"$": "generator", "bit_generator": state["bit_generator"], "state": encode(state)}
    if todo is None:
        raise TypeError(f"a {kind.__module__}.{kind.__qualname__} (only plain data crosses here)")
    if kind is types.FunctionType and value.__module__ == "__main__":
        if value.__closure__:
            raise TypeError("a function defined inside another function (define it at the top level)")
        todo.update(_global_names(value.__code__) & set(value.__globals__))
        return {"$": "function", "name": value.__name__, "source": textwrap.dedent(inspect.getsource(value))}
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None) or getattr(
        value, "__name__", None
    )  # numpy ufuncs have no qualname
    if callable(value) and _is_trusted(module) and qualname:
        return {"$": "import", "module": module, "qualname": qualname}
    raise TypeError(f"a {kind.__module__}.{kind.__qualname__}")


def _global_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def export(namespace: dict, names, path: str) -> None:
    """Write the named values of ``namespace`` (and the globals their functions use) to ``path`` as JSON."""
    todo, done, values, problems = set(names) & set(namespace), set(), {}, {}
    while todo - done:
        name = min(todo - done)
        done.add(name)
        try:
            values[name] = encode(namespace[name], todo)
        except Exception as exc:  # anything odd about a value means it does not cross
            problems[name] = f"{type(exc).__name__}: {exc}" if not isinstance(exc, TypeError) else str(exc)
        todo &= set(namespace)
    with open(path, "w") as handle:
        json.dump({"values": values, "problems": problems}, handle)


# --- where the answers arrive ------------------------------------------------------------------------


def _trusted_attribute(module: str, qualname: str):
    if not _is_trusted(module):
        raise ValueError(f"{module!r} is not one of the trusted packages")
    value = importlib.import_module(module)
    for part in str(qualname).split("."):
        value = getattr(value, part)
    return value


def decode(data):
    """Python objects from ``encode``'s data; raises ``ValueError`` for anything that is not plain data.

    >>> decode(encode({"k": (1, 2.5, ...)}))
    {'k': (1, 2.5, Ellipsis)}
    >>> decode({"$": "import", "module": "os", "qualname": "system"})
    Traceback (most recent call last):
    ValueError: 'os' is not one of the trusted packages
    """
    import numpy as np

    if not isinstance(data, dict):
        if isinstance(data, list):
            raise ValueError("an untagged list")
        return data
    tag, v = data.get("$"), data.get("v")
    if tag == "float":
        return float(v)
    if tag == "ellipsis":
        return Ellipsis
    if tag == "complex":
        return complex(float(v[0]), float(v[1]))
    if tag == "fraction":
        return Fraction(int(v[0]), int(v[1]))
    if tag in ("list", "tuple", "set", "frozenset"):
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](
            decode(item) for item in v
        )
    if tag == "dict":
        return {decode(k): decode(x) for k, x in v}
    if tag == "dataclass":
        kind = _trusted_attribute(data["module"], data["qualname"])
        if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
            raise ValueError(f"{data['qualname']!r} is not a dataclass")
        return kind(**{str(k): decode(x) for k, x in dict(v).items()})
    if tag == "generator":
        if data["bit_generator"] not in _BIT_GENERATORS:
            raise ValueError(f"bit generator {data['bit_generator']!r}")
        generator = np.random.Generator(getattr(np.random, data["bit_generator"])())
        generator.bit_generator.state = decode(data["state"])
        return generator
    if tag in ("ndarray", "npscalar"):
        dtype = np.dtype(data["dtype"])
        if dtype.kind not in "biufc":
            raise ValueError(f"dtype {dtype}")
        array = np.frombuffer(base64.b64decode(data["data"]), dtype=dtype).reshape(data["shape"]).copy()
        return array if tag == "ndarray" else array[()]
    if tag == "module" and _is_trusted(data["name"]):
        return importlib.import_module(data["name"])
    if tag == "import":
        return _trusted_attribute(data["module"], data["qualname"])
    raise ValueError(f"{tag!r} cannot be rebuilt here (a function inside a container?)")


def _compile_function(record, namespace):
    """Compile a function's source afresh with ``namespace`` as its globals (inspect.getsource works on it)."""
    name, source = str(record["name"]), str(record["source"])
    filename = f"<submission {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    function = namespace.get(name)
    if not isinstance(function, types.FunctionType):
        raise ValueError(f"its source does not define a function {name!r}")
    return function


def read_answers(text: str) -> tuple[dict, dict[str, str]]:
    """The exported JSON's values (still encoded) and its problems, by name."""
    exported = json.loads(text)
    if not isinstance(exported, dict):
        raise ValueError("the exported answers are not a JSON object")
    problems = {str(k): str(v) for k, v in dict(exported.get("problems", {})).items()}
    return {str(k): v for k, v in dict(exported.get("values", {})).items()}, problems


def is_code(data) -> bool:
    """True for an exported function or library callable: it may only run where submitted code runs."""
    return isinstance(data, dict) and data.get("$") in ("function", "import")


def load_data(values: dict, namespace: dict, problems: dict) -> None:
    """Decode every value that is plain data into ``namespace``; a value that cannot be is a problem."""
    for name, data in values.items():
        if is_code(data):
            continue
        try:
            namespace[name] = decode(data)
        except Exception as exc:
            problems[name] = f"{type(exc).__name__}: {exc}"


def load_code(values: dict, namespace: dict, problems: dict) -> None:
    """Library callables by name and functions compiled afresh, with ``namespace`` as their globals.

    A function whose definition uses another (a decorator, a default value) is compiled again after
    the others, until a round compiles nothing new.
    """
    todo = [name for name, data in values.items() if is_code(data)]
    while todo:
        failed = {}
        for name in todo:
            data = values[name]
            try:
                namespace[name] = (
                    _compile_function(data, namespace) if data["$"] == "function" else decode(data)
                )
            except Exception as exc:
                failed[name] = f"{type(exc).__name__}: {exc}"
        if len(failed) == len(todo):
            problems.update(failed)
            return
        todo = list(failed)

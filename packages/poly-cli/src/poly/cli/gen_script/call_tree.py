"""
Call trees: what an option group builds, written once as expressions of poly's public API, that
`poly run` evaluates (``evaluate``, ``run_statements``) and `--gen-script` prints as Python
source (``source``, ``statement_lines``). Because both read the same tree, the loaders a command
creates and the code its script holds cannot drift apart.

Expressions: ``Ref`` (a name imported from a module: ``Ref("poly.onnx", "OnnxFromPath")``),
``Attr``, ``Call`` (``Ref(...)(path, outputs=...)``: keyword arguments that are None are left
out, so they take the callee's default both when evaluated and in the script), ``Var`` (a
variable an earlier statement assigned), ``ListOf`` (a list written one item a line), ``Const``
(a value kept even when None), ``Value``
(an object only evaluation can use: the command's own loaders, session options), ``Builtin``
(``len``, ``bool``) and ``BinOp`` (``a > b``, ``a and b``). Plain values (None, bools, numbers,
strings, and lists, tuples and dicts, which may hold expressions) stand for themselves.
Statements: ``Assign`` (``name = expr``, or ``a, b = expr``), ``Do`` (an expression evaluated for
its effect), ``Comment``, ``Code`` (source an extension wrote), and the blocks ``For`` and ``If``,
which hold statements.
"""

from __future__ import annotations

import builtins
import importlib
import operator
from typing import Any

from poly.cli.gen_script.script_source import ScriptSource, literal


class Expr:
    """A node of a call tree: Python source for a script, and the value it evaluates to."""

    def source(self, script: ScriptSource) -> str:
        """The node as Python source; records the imports it needs in ``script``."""
        raise NotImplementedError

    def evaluate(self, env: dict) -> Any:
        """The node's value; ``env`` holds the variables assigned so far."""
        raise NotImplementedError

    def __call__(self, /, *args: Any, **kwargs: Any) -> Call:
        return Call(self, *args, **kwargs)

    def attr(self, name: str) -> Attr:
        """The attribute ``name`` of this node's value."""
        return Attr(self, name)


class Ref(Expr):
    """``name`` (dotted for an attribute of it, as in ``CompareFunc.simple``) imported from
    ``module``; without ``name``, the module itself (``import module``)."""

    def __init__(self, module: str, name: str | None = None) -> None:
        self.module, self.name = module, name

    def source(self, script: ScriptSource) -> str:
        if self.name is None:
            script.use(self.module)
            return self.module
        script.use(self.module, self.name.split(".")[0])
        return self.name

    def evaluate(self, env: dict) -> Any:
        value = importlib.import_module(self.module)
        for part in self.name.split(".") if self.name else ():
            value = getattr(value, part)
        return value


class Attr(Expr):
    """``obj.name``."""

    def __init__(self, obj: Expr, name: str) -> None:
        self.obj, self.name = obj, name

    def source(self, script: ScriptSource) -> str:
        return f"{self.obj.source(script)}.{self.name}"

    def evaluate(self, env: dict) -> Any:
        return getattr(self.obj.evaluate(env), self.name)


class Call(Expr):
    """``func(*args, **kwargs)``, keyword arguments that are None left out."""

    def __init__(self, func: Expr, /, *args: Any, **kwargs: Any) -> None:
        self.func, self.args = func, args
        self.kwargs = {key: value for key, value in kwargs.items() if value is not None}

    def source(self, script: ScriptSource) -> str:
        parts = [source(arg, script) for arg in self.args]
        parts += [f"{key}={source(value, script)}" for key, value in self.kwargs.items()]
        return f"{self.func.source(script)}({', '.join(parts)})"

    def evaluate(self, env: dict) -> Any:
        func = self.func.evaluate(env)
        return func(*(evaluate(arg, env) for arg in self.args),
                    **{key: evaluate(value, env) for key, value in self.kwargs.items()})


class Var(Expr):
    """A variable an earlier ``Assign`` set (or the caller put in ``env``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def source(self, script: ScriptSource) -> str:
        return self.name

    def evaluate(self, env: dict) -> Any:
        return env[self.name]


class ListOf(Expr):
    """A list, written one item a line (``[\\n    a,\\n    b,\\n]``)."""

    def __init__(self, items: Any) -> None:
        self.items = list(items)

    def source(self, script: ScriptSource) -> str:
        lines = "".join(f"\n    {source(item, script)}," for item in self.items)
        return "[" + lines + ("\n" if self.items else "") + "]"

    def evaluate(self, env: dict) -> list[Any]:
        return [evaluate(item, env) for item in self.items]


class Const(Expr):
    """A plain value written as it is, even None (which ``Call`` otherwise leaves out)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def source(self, script: ScriptSource) -> str:
        return literal(self.value)

    def evaluate(self, env: dict) -> Any:
        return self.value


class Value(Expr):
    """An object the command already holds (a loader, session options): evaluation uses it as
    it is; it has no source, so a tree holding one cannot be written into a script."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def source(self, script: ScriptSource) -> str:
        raise TypeError(f"{type(self.value).__name__} object has no Python source")

    def evaluate(self, env: dict) -> Any:
        return self.value


class Builtin(Expr):
    """A Python builtin (``len``, ``bool``): written as its name, needing no import."""

    def __init__(self, name: str) -> None:
        if not hasattr(builtins, name):
            raise ValueError(f"no builtin named {name!r}")
        self.name = name

    def source(self, script: ScriptSource) -> str:
        return self.name

    def evaluate(self, env: dict) -> Any:
        return getattr(builtins, self.name)


_BINARY_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq,
               "!=": operator.ne, "+": operator.add}


class BinOp(Expr):
    """``left op right`` for a comparison (``>``, ``==``...), ``+``, or ``and`` (which, as in Python,
    evaluates ``right`` only when ``left`` is true, and is the value of the operand that decided)."""

    def __init__(self, left: Any, op: str, right: Any) -> None:
        if op != "and" and op not in _BINARY_OPS:
            raise ValueError(f"unsupported operator {op!r}")
        self.left, self.op, self.right = left, op, right

    def source(self, script: ScriptSource) -> str:
        return f"{source(self.left, script)} {self.op} {source(self.right, script)}"

    def evaluate(self, env: dict) -> Any:
        left = evaluate(self.left, env)
        if self.op == "and":
            return left and evaluate(self.right, env)
        return _BINARY_OPS[self.op](left, evaluate(self.right, env))


def source(value: Any, script: ScriptSource) -> str:
    """Python source of ``value``: an ``Expr``, or a plain value (lists, tuples and dicts may
    hold expressions)."""
    if isinstance(value, Expr):
        return value.source(script)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{source(key, script)}: {source(item, script)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(source(item, script) for item in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(source(item, script) for item in value) + ("," if len(value) == 1 else "") + ")"
    return literal(value)


def evaluate(value: Any, env: dict | None = None) -> Any:
    """The value of ``value`` (an ``Expr`` or a plain value holding some) with the variables of
    ``env``."""
    env = {} if env is None else env
    if isinstance(value, Expr):
        return value.evaluate(env)
    if isinstance(value, dict):
        return {evaluate(key, env): evaluate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [evaluate(item, env) for item in value]
    if isinstance(value, tuple):
        return tuple(evaluate(item, env) for item in value)
    return value


class Assign:
    """The statement ``name = value``; with a tuple of names, ``a, b = value`` (the value
    unpacked into them)."""

    def __init__(self, name: str | tuple[str, ...], value: Any) -> None:
        self.name, self.value = name, value

    def line(self, script: ScriptSource) -> str:
        target = ", ".join(self.name) if isinstance(self.name, tuple) else self.name
        return f"{target} = {source(self.value, script)}"

    def run(self, env: dict) -> None:
        value = evaluate(self.value, env)
        if isinstance(self.name, tuple):
            values = tuple(value)
            if len(values) != len(self.name):
                raise ValueError(f"{', '.join(self.name)}: expected {len(self.name)} values, got {len(values)}")
            env.update(zip(self.name, values, strict=True))
        else:
            env[self.name] = value


class Do:
    """An expression statement, evaluated for its effect (``SaveOnnx(...)()``)."""

    def __init__(self, value: Expr) -> None:
        self.value = value

    def line(self, script: ScriptSource) -> str:
        return source(self.value, script)

    def run(self, env: dict) -> None:
        evaluate(self.value, env)


class Comment:
    """A ``# text`` line of the script; nothing when evaluated."""

    def __init__(self, text: str) -> None:
        self.text = text

    def line(self, script: ScriptSource) -> str:
        return f"# {self.text}"

    def run(self, env: dict) -> None:
        pass


class Code:
    """Statements written as source by someone else: the code an installed `poly run` extension's
    argument groups write (``poly.tools.script.Script``); the script holds it as it is, and
    evaluating runs it in the variables of the statements before it."""

    def __init__(self, text: str) -> None:
        self.text = text.rstrip("\n")

    def line(self, script: ScriptSource) -> str:
        return self.text

    def run(self, env: dict) -> None:
        exec(compile(self.text, "<poly run extension>", "exec"), env)  # noqa: S102 - an installed extension's code


def _block(head: str, body: Any, script: ScriptSource) -> str:
    lines = [line for statement in body for line in statement.line(script).split("\n")]
    return "\n".join([head, *("    " + line for line in lines or ["pass"])])


class For:
    """The block ``for name in iterable:`` over ``body`` (statements), each item assigned to
    ``name`` in turn."""

    def __init__(self, name: str, iterable: Any, body: Any) -> None:
        self.name, self.iterable, self.body = name, iterable, list(body)

    def line(self, script: ScriptSource) -> str:
        return _block(f"for {self.name} in {source(self.iterable, script)}:", self.body, script)

    def run(self, env: dict) -> None:
        for item in evaluate(self.iterable, env):
            env[self.name] = item
            run_statements(self.body, env)


class If:
    """The block ``if test:`` over ``body`` (statements), run only when ``test`` is true."""

    def __init__(self, test: Any, body: Any) -> None:
        self.test, self.body = test, list(body)

    def line(self, script: ScriptSource) -> str:
        return _block(f"if {source(self.test, script)}:", self.body, script)

    def run(self, env: dict) -> None:
        if evaluate(self.test, env):
            run_statements(self.body, env)


def statement_lines(statements: Any, script: ScriptSource) -> list[str]:
    """The source lines of ``statements`` (their imports recorded in ``script``)."""
    return [statement.line(script) for statement in statements]


def run_statements(statements: Any, env: dict | None = None) -> dict:
    """Runs ``statements`` in order with the variables of ``env``; returns ``env`` with the
    variables they assigned."""
    env = {} if env is None else env
    for statement in statements:
        statement.run(env)
    return env

"""Safe evaluation of the small arithmetic formulas in data files (e.g. "N**2")."""
from __future__ import annotations

import ast
import math
import operator

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow,
        ast.Mod: operator.mod}
_UN = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCS = {"float": float, "int": int, "sqrt": math.sqrt, "isqrt": math.isqrt}


class FormulaError(ValueError):
    pass


def evaluate(text: str, names: dict[str, float]) -> float:
    """Evaluate `text` with the given variables; only arithmetic is allowed."""
    try:
        tree = ast.parse(str(text), mode="eval")
    except SyntaxError:
        raise FormulaError(f"not a formula: {text!r}") from None

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise FormulaError(f"unknown name {node.id!r} in {text!r} (known: {', '.join(sorted(names))})")
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return _BIN[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UN:
            return _UN[type(node.op)](ev(node.operand))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _FUNCS and len(node.args) == 1 and not node.keywords):
            return _FUNCS[node.func.id](ev(node.args[0]))
        raise FormulaError(f"unsupported construct in formula {text!r}")

    try:
        return ev(tree)
    except ZeroDivisionError:
        raise FormulaError(f"division by zero in {text!r}") from None


_C_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}


def to_c(text: str) -> str:
    """The same arithmetic formula as a C expression over doubles (** becomes pow)."""
    tree = ast.parse(str(text), mode="eval")

    def c(node) -> str:
        if isinstance(node, ast.Expression):
            return c(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return repr(float(node.value))
        if isinstance(node, ast.Name):
            return f"((double){node.id})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return f"pow({c(node.left)}, {c(node.right)})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            return f"floor({c(node.left)} / {c(node.right)})"
        if isinstance(node, ast.BinOp) and type(node.op) in _C_BIN:
            if isinstance(node.op, ast.Mod):
                return f"fmod({c(node.left)}, {c(node.right)})"
            return f"({c(node.left)} {_C_BIN[type(node.op)]} {c(node.right)})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return f"({'-' if isinstance(node.op, ast.USub) else '+'}{c(node.operand)})"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
            arg = c(node.args[0])
            return {"float": f"((double){arg})", "int": f"((double)(long){arg})", "sqrt": f"sqrt({arg})",
                    "isqrt": f"floor(sqrt({arg}))"}[node.func.id]
        raise FormulaError(f"unsupported construct in formula {text!r}")

    return c(tree)

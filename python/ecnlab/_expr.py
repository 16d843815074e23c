"""Safe arithmetic expressions for a sweep's derived settings.

An expression is parsed with :mod:`ast` and evaluated by walking a small whitelist of node
types; nothing is ever passed to ``eval``. What an expression may contain:

* numbers, strings, ``true``/``false`` (also ``True``/``False``);
* names: an axis of the sweep (its value in this run), or a top-level scenario field
  (``duration_s``);
* scenario paths: ``topology.bottleneck.rate_bps``, ``workloads[0].flows``;
* ``+ - * / // % **``, comparisons, ``and or not``, ``a if cond else b``;
* the functions ``min max abs round int float``.

Anything else (attribute calls, lambdas, comprehensions, imports...) is refused with a
message naming the expression.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["evaluate"]

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "int": int,
    "float": float,
}
_CONSTANTS = {"true": True, "false": False}
_MAX_EXPONENT = 64  # 10 ** huge would hang the process


class ExpressionError(ValueError):
    """An expression is malformed, uses something not allowed, or fails to evaluate."""


def evaluate(text: str, names: Mapping[str, Any], scenario: Mapping[str, Any]) -> Any:
    """Evaluate ``text`` with axis values ``names`` and scenario fields from ``scenario``.

    Raises:
        ExpressionError: naming the expression and the problem.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ExpressionError(f"expression {text!r} is not valid: {e.msg}") from None
    try:
        return _Evaluator(names, scenario).visit(tree.body)
    except ExpressionError as e:
        raise ExpressionError(f"expression {text!r}: {e}") from None
    except (ArithmeticError, TypeError, ValueError) as e:
        raise ExpressionError(f"expression {text!r} failed: {e}") from None


class _Evaluator:
    def __init__(self, names: Mapping[str, Any], scenario: Mapping[str, Any]) -> None:
        self.names = names
        self.scenario = scenario

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            return self._path(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.visit(node.left), self.visit(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
                raise ExpressionError(f"exponent {right} is too large")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.visit(node.operand))
        if isinstance(node, ast.BoolOp):
            values = [self.visit(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return all(values)
            return any(values)
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            left = self.visit(node.left)
            for op, comparator in zip(node.ops, node.comparators):
                right = self.visit(comparator)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.visit(node.body) if self.visit(node.test) else self.visit(node.orelse)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS
            and not node.keywords
        ):
            return _FUNCTIONS[node.func.id](*(self.visit(a) for a in node.args))
        raise ExpressionError(f"{ast.unparse(node)!r} is not allowed")

    def _name(self, name: str) -> Any:
        if name in self.names:
            return self.names[name]
        if name in self.scenario:
            return self.scenario[name]
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        known = ", ".join(sorted(self.names)) or "none"
        raise ExpressionError(f"unknown name {name!r} (axes: {known}; or a field of the scenario)")

    def _path(self, node: ast.AST) -> Any:
        # Unwind a.b[0].c into ["a", "b", 0, "c"], then walk the scenario.
        keys: list[str | int] = []
        while True:
            if isinstance(node, ast.Attribute):
                keys.append(node.attr)
                node = node.value
            elif isinstance(node, ast.Subscript):
                index = node.slice
                if not (isinstance(index, ast.Constant) and isinstance(index.value, int)):
                    raise ExpressionError(f"index {ast.unparse(index)!r} is not an integer")
                keys.append(index.value)
                node = node.value
            elif isinstance(node, ast.Name):
                keys.append(node.id)
                break
            else:
                raise ExpressionError(f"{ast.unparse(node)!r} is not allowed")
        keys.reverse()
        value: Any = self.scenario
        for depth, key in enumerate(keys):
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                path = ".".join(str(k) for k in keys[: depth + 1])
                raise ExpressionError(f"the scenario has no field {path}") from None
        return value

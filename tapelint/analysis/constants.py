"""Constant folding for the numbers rules care about (learning rates, momentum, units)."""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Facts, Scope

_MAX_DEPTH = 8


def number(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None,
           _depth: int = 0) -> float | None:
    """The numeric value of `expr` if it is a constant through simple assignments and arithmetic."""
    if expr is None or _depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Integer):
        return float(int(expr.value.replace("_", ""), 0))
    if isinstance(expr, cst.Float):
        return float(expr.value.replace("_", ""))
    if isinstance(expr, cst.UnaryOperation):
        inner = number(facts, expr.expression, scope, order, _depth + 1)
        if inner is None:
            return None
        if isinstance(expr.operator, cst.Minus):
            return -inner
        if isinstance(expr.operator, cst.Plus):
            return inner
        return None
    if isinstance(expr, cst.BinaryOperation):
        left = number(facts, expr.left, scope, order, _depth + 1)
        right = number(facts, expr.right, scope, order, _depth + 1)
        if left is None or right is None:
            return None
        op = expr.operator
        try:
            if isinstance(op, cst.Add):
                return left + right
            if isinstance(op, cst.Subtract):
                return left - right
            if isinstance(op, cst.Multiply):
                return left * right
            if isinstance(op, cst.Divide):
                return left / right
            if isinstance(op, cst.Power):
                return float(left ** right)
        except (ZeroDivisionError, OverflowError):
            return None
        return None
    if isinstance(expr, cst.Name):
        if expr.value in ("True", "False", "None"):
            return None
        binding = facts.binding_before(expr.value, scope, order if order is not None else 1 << 60)
        if binding is None or binding.value is None or binding.index is not None or binding.augmented:
            return None
        # A name bound more than once in the same scope (e.g. in a sweep loop) is not a constant.
        same = [b for b in facts.visible_bindings(expr.value, scope) if b.scope is binding.scope]
        if len(same) > 1 or binding.loop_depth > 0:
            return None
        return number(facts, binding.value, binding.scope, binding.order, _depth + 1)
    return None


def boolean(expr: cst.BaseExpression | None) -> bool | None:
    if isinstance(expr, cst.Name):
        if expr.value == "True":
            return True
        if expr.value == "False":
            return False
    return None


def string(expr: cst.BaseExpression | None) -> str | None:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None

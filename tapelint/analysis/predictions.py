"""Which values carry a model's prediction.

Loss-argument rules ask "is this expression the model's output?" (which call evaluates a loss or metric
is evaluations.py's answer). It is answered here, through assignments, parameters and `self.`
attributes, following only value-preserving operations (an activation, a reshape, a slice), never `tf.ones_like(pred)` and the like, which build targets *from* a prediction.
"""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Facts, Scope, arg_value
from tapelint.analysis.keras import ACTIVATION_FUNCTIONS, layer_class
from tapelint.analysis.models import model_reader
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, last_assignment, values_of

# Operations whose output is the same prediction in another form.
_PRESERVING = frozenset(
    {
        "tensorflow.squeeze", "tensorflow.reshape", "tensorflow.identity", "tensorflow.cast",
        "tensorflow.nn.log_softmax", "tensorflow.math.log_softmax", "tensorflow.convert_to_tensor",
        "keras.ops.squeeze", "keras.ops.reshape", "keras.ops.cast", "keras.ops.log_softmax",
        "keras.activations.log_softmax",
    }
)
_PREDICT_METHODS = frozenset({"predict", "predict_on_batch", "predict_step"})
# A layer written by hand: `tf.matmul(x, W)` (or `x @ W`) with W a variable, plus a variable bias.
_MATMUL = frozenset({"tensorflow.matmul", "tensorflow.linalg.matmul", "keras.ops.matmul"})


def _func_expr(call: cst.Call) -> cst.BaseExpression:
    return call.func


def prediction_source(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int,
                      depth: int = 0) -> str | None:
    """A short description (`model(...)`) when `expr` holds a model's output, else None."""
    if expr is None or depth > 10:
        return None
    if type(expr) is cst.Call:
        qualified = facts.resolve(expr.func)
        if qualified in ACTIVATION_FUNCTIONS or qualified in _PRESERVING:
            return prediction_source(facts, arg_value(expr, 0), scope, order, depth + 1)
        if qualified in _MATMUL:
            weights = arg_value(expr, 1, "b")
            if _is_variable(facts, weights, scope, order):
                return f"the output of `{dotted(expr.func) or 'matmul'}(..., {dotted(weights)})` (a layer written by hand)"
            return None
        if isinstance(expr.func, cst.Call):
            cls = layer_class(facts, expr.func)
            return f"the `{cls}` layer's output" if cls is not None else None
        reader = model_reader(facts)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _PREDICT_METHODS:
            if reader.model_of(expr.func.value, scope, order) is not None:
                return f"`{dotted(expr.func) or 'model.predict'}(...)`"
            return None
        name = dotted(expr.func)
        if name is None:
            return None
        if reader.model_of(expr.func, scope, order) is not None:
            return f"`{name}(...)`"
        binding = last_assignment(facts, name, scope, order)
        if binding is not None and isinstance(binding.value, cst.Call) and binding.index is None:
            cls = layer_class(facts, binding.value)
            if cls is not None:
                return f"`{name}(...)`"
        return None
    if type(expr) is cst.Subscript:
        return prediction_source(facts, expr.value, scope, order, depth + 1)
    if type(expr) is cst.BinaryOperation:
        if isinstance(expr.operator, cst.MatrixMultiply) and _is_variable(facts, expr.right, scope, order):
            return f"the output of `... @ {dotted(expr.right)}` (a layer written by hand)"
        if isinstance(expr.operator, cst.Add):
            # `tf.matmul(x, W) + b`: the bias of a hand-written layer keeps it a prediction.
            for product, bias in ((expr.left, expr.right), (expr.right, expr.left)):
                if _is_variable(facts, bias, scope, order):
                    found = prediction_source(facts, product, scope, order, depth + 1)
                    if found is not None:
                        return found
        return None
    name = dotted(expr)
    if name is None:
        return None
    binding = last_assignment(facts, name, scope, order)
    if binding is None:
        return _from_parameter(facts, name, scope, depth)
    if binding.value is None or binding.augmented:
        return None
    # `logits, aux = model(x)`: every element of a model's output is still a prediction.
    return prediction_source(facts, binding.value, binding.scope, binding.order, depth + 1)


def _is_variable(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> bool:
    """`expr` holds a `tf.Variable` (every value the value model gives it is one)."""
    if expr is None or dotted(expr) is None:
        return False
    found = values_of(facts, expr, scope, order)
    return bool(found) and all(v.kind is Kind.VARIABLE for v in found)


def _from_parameter(facts: Facts, name: str, scope: Scope, depth: int) -> str | None:
    func = facts.param_scope(name, scope)
    if func is None or "." in name:
        return None
    sites = facts.call_sites_of_scope(func)
    if not sites:
        return None
    found: str | None = None
    for site in sites:
        arg = facts.argument_for_param(site.node, func, name)
        source = prediction_source(facts, arg, site.scope, site.order, depth + 1)
        if source is None:
            return None
        found = found or source
    return found

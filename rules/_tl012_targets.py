"""Regression targets of a training loss, and whether one is bootstrapped from the model being trained.

A regression is a Keras regression loss (`MeanSquaredError`, `Huber`, `mse`, ...) evaluated on
`(y_true, y_pred)`, or a squared/absolute difference (`tf.square(a - b)`, `(a - b) ** 2`,
`tf.math.squared_difference(a, b)`), whose sides have no fixed order. `bootstrapped_targets` finds the
regressions inside a tape whose loss reaches `tape.gradient(loss, M.trainable_variables)`, where one side
is a prediction of `M` and the other side, the target, is built from `M` too, on other inputs
(`M(next_states)`), combined with something that does not come from `M` (`reward + gamma * ...`) or
reduced by a max or a gather, recorded by that tape, and still differentiable (no `tf.stop_gradient`,
`.numpy()`, `argmax` on the way: `dataflow.gradient_flow`). Names are followed through the bindings
the value model says reach a read; evidence is structural only, never a name.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.dataflow import State, gradient_flow
from tapelint.analysis.facts import DEFINITION_TYPES, CallSite, Facts, Scope, TapeBlock, arg_value
from tapelint.analysis.gradients import weights_owner
from tapelint.analysis.names import dotted
from tapelint.analysis.outputs import gradient_owners
from tapelint.analysis.evaluations import evaluations
from tapelint.analysis.values import Value, values
from tapelint.analysis.walk import child_nodes, iter_nodes

REGRESSION_LOSSES = frozenset({
    "MeanSquaredError", "MeanAbsoluteError", "Huber", "LogCosh", "MeanSquaredLogarithmicError",
    "mean_squared_error", "mse", "MSE", "mean_absolute_error", "mae", "MAE", "huber", "log_cosh", "logcosh",
})
_SQUARES = frozenset({"tensorflow.square", "tensorflow.math.square", "keras.ops.square", "tensorflow.abs",
                      "tensorflow.math.abs", "keras.ops.abs"})
_SQUARED_DIFFERENCE = frozenset({"tensorflow.math.squared_difference", "tensorflow.squared_difference"})
_SELECTING = frozenset({
    "tensorflow.reduce_max", "tensorflow.math.reduce_max", "keras.ops.max", "keras.ops.amax",
    "tensorflow.gather", "tensorflow.gather_nd", "keras.ops.take", "keras.ops.take_along_axis",
    "tensorflow.experimental.numpy.take_along_axis",
})
_DEPTH = 4


@dataclass(eq=False)
class Regression:
    node: cst.CSTNode  # the loss call, or the squared difference
    sides: tuple[cst.BaseExpression, cst.BaseExpression]
    ordered: bool  # True: sides are (y_true, y_pred)
    site: CallSite | None
    scope: Scope
    order: int


@dataclass(eq=False)
class BootstrappedTarget:
    regression: Regression
    target: cst.BaseExpression
    prediction: cst.BaseExpression
    model_call: cst.Call  # the call of the trained model inside the target
    gradient: CallSite
    model: Value


def bootstrapped_targets(facts: Facts) -> list[BootstrappedTarget]:
    """Regression targets computed, inside the tape, from the model whose weights the gradient is for."""
    return facts.cached("bootstrapped_targets", lambda: _Finder(facts).run())


def regressions(facts: Facts) -> list[Regression]:
    def compute() -> list[Regression]:
        found: list[Regression] = []
        for evaluation in evaluations(facts):
            if evaluation.role != "loss" or evaluation.custom or evaluation.name not in REGRESSION_LOSSES:
                continue
            if evaluation.y_true is None or evaluation.y_pred is None:
                continue
            site = evaluation.site
            found.append(Regression(site.node, (evaluation.y_true, evaluation.y_pred), True, site, site.scope,
                                    site.order))
        resolver = values(facts)
        for site in facts.calls:
            if site.qualified in _SQUARES:
                difference = _difference(resolver, arg_value(site.node, 0, "x"), site.scope, site.order)
                if difference is not None:
                    (left, right), scope, order = difference
                    found.append(Regression(site.node, (left, right), False, site, scope, order))
            elif site.qualified in _SQUARED_DIFFERENCE:
                a, b = arg_value(site.node, 0, "x"), arg_value(site.node, 1, "y")
                if a is not None and b is not None:
                    found.append(Regression(site.node, (a, b), False, site, site.scope, site.order))
        # `(target - q) ** 2` inside a tape block: read where the innermost call around it (or in it) is.
        seen: set[int] = set()
        for tape in facts.tapes:
            pending: list[tuple[cst.CSTNode, CallSite | None]] = [(tape.node.body, None)]
            while pending:
                node, around = pending.pop()
                # Exact types: a failed isinstance against a libcst class costs an ABC check.
                if type(node) is cst.Call:
                    around = facts.call_site(node) or around
                if (type(node) is cst.BinaryOperation and type(node.operator) is cst.Power
                        and type(node.right) is cst.Integer and node.right.value == "2"
                        and id(node) not in seen):
                    seen.add(id(node))
                    inner = [facts.call_site(n) for n in iter_nodes(node) if isinstance(n, cst.Call)]
                    at = around or next((c for c in inner if c is not None), None)
                    difference = _difference(resolver, node.left, at.scope, at.order) if at else None
                    if at is not None and difference is not None:
                        (left, right), scope, order = difference
                        found.append(Regression(node, (left, right), False, at, scope, order))
                for child in child_nodes(node):
                    if type(child) not in DEFINITION_TYPES:
                        pending.append((child, around))
        return found

    return facts.cached("regressions", compute)


class _Finder:
    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.v = values(facts)

    def run(self) -> list[BootstrappedTarget]:
        f = self.f
        found: list[BootstrappedTarget] = []
        candidates = regressions(f)
        if not candidates:
            return found
        for grad in f.gradient_calls():
            if grad.method != "gradient":
                continue
            tape = f.tape_for_call(grad)
            if tape is None:
                continue
            inside = [r for r in candidates if r.site is not None and any(t is tape for t in r.site.tapes)]
            if not inside:
                continue
            owners = gradient_owners(f, grad)
            if owners.unknown or not owners.models:
                continue
            # Two models built by one factory are one value to the value model: the holder of the
            # differentiated weights (`q_net` in `q_net.trainable_variables`) tells them apart.
            holders = self._weight_holders(arg_value(grad.node, 1, "sources"), grad.scope, grad.order)
            if not holders:
                continue
            loss = arg_value(grad.node, 0, "target")
            reached = self._reached(loss, grad.scope, grad.order)
            for regression in inside:
                if id(regression.node) not in reached:
                    continue
                hit = self._bootstrapped(regression, owners.models, holders, tape, grad)
                if hit is not None:
                    found.append(hit)
        return found

    def _reached(self, expr: cst.BaseExpression | None, scope: Scope, order: int) -> set[int]:
        return {id(node) for node, _, _ in self._closure(expr, scope, order)}

    def _closure(self, expr: cst.BaseExpression | None, scope: Scope, order: int,
                 depth: int = _DEPTH) -> list[tuple[cst.CSTNode, Scope, int]]:
        """The nodes of `expr` and of the right-hand sides its names were bound to (lambdas left out)."""
        out: list[tuple[cst.CSTNode, Scope, int]] = []
        if expr is None:
            return out
        pending: list[tuple[cst.CSTNode, Scope, int, int]] = [(expr, scope, order, depth)]
        seen: set[int] = set()
        while pending and len(out) < 5000:
            node, where, at, left = pending.pop()
            if id(node) in seen or isinstance(node, cst.Lambda):
                continue
            seen.add(id(node))
            out.append((node, where, at))
            if isinstance(node, cst.Name) and left > 0:
                for binding in self.v.reaching(node.value, where, at):
                    if binding.path or id(binding) in self.f.loop_bindings or binding.augmented:
                        continue
                    if binding.value is not None:
                        pending.append((binding.value, binding.scope, binding.order, left - 1))
                continue
            for child in child_nodes(node):
                pending.append((child, where, at, left))
        return out

    def _model_calls(self, expr: cst.BaseExpression, scope: Scope, order: int,
                     models: frozenset[Value]) -> list[tuple[cst.Call, Value]]:
        found = []
        for node, where, at in self._closure(expr, scope, order):
            if not isinstance(node, cst.Call):
                continue
            for value in self.v.of(node.func, where, at):
                if value in models:
                    found.append((node, value))
                    break
        return found

    def _weight_holders(self, sources: cst.BaseExpression | None, scope: Scope, order: int) -> set[str]:
        """`{"q_net"}` for `q_net.trainable_variables` (also through one name, and `a.w + b.w`)."""
        if isinstance(sources, cst.Name):
            reaching = self.v.reaching(sources.value, scope, order)
            if len(reaching) != 1 or reaching[0].path or reaching[0].value is None:
                return set()
            sources = reaching[0].value
        parts = [sources]
        found: set[str] = set()
        while parts:
            part = parts.pop()
            if isinstance(part, cst.BinaryOperation) and isinstance(part.operator, cst.Add):
                parts += [part.left, part.right]
                continue
            owner = weights_owner(part)
            if owner is None:
                return set()
            found.add(owner)
        return found

    def _bootstrapped(self, regression: Regression, models: frozenset[Value], holders: set[str],
                      tape: TapeBlock, grad: CallSite) -> BootstrappedTarget | None:
        a, b = regression.sides
        orientations = [(a, b)] if regression.ordered else [(a, b), (b, a)]
        scope, order = regression.scope, regression.order
        best: list[tuple[int, BootstrappedTarget]] = []
        for target, prediction in orientations:
            if target is prediction:
                continue
            predicted = [(c, m) for c, m in self._model_calls(prediction, scope, order, models)
                         if dotted(c.func) in holders]
            if not predicted:
                continue
            in_target = [(c, m) for c, m in self._model_calls(target, scope, order, models)
                         if self._recorded(c, tape) and dotted(c.func) in holders]
            if not in_target:
                continue
            inputs = {_code(arg_value(c, 0, "inputs")) for c, _ in predicted}
            others = [(c, m) for c, m in in_target if _code(arg_value(c, 0, "inputs")) not in inputs]
            if not others:
                continue  # the same inputs on both sides: not a bootstrapped target
            strength = self._bootstrap_shape(target, scope, order, {id(c) for c, _ in others}, models)
            if not strength:
                continue
            if gradient_flow(self.f, target, scope, order).state is not State.CONNECTED:
                continue  # stopped (`tf.stop_gradient`, `.numpy()`, `argmax`), or cannot tell
            if gradient_flow(self.f, prediction, scope, order).state is not State.CONNECTED:
                continue  # the other side is the stopped target
            call, model = others[0]
            best.append((strength, BootstrappedTarget(regression, target, prediction, call, grad, model)))
        if not best:
            return None
        best.sort(key=lambda pair: -pair[0])
        if len(best) > 1 and best[0][0] == best[1][0]:
            return None  # both sides look alike: which one is the target cannot be told
        return best[0][1]

    def _recorded(self, call: cst.Call, tape: TapeBlock) -> bool:
        site = self.f.call_site(call)
        return site is not None and any(t is tape for t in site.tapes)

    def _bootstrap_shape(self, target: cst.BaseExpression, scope: Scope, order: int, calls: set[int],
                         models: frozenset[Value]) -> int:
        """2 when the model's output on other inputs is added to (or subtracted from) something that
        does not come from the model (`reward + gamma * q_next`), 1 when it is only reduced by a max or a
        gather, 0 otherwise."""
        strength = 0
        for node, where, at in self._closure(target, scope, order):
            if isinstance(node, cst.Call) and self.f.resolve(node.func) in _SELECTING:
                if any(id(n) in calls for n, _, _ in self._closure(arg_value(node, 0), where, at)):
                    strength = max(strength, 1)
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
                left = {id(n) for n, _, _ in self._closure(node.left, where, at)}
                right = {id(n) for n, _, _ in self._closure(node.right, where, at)}
                for here, other in ((left, node.right), (right, node.left)):
                    if not (here & calls):
                        continue
                    if not self._model_calls(other, where, at, models) and not _constant_zero(other):
                        return 2
        return strength


def _difference(resolver, expr: cst.BaseExpression | None, scope: Scope,  # type: ignore[no-untyped-def]
                order: int) -> tuple[tuple[cst.BaseExpression, cst.BaseExpression], Scope, int] | None:
    """The two sides of `a - b`, also through one name bound to it (`td = target - q; tf.square(td)`)."""
    if isinstance(expr, cst.Name):
        reaching = resolver.reaching(expr.value, scope, order)
        if len(reaching) != 1 or reaching[0].path or reaching[0].augmented or reaching[0].value is None:
            return None
        binding = reaching[0]
        expr, scope, order = binding.value, binding.scope, binding.order
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract):
        return (expr.left, expr.right), scope, order
    return None


def _code(expr: cst.CSTNode | None) -> str:
    if expr is None:
        return ""
    return cst.Module([]).code_for_node(expr).strip()


def _constant_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) and expr.evaluated_value == 0

"""Distribution strategies: which functions run once per replica, under which strategy, and how a
per-replica loss is scaled.

`replica_runs(facts)` finds `strategy.run(fn, ...)` (and `experimental_run_v2`, `experimental_run`)
calls whose receiver the value model resolves to a `tf.distribute` strategy, and the local functions
they run. `per_replica(facts, scope)` says whether a function runs per replica: it is one of those, or a
local function or method they call (a few calls deep). `replicas` on a strategy is 1 for a
`OneDeviceStrategy` or a `MirroredStrategy` over a literal list of one device, None for "more than
one, or as many as the machine has"; a strategy the value model cannot pin down (a parameter nobody
passes, `tf.distribute.get_strategy()`) makes the run's strategies unknown.

`loss_scaling(facts, expr, scope, order)` answers "is this loss a per-replica mean that nobody divided by
the number of replicas?": MEAN (with the `reduce_mean` call), SCALED (`tf.nn.compute_average_loss`, a
Keras 3 loss object, a division) or UNSURE.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import CallSite, Facts, Scope, arg_value, keyword_arg
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, Value, is_unknown, values, values_of

# Strategies whose replicas each run the step function on their share of the global batch, and whose
# `apply_gradients` sums the replicas' gradients.
MULTI_REPLICA = frozenset({
    "tensorflow.distribute.MirroredStrategy",
    "tensorflow.distribute.MultiWorkerMirroredStrategy",
    "tensorflow.distribute.experimental.MultiWorkerMirroredStrategy",
    "tensorflow.distribute.TPUStrategy",
    "tensorflow.distribute.experimental.TPUStrategy",
    "tensorflow.distribute.experimental.CentralStorageStrategy",
    "tensorflow.compat.v1.distribute.MirroredStrategy",
})
ONE_REPLICA = frozenset({
    "tensorflow.distribute.OneDeviceStrategy",
    "tensorflow.compat.v1.distribute.OneDeviceStrategy",
})
RUN_METHODS = frozenset({"run", "experimental_run_v2", "experimental_run"})
MEANS = frozenset({"tensorflow.reduce_mean", "tensorflow.math.reduce_mean", "keras.ops.mean", "keras.backend.mean"})
# Ops that already divide by the global batch or the number of replicas.
SCALERS = frozenset({"tensorflow.nn.compute_average_loss", "tensorflow.nn.scale_regularization_loss"})
_CALL_DEPTH = 3  # how many local calls below a replica function still count as per replica
_LOSS_DEPTH = 4  # how many helper returns and name bindings a loss is followed through


@dataclass(frozen=True)
class Strategy:
    cls: str  # the qualified class, `tensorflow.distribute.MirroredStrategy`
    node: cst.CSTNode | None  # the constructor call
    replicas: int | None  # 1 when provably one replica; None when more (or as many as there are devices)


@dataclass(eq=False)
class ReplicaRun:
    site: CallSite  # the `strategy.run(...)` call
    function: Scope  # the function it runs per replica
    strategies: tuple[Strategy, ...]  # what the receiver may be; empty when unknown

    @property
    def multi_replica(self) -> bool:
        """Does some strategy this run may use have more than one replica (and every one is known)?"""
        return bool(self.strategies) and any(s.replicas is None for s in self.strategies)

    @property
    def strategy(self) -> Strategy | None:
        multi = [s for s in self.strategies if s.replicas is None]
        return multi[0] if multi else None


def _replica_count(facts: Facts, call: cst.Call, cls: str, scope: Scope, order: int) -> int | None:
    if cls in ONE_REPLICA:
        return 1
    if cls.endswith("MirroredStrategy") and "MultiWorker" not in cls:
        devices = arg_value(call, 0, "devices")
        if devices is not None:
            found = values_of(facts, devices, scope, order)
            lists = [v for v in found if v.kind is Kind.CONTAINER and not v.uniform]
            if lists and len(lists) == len(found) and all(len(v.items) == 1 for v in lists):
                return 1
    return None


def strategies_of(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> tuple[Strategy, ...]:
    """The strategies `expr` may be here; empty unless every possibility is a known strategy."""
    found = values_of(facts, expr, scope, order)
    if not found or is_unknown(found):
        return ()
    out: list[Strategy] = []
    for value in found:
        cls = value.cls or ""
        if value.kind is not Kind.EXTERNAL or cls not in MULTI_REPLICA | ONE_REPLICA:
            return ()
        call = value.node if isinstance(value.node, cst.Call) else None
        site = facts.call_site(call) if call is not None else None
        replicas = (_replica_count(facts, call, cls, site.scope, site.order)
                    if call is not None and site is not None else None)
        out.append(Strategy(cls, call, replicas))
    return tuple(out)


def _functions(found: frozenset[Value]) -> list[Scope]:
    return [v.scope for v in found if v.kind is Kind.FUNCTION and v.scope is not None
            and isinstance(v.node, cst.FunctionDef)]


def replica_runs(facts: Facts) -> list[ReplicaRun]:
    """Every `strategy.run(fn, ...)` whose receiver is a `tf.distribute` strategy and whose `fn` is a
    function of this module."""
    def compute() -> list[ReplicaRun]:
        runs: list[ReplicaRun] = []
        for site in facts.calls:
            if site.method not in RUN_METHODS or not isinstance(site.node.func, cst.Attribute):
                continue
            strategies = strategies_of(facts, site.node.func.value, site.scope, site.order)
            if not strategies:
                continue
            fn = arg_value(site.node, 0, "fn")
            if isinstance(fn, cst.Call) and facts.resolve(fn.func) == "tensorflow.function":
                fn = arg_value(fn, 0, "func")  # `strategy.run(tf.function(step), ...)`
            functions = _functions(values_of(facts, fn, site.scope, site.order))
            if not functions and isinstance(fn, cst.Name):
                functions = _nested_def(facts, fn.value, site.scope, site.order)
            for function in functions:
                runs.append(ReplicaRun(site, function, strategies))
        return runs

    return facts.cached("replica_runs", compute)


def _nested_def(facts: Facts, name: str, scope: Scope, order: int) -> list[Scope]:
    """`def step_fn(...)` written inside the function that runs it (the value model knows module-level
    functions and methods only): the last such def before `order` in the innermost enclosing function."""
    table = facts.cached("nested_defs", lambda: _index_nested(facts))
    for current in scope.chain():
        if current.is_module:
            break
        found = [s for s in table.get((id(current), name), ()) if s.order < order]
        if found:
            return [found[-1]]
    return []


def _index_nested(facts: Facts) -> dict[tuple[int, str], list[Scope]]:
    index: dict[tuple[int, str], list[Scope]] = {}
    for scope in facts.scopes:
        if scope.parent is not None and not scope.parent.is_module and scope.class_name is None:
            index.setdefault((id(scope.parent), scope.simple_name), []).append(scope)
    return index


def _calls_by_scope(facts: Facts) -> dict[int, list[CallSite]]:
    def compute() -> dict[int, list[CallSite]]:
        index: dict[int, list[CallSite]] = {}
        for site in facts.calls:
            index.setdefault(id(site.scope), []).append(site)
        return index

    return facts.cached("calls_by_scope", compute)


def per_replica_functions(facts: Facts) -> dict[int, ReplicaRun]:
    """id(scope) -> the run that makes it run per replica: the replica functions themselves and the
    local functions and methods they call, up to a few calls deep."""
    def compute() -> dict[int, ReplicaRun]:
        index = _calls_by_scope(facts)
        found: dict[int, ReplicaRun] = {}
        for run in replica_runs(facts):
            frontier = [run.function]
            for _ in range(_CALL_DEPTH + 1):
                following: list[Scope] = []
                for scope in frontier:
                    if id(scope) in found:
                        continue
                    found[id(scope)] = run
                    for site in index.get(id(scope), ()):
                        following.extend(_functions(values_of(facts, site.node.func, site.scope, site.order)))
                frontier = following
        return found

    return facts.cached("per_replica_functions", compute)


def per_replica(facts: Facts, scope: Scope) -> ReplicaRun | None:
    """The strategy run that executes `scope` once per replica, or None."""
    table = per_replica_functions(facts)
    for current in scope.chain():
        run = table.get(id(current))
        if run is not None:
            return run
    return None


class Scaling(str, enum.Enum):
    MEAN = "mean"  # a per-replica mean: with N replicas the summed gradients are N times too large
    SCALED = "scaled"  # divided by the global batch or the replicas, or a Keras 3 loss object
    UNSURE = "unsure"


@dataclass(frozen=True)
class LossScaling:
    scaling: Scaling
    mean: cst.Call | None = None  # the `reduce_mean` call of a MEAN

    @staticmethod
    def unsure() -> "LossScaling":
        return LossScaling(Scaling.UNSURE)


_UNSURE = LossScaling(Scaling.UNSURE)
_SCALED = LossScaling(Scaling.SCALED)


def _reduction_none(facts: Facts, loss: Value) -> bool | None:
    """Was this Keras loss object built with `reduction=None` / `"none"` / `Reduction.NONE`?"""
    call = loss.node if isinstance(loss.node, cst.Call) else None
    if call is None:
        return None
    arg = keyword_arg(call, "reduction")
    if arg is None:
        return False
    value = arg.value
    if isinstance(value, cst.Name) and value.value == "None":
        return True
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value.lower() == "none"
    text = dotted(value) or ""
    if text.endswith(".NONE"):
        return True
    return None


class _Judge:
    def __init__(self, facts: Facts) -> None:
        self.f = facts

    def loss(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int) -> LossScaling:
        if expr is None or depth > _LOSS_DEPTH:
            return _UNSURE
        if isinstance(expr, cst.Name):
            return self._name(expr, scope, order, depth)
        if isinstance(expr, cst.Call):
            return self._call(expr, scope, order, depth)
        if isinstance(expr, cst.BinaryOperation):
            op = expr.operator
            if isinstance(op, (cst.Add, cst.Subtract)):
                # A sum: the mean term's gradient is summed over replicas whatever the other term is.
                left = self.loss(expr.left, scope, order, depth)
                right = self.loss(expr.right, scope, order, depth)
                for side in (left, right):
                    if side.scaling is Scaling.MEAN:
                        return side
                return _SCALED if left.scaling is right.scaling is Scaling.SCALED else _UNSURE
            if isinstance(op, cst.Multiply):
                for this, other in ((expr.left, expr.right), (expr.right, expr.left)):
                    if _is_number(self.f, other, scope, order):
                        return self.loss(this, scope, order, depth)
                return _UNSURE  # `loss * scale`: the scale may be 1 / num_replicas
            if isinstance(op, (cst.Divide, cst.FloorDivide)):
                return _SCALED  # `/ strategy.num_replicas_in_sync`, `/ GLOBAL_BATCH_SIZE`
            return _UNSURE
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            return self.loss(expr.expression, scope, order, depth)
        return _UNSURE

    def _name(self, expr: cst.Name, scope: Scope, order: int, depth: int) -> LossScaling:
        bindings = values(self.f).reaching(expr.value, scope, order)
        if not bindings:
            return _UNSURE
        results: list[LossScaling] = []
        for binding in bindings:
            if binding.index is not None or binding.path or self.f.loop_bindings.get(id(binding)) is not None:
                return _UNSURE
            if binding.augmented:
                node = binding.node
                if not isinstance(node, cst.AugAssign):
                    return _UNSURE
                if isinstance(node.operator, (cst.DivideAssign, cst.FloorDivideAssign)):
                    results.append(_SCALED)
                    continue
                if not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
                    return _UNSURE
                added = self.loss(node.value, binding.scope, binding.order, depth + 1)
                before = self._name(expr, binding.scope, binding.order, depth + 1)
                results.append(added if added.scaling is Scaling.MEAN else
                               before if before.scaling is Scaling.MEAN or added.scaling is Scaling.UNSURE else
                               added if before.scaling is Scaling.SCALED else _UNSURE)
                continue
            results.append(self.loss(binding.value, binding.scope, binding.order, depth + 1))
        # Every path must agree: a loss that is a mean on one branch only stays unreported.
        if all(r.scaling is Scaling.MEAN for r in results):
            return results[0]
        if all(r.scaling is Scaling.SCALED for r in results):
            return _SCALED
        return _UNSURE

    def _call(self, call: cst.Call, scope: Scope, order: int, depth: int) -> LossScaling:
        qualified = self.f.resolve(call.func)
        if qualified in SCALERS:
            return _SCALED
        if qualified in MEANS:
            if arg_value(call, 1, "axis") is not None:
                return _UNSURE  # a per-example vector, not the step's loss
            return LossScaling(Scaling.MEAN, call) if self._per_example(
                arg_value(call, 0, "input_tensor" if qualified.startswith("tensorflow") else "x"),
                scope, order, depth) else _UNSURE
        callee = values_of(self.f, call.func, scope, order)
        if is_unknown(callee) or not callee:
            return _UNSURE
        if all(v.kind is Kind.LOSS for v in callee):
            # Keras 3 loss objects divide by the number of replicas (keras/src/losses/loss.py,
            # `scale_loss_for_distribution`) unless they do not reduce at all.
            return _SCALED if all(_reduction_none(self.f, v) is False for v in callee) else _UNSURE
        functions = _functions(callee)
        if functions and len(functions) == len(callee):
            results = [self.loss(r.value, r.scope, r.order, depth + 1)
                       for fn in functions for r in self.f.returns_of(fn)]
            if results and all(r.scaling is Scaling.MEAN for r in results):
                return results[0]
            if results and all(r.scaling is Scaling.SCALED for r in results):
                return _SCALED
        return _UNSURE

    def _per_example(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int) -> bool:
        """Is `expr` built only from tensors and TF/Keras ops, none of which already divides by the
        number of replicas? (A Keras loss object that reduces, a local helper we do not follow, or an
        unknown call make it False.)"""
        if expr is None or depth > _LOSS_DEPTH:
            return False
        pending: list[cst.CSTNode] = [expr]
        while pending:
            node = pending.pop()
            if isinstance(node, cst.Call):
                if not self._plain_call(node, scope, order, depth):
                    return False
                pending.extend(a.value for a in node.args)
                continue
            if isinstance(node, cst.Name):
                bindings = values(self.f).reaching(node.value, scope, order)
                for binding in bindings:
                    if binding.augmented:
                        return False
                    # `features, labels = inputs`: the element of a batch is as plain as the batch.
                    source = self.f.loop_bindings.get(id(binding)) or binding.source or binding.value
                    if source is not None and not self._per_example(source, binding.scope, binding.order, depth + 1):
                        return False
                continue
            if isinstance(node, (cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)):
                return False
            if isinstance(node, cst.Attribute):
                pending.append(node.value)
                continue
            pending.extend(c for c in node.children if isinstance(c, cst.CSTNode))
        return True

    def _plain_call(self, call: cst.Call, scope: Scope, order: int, depth: int) -> bool:
        qualified = self.f.resolve(call.func)
        if qualified is not None:
            if qualified in SCALERS or qualified.startswith("keras.losses.") and qualified.rsplit(".", 1)[-1][:1].isupper():
                return False
            return qualified.startswith(("tensorflow.", "keras.ops.", "keras.backend.", "keras.activations.")) or (
                qualified.startswith("keras.losses.") and "." not in qualified[len("keras.losses."):])
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("numpy",):
            return False
        callee = values_of(self.f, call.func, scope, order)
        if is_unknown(callee) or not callee:
            return False
        for value in callee:
            if value.kind in (Kind.MODEL, Kind.LAYER):
                continue
            if value.kind is Kind.LOSS and _reduction_none(self.f, value) is True:
                continue  # a per-example loss vector
            return False
        return True


def _is_number(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> bool:
    found = values_of(facts, expr, scope, order)
    return bool(found) and all(v.kind is Kind.CONSTANT and isinstance(v.const, (int, float)) for v in found)


def loss_scaling(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> LossScaling:
    """Is the loss `expr` (read at `scope`, `order`) a per-replica `reduce_mean` that nothing divides by
    the number of replicas (MEAN), one scaled for distribution (SCALED), or can we not tell (UNSURE)?"""
    return _Judge(facts).loss(expr, scope, order, 0)


__all__ = ["ReplicaRun", "Strategy", "Scaling", "LossScaling", "replica_runs", "per_replica",
           "per_replica_functions", "strategies_of", "loss_scaling"]

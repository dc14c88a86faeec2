"""Regularization losses: which models carry `model.losses`, and which loss computations add them.

A model carries extra losses when one of its layers (visible in this file) is built with a
`*_regularizer=` argument, is an `ActivityRegularization` layer, or when `add_loss` is called on the
model or inside one of its (or its custom layers') methods. A loss "adds them" when a `.losses`
attribute, `compute_loss` or `compiled_loss(..., regularization_losses=...)` is reached from the code
that computes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Facts, Scope, TapeBlock, arg_value, keyword_arg
from tapelint.analysis.keras import layer_class
from tapelint.analysis.models import KerasModel, model_reader
from tapelint.analysis.names import dotted
from tapelint.analysis.values import last_assignment

REGULARIZER_KEYWORDS = frozenset(
    {
        "kernel_regularizer", "bias_regularizer", "activity_regularizer", "recurrent_regularizer",
        "depthwise_regularizer", "pointwise_regularizer", "embeddings_regularizer", "beta_regularizer",
        "gamma_regularizer",
    }
)
ADDS_MODEL_LOSSES = frozenset({"compute_loss"})


@dataclass
class Regularization:
    node: cst.CSTNode  # the `kernel_regularizer=...` argument or the `add_loss` call
    what: str  # "`kernel_regularizer` of a `Dense` layer", "`add_loss`"


def _layer_regularization(facts: Facts, call: cst.Call) -> Regularization | None:
    cls = layer_class(facts, call)
    if cls is None:
        return None
    if cls == "ActivityRegularization":
        return Regularization(call, "an `ActivityRegularization` layer")
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in REGULARIZER_KEYWORDS:
            if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                continue
            return Regularization(arg, f"the `{arg.keyword.value}` of a `{cls}` layer")
    return None


class RegularizationReader:
    def __init__(self, facts: Facts) -> None:
        self.f = facts

    def of_model(self, model: KerasModel, holder: str | None, scope: Scope) -> Regularization | None:
        f = self.f
        order = 1 << 60
        if holder is not None:
            for site in f.calls:
                if site.receiver == holder and site.method == "add_loss":
                    if holder.split(".")[0] == "self" and site.scope.class_name != scope.class_name:
                        continue  # `self` of another class (a regularising layer defined in the file)
                    return Regularization(site.node, f"`{holder}.add_loss`")
        if isinstance(model.construction, cst.Call):
            made = f.call_site(model.construction)
            if made is not None:
                scope, order = made.scope, made.order
        if model.kind == "sequential":
            for _, layer in model.layers:
                found = _layer_regularization(f, layer) if type(layer) is cst.Call else None
                if found is not None:
                    return found
            # Layers it holds that are not Keras layers: a custom layer class, a nested model.
            seen: set[int] = set()
            for entry in model.stack or ():
                found = self._walk(entry.node, entry.scope, entry.order, 0, seen) if entry is not None else None
                if found is not None:
                    return found
            return None
        if model.kind == "functional" and isinstance(model.construction, cst.Call):
            return self._walk(arg_value(model.construction, 1, "outputs"), scope, order, 0, set())
        if model.kind == "subclass" and model.class_name:
            return self._of_class(model.class_name, set())
        return None

    def _of_class(self, class_name: str, seen: set[str]) -> Regularization | None:
        f = self.f
        if class_name in seen or class_name not in f.classes:
            return None
        seen.add(class_name)
        info = f.classes[class_name]
        for site in f.calls:
            if site.scope.class_name == class_name and site.method == "add_loss":
                return Regularization(site.node, f"`{class_name}`'s `add_loss`")
        for binding in f.bindings:
            if binding.scope.class_name != class_name or not isinstance(
                    binding.value, (cst.Call, cst.List, cst.Tuple, cst.ListComp)):
                continue
            found = self._walk(binding.value, binding.scope, binding.order, 0, set())
            if found is not None:
                return found
        for base in info.bases:
            found = self._of_class(base, seen)
            if found is not None:
                return found
        return None

    def _walk(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int,
              seen: set[int]) -> Regularization | None:
        """Layers (and local layer classes and helper functions) reachable backwards from a functional
        output or a layer list. Iterative: real backbones are hundreds of layers deep."""
        f = self.f
        stack: list[tuple[cst.BaseExpression, Scope, int]] = [(expr, scope, order)] if expr is not None else []
        budget = 5000
        while stack and budget > 0:
            budget -= 1
            current, cur_scope, cur_order = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if isinstance(current, (cst.List, cst.Tuple)):
                stack.extend((e.value, cur_scope, cur_order) for e in current.elements)
                continue
            if isinstance(current, (cst.ListComp, cst.GeneratorExp)):
                stack.append((current.elt, cur_scope, cur_order))
                continue
            if isinstance(current, cst.Call):
                found = _layer_regularization(f, current)
                if found is not None:
                    return found
                name = dotted(current.func)
                if name is not None and name in f.classes:
                    found = self._of_class(name, set())
                    if found is not None:
                        return found
                if name is not None and name in f.functions:
                    # `x = conv_block(x, 64)`: the layers the helper builds and returns.
                    helper = f.functions[name]
                    stack.extend((r.value, helper, r.order) for r in f.returns_of(helper) if r.value is not None)
                if isinstance(current.func, cst.Call):
                    stack.append((current.func, cur_scope, cur_order))
                stack.extend((a.value, cur_scope, cur_order) for a in current.args)
                continue
            if isinstance(current, cst.Name):
                binding = last_assignment(f, current.value, cur_scope, cur_order)
                if binding is not None and binding.value is not None:
                    stack.append((binding.value, binding.scope, binding.order))
                continue
            if isinstance(current, cst.BinaryOperation):
                stack.extend([(current.left, cur_scope, cur_order), (current.right, cur_scope, cur_order)])
        return None


def regularization_reader(facts: Facts) -> RegularizationReader:
    return facts.cached("regularization_reader", lambda: RegularizationReader(facts))


def _scopes_reached(facts: Facts, scope: Scope, block: TapeBlock | None, depth: int = 0) -> list[Scope]:
    """`scope` plus the module functions and `self.` methods called from it (or from the tape block)."""
    reached = [scope]
    if depth > 3:
        return reached
    for site in facts.calls:
        if site.scope is not scope:
            continue
        if block is not None and depth == 0 and block not in site.tapes:
            continue
        target = None
        if site.func in facts.functions:
            target = facts.functions[site.func]
        elif site.func and site.func.startswith("self.") and scope.class_name:
            cls = facts.classes.get(scope.class_name)
            target = cls.methods.get(site.func[5:]) if cls else None
        if target is not None and target is not scope:
            reached.extend(s for s in _scopes_reached(facts, target, None, depth + 1) if s not in reached)
    return reached


def adds_model_losses(facts: Facts, block: TapeBlock) -> bool:
    """Whether the code around a tape block adds `.losses` (or lets Keras do it) to its loss."""
    scopes = _scopes_reached(facts, block.scope, None)
    for use in facts.name_uses:
        if use.name.endswith(".losses") and any(use.scope is s for s in scopes):
            if isinstance(use.node, cst.BaseExpression) and facts.resolve(use.node) is not None:
                continue  # `tf.keras.losses`: the module, not a model's losses
            return True
    for site in facts.calls:
        if not any(site.scope is s for s in scopes):
            continue
        if site.method in ADDS_MODEL_LOSSES:
            return True
        if site.method == "compiled_loss" or (site.func or "").endswith("compiled_loss"):
            if keyword_arg(site.node, "regularization_losses") is not None:
                return True
    return False


def models_called_in(facts: Facts, block: TapeBlock) -> list[tuple[KerasModel, str, Scope]]:
    """The models called inside a tape block, directly or through functions of this module."""
    reader = model_reader(facts)
    found: list[tuple[KerasModel, str, Scope]] = []
    seen: set[int] = set()
    for scope in _scopes_reached(facts, block.scope, block):
        for site in facts.calls:
            if site.scope is not scope:
                continue
            if scope is block.scope and block not in site.tapes:
                continue
            if site.func is None or isinstance(site.node.func, cst.Call):
                continue
            model = reader.model_of(site.node.func, site.scope, site.order)
            if model is None or id(model.construction) in seen:
                continue
            seen.add(id(model.construction))
            found.append((model, site.func, site.scope))
    return found

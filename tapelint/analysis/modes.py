"""Which layers of a model behave differently in training and inference (Dropout, BatchNorm).

Reads Sequential models (as `models.py` reads them), functional graphs (from `outputs` back to the inputs), subclassed
models (their `self.` layers), nested models and `keras.applications` families.
"""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.constants import boolean
from tapelint.analysis.facts import CallSite, Facts, Scope, arg_value, keyword_arg
from tapelint.analysis.keras import application_has_batchnorm, application_name, layer_class
from tapelint.analysis.models import KerasModel, expr_order, layer_constructions, model_reader
from tapelint.analysis.names import dotted
from tapelint.analysis.values import last_assignment

MODE_LAYERS = ("Dropout", "BatchNormalization", "GaussianNoise")


def is_mode_layer(cls: str) -> bool:
    return any(word in cls for word in MODE_LAYERS)


class _ModeReader:
    def __init__(self, facts: Facts, follows_flag: bool = False) -> None:
        self.f = facts
        self.reader = model_reader(facts)
        self.seen: set[int] = set()
        self.budget = 400
        self.follows_flag = follows_flag

    def _fixed_mode(self, found: list[str], func: cst.BaseExpression, call: cst.Call | None = None) -> list[str]:
        """With `follows_flag`, what of `found` (the mode layers of a nested model or layer) still follows the
        outer call's `training` flag. A nested call with `training=False` fixes its whole mode; a frozen
        part (`backbone.trainable = False`) runs its BatchNormalization in inference mode whatever the flag
        (TF 2.0 and later, Keras 3: the transfer-learning guide's way of freezing a backbone), while its
        Dropout still follows it."""
        if not self.follows_flag:
            return found
        if call is not None:
            flag = keyword_arg(call, "training")
            if flag is not None and boolean(flag.value) is False:
                return []
        name = dotted(func)
        if name is not None and any(boolean(b.value) is False for b in self.f.bindings_of(f"{name}.trainable")):
            return [cls for cls in found if "BatchNormalization" not in cls]
        return found

    def of_callee(self, func: cst.BaseExpression, scope: Scope, order: int) -> list[str]:
        """Mode-dependent layers of the model or layer that `func(...)` calls."""
        name = dotted(func)
        if name is None:
            return []
        # A layer (what the value model says the name holds): its own class decides.
        layers = layer_constructions(self.f, func, scope, order) if name != "self" else None
        if layers:
            return _unique([cls for cls, _ in layers if is_mode_layer(cls)])
        info = self.reader.model_of(func, scope, order)
        if info is None:
            return []
        return self.of_model(info, scope, order)

    def of_model(self, info: KerasModel, scope: Scope, order: int) -> list[str]:
        if id(info.construction) in self.seen or self.budget <= 0:
            return []
        self.seen.add(id(info.construction))
        found: list[str] = []
        if info.application is not None and application_has_batchnorm(info.application):
            found.append(f"BatchNormalization (in `{info.application}`)")
        for cls, _call in info.layers:
            if is_mode_layer(cls):
                found.append(cls)
        construction = info.construction
        if info.kind == "sequential":
            # A model nested in it (a backbone, a Sequential block): its own layers.
            for entry in info.stack or ():
                if entry is not None and entry.layer is None:
                    found += self._fixed_mode(self._nested(entry.node, entry.scope, entry.order), entry.node)
        elif info.kind == "functional" and isinstance(construction, cst.Call):
            outputs = arg_value(construction, 1, "outputs")
            at = expr_order(self.f, construction, order)
            site = self.f.call_site(construction)
            found += self._graph(outputs, site.scope if site else scope, at, 0)
        elif info.kind == "subclass" and info.class_name is not None:
            for binding in self.f.bindings:
                if binding.scope.class_name == info.class_name and isinstance(binding.value, cst.Call):
                    if application_name(self.f, binding.value) or (
                        dotted(binding.value.func) in self.f.classes and binding.value.func is not None
                    ):
                        found += self._nested(binding.value, binding.scope, binding.order)
        return _unique(found)

    def _nested(self, expr: cst.BaseExpression, scope: Scope, order: int) -> list[str]:
        info = self.reader.model_of(expr, scope, order)
        return self.of_model(info, scope, order) if info is not None else []

    def _graph(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int) -> list[str]:
        """Walk a functional graph back from its outputs."""
        self.budget -= 1
        if expr is None or depth > 60 or self.budget <= 0:
            return []
        found: list[str] = []
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Call):
                cls = layer_class(self.f, expr.func)
                if cls is not None and is_mode_layer(cls):
                    found.append(cls)
                elif cls is None:
                    found += self._nested(expr.func, scope, order)
            elif isinstance(expr.func, cst.Name) and self.f.function_at(expr.func.value, order) is not None:
                # `x = conv_bn(x)`: a helper of this module that stacks layers; walk its returns.
                helper = self.f.function_at(expr.func.value, order)
                if helper is not None and id(helper) not in self.seen:
                    self.seen.add(id(helper))
                    for ret in self.f.returns_of(helper):
                        found += self._graph(ret.value, helper, ret.order, depth + 1)
            elif dotted(expr.func) is not None:
                found += self._fixed_mode(self.of_callee(expr.func, scope, order), expr.func, expr)
            for arg in expr.args:
                found += self._graph(arg.value, scope, order, depth + 1)
            return found
        if isinstance(expr, (cst.List, cst.Tuple)):
            for element in expr.elements:
                found += self._graph(element.value, scope, order, depth + 1)
            return found
        if isinstance(expr, cst.BinaryOperation):
            return self._graph(expr.left, scope, order, depth + 1) + self._graph(expr.right, scope, order, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self._graph(expr.value, scope, order, depth + 1)
        if isinstance(expr, cst.Name):
            binding = last_assignment(self.f, expr.value, scope, order)
            if binding is None or binding.value is None or id(binding) in self.seen:
                return []
            self.seen.add(id(binding))
            return self._graph(binding.value, binding.scope, binding.order, depth + 1)
        return []


def _unique(items: list[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def mode_layers(facts: Facts, func: cst.BaseExpression, scope: Scope, order: int,
                follows_flag: bool = False) -> list[str]:
    """Dropout/BatchNorm-like layers inside what `func(...)` calls (a model or a layer), as far as the
    file shows them. Empty when there are none or the model cannot be read. With `follows_flag`, only
    those whose behaviour the call's `training` flag decides (not the BatchNorm of a frozen backbone)."""
    return _ModeReader(facts, follows_flag).of_callee(func, scope, order)


def call_defaults_to_training(facts: Facts, site: CallSite) -> bool:
    """Does a call that passes no `training` run the model in training mode because the model is a subclass
    of this module whose `call` has `training=True` as its default? (Keras 3 falls back to that default when
    neither the call nor an enclosing layer sets the mode.)"""
    info = model_reader(facts).model_of(site.node.func, site.scope, site.order)
    if info is None or info.kind != "subclass" or info.class_name is None:
        return False
    cls = facts.classes.get(info.class_name)
    method = cls.methods.get("call") if cls is not None else None
    if method is None or method.node is None:
        return False
    for param in (*method.node.params.params, *method.node.params.kwonly_params):
        if param.name.value == "training":
            return boolean(param.default) is True
    return False

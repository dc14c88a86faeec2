"""Optimizer objects from creation to use: where each is held and whether it is ever applied.

An optimizer is "applied" when `apply_gradients`, `apply` or `minimize` is reached with it, or when it
is handed to something that applies it (`model.compile(optimizer=...)`, a function of this module
that applies its parameter, a `LossScaleOptimizer` wrapper, an unknown callee we cannot see into).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Binding, CallSite, Facts, Scope, arg_value
from tapelint.analysis.keras import APPLY_METHODS, optimizer_class
from tapelint.analysis.names import dotted
from tapelint.analysis.walk import contains


@dataclass(eq=False)
class OptimizerCreation:
    site: CallSite
    cls: str  # "Adam"
    qualified: str
    holder: Binding | None  # the assignment that keeps it (None: passed straight into a call, returned...)

    @property
    def node(self) -> cst.Call:
        return self.site.node


def optimizer_creations(facts: Facts) -> list[OptimizerCreation]:
    def compute() -> list[OptimizerCreation]:
        by_value: dict[int, Binding] = {}
        for binding in facts.bindings:
            if isinstance(binding.value, cst.Call) and binding.index is None:
                by_value[id(binding.value)] = binding
        found = []
        for site in facts.calls:
            cls = optimizer_class(site.qualified)
            if cls is None:
                continue
            found.append(OptimizerCreation(site, cls, site.qualified or cls, by_value.get(id(site.node))))
        return found

    return facts.cached("optimizer_creations", compute)  # type: ignore[return-value]


class _Tracker:
    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.seen: set[tuple[str, int]] = set()

    def holder_is_applied(self, name: str, scope: Scope, after: int, depth: int = 0) -> bool:
        """Is the optimizer held in `name` (bound in `scope`) applied or handed on anywhere?"""
        key = (name, id(scope))
        if key in self.seen or depth > 6:
            return False
        self.seen.add(key)
        for use in self.f.name_uses:
            if use.name != name and not use.name.startswith(name + "."):
                continue
            if not self._visible(name, scope, use.scope):
                continue
            if self._use_counts(use.node, name, use.scope, use.order, depth):
                return True
        return False

    def _visible(self, name: str, scope: Scope, use_scope: Scope) -> bool:
        if name.startswith("self."):
            return True  # attributes are shared by every method (and subclasses)
        if use_scope is scope or scope.contains(use_scope):
            # Not shadowed by a local binding in an inner function.
            for inner in use_scope.chain():
                if inner is scope:
                    return True
                if name in inner.params or any(b.scope is inner for b in self.f.bindings_of(name)):
                    return False
            return True
        return False

    def _use_counts(self, node: cst.CSTNode, name: str, scope: Scope, order: int, depth: int) -> bool:
        # `opt.apply_gradients(...)`, `opt.minimize(...)`
        if isinstance(node, cst.Attribute) and node.attr.value in APPLY_METHODS and dotted(node.value) == name:
            return True
        if not (isinstance(node, cst.Name) or dotted(node) == name):
            return False
        parent_call = self._call_with_argument(node)
        if parent_call is not None:
            site, arg = parent_call
            return self._handed_to(site, arg, name, depth)
        if self._is_returned_or_stored(node, order):
            return True
        return False

    def _call_with_argument(self, node: cst.CSTNode) -> tuple[CallSite, cst.Arg] | None:
        for site in self.f.calls:
            for arg in site.node.args:
                if arg.value is node:
                    return site, arg
        return None

    def _handed_to(self, site: CallSite, arg: cst.Arg, name: str, depth: int) -> bool:
        callee = site.func
        # A function or method of this module: follow into its parameter.
        target = None
        if callee in self.f.functions:
            target = self.f.functions[callee]
        elif callee and callee.startswith("self.") and site.scope.class_name:
            cls = self.f.classes.get(site.scope.class_name)
            target = cls.methods.get(callee[5:]) if cls else None
        elif callee in self.f.classes:
            target = self.f.classes[callee].methods.get("__init__")
        if target is not None:
            params = list(target.params)
            if params and params[0] in ("self", "cls") and target.class_name is not None:
                params = params[1:]
            if arg.keyword is not None:
                param = arg.keyword.value
            else:
                positional = [a for a in site.node.args if a.keyword is None]
                index = positional.index(arg)
                param = params[index] if index < len(params) else None
            if param is None or param not in target.params:
                return True  # *args/**kwargs: cannot follow, assume it is used
            if self.holder_is_applied(param, target, target.order, depth + 1):
                return True
            # Stored on self inside __init__/a method: `self.opt = opt` handled by bindings below.
            for binding in self.f.bindings:
                if binding.scope is target and isinstance(binding.value, cst.Name) and binding.value.value == param:
                    if self.holder_is_applied(binding.target, binding.scope, binding.order, depth + 1):
                        return True
            return False
        # Anything else (compile, a Trainer class from a library, a wrapper): it is handed on.
        return True

    def _is_returned_or_stored(self, node: cst.CSTNode, order: int) -> bool:
        for ret in self.f.returns:
            if ret.value is not None and contains(ret.value, node):
                return True
        for binding in self.f.bindings:
            if binding.value is not None and binding.value is not node and contains(binding.value, node):
                return True  # inside a container or expression that is stored elsewhere
            if binding.value is node:
                # `other = opt` / `self.opt = opt`: follow the new holder.
                if self.holder_is_applied(binding.target, binding.scope, binding.order):
                    return True
        return False


def is_applied(facts: Facts, creation: OptimizerCreation) -> bool:
    """True when the optimizer may update weights somewhere in this module (or beyond it)."""
    holder = creation.holder
    if holder is None:
        return True  # passed straight to compile/a call, returned, or wrapped: not ours to judge
    if "." in holder.target and not holder.target.startswith("self."):
        return True  # stored on some other object: it leaves our sight
    tracker = _Tracker(facts)
    if holder.target.startswith("self."):
        # Any method of any class reaching `self.<attr>.apply_gradients` counts.
        for site in facts.calls:
            if site.receiver == holder.target and site.method in APPLY_METHODS:
                return True
        # `self.optimizer` is what Keras' own train_step applies after compile().
        if holder.target == "self.optimizer":
            return True
        return tracker.holder_is_applied(holder.target, holder.scope, holder.order)
    return tracker.holder_is_applied(holder.target, holder.scope, holder.order)


_PLAIN_VARIABLES = ("tensorflow.Variable", "keras.Variable", "keras.backend.Variable")


def _stepped_variables(site: CallSite) -> list[cst.BaseExpression] | None:
    """The variable expressions an `apply_gradients`/`apply`/`minimize` call steps, or None when they
    cannot be read (a name holding the pairs, `*args`)."""
    if site.method == "minimize":
        var_list = arg_value(site.node, 1, "var_list")
        if var_list is None:
            return None
        if isinstance(var_list, (cst.List, cst.Tuple)):
            return [e.value for e in var_list.elements]
        return [var_list]
    if site.method == "apply":  # Keras 3: apply(grads, trainable_variables)
        variables = arg_value(site.node, 1, "trainable_variables")
        return [variables] if variables is not None else None
    pairs = arg_value(site.node, 0, "grads_and_vars")
    if isinstance(pairs, cst.Call) and dotted(pairs.func) == "zip" and len(pairs.args) == 2:
        variables = pairs.args[1].value
        if isinstance(variables, (cst.List, cst.Tuple)):
            return [e.value for e in variables.elements]
        return [variables]
    if isinstance(pairs, (cst.List, cst.Tuple)):
        found: list[cst.BaseExpression] = []
        for element in pairs.elements:
            pair = element.value
            if not isinstance(pair, cst.Tuple) or len(pair.elements) != 2:
                return None
            found.append(pair.elements[1].value)
        return found
    return None


def steps_only_plain_variables(facts: Facts, creation: OptimizerCreation) -> bool:
    """True when every update this optimizer makes (that we can see) steps a bare `tf.Variable` built
    in this module (an image in style transfer, a latent being searched), never a layer's weights."""
    holder = creation.holder
    if holder is None:
        return False
    sites = [c for c in facts.calls if c.method in APPLY_METHODS and c.receiver == holder.target]
    if not sites:
        return False
    for site in sites:
        variables = _stepped_variables(site)
        if not variables:
            return False
        for expr in variables:
            name = dotted(expr)
            if name is None or not isinstance(expr, cst.Name):
                return False
            binding = facts.binding_before(name, site.scope, site.order)
            if binding is None or not isinstance(binding.value, cst.Call) or binding.index is not None:
                return False
            if facts.resolve(binding.value.func) not in _PLAIN_VARIABLES:
                return False
    return True

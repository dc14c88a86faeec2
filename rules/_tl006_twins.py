"""Structural twins: two models built by the same code (the worker and global networks of A3C).

Applying the gradients of one to the variables of the other is that algorithm, not a mismatch: a model
built by one builder function or method, one local `Model` subclass, one constructor call spelled the same
way, or a `clone_model` of the other has variable lists that match one to one. TL006 asks
`structural_twins` before it calls two variable lists a mismatch.
"""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.dataflow import names_in
from tapelint.analysis.facts import Facts, NameUse, Scope, arg_value
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, Value, values
from tapelint.analysis.variable_sets import Part, VariableList


def same_object(a: str, b: str) -> bool:
    """Names that may denote one model: equal, `model`/`self.model`, or `self`/`self.model` (a wrapper)."""
    return a == b or a.endswith("." + b) or b.endswith("." + a) or a.startswith(b + ".") or b.startswith(a + ".")


# `clone_model(m)` builds a model with the architecture of `m`.
_CLONES = frozenset({"keras.models.clone_model"})


def structural_twins(facts: Facts, sources: VariableList, variables: VariableList) -> bool:
    """Are the two lists the weights of different models built by the same code, part by part (same
    collection, same order)? The worker and global networks of A3C: a model built by one builder function
    or method, one local `Model` subclass, or one constructor call spelled the same way, or a
    `clone_model` of the other. Their variable lists match one to one, so applying one's gradients to the
    other is the algorithm, not a mismatch."""
    if len(sources.parts) != len(variables.parts):
        return False
    differ = False
    for a, b in zip(sources.parts, variables.parts):
        if a.kind != b.kind or a.kind == "variable":
            return False
        if same_object(a.key, b.key):
            continue
        builders_a, builders_b = _builders(facts, a), _builders(facts, b)
        if not builders_a or builders_a != builders_b or len(builders_a) != 1:
            return False
        (builder,) = builders_a
        if builder[0] == "builder" and _arguments_differ(facts, a, b):  # type: ignore[index]
            return False  # `make_net(64, 4)` and `make_net(64, 1)`: one builder, two architectures
        differ = True
    return differ


def _arguments_differ(facts: Facts, a: Part, b: Part) -> bool:
    """Do the two builder calls that made the owners of `a` and `b` pass provably different arguments (numbers
    or strings that differ)? Arguments spelled alike, or that cannot be read, are not told apart."""
    call_a, call_b = _origin_call(facts, a), _origin_call(facts, b)
    if call_a is None or call_b is None:
        return False
    resolver = values(facts)
    (node_a, scope_a, order_a), (node_b, scope_b, order_b) = call_a, call_b
    keywords = {arg.keyword.value for arg in (*node_a.args, *node_b.args) if arg.keyword is not None}
    positions = max(len([x for x in node_a.args if x.keyword is None]), len([x for x in node_b.args if x.keyword is None]))
    for position, keyword in [(i, None) for i in range(positions)] + [(None, k) for k in sorted(keywords)]:
        left = arg_value(node_a, position, keyword) if keyword is None else arg_value(node_a, None, keyword)
        right = arg_value(node_b, position, keyword) if keyword is None else arg_value(node_b, None, keyword)
        if left is None or right is None:
            if (left is None) != (right is None):
                return True if _constant(resolver, left or right, scope_a, order_a) is not None else False
            continue
        if _spelled(left) == _spelled(right):
            continue
        value_a, value_b = _constant(resolver, left, scope_a, order_a), _constant(resolver, right, scope_b, order_b)
        if value_a is not None and value_b is not None and value_a != value_b:
            return True
    return False


def _constant(resolver, expr: cst.BaseExpression | None, scope: Scope, order: int) -> object | None:  # type: ignore[no-untyped-def]
    """The one number or string `expr` holds, or None."""
    if expr is None:
        return None
    found = resolver.of(expr, scope, order)
    consts = {v.const for v in found if v.kind is Kind.CONSTANT}
    if len(consts) != 1 or len(found) != len([v for v in found if v.kind is Kind.CONSTANT]):
        return None
    return next(iter(consts))


def _spelled(node: cst.CSTNode) -> str:
    return " ".join(cst.Module([]).code_for_node(node).split())


def _origin_call(facts: Facts, part: Part) -> tuple[cst.Call, Scope, int] | None:
    """The call whose result the owner of `part` holds (`local = make_net(8, 4)`), followed through plain
    assignments, `self.` attributes set once in the class, and parameters with one call site."""
    use = _use_of(facts, part.node)
    if use is None:
        return None
    expr: cst.BaseExpression | None = part.node
    scope, order = use.scope, use.order
    resolver = values(facts)
    for _ in range(8):
        if isinstance(expr, cst.Call):
            return expr, scope, order
        name = dotted(expr) if expr is not None else None
        if name is None:
            return None
        if name.startswith("self.") and scope.class_name is not None:
            holders = [b for b in facts.bindings_of(name) if b.scope.class_name == scope.class_name]
        else:
            holders = resolver.reaching(name, scope, order)
        if not holders:
            function = facts.param_scope(name, scope) if "." not in name else None
            sites = facts.call_sites_of_scope(function) if function is not None else []
            if len(sites) != 1:
                return None
            expr, scope, order = facts.argument_for_param(sites[0].node, function, name), sites[0].scope, sites[0].order  # type: ignore[arg-type]
            continue
        if len(holders) != 1 or holders[0].value is None or holders[0].index is not None or holders[0].augmented:
            return None
        expr, scope, order = holders[0].value, holders[0].scope, holders[0].order
    return None


def _builders(facts: Facts, part: Part) -> frozenset[object] | None:
    """What built the model that owns `part`: one key per value the owner may hold, None when unknown."""
    use = _use_of(facts, part.node)
    if use is None:
        return None
    found = values(facts).of(part.node, use.scope, use.order)
    keys = set()
    for value in found:
        key = _builder(facts, value, 0)
        if key is None:
            return None
        keys.add(key)
    return frozenset(keys)


def _builder(facts: Facts, value: Value, depth: int) -> object | None:
    if value.kind is Kind.MODEL and value.cls in facts.classes:
        return ("class", value.cls)  # a `Model` subclass of this module: its code is the architecture
    if not isinstance(value.node, cst.Call) or depth > 4:
        return None
    call = value.node
    qualified = facts.resolve(call.func)
    if value.kind is Kind.EXTERNAL and qualified in _CLONES:
        site = facts.call_site(call)
        if site is None:
            return None
        inner = values(facts).of(arg_value(call, 0, "model"), site.scope, site.order)
        keys = {_builder(facts, v, depth + 1) for v in inner}
        return next(iter(keys)) if len(keys) == 1 else None
    if value.kind is not Kind.MODEL:
        return None
    site = facts.call_site(call)
    if site is None:
        return None
    # One construction run twice (by a builder), or the same constructor written the same way in one function.
    # A builder whose parameters shape the construction is compared call by call (`_arguments_differ`).
    kind = "builder" if not site.scope.is_module and _reads_parameters(site.scope, call) else "call"
    return (kind, qualified, _spelled(call), id(site.scope))


def _reads_parameters(builder: Scope, construction: cst.Call) -> bool:
    """Does the construction read a parameter of the function that makes it (`self` aside: the class is the
    architecture)?"""
    params = [p for p in builder.params if p not in ("self", "cls")]
    read = names_in(construction)
    return any(p in read or any(n.startswith(p + ".") for n in read) for p in params)


def _use_of(facts: Facts, node: cst.CSTNode) -> NameUse | None:
    index = facts.cached("tl006.uses_by_node", lambda: {id(u.node): u for u in facts.name_uses})
    return index.get(id(node))

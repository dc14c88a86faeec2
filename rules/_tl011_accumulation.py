"""Gradient accumulators: what collects `tape.gradient` results across steps, where it is applied, and
where it is reset.

An accumulator is a name or attribute chain (`accum`, `self.grad_sums`) that gradients are added into:
`acc.assign_add(g)`, `acc[i].assign_add(g)`, `a.assign_add(g)` for `a` iterating over it, `acc[i] += g`,
`acc[i] = acc[i] + g`, or a rebinding that adds the gradients to its old value
(`accum = [a + g for a, g in zip(accum, grads)]`). Gradients are what the value model knows as
`Kind.GRADIENTS`, also through arithmetic, subscripts and a few names. It is applied where the
argument of an apply call (`optimizers.apply_sites`) reads it, and reset by any other write: a
rebinding, `.assign(...)` on it or on its variables (anywhere, through the value model), a store into
it, a method that may change it, or a call we cannot see into that is handed it (counted as a reset,
so that doubt means silence).

`grows_between_applies` says whether an accumulator keeps summing from one application to the next:
its adds and an apply both repeat (a loop, or a function called per step), it is never reset, and
every binding that creates it runs once, outside that repetition. Near misses it stays silent on:
a list created inside the step (micro-batch accumulation), an accumulator created inside the loop, a
rebuild after each application.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tapelint.analysis.blocks import blocks
from tapelint.analysis.closed_world import reachable_from_other_modules
from tapelint.analysis.dataflow import names_in
from tapelint.analysis.facts import Binding, Facts, Scope, arg_value
from tapelint.analysis.names import dotted
from tapelint.analysis.optimizers import ApplySite, apply_sites
from tapelint.analysis.steps import KERAS_STEP_METHODS
from tapelint.analysis.values import Kind, Value, flatten, values
from tapelint.analysis.walk import child_nodes, iter_nodes

# Builtins that read a list without changing it (or what is in it).
_READING_BUILTINS = frozenset({"zip", "enumerate", "len", "range", "list", "tuple", "print", "sum", "iter",
                               "isinstance", "type", "id", "str", "repr", "reversed", "sorted", "any", "all"})
# Methods that only read a variable or a list.
_READING_METHODS = frozenset({"numpy", "read_value", "value", "copy", "index", "count", "__len__"})
# Library functions that add (the operator `+` is found in the tree).
_ADDING = frozenset({"tensorflow.add", "tensorflow.math.add", "tensorflow.add_n", "tensorflow.math.add_n",
                     "keras.ops.add"})
_DEPTH = 3


@dataclass(eq=False)
class Add:
    """One place where gradients are added into an accumulator."""

    node: cst.CSTNode  # the `assign_add` call, the augmented/plain store, or the rebinding statement
    scope: Scope
    order: int


@dataclass(eq=False)
class Accumulator:
    holder: str  # `accum`, `self.grad_sums`
    adds: list[Add] = field(default_factory=list)
    # Bindings of the holder that do not add to it: where it is created (and, if in the loop, rebuilt).
    creations: list[Binding] = field(default_factory=list)
    applies: list[ApplySite] = field(default_factory=list)
    # Other writes that may zero it, rebuild it or change it in ways we cannot follow.
    resets: list[cst.CSTNode] = field(default_factory=list)
    variables: frozenset[Value] = frozenset()  # the `tf.Variable`s it holds, when it holds some


def accumulators(facts: Facts) -> list[Accumulator]:
    """Every accumulator of gradients in the module, with where it is applied and reset."""
    return facts.cached("accumulators", lambda: _Finder(facts).run())


def grows_between_applies(facts: Facts, acc: Accumulator) -> ApplySite | None:
    """The apply call that, step after step, applies the sum of all gradients since `acc` was created:
    the accumulator is never reset, and is created once, outside the loop (or step function) in which
    it is both added to and applied. None when that cannot be shown."""
    if acc.resets or not acc.creations or not acc.adds or not acc.applies:
        return None
    if any(reachable_from_other_modules(facts, c) for c in acc.creations):
        return None  # another module of the project may reset it (tapelint.analysis.closed_world)
    for apply in acc.applies:
        point = (apply.site.scope, apply.site.order)
        if not _repeats(facts, *point):
            continue
        for add in acc.adds:
            if not _repeats(facts, add.scope, add.order):
                continue
            if all(not _in_cycle(facts, c, add.scope, add.order) and not _in_cycle(facts, c, *point)
                   for c in acc.creations):
                return apply
    return None


class _Finder:
    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.v = values(facts)
        self.found: dict[str, Accumulator] = {}

    def run(self) -> list[Accumulator]:
        f = self.f
        if not f.gradient_calls():
            return []
        self._adds()
        if not self.found:
            return []
        for acc in self.found.values():
            self._creations(acc)
            acc.variables = self._variables(acc)
        self._resets()
        for apply in apply_sites(f):
            argument = arg_value(apply.site.node, 0, "grads" if apply.site.method == "apply" else "grads_and_vars")
            if argument is None:
                continue
            for acc in self.found.values():
                if self._reads(argument, apply.site.scope, apply.site.order, acc.holder, _DEPTH):
                    acc.applies.append(apply)
        return list(self.found.values())

    # ------------------------------------------------------------------ adds
    def _adds(self) -> None:
        f = self.f
        for site in f.calls:
            if site.method != "assign_add" or not isinstance(site.node.func, cst.Attribute):
                continue
            delta = arg_value(site.node, 0, "delta")
            if delta is None or not self._carries_gradients(delta, site.scope, site.order, _DEPTH):
                continue
            holder = self._holder_of(site.node.func.value, site.scope, site.order)
            if holder is not None:
                self._acc(holder).adds.append(Add(site.node, site.scope, site.order))
        for store in (*f.augmented_stores, *f.stores):
            holder = _subscripted(store.target)
            if holder is None:
                continue
            if self._is_add(store, holder):
                self._acc(holder).adds.append(Add(store.target, store.scope, store.order))
        for binding in f.bindings:
            value = binding.value
            if value is None or binding.comprehension is not None or id(binding) in f.loop_bindings:
                continue
            if binding.augmented:
                # `acc += g` on a tensor; on a list `+=` extends it, which is no sum of gradients.
                if (isinstance(binding.node, cst.AugAssign) and isinstance(binding.node.operator, cst.AddAssign)
                        and self._carries_gradients(value, binding.scope, binding.order, _DEPTH)):
                    self._acc(binding.target).adds.append(Add(binding.node, binding.scope, binding.order))
                continue
            if binding.path or binding.target not in names_in(value):
                continue
            if _adds_in(f, value) and self._carries_gradients(value, binding.scope, binding.order, _DEPTH):
                self._acc(binding.target).adds.append(Add(binding.node, binding.scope, binding.order))

    def _is_add(self, store, holder: str) -> bool:  # type: ignore[no-untyped-def]
        if store.operator is not None:
            return isinstance(store.operator, cst.AddAssign) and self._carries_gradients(
                store.value, store.scope, store.order, _DEPTH)
        return (holder in names_in(store.value) and _adds_in(self.f, store.value)
                and self._carries_gradients(store.value, store.scope, store.order, _DEPTH))

    def _acc(self, holder: str) -> Accumulator:
        acc = self.found.get(holder)
        if acc is None:
            acc = self.found[holder] = Accumulator(holder)
        return acc

    def _holder_of(self, receiver: cst.BaseExpression, scope: Scope, order: int) -> str | None:
        """What `receiver.assign_add(...)` adds into: `acc`, `acc[i]` -> `acc`, and for `a` bound by
        `for a, g in zip(acc, grads)` (or `enumerate(acc)`, or `for a in acc`) -> `acc`."""
        base = _subscripted(receiver)
        if base is not None:
            return base
        name = dotted(receiver)
        if name is None:
            return None
        reaching = self.v.reaching(name, scope, order)
        loops = [b for b in reaching if id(b) in self.f.loop_bindings]
        if not loops:
            return name
        held = {_iterated(self.f.loop_bindings[id(b)], b.path) for b in loops}
        return held.pop() if len(held) == 1 else None

    # ------------------------------------------------------------------ creations, variables, resets
    def _creations(self, acc: Accumulator) -> None:
        adds = {id(a.node) for a in acc.adds}
        for binding in self._bindings(acc.holder, acc.adds):
            if id(binding.node) in adds:
                continue
            if id(binding) in self.f.loop_bindings or binding.augmented:
                acc.resets.append(binding.node)  # rebound by a loop, or changed in place
                continue
            acc.creations.append(binding)

    def _bindings(self, holder: str, adds: list[Add]) -> list[Binding]:
        """The bindings of the holder that its adds may see (and their scope's other bindings)."""
        f = self.f
        if holder.startswith("self."):
            classes = {a.scope.class_name for a in adds}
            return [b for b in f.bindings_of(holder) if b.scope.class_name in classes]
        found: list[Binding] = []
        scopes: list[Scope] = []
        for add in adds:
            for binding in self.v.reaching(holder, add.scope, add.order):
                if all(binding.scope is not s for s in scopes):
                    scopes.append(binding.scope)
            if all(add.scope is not s for s in scopes):
                scopes.append(add.scope)
        for binding in f.bindings_of(holder):
            if binding.class_body is None and any(binding.scope is s for s in scopes):
                found.append(binding)
        return found

    def _variables(self, acc: Accumulator) -> frozenset[Value]:
        out: set[Value] = set()
        for binding in acc.creations:
            for value in flatten(self.v.binding_values(binding)):
                if value.kind is Kind.VARIABLE and value.node is not None:
                    out.add(value)
        return frozenset(out)

    def _resets(self) -> None:
        f = self.f
        adds = {id(a.node) for acc in self.found.values() for a in acc.adds}
        by_variable = {v: acc for acc in self.found.values() for v in acc.variables}
        for site in f.calls:
            if id(site.node) in adds:
                continue
            func = site.node.func
            if isinstance(func, cst.Attribute) and site.method not in _READING_METHODS:
                receiver = func.value
                holder = dotted(receiver)
                if holder in self.found:
                    self.found[holder].resets.append(site.node)  # `acc.clear()`, `acc.assign(0.0)`
                    continue
                if site.method in ("assign", "assign_sub", "assign_add"):
                    held = self._holder_of(receiver, site.scope, site.order)
                    if held in self.found:
                        self.found[held].resets.append(site.node)
                        continue
                    if by_variable:
                        for value in flatten(self.v.of(receiver, site.scope, site.order)):
                            if value in by_variable:
                                by_variable[value].resets.append(site.node)
            # The accumulator handed to a call that may change it.
            handed = [h for h in (self._argument_holder(a.value) for a in site.node.args) if h in self.found]
            if handed and not self._only_reads(site):
                for holder in handed:
                    self.found[holder].resets.append(site.node)
        for store in (*f.augmented_stores, *f.stores):
            holder = _subscripted(store.target) or dotted(store.target)
            if holder in self.found and id(store.target) not in adds:
                self.found[holder].resets.append(store.target)

    def _argument_holder(self, expr: cst.BaseExpression) -> str | None:
        return _subscripted(expr) or dotted(expr)

    def _only_reads(self, site) -> bool:  # type: ignore[no-untyped-def]
        if any(s.site is site for s in apply_sites(self.f)):
            return True
        if any(isinstance(a.value, cst.Lambda) for a in site.node.args):
            return False
        if site.func in _READING_BUILTINS and not self.f.definitions.get(site.func):
            return True
        qualified = site.qualified
        if qualified is None or "assign" in qualified:
            return False
        if not qualified.startswith(("tensorflow.", "keras.", "numpy.")):
            return False
        # A library function given a callable (`tf.nest.map_structure(reset, acc)`) may change it.
        return not any(v.kind is Kind.FUNCTION for a in site.node.args
                       for v in self.v.of(a.value, site.scope, site.order))

    # ------------------------------------------------------------------ following values
    def _carries_gradients(self, expr: cst.BaseExpression, scope: Scope, order: int, depth: int) -> bool:
        """Is `expr` computed from what a `tape.gradient` call returned (its list, an element, a
        clipped or scaled copy)?"""
        return self._search(expr, scope, order, depth, self._is_gradients)

    def _is_gradients(self, node: cst.BaseExpression, scope: Scope, order: int) -> bool:
        return any(v.kind is Kind.GRADIENTS for v in flatten(self.v.of(node, scope, order)))

    def _reads(self, expr: cst.BaseExpression, scope: Scope, order: int, holder: str, depth: int) -> bool:
        """Does `expr` read the holder, directly or through names bound from it?"""
        return self._search(expr, scope, order, depth, lambda node, s, o: dotted(node) == holder)

    def _search(self, expr, scope, order, depth, hit) -> bool:  # type: ignore[no-untyped-def]
        """Walk `expr` (not into lambdas); `hit` is asked about names, attribute chains, subscript
        bases and calls; names it rejects are followed to the bindings they see, `depth` deep."""
        pending: list[tuple[cst.CSTNode, int]] = [(expr, order)]
        followed: list[tuple[cst.CSTNode, int]] = []
        while pending:
            node, at = pending.pop()
            if isinstance(node, cst.Lambda):
                continue
            span = self.f.comprehension_spans.get(id(node))
            if span is not None:
                at = span[0] + 1  # reads in a comprehension see its own targets
            if (type(node) is cst.Name or type(node) is cst.Attribute) and dotted(node) is not None:
                if hit(node, scope, at):
                    return True
                followed.append((node, at))
                continue
            if isinstance(node, (cst.Call, cst.Subscript)) and hit(node, scope, at):
                return True
            if isinstance(node, cst.Subscript) and hit(node.value, scope, at):
                return True
            for child in child_nodes(node):
                if isinstance(node, cst.Attribute) and child is node.attr:
                    continue
                pending.append((child, at))
        if depth <= 0:
            return False
        for node, at in followed:
            name = dotted(node)  # type: ignore[arg-type]
            for binding in self.v.reaching(name, scope, at) if name else ():
                source = self.f.loop_bindings.get(id(binding)) or binding.source or binding.value
                if source is not None and self._search(source, binding.scope, binding.order, depth - 1, hit):
                    return True
        return False


def _subscripted(expr: cst.BaseExpression) -> str | None:
    """`acc` for `acc[i]` (and `self.acc[k]`)."""
    if isinstance(expr, cst.Subscript):
        return dotted(expr.value)
    return None


def _iterated(iterable: cst.BaseExpression, path: tuple[int, ...]) -> str | None:
    """The name a loop target at `path` iterates over: `acc` in `for a, g in zip(acc, grads)` (path 0),
    `for i, a in enumerate(acc)` (path 1), `for a in acc`."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and path:
        if iterable.func.value == "zip":
            positional = [a for a in iterable.args if a.keyword is None and not a.star]
            if 0 <= path[0] < len(positional):
                return _iterated(positional[path[0]].value, path[1:])
            return None
        if iterable.func.value == "enumerate" and path[0] == 1:
            first = arg_value(iterable, 0)
            return _iterated(first, path[1:]) if first is not None else None
        return None
    if path:
        return None
    return dotted(iterable)


def _adds_in(facts: Facts, expr: cst.BaseExpression) -> bool:
    """Does `expr` add something (`a + g`, `tf.add(a, g)`, `tf.add_n([...])`), lambdas included?"""
    for node in iter_nodes(expr):
        if type(node) is cst.BinaryOperation and type(node.operator) is cst.Add:
            return True
        if type(node) is cst.Call and facts.resolve(node.func) in _ADDING:
            return True
    return False


# ---------------------------------------------------------------------- repetition
def _repeats(facts: Facts, scope: Scope, order: int, depth: int = 3) -> bool:
    """Does the code at `order` run again and again: in a loop, or in a function that runs per step
    (Keras' `train_step`, or one called from a loop or from such a function)?"""
    if blocks(facts).loops_enclosing(order):
        return True
    return _function_repeats(facts, scope, depth)


def _function_repeats(facts: Facts, scope: Scope, depth: int) -> bool:
    if scope.is_module or depth < 0:
        return False
    if scope.class_name is not None and scope.simple_name in KERAS_STEP_METHODS:
        return True
    return any(_repeats(facts, site.scope, site.order, depth - 1) for site in facts.call_sites_of_scope(scope))


def _in_cycle(facts: Facts, creation: Binding, scope: Scope, order: int) -> bool:
    """May `creation` run again between two runs of the code at (`scope`, `order`)? Unknown counts
    as yes."""
    spans = blocks(facts)
    where = creation.scope
    if where is scope:
        loops = spans.loops_enclosing(order)
        if not loops:
            return True  # both in one function body that runs per step
        return any(loop.encloses(creation.order) for loop in loops)
    if where.contains(scope):
        # The code runs in a function nested in the creation's; where that function is called from.
        runs = facts.runs_at(scope, where)
        if not runs:
            return True
        return any(loop.encloses(creation.order) for run in runs for loop in spans.loops_enclosing(run))
    if scope.contains(where):
        return True  # created in a helper nested in the step: cannot tell when it runs
    if where.is_module:
        loops = spans.loops_enclosing(creation.order)
        if not loops:
            return False
        runs = facts.runs_at(scope, where) if not scope.is_module else []
        return not runs or any(loop.encloses(run) for run in runs for loop in loops)
    if where.class_name is not None and where.simple_name in ("__init__", "build"):
        return False  # once per object
    sites = facts.call_sites_of_scope(where)
    if not sites:
        return True
    return any(spans.loops_enclosing(s.order) or s.scope is scope or _function_repeats(facts, s.scope, 2)
               for s in sites)

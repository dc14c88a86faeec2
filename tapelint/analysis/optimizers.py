"""Optimizer objects from creation to use: where each is held and whether it is ever applied.

An optimizer is "applied" when `apply_gradients`, `apply` or `minimize` is reached with it, or when it
is handed to something that applies it (`model.compile(optimizer=...)`, a function of this module
that applies its parameter, a `LossScaleOptimizer` wrapper, an unknown callee we cannot see into).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.closed_world import reachable_from_other_modules
from tapelint.analysis.facts import Binding, CallSite, Facts, Scope, arg_value
from tapelint.analysis.models import compiles
from tapelint.analysis.values import UNKNOWN, Kind, Value, flatten, is_unknown, last_assignment, values
from tapelint.analysis.vocabulary import APPLY_METHODS, VARIABLE_CLASSES, optimizer_class


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
            if type(binding.value) is cst.Call and binding.index is None:
                by_value[id(binding.value)] = binding
        found = []
        for site in facts.calls:
            cls = optimizer_class(site.qualified)
            if cls is None:
                continue
            found.append(OptimizerCreation(site, cls, site.qualified or cls, by_value.get(id(site.node))))
        return found

    return facts.cached("optimizer_creations", compute)


@dataclass(eq=False)
class ApplySite:
    """One `opt.apply_gradients(...)` / `opt.apply(...)` / `opt.minimize(...)` call."""

    site: CallSite
    optimizers: frozenset[Value]  # what the receiver may be
    variables: frozenset[Value]  # what it steps (UNKNOWN when it cannot be read)
    gradients: frozenset[Value] = frozenset()  # what it applies (GRADIENTS values say which tape call)


_NOT_OPTIMIZERS = frozenset({Kind.CONSTANT, Kind.CONTAINER, Kind.NONE, Kind.MODEL, Kind.LAYER, Kind.LOSS,
                             Kind.METRIC, Kind.TAPE, Kind.VARIABLE, Kind.WEIGHTS, Kind.SCHEDULE, Kind.DATASET})


def apply_sites(facts: Facts) -> list[ApplySite]:
    """Every call that may step variables with an optimizer, with what the receiver may be.
    `df.apply(f)` on a DataFrame is not one: a receiver known to be something else is left out."""

    def compute() -> list[ApplySite]:
        resolver = values(facts)
        found = []
        for site in facts.calls:
            if site.method not in APPLY_METHODS or not isinstance(site.node.func, cst.Attribute):
                continue
            receiver = resolver.of(site.node.func.value, site.scope, site.order)
            if all(v.kind in _NOT_OPTIMIZERS or (v.kind is Kind.EXTERNAL and not _library_optimizer(v))
                   for v in receiver):
                continue
            found.append(ApplySite(site, receiver, stepped_variables(facts, site), _applied(facts, site)))
        return found

    return facts.cached("apply_sites", compute)


def _library_optimizer(value: Value) -> bool:
    return bool(value.cls) and value.cls.startswith(("keras.optimizers", "keras.mixed_precision"))  # type: ignore[union-attr]


def stepped_variables(facts: Facts, site: CallSite, tf1: bool = False) -> frozenset[Value]:
    """The variables an apply call steps (`zip(grads, vs)`, `[(g, v), ...]`, `apply(grads, vs)`, `var_list=`).
    `tf1`: the receiver is a TF 1 optimizer, whose `minimize(loss, global_step, var_list)` takes them third."""
    if site.method == "minimize":
        return values(facts).of(arg_value(site.node, 2 if tf1 else 1, "var_list"), site.scope, site.order)
    if site.method == "apply":  # Keras 3: apply(grads, trainable_variables)
        return values(facts).of(arg_value(site.node, 1, "trainable_variables"), site.scope, site.order)
    return _pair_side(facts, site, 1)


def _applied(facts: Facts, site: CallSite) -> frozenset[Value]:
    """The gradients an apply call applies."""
    if site.method == "minimize":
        return frozenset()
    if site.method == "apply":
        return values(facts).of(arg_value(site.node, 0, "grads"), site.scope, site.order)
    return _pair_side(facts, site, 0)


def _pair_side(facts: Facts, site: CallSite, side: int) -> frozenset[Value]:
    """One side (0: gradients, 1: variables) of the pairs given to `apply_gradients`."""
    resolver = values(facts)
    pairs = resolver.of(arg_value(site.node, 0, "grads_and_vars"), site.scope, site.order)
    out: set[Value] = set()
    for pair in resolver.elements(pairs):
        if pair.kind is not Kind.CONTAINER or len(pair.items) != 2:
            return UNKNOWN
        out |= pair.items[side]
    return frozenset(out) or UNKNOWN


def applies_gradients_of(facts: Facts, call: cst.CSTNode) -> list[ApplySite]:
    """The apply calls that apply what the gradient call `call` returned (through names, `zip`,
    clipping, comprehensions and lists)."""
    return [a for a in apply_sites(facts) if any(v.kind is Kind.GRADIENTS and v.node is call
                                                 for v in flatten(a.gradients))]


class Fate(str, enum.Enum):
    APPLIED = "applied"  # an apply call may step with it
    UNUSED = "unused"  # nothing ever reads it after it is made
    NEVER_APPLIED = "never-applied"  # it is read, but no apply call can reach it
    UNKNOWN = "unknown"  # it leaves our sight (a library call, a container we cannot follow, another module...)
    REPLACED = "replaced"  # its name is bound to something else before anything reads it: of no consequence


# Builtins that look at an object without keeping it.
_INSPECTING = frozenset({"print", "len", "isinstance", "type", "id", "str", "repr", "hasattr", "format", "vars",
                         "issubclass", "callable", "dir", "hash", "bool"})


class _AppliesByOptimizer:
    """The apply sites (in document order) under each optimizer value their receiver may hold, so that a
    question about one optimizer does not scan every apply site of the file (once per optimizer made)."""

    def __init__(self, facts: Facts) -> None:
        self.by_value: dict[Value, list[tuple[ApplySite, set[Value]]]] = {}
        self.any_unknown = False
        for apply in apply_sites(facts):
            held = set(flatten(apply.optimizers))
            for value in held:
                self.by_value.setdefault(value, []).append((apply, held))
            if is_unknown(held):
                self.any_unknown = True


def _applies_by_optimizer(facts: Facts) -> _AppliesByOptimizer:
    return facts.cached("applies_by_optimizer", lambda: _AppliesByOptimizer(facts))


def optimizer_fate(facts: Facts, creation: "OptimizerCreation") -> Fate:
    """What becomes of the optimizer made at `creation`."""
    me = Value(Kind.OPTIMIZER, id(creation.node), creation.node, cls=creation.qualified)
    applies = _applies_by_optimizer(facts)
    if me in applies.by_value:
        return Fate.APPLIED
    unknown_receiver = applies.any_unknown
    if reachable_from_other_modules(facts, creation.holder):
        return Fate.UNKNOWN
    if not _read_later(facts, creation):
        return Fate.UNUSED  # never read after it is made: it cannot have gone anywhere
    if _replaced_before_read(facts, creation.holder):
        return Fate.REPLACED
    if _escapes(facts, me):
        return Fate.UNKNOWN
    return Fate.UNKNOWN if unknown_receiver else Fate.NEVER_APPLIED


def _replaced_before_read(facts: Facts, holder: Binding | None) -> bool:
    """Is the name `holder` binds bound again before any read sees this binding (`opt = SGD()` ... `opt =
    Adam()` before training)? Reads from other functions are not judged (when they run is unknown)."""
    if holder is None or "." in holder.target:
        return False
    if not any(b.order > holder.order for b in facts.bindings_here(holder.target, holder.scope)):
        return False
    name = holder.target
    for use in facts.uses_after(name, holder.scope, holder.order):
        if use.scope is not holder.scope:
            if any(facts.is_param(name, s) or facts.bindings_here(name, s) for s in use.scope.chain()
                   if s is not holder.scope and holder.scope.contains(s)):
                continue  # a local of the function (`def train(model, opt)`): another variable
            return False
        if last_assignment(facts, name, use.scope, use.order) is holder:
            return False
    return True


def _escapes(facts: Facts, me: Value) -> bool:
    """Can the optimizer reach code we do not see: a library call, a caller we do not know, a
    subscript or another object's attribute?"""
    resolver = values(facts)

    def holds(expr: cst.BaseExpression | None, scope: Scope, order: int) -> bool:
        return expr is not None and me in set(flatten(resolver.of(expr, scope, order)))

    for site in facts.calls:
        if site.func in _INSPECTING:
            continue
        if site.method in APPLY_METHODS:
            continue  # the apply call itself: its receiver was judged above
        if not site.node.args:
            continue
        callee = resolver.of(site.node.func, site.scope, site.order)
        local = all(v.kind in (Kind.FUNCTION, Kind.CLASS) and isinstance(v.node, (cst.FunctionDef, cst.ClassDef))
                    for v in callee)
        if local and not any(a.star for a in site.node.args):
            continue  # followed through the parameters
        if any(holds(arg.value, site.scope, site.order) for arg in site.node.args):
            return True
    for ret in facts.returns:
        if ret.scope.is_module or ret.value is None:
            continue
        if not resolver.call_sites(ret.scope) and holds(ret.value, ret.scope, ret.order):
            return True
    for store in facts.stores:
        if holds(store.value, store.scope, store.order):
            return True
    for binding in facts.bindings:
        target = binding.target
        if "." in target and not target.startswith("self.") and binding.value is not None:
            if holds(binding.value, binding.scope, binding.order):
                return True
    return False


def _read_later(facts: Facts, creation: "OptimizerCreation") -> bool:
    """Is the name or attribute that holds the optimizer ever read?"""
    holder = creation.holder
    if holder is None:
        return True  # used where it is made: an argument, a return value, an element
    target = holder.target
    if target.startswith("self."):
        attr = target[len("self."):]
        for use in facts.name_uses:
            if use.node is holder.target_node:
                continue
            if use.name == target or use.name.startswith(target + ".") or (
                    "." in use.name and use.name.split(".")[-1] == attr.split(".")[0]):
                return True
        return False
    return bool(facts.uses_after(target, holder.scope, holder.order))


def trained_models(facts: Facts, creation: OptimizerCreation) -> frozenset[Value] | None:
    """The models and layers whose weights this optimizer steps (through its apply calls, or
    `model.compile(optimizer=...)`), or None when any of that cannot be read."""
    me = Value(Kind.OPTIMIZER, id(creation.node), creation.node, cls=creation.qualified)
    resolver = values(facts)
    found: set[Value] = set()
    for apply in apply_sites(facts):
        if me not in set(flatten(apply.optimizers)):
            continue
        for value in flatten(apply.variables):
            if value.kind is Kind.CONTAINER:
                continue
            if value.kind is Kind.VARIABLE and value.owner:
                value = next(iter(value.owner))
            if value.kind is not Kind.WEIGHTS:
                return None
            owners = set(flatten(value.owner))
            if not owners or any(o.kind not in (Kind.MODEL, Kind.LAYER) for o in owners):
                return None
            found |= owners
    for compiled in compiles(facts):
        site = compiled.site
        if me in set(flatten(resolver.of(compiled.optimizer, site.scope, site.order))):
            owners = set(compiled.models)
            if any(o.kind not in (Kind.MODEL, Kind.LAYER) for o in owners):
                return None
            found |= {o for o in owners if not _train_step_ignores_optimizer(facts, o.cls)}
    return frozenset(found) or None


def _train_step_ignores_optimizer(facts: Facts, cls: str | None) -> bool:
    """A local model class whose own `train_step` never touches `self.optimizer`: what `compile()`
    was given never steps anything (the step trains with optimizers of its own)."""
    seen: set[str] = set()
    while cls is not None and cls in facts.classes and cls not in seen:
        seen.add(cls)
        info = facts.classes[cls]
        step = info.methods.get("train_step")
        if step is not None:
            return not any(
                (use.name == "self.optimizer" or use.name.startswith("self.optimizer."))
                and use.scope.class_name == cls for use in facts.name_uses
            )
        cls = next((b for b in info.bases if b in facts.classes), None)
    return False




def steps_only_plain_variables(facts: Facts, creation: OptimizerCreation) -> bool:
    """True when every update this optimizer makes (that we can see) steps a bare `tf.Variable` built
    in this module (an image in style transfer, a latent being searched), never a layer's weights."""
    me = Value(Kind.OPTIMIZER, id(creation.node), creation.node, cls=creation.qualified)
    stepped = [a for a in apply_sites(facts) if me in set(flatten(a.optimizers))]
    if not stepped:
        return False
    for apply in stepped:
        variables = set(flatten(apply.variables))
        plain = [v for v in variables if v.kind is Kind.VARIABLE and v.cls in VARIABLE_CLASSES]
        rest = [v for v in variables if v.kind is not Kind.CONTAINER and v not in plain]
        if not plain or rest:
            return False
    return True


@dataclass(eq=False)
class OptimizerStep:
    """One place where an optimizer steps variables: an apply call, or `model.compile(optimizer=...)`
    (what `fit`/`train_on_batch` then step), with the variable sets it steps."""

    node: cst.Call
    # Each set is the models/layers (or bare `tf.Variable`s) whose variables one application steps.
    sets: tuple[frozenset[Value], ...]


def conflicting_sets(steps: list[OptimizerStep], where):  # type: ignore[no-untyped-def]
    """The first two variable sets of `steps` of which neither contains the other, in the order `where`
    gives the sets of one step (each with its step; the later one second), or None."""
    seen: list[tuple[OptimizerStep, frozenset[Value]]] = []
    for step in steps:
        for one in sorted(step.sets, key=where):
            for earlier, other in seen:
                if not (one <= other or other <= one):
                    return (earlier, other), (step, one)
            seen.append((step, one))
    return None


def steps_several_networks(facts: Facts, creation: OptimizerCreation) -> bool:
    """Does the optimizer made at `creation` step the variables of more than one network with its apply
    calls (one concatenated set of two models, or two sets of which neither holds the other)? False when
    that cannot be read."""
    steps = optimizer_steps(facts, creation, compiled=False)
    if not steps:
        return False
    if any(len(one) >= 2 for step in steps for one in step.sets):
        return True
    return conflicting_sets(steps, len) is not None


def optimizer_steps(facts: Facts, creation: OptimizerCreation, compiled: bool = True) -> list[OptimizerStep] | None:
    """Where the optimizer made at `creation` steps which variables, for the applications that reach
    this one optimizer only (an apply call whose receiver may also be another optimizer is left out),
    and (with `compiled`) the models it is given to with `compile()`.

    When the optimizer object is made once (a module-level or run-once creation, not in a loop), a call
    whose variables may be one model or another (a parameter passed `g` and then `d`, a loop over
    models) steps each of them separately: each is its own set. Otherwise (an optimizer per instance,
    per call) a call's alternatives are merged into one set. A concatenation
    (`g.trainable_variables + d.trainable_variables`) is always one set. None when the variables of a
    step cannot be read."""
    me = Value(Kind.OPTIMIZER, id(creation.node), creation.node, cls=creation.qualified)
    once = _made_once(facts, creation)
    resolver = values(facts)
    found: list[OptimizerStep] = []
    for apply, held in _applies_by_optimizer(facts).by_value.get(me, ()):
        if held != {me}:
            continue  # may be another optimizer too: which one steps what cannot be told
        sets = _variable_sets(facts, apply.variables)
        if sets is None:
            return None
        found.append(OptimizerStep(apply.site.node, tuple(sets) if once else (frozenset().union(*sets),)))
    for site in [c.site for c in compiles(facts)] if compiled else ():
        assert isinstance(site.node.func, cst.Attribute)
        given = set(flatten(resolver.of(arg_value(site.node, 0, "optimizer"), site.scope, site.order)))
        if me not in given:
            continue
        if given != {me}:
            continue
        owners = resolver.of(site.node.func.value, site.scope, site.order)
        if not owners or any(o.kind not in (Kind.MODEL, Kind.LAYER) for o in owners):
            return None
        owners = frozenset(o for o in owners if not _train_step_ignores_optimizer(facts, o.cls))
        if not owners:
            continue
        sets = [frozenset({o}) for o in owners] if once else [owners]
        found.append(OptimizerStep(site.node, tuple(sets)))
    return found


def _made_once(facts: Facts, creation: OptimizerCreation) -> bool:
    """Is one optimizer object made here for the whole program (not per call, instance or iteration)?"""
    site = creation.site
    if site.loop_depth or creation.holder is None or creation.holder.target.startswith("self."):
        return False
    scope = site.scope
    while not scope.is_module:
        if scope.class_name is not None or len(values(facts).call_sites(scope)) > 1:
            return False
        if any(s.loop_depth for s in values(facts).call_sites(scope)):
            return False
        scope = scope.parent or facts.module_scope
    return True


def _variable_sets(facts: Facts, stepped: frozenset[Value]) -> list[frozenset[Value]] | None:
    """The variable sets behind the values an apply call steps: the owners of `x.trainable_variables`
    (one set per alternative owner, since `x` is one of them at a time, unless the alternatives are
    models bound to one name, as when a notebook rebuilds `model`), the owners of a sum of such lists
    together, and the bare variables of a list together."""
    sets: list[frozenset[Value]] = []
    plain: set[Value] = set()
    for value in stepped:
        if value.kind is Kind.VARIABLE and value.owner:
            weights = [w for w in value.owner if w.kind is Kind.WEIGHTS]
            if len(weights) != len(value.owner):
                return None
            for w in weights:
                found = _owner_sets(facts, w)
                if found is None:
                    return None
                sets.extend(found)
        elif value.kind is Kind.WEIGHTS:
            found = _owner_sets(facts, value)
            if found is None:
                return None
            sets.extend(found)
        elif value.kind is Kind.VARIABLE and isinstance(value.node, cst.Call):
            plain.add(value)
        elif value.kind is Kind.CONTAINER:
            for item in value.items:
                inner = _variable_sets(facts, item)
                if inner is None:
                    return None
                for one in inner:
                    plain |= one
        else:
            return None
    if plain:
        sets.append(frozenset(plain))
    unique: list[frozenset[Value]] = []
    for one in sets:
        if one not in unique:
            unique.append(one)
    return unique or None


def _owner_sets(facts: Facts, weights: Value) -> list[frozenset[Value]] | None:
    owners = frozenset(flatten(weights.owner))
    if not owners or any(o.kind not in (Kind.MODEL, Kind.LAYER) for o in owners):
        return None
    if isinstance(weights.node, cst.BinaryOperation):
        return [owners]  # `g.trainable_variables + d.trainable_variables`: one list, stepped together
    names = {b.target for o in owners if isinstance(o.node, cst.Call) for b in facts.bindings_of_value(o.node)}
    if len(owners) > 1 and len(names) == 1 and all(
            isinstance(o.node, cst.Call) and facts.bindings_of_value(o.node) for o in owners):
        return [owners]  # one name rebound (`model = ...` in two cells): a rebuild, not two networks
    return [frozenset({o}) for o in owners]


def builds_with_all_variables(facts: Facts, creation: OptimizerCreation) -> bool:
    """Is `optimizer.build(variables)` called on this optimizer (or on something we cannot tell apart
    from it)? Keras 3 then accepts any subset of those variables in later apply calls."""
    me = Value(Kind.OPTIMIZER, id(creation.node), creation.node, cls=creation.qualified)
    resolver = values(facts)
    for site in facts.calls:
        if site.method != "build" or not isinstance(site.node.func, cst.Attribute):
            continue
        receiver = set(flatten(resolver.of(site.node.func.value, site.scope, site.order)))
        if me in receiver or is_unknown(receiver):
            return True
    return False


@dataclass(eq=False)
class OptimizerUse:
    """A call that runs an optimizer, as seen from the scope it is made in: `compile(optimizer=...)`
    ("compile"), `fit`/`train_on_batch` ("fit": they run what `compile()` built), an apply call
    ("apply"), or a call of a function of this module that reaches apply calls ("helper").

    `optimizers` says which optimizer objects run, by the value model: the optimizer values an apply
    call's receiver may hold (for a helper's apply call on its parameter, what this call passes it). What
    the value model cannot tell adds nothing: that use matches no other. "compile" and "fit" uses carry
    the one marker COMPILED: what `compile()` builds is not told apart by model."""

    site: CallSite
    kind: str
    optimizers: tuple[object, ...]


COMPILED = "<compile>"


def optimizer_uses(facts: Facts, scope: Scope) -> list[OptimizerUse]:
    """The optimizer uses of the calls made in `scope` itself (not in functions nested in it), in
    document order (a call that both compiles and applies gives its compile use first, then its apply
    use, then its helper use). A call `f(...)` of a module-level function `f` uses the optimizers of
    every apply call inside `f` (nested functions included). Computed once per scope."""
    index = facts.cached("optimizer_uses", lambda: _OptimizerUses(facts))
    return index.of(scope)


class _OptimizerUses:
    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.by_scope: dict[int, list[OptimizerUse]] = {}
        self.calls: dict[int, list[CallSite]] = {}
        for site in facts.calls:
            self.calls.setdefault(id(site.scope), []).append(site)
        self.compiled = {id(c.site) for c in compiles(facts) if c.optimizer is not None}
        self.applies: dict[int, ApplySite] = {}
        # The apply calls inside each function (to any depth), in document order.
        self.inside: dict[int, list[ApplySite]] = {}
        for apply in apply_sites(facts):
            if apply.site.receiver is None:
                continue  # `f().apply(...)`: nothing to name it by in a message
            self.applies[id(apply.site)] = apply
            scope: Scope | None = apply.site.scope
            while scope is not None and not scope.is_module:
                self.inside.setdefault(id(scope), []).append(apply)
                scope = scope.parent

    def of(self, scope: Scope) -> list[OptimizerUse]:
        found = self.by_scope.get(id(scope))
        if found is None:
            found = self.by_scope[id(scope)] = self._uses(scope)
        return found

    def _uses(self, scope: Scope) -> list[OptimizerUse]:
        f = self.f
        out: list[OptimizerUse] = []
        for site in self.calls.get(id(scope), ()):
            if id(site) in self.compiled:
                out.append(OptimizerUse(site, "compile", (COMPILED,)))
            elif site.method in ("fit", "train_on_batch") and site.receiver is not None:
                out.append(OptimizerUse(site, "fit", (COMPILED,)))
            apply = self.applies.get(id(site))
            if apply is not None and site.receiver is not None:
                out.append(OptimizerUse(site, "apply", _identities(apply.optimizers)))
            callee = f.functions.get(site.func or "")
            inner = self.inside.get(id(callee)) if callee is not None else None
            if inner:
                out.append(OptimizerUse(site, "helper", tuple(
                    key for apply in inner for key in self._passed(site, callee, apply))))  # type: ignore[arg-type]
        return out

    def _passed(self, site: CallSite, callee: Scope, apply: ApplySite) -> tuple[object, ...]:
        """The optimizers `apply` (inside `callee`) runs when `site` calls `callee`."""
        receiver = apply.site.receiver
        assert receiver is not None
        root = receiver.split(".")[0]
        if root not in callee.params:
            return _identities(apply.optimizers)
        passed = self.f.argument_for_param(site.node, callee, root)
        if passed is None or root != receiver:
            # Nothing passed, or an attribute of what is passed (`trainer.opt`): the apply call's own answer.
            return _identities(apply.optimizers if passed is not None else UNKNOWN)
        return _identities(values(self.f).of(passed, site.scope, site.order))


def _identities(held: frozenset[Value]) -> tuple[object, ...]:
    """The optimizer objects a receiver may hold, for telling uses of one optimizer apart from another's.
    What the value model cannot tell is no identity: a use of it matches no other use (never a guess from
    how the receiver is spelled)."""
    return tuple(v for v in flatten(held) if v.kind is not Kind.CONTAINER and v.kind is not Kind.UNKNOWN)

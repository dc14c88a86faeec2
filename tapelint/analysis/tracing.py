"""Which functions run traced by `tf.function`, from which entry, and how often the entries are called.

An *entry* is one `tf.function` object: a def decorated `@tf.function` / `@tf.function(...)`, a function
or method wrapped by `tf.function(g)` / `tf.function(self.step)`, or a Keras `train_step` /
`test_step` / `predict_step` override, which Keras 3 `fit`/`evaluate`/`predict` run inside a
`tf.function` unless the model is compiled with `run_eagerly=True` (measured on Keras 3.15 / TF 2.21:
a `train_step` body ran 2 times in Python over 16 batches; with `run_eagerly=True` 16 times). A Keras
step counts only when this file compiles an instance of that class without `run_eagerly` (an unknown
compile setting, another backend or no compile in sight is unknown, not traced).

`traced(facts)` gives every scope whose Python body runs only while an entry is traced: the entries,
the functions nested in them, and the functions and methods of the file they call, transitively (found
with the value model, never by name). `entry_runs` says how often an entry's Python callers run it
(ONCE, MANY or UNKNOWN); `python_number` and `changes_per_iteration` say whether an argument is a Python
int/float, and whether it takes a new value on each iteration of a loop (each new value is a new trace).
`tf.config.run_functions_eagerly(True)` anywhere in the file makes everything unknown.
"""

from __future__ import annotations

from collections import deque

import enum
from dataclasses import dataclass, field

import libcst as cst

from tapelint.analysis.blocks import Span, blocks
from tapelint.analysis.facts import TF_FUNCTION, CallSite, Facts, Scope, arg_value, keyword_arg
from tapelint.analysis.keras import WEIGHTED_LAYERS
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, values, values_of
from tapelint.analysis.models import compiles

KERAS_TRACED_STEPS = frozenset({"train_step", "test_step", "predict_step"})
_EAGER_SWITCHES = frozenset({"tensorflow.config.run_functions_eagerly",
                             "tensorflow.config.experimental_run_functions_eagerly"})
# Builtins that always give back a Python number, and those that do when their arguments are numbers.
_TO_NUMBER = frozenset({"int", "float", "len"})
_NUMBER_OF_NUMBERS = frozenset({"round", "abs", "min", "max", "pow"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power, cst.Modulo)


class Runs(str, enum.Enum):
    ONCE = "once"
    MANY = "many"
    UNKNOWN = "unknown"


@dataclass(eq=False)
class Entry:
    """One `tf.function` object (or a Keras traced step)."""

    scope: Scope  # the Python function whose body is traced
    how: str  # "decorated" | "wrapped" | "keras"
    node: cst.CSTNode  # the decorator, the `tf.function(...)` call, or the method's def
    wrapper: cst.Call | None = None  # `tf.function(...)` as a call: its options are read from it
    order: int = 0  # where the function object is made (the def, or the wrapping call)
    creation_scope: Scope | None = None

    @property
    def input_signature(self) -> bool:
        return self.wrapper is not None and keyword_arg(self.wrapper, "input_signature") is not None

    @property
    def reduce_retracing(self) -> bool:
        arg = keyword_arg(self.wrapper, "reduce_retracing") if self.wrapper is not None else None
        return arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "False")


@dataclass(eq=False)
class Traced:
    """A scope that runs traced, and how it is reached."""

    scope: Scope
    entry: Entry
    # The calls from the entry down to this scope (empty for the entry itself and its nested defs).
    via: tuple[CallSite, ...] = ()
    # Reached through calls none of which sits under an `if` of its caller.
    unguarded: bool = True


@dataclass
class Tracing:
    entries: list[Entry] = field(default_factory=list)
    scopes: dict[int, Traced] = field(default_factory=dict)
    eager_switch: bool = False
    # Answers of `traced_scope`, `entry_calls` and `entry_runs`, by id of the scope or entry (both live
    # as long as the `Facts` that holds this): rules ask them for every binding, call and read.
    around: dict[int, Traced | None] = field(default_factory=dict)
    calls_of: dict[int, list[CallSite]] = field(default_factory=dict)
    runs_of: dict[int, Runs] = field(default_factory=dict)


def _eager_switched(facts: Facts) -> bool:
    for site in facts.calls:
        if site.qualified in _EAGER_SWITCHES:
            value = arg_value(site.node, 0, "run_eagerly")
            if not (isinstance(value, cst.Name) and value.value == "False"):
                return True
    return False


def _keras_backend_not_tf(facts: Facts) -> bool:
    """`os.environ["KERAS_BACKEND"] = "jax"`: Keras steps are then jitted by another framework."""
    for store in facts.stores:
        target = store.target
        if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
            continue
        index = target.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) \
                and index.value.evaluated_value == "KERAS_BACKEND":
            value = store.value
            if not (isinstance(value, cst.SimpleString) and value.evaluated_value == "tensorflow"):
                return True
    return False


def keras_step_traced(facts: Facts, scope: Scope) -> bool | None:
    """For a `train_step`/`test_step`/`predict_step` method of a local Keras model class: True when this
    file compiles an instance of the class without `run_eagerly` (Keras then traces the step), False
    when it compiles it with `run_eagerly=True`, None when that cannot be told."""
    if scope.class_name is None or scope.simple_name not in KERAS_TRACED_STEPS:
        return None
    resolver = values(facts)
    if resolver.class_kind(scope.class_name) is not Kind.MODEL:
        return None
    if _keras_backend_not_tf(facts) or any(b.target.endswith(".run_eagerly") for b in facts.bindings):
        return None
    classes = _subclasses(facts, scope.class_name, scope.simple_name)
    verdicts: set[bool | None] = set()
    for compiled in compiles(facts):
        if not any(v.kind is Kind.MODEL and v.cls in classes for v in compiled.models):
            continue
        eager = compiled.keyword("run_eagerly")
        if eager is None or (isinstance(eager.value, cst.Name) and eager.value.value == "False"):
            verdicts.add(True)
        elif isinstance(eager.value, cst.Name) and eager.value.value == "True":
            verdicts.add(False)
        else:
            verdicts.add(None)
    if len(verdicts) == 1:
        return next(iter(verdicts))
    return None


def _subclasses(facts: Facts, cls: str, method: str) -> set[str]:
    """`cls` and the local classes derived from it that do not override `method` themselves."""
    found = {cls}
    changed = True
    while changed:
        changed = False
        for name, info in facts.classes.items():
            if name not in found and method not in info.methods and any(b in found for b in info.bases):
                found.add(name)
                changed = True
    return found


def _callees(facts: Facts, site: CallSite) -> list[Scope]:
    """Local functions and methods a call inside traced code runs: the callee itself, and functions
    handed to it by name (`strategy.run(step_fn, ...)`, `tf.map_fn(fn, ...)`)."""
    found: list[Scope] = []
    candidates: list[cst.BaseExpression] = []
    if site.qualified is None:
        candidates.append(site.node.func)
    candidates.extend(a.value for a in site.node.args if isinstance(a.value, (cst.Name, cst.Attribute)))
    for expr in candidates:
        for value in values_of(facts, expr, site.scope, site.order):
            if value.kind is Kind.FUNCTION and isinstance(value.node, cst.FunctionDef) and value.scope is not None:
                found.append(value.scope)
    return found


def _wrapped_entries(facts: Facts) -> list[Entry]:
    entries = []
    for site in facts.calls:
        if site.qualified not in TF_FUNCTION:
            continue
        target = arg_value(site.node, 0, "func")
        if target is None:
            continue  # `tf.function(jit_compile=True)(f)` is seen as a decorator-like call below
        for value in values_of(facts, target, site.scope, site.order):
            if value.kind is Kind.FUNCTION and isinstance(value.node, cst.FunctionDef) and value.scope is not None:
                entries.append(Entry(value.scope, "wrapped", site.node, site.node, site.order, site.scope))
    return entries


def _decorator_call(scope: Scope) -> tuple[cst.CSTNode, cst.Call | None]:
    assert scope.node is not None
    for index, name in enumerate(scope.decorators):
        if name in TF_FUNCTION:
            decorator = scope.node.decorators[index].decorator
            return decorator, decorator if isinstance(decorator, cst.Call) else None
    return scope.node, None


def tracing(facts: Facts) -> Tracing:
    """The entries of this module and every scope that runs traced (computed once per file)."""
    return facts.cached("tracing", lambda: _compute(facts))


def _compute(facts: Facts) -> Tracing:
    result = Tracing()
    if _eager_switched(facts):
        result.eager_switch = True
        return result
    entries: list[Entry] = []
    for scope in facts.scopes:
        if scope.is_module:
            continue
        if scope.is_tf_function:
            node, call = _decorator_call(scope)
            entries.append(Entry(scope, "decorated", node, call, scope.order, scope.parent))
        elif keras_step_traced(facts, scope):
            assert scope.node is not None
            entries.append(Entry(scope, "keras", scope.node, None, scope.order, scope.parent))
    entries.extend(_wrapped_entries(facts))
    result.entries = entries
    # Breadth first, unguarded edges before guarded ones, so each scope keeps its best path.
    spans = blocks(facts)
    children: dict[int, list[Scope]] = {}
    for scope in facts.scopes:
        if scope.parent is not None and not scope.parent.is_module:
            children.setdefault(id(scope.parent), []).append(scope)
    calls_in: dict[int, list[CallSite]] = {}
    for site in facts.calls:
        calls_in.setdefault(id(site.scope), []).append(site)
    for unguarded_pass in (True, False):
        pending = deque(Traced(e.scope, e) for e in entries)
        while pending:
            item = pending.popleft()
            known = result.scopes.get(id(item.scope))
            if known is not None and (known.unguarded or not item.unguarded):
                continue
            item.unguarded = unguarded_pass
            result.scopes[id(item.scope)] = item
            for child in children.get(id(item.scope), ()):
                pending.append(Traced(child, item.entry, item.via, unguarded_pass))
            for site in calls_in.get(id(item.scope), ()):
                guarded = bool(spans.guards(site.order))
                if unguarded_pass and guarded:
                    continue
                for callee in _callees(facts, site):
                    pending.append(Traced(callee, item.entry, (*item.via, site), unguarded_pass))
    return result


def traced_scope(facts: Facts, scope: Scope) -> Traced | None:
    """How `scope` (or the function it is nested in) runs traced, or None when it is not seen to."""
    result = tracing(facts)
    key = id(scope)
    if key in result.around:
        return result.around[key]
    found = result.scopes
    answer = None
    for current in scope.chain():
        if id(current) in found:
            answer = found[id(current)]
            break
    result.around[key] = answer
    return answer


def _calls_by_last_name(facts: Facts) -> dict[str, list[CallSite]]:
    def compute() -> dict[str, list[CallSite]]:
        index: dict[str, list[CallSite]] = {}
        for site in facts.calls:
            if site.func is not None:
                index.setdefault(site.func.rsplit(".", 1)[-1], []).append(site)
        return index

    return facts.cached("calls_by_last_name", compute)


def entry_calls(facts: Facts, entry: Entry) -> list[CallSite]:
    """The calls of the traced callable made from eager code (calls from traced code are inlined
    into their caller's trace, so they are not calls of the `tf.function` object)."""
    if entry.how == "keras":
        return []
    memo = tracing(facts).calls_of
    found = memo.get(id(entry))
    if found is None:
        found = memo[id(entry)] = _entry_calls(facts, entry)
    return found


def _entry_calls(facts: Facts, entry: Entry) -> list[CallSite]:
    names: set[str] = set()
    if entry.how == "decorated":
        names.add(entry.scope.simple_name)
    else:
        for binding in facts.bindings_of_value(entry.node):
            names.add(binding.target.rsplit(".", 1)[-1])
    found = []
    parent = entry.scope.parent
    for name in names:
        for site in _calls_by_last_name(facts).get(name, ()):
            if traced_scope(facts, site.scope) is not None:
                continue
            if entry.how == "decorated" and parent is not None and not parent.is_module \
                    and entry.scope.class_name is None and site.scope is parent and site.func == name:
                found.append(site)  # a def nested in the function that calls it
                continue
            for value in values_of(facts, site.node.func, site.scope, site.order):
                if (entry.how == "decorated" and value.kind is Kind.FUNCTION and value.scope is entry.scope) or (
                        entry.how == "wrapped" and value.node is entry.node):
                    found.append(site)
                    break
    return found


def in_loop(facts: Facts, site: CallSite) -> Span | None:
    """The innermost loop of its own function around a call site."""
    return blocks(facts).innermost_loop(site.order)


def site_runs(facts: Facts, site: CallSite, depth: int = 0) -> Runs:
    """How often one call site runs: MANY inside a loop (or in a function called from one)."""
    if in_loop(facts, site) is not None:
        return Runs.MANY
    scope = site.scope
    if scope.is_module:
        return Runs.ONCE
    if depth >= 3:
        return Runs.UNKNOWN
    callers = facts.call_sites_of_scope(scope)
    if not callers:
        return Runs.UNKNOWN
    runs = {site_runs(facts, caller, depth + 1) for caller in callers}
    if Runs.MANY in runs or len(callers) > 1:
        return Runs.MANY
    return runs.pop()


def entry_runs(facts: Facts, entry: Entry) -> Runs:
    """How often the Python side calls this `tf.function`: a Keras step runs once per batch."""
    if entry.how == "keras":
        return Runs.MANY
    memo = tracing(facts).runs_of
    runs = memo.get(id(entry))
    if runs is None:
        runs = memo[id(entry)] = _entry_runs(facts, entry)
    return runs


def _entry_runs(facts: Facts, entry: Entry) -> Runs:
    calls = entry_calls(facts, entry)
    if not calls:
        return Runs.UNKNOWN
    runs = {site_runs(facts, site) for site in calls}
    if Runs.MANY in runs:
        return Runs.MANY
    # A call run once that passes an object made right there traces anew: it shares no trace.
    shared = [site for site in calls if not _fresh_identity_argument(facts, site)]
    if len(shared) > 1:
        return Runs.MANY
    return Runs.UNKNOWN if Runs.UNKNOWN in runs else Runs.ONCE


# Objects that `tf.function` tells apart by identity, so a new one is a new trace (measured on TF 2.21:
# three calls, each with a new plain object, `tf.Module`, Keras model or `tf.random.Generator`, traced
# three times; a new `tf.Variable` or tensor of the same spec traced once).
_TRACED_BY_IDENTITY = frozenset({Kind.INSTANCE, Kind.MODEL, Kind.LAYER})


def _fresh_identity_argument(facts: Facts, site: CallSite) -> bool:
    """Does this call pass an object it makes in its own arguments that is traced by identity?"""
    for arg in site.node.args:
        if not isinstance(arg.value, cst.Call):
            continue
        found = values_of(facts, arg.value, site.scope, site.order)
        if found and all(v.kind in _TRACED_BY_IDENTITY or (v.kind is Kind.EXTERNAL and v.cls is not None
                                                              and v.cls.startswith("tensorflow.random.Generator"))
                         for v in found):
            return True
    return False


def created_per_iteration(facts: Facts, entry: Entry) -> Span | None:
    """The loop whose every iteration makes this `tf.function` object anew (a decorated def or a
    `tf.function(g)` call in the loop body, not under an `if` of that body) and calls it in that same
    iteration, not in a loop of its own: each iteration then traces once for one call."""
    if entry.how == "keras":
        return None
    spans = blocks(facts)
    loop = spans.innermost_loop(entry.order)
    if loop is None or any(loop.encloses(g.order) for g in spans.guards(entry.order)):
        return None
    for site in entry_calls(facts, entry):
        if site.order > entry.order and spans.innermost_loop(site.order) is loop:
            return loop
    return None


def runs_many(facts: Facts, traced: Traced) -> bool:
    """Does the traced body behind `traced` get called more than once (so tracing-time effects show)?"""
    return entry_runs(facts, traced.entry) is Runs.MANY


# ---------------------------------------------------------------------------------------------------
# Python numbers: the arguments that make a `tf.function` trace again for every new value.

def _is_builtin(facts: Facts, name: str) -> bool:
    return name not in facts.imports.aliases and not facts.bindings_of(name) and name not in facts.definitions


def python_number(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> bool:
    """Is `expr` provably a Python int or float here (a literal, a `range`/`enumerate` counter, an
    augmented counter, arithmetic and `int()`/`float()`/`min()`/`math.*` of those)? Tensors, NumPy
    values, parameters and anything not followed are not."""
    return _NumberReader(facts).number(expr, scope, order)


def changes_per_iteration(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> str | None:
    """When `expr` is a Python number that takes a new value on each iteration of a loop around
    `order` (a loop counter, a counter incremented in the loop, a value computed from one), the name
    of what drives it; else None."""
    reader = _NumberReader(facts)
    if not reader.number(expr, scope, order):
        return None
    return reader.driver(expr, scope, order)


class _NumberReader:
    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.resolver = values(facts)
        self.seen: set[int] = set()
        self.budget = 200

    def _bindings(self, expr: cst.BaseExpression, scope: Scope, order: int) -> list | None:
        name = dotted(expr)
        if name is None:
            return None
        if isinstance(expr, cst.Attribute):
            if name.count(".") != 1 or not name.startswith("self.") or scope.class_name is None:
                return None
            found = [b for b in self.f.bindings_of(name) if b.scope.class_name == scope.class_name]
            return found or None
        return self.resolver.reaching(name, scope, order) or None

    def number(self, expr: cst.BaseExpression | None, scope: Scope, order: int) -> bool:
        self.budget -= 1
        if expr is None or self.budget < 0:
            return False
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        if isinstance(expr, cst.UnaryOperation):
            return isinstance(expr.operator, (cst.Minus, cst.Plus)) and self.number(expr.expression, scope, order)
        if isinstance(expr, cst.BinaryOperation):
            return isinstance(expr.operator, _ARITHMETIC) and self.number(expr.left, scope, order) \
                and self.number(expr.right, scope, order)
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Name) and _is_builtin(self.f, func.value):
                if func.value in _TO_NUMBER:
                    return len(expr.args) == 1
                if func.value in _NUMBER_OF_NUMBERS:
                    return bool(expr.args) and all(not a.star and self.number(a.value, scope, order)
                                                   for a in expr.args)
            qualified = self.f.resolve(func)
            return qualified is not None and qualified.startswith("math.") and qualified.count(".") == 1
        if isinstance(expr, (cst.Name, cst.Attribute)):
            bindings = self._bindings(expr, scope, order)
            if not bindings:
                return False
            for binding in bindings:
                if id(binding) in self.seen:
                    continue
                self.seen.add(id(binding))
                try:
                    if not self._binding_number(binding):
                        return False
                finally:
                    self.seen.discard(id(binding))
            return True
        return False

    def _binding_number(self, binding) -> bool:  # type: ignore[no-untyped-def]
        loop_iter = self.f.loop_bindings.get(id(binding))
        if loop_iter is not None:
            return _counter_loop(self.f, loop_iter, binding.path)
        if binding.comprehension is not None or binding.path not in ((),) or isinstance(binding.node, cst.With):
            return False
        if binding.augmented:
            # `step += 1`: a number when what it adds is, and so is every value it started from.
            if "." in binding.target:
                earlier = [b for b in self.f.bindings_of(binding.target)
                           if b.scope.class_name == binding.scope.class_name and not b.augmented]
            else:
                earlier = [b for b in self.resolver.reaching(binding.target, binding.scope, binding.order)
                           if b is not binding]
                if not earlier and declared_outside(binding.scope, binding.target):
                    earlier = [b for b in self.f.bindings_of(binding.target)
                               if b.scope is self.f.module_scope and b.class_body is None and not b.augmented]
            if not earlier or not all(b.augmented or self._binding_number(b) for b in earlier if id(b) not in self.seen):
                return False
        return self.number(binding.value, binding.scope, binding.order)

    def driver(self, expr: cst.BaseExpression | None, scope: Scope, order: int) -> str | None:
        """What makes the number differ between iterations of a loop around `order`."""
        self.budget -= 1
        if expr is None or self.budget < 0:
            return None
        spans = blocks(self.f)
        if isinstance(expr, cst.UnaryOperation):
            return self.driver(expr.expression, scope, order)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Modulo):
                return None  # `step % 2` takes few values: a few traces, not one per iteration
            return self.driver(expr.left, scope, order) or self.driver(expr.right, scope, order)
        if isinstance(expr, cst.Call):
            for arg in expr.args:
                found = self.driver(arg.value, scope, order)
                if found:
                    return found
            return None
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        loops = spans.loops_enclosing(order)
        bindings = self._bindings(expr, scope, order) or []
        name = dotted(expr) or "?"
        for binding in bindings:
            if id(binding) in self.seen:
                continue
            loop_iter = self.f.loop_bindings.get(id(binding))
            if loop_iter is not None:
                if binding.scope is scope and any(loop.node is _loop_of(self.f, binding) for loop in loops):
                    return name
                continue
            inside = binding.scope is scope and any(loop.encloses(binding.order) for loop in loops)
            if binding.augmented and inside:
                return name
            if inside and binding.value is not None:
                self.seen.add(id(binding))
                try:
                    found = self.driver(binding.value, binding.scope, binding.order)
                finally:
                    self.seen.discard(id(binding))
                if found:
                    return found
        return None


def _loop_of(facts: Facts, binding) -> cst.CSTNode | None:  # type: ignore[no-untyped-def]
    node = binding.node
    return node if isinstance(node, (cst.For, cst.While)) else None


def _counter_loop(facts: Facts, loop_iter: cst.BaseExpression, path: tuple[int, ...]) -> bool:
    """`for i in range(...)` (path ()) and `for i, x in enumerate(...)` (path (0,)) bind Python ints."""
    if not isinstance(loop_iter, cst.Call) or not isinstance(loop_iter.func, cst.Name):
        return False
    name = loop_iter.func.value
    if not _is_builtin(facts, name):
        return False
    return (name == "range" and path == ()) or (name == "enumerate" and path == (0,))


# ---------------------------------------------------------------------------------------------------
# Python state that a traced body touches: it changes only while tracing.

def declared_outside(scope: Scope, name: str) -> bool:
    """Does the function declare `name` `global` or `nonlocal` (at the top level of its body)?"""
    return name in scope.declared_outside


def outer_list(facts: Facts, site: CallSite):  # type: ignore[no-untyped-def]
    """For `xs.append(...)` (or `extend`/`insert`) in traced code: the binding of `xs` to a list
    literal made outside the traced code (a module or eager variable, a `self.` attribute set in
    `__init__`), when every binding of it is one; None when the list is local to the trace or unknown."""
    receiver = site.receiver
    if receiver is None or site.method not in ("append", "extend", "insert"):
        return None
    if receiver.startswith("self.") and receiver.count(".") == 1 and site.scope.class_name is not None:
        bindings = [b for b in facts.bindings_of(receiver) if b.scope.class_name == site.scope.class_name]
    elif "." not in receiver:
        bindings = values(facts).reaching(receiver, site.scope, site.order)
    else:
        return None
    if not bindings:
        return None
    for binding in bindings:
        if traced_scope(facts, binding.scope) is not None or binding.path not in ((),):
            return None
        if binding.augmented or not isinstance(binding.value, cst.List):
            return None
    return bindings[0]


def changed_outside(facts: Facts, scope: Scope, name: str, order: int):  # type: ignore[no-untyped-def]
    """For a read of the Python number `name` (`self.beta`, or a module global) in traced code: a
    binding that gives it a new Python number outside traced code after it is first set (in a method
    other than `__init__`, from an instance of the class, or in a module-level loop), else None. Such
    a change never reaches the trace, which keeps the value it read when it was traced."""
    reader = _NumberReader(facts)
    if name.startswith("self.") and name.count(".") == 1 and scope.class_name is not None:
        cls = scope.class_name
        attr = name.split(".", 1)[1]
        own = [b for b in facts.bindings_of(name) if b.scope.class_name == cls]
        if not own or not reader.number(cst.parse_expression(name), scope, order):
            return None
        for binding in own:
            if binding.scope.simple_name not in ("__init__", "build") and traced_scope(facts, binding.scope) is None:
                return binding
        for binding in _attribute_bindings(facts).get(attr, ()):
            if binding.target.startswith("self."):
                continue
            target = binding.target_node
            if not isinstance(target, cst.Attribute) or traced_scope(facts, binding.scope) is not None:
                continue
            owners = values_of(facts, target.value, binding.scope, binding.order)
            if owners and all(v.cls == cls for v in owners) and binding.value is not None \
                    and reader.number(binding.value, binding.scope, binding.order):
                return binding
        return None
    if "." in name:
        return None
    # The scopes that bind `name`, once per name: reads of a common name are many, and so are its bindings.
    binding_scopes = facts.cached(("tracing.binding_scopes", name),
                                  lambda: {id(b.scope) for b in facts.bindings_of(name) if b.class_body is None})
    if any(not s.is_module and id(s) in binding_scopes and not declared_outside(s, name) for s in scope.chain()):
        return None  # a local or enclosing function's variable, not the module's
    # What follows depends on the name only (the reader starts afresh).
    return facts.cached(("tracing.module_number_changed", name), lambda: _module_number_changed(facts, name))


def _module_number_changed(facts: Facts, name: str):  # type: ignore[no-untyped-def]
    reader = _NumberReader(facts)
    found = [b for b in facts.bindings_of(name) if b.class_body is None]
    module = [b for b in found if b.scope.is_module or declared_outside(b.scope, name)]
    if len(module) < 2 or any(traced_scope(facts, b.scope) is not None for b in module):
        return None
    if not all(reader._binding_number(b) for b in module):
        return None
    spans = blocks(facts)
    for binding in module[1:]:
        if spans.innermost_loop(binding.order) is not None or not binding.scope.is_module:
            return binding
    return None


def _attribute_bindings(facts: Facts) -> dict[str, list]:
    """Bindings of attribute chains (`a.b.attr = ...`) by their last attribute, in document order."""

    def compute() -> dict[str, list]:
        index: dict[str, list] = {}
        for binding in facts.bindings:
            if "." in binding.target:
                index.setdefault(binding.target.rsplit(".", 1)[1], []).append(binding)
        return index

    return facts.cached("tracing.attribute_bindings", compute)


def _called_in_place(facts: Facts, site: CallSite) -> bool:
    """Is the object this construction makes called in the same function (`Dense(4)(x)`, or
    `dense = Dense(4)` then `dense(x)`)? Only then does a layer or model build its weights there."""
    parent = facts.cached("called_constructions", lambda: {id(c.node.func) for c in facts.calls})
    if id(site.node) in parent:
        return True
    for binding in facts.bindings_of_value(site.node):
        if binding.index is None and any(c.scope is site.scope and c.order > site.order
                                         for c in facts.calls_to(binding.target)):
            return True
    return False


def _construction(facts: Facts, site: CallSite) -> str | None:
    made = values_of(facts, site.node, site.scope, site.order)
    if len(made) != 1:
        return None
    (value,) = made
    if value.node is not site.node:
        return None  # what the call returns was made elsewhere (`tf.clip_by_value(variable, ...)`)
    short = value.short_class or ""
    if value.kind in (Kind.VARIABLE, Kind.OPTIMIZER, Kind.METRIC):
        return f"{site.func}(...)"
    if value.kind is Kind.LAYER and short in WEIGHTED_LAYERS and _called_in_place(facts, site):
        return f"{site.func}(...)"
    if value.kind is Kind.MODEL and _called_in_place(facts, site):
        return f"{site.func}(...)"
    return None


def created_on_every_trace(facts: Facts, site: CallSite) -> "tuple[Traced, str] | None":
    """Does this call make TensorFlow variables (a `tf.Variable`, an optimizer, a metric, a weighted layer
    or model it then calls) each time a traced function runs, with no guard that makes it a singleton?
    Returns how the scope runs traced and what is made. TensorFlow rejects that on the first call, so
    rules about re-creating objects eagerly (TL202, TL304) leave such sites to TL403."""
    if site.qualified is None or site.scope.is_module:
        return None
    traced = traced_scope(facts, site.scope)
    if traced is None or not traced.unguarded or blocks(facts).guards(site.order):
        return None
    what = _construction(facts, site)
    return (traced, what) if what is not None else None

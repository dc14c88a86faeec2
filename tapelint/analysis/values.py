"""What an expression may be at a program point: the one value model every rule asks.

`values_of(facts, expr, scope, order)` maps an expression to the set of abstract values it may hold
there: an optimizer created at a given call, a model, a layer, a tape, a container of values, a
constant, a local function or class, or UNKNOWN. It follows assignments and tuple unpacking,
for-loops over literal and built containers (`zip`, `enumerate`, `.items()`, `.values()`, `+`),
subscripts with constant keys, returns of local functions and methods, parameters through their
call sites and defaults, instance and class attributes, comprehension scopes, and (in notebooks)
document order, so a name means its latest binding at that point.

Every query shares one budget. When it runs out, or the code does something the model cannot follow,
the answer contains UNKNOWN: rules treat that as "cannot tell" and stay silent.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable, Iterator

import libcst as cst

from tapelint.analysis.blocks import blocks
from tapelint.analysis.facts import Binding, CallSite, ClassInfo, Facts, Scope, arg_value
from tapelint.analysis.vocabulary import (
    DATASET_METHODS,
    DATASET_PREFIX,
    DATASET_SOURCES,
    LOAD_MODEL,
    MODEL_CLASSES,
    SCHEDULE_PREFIX,
    TAPE_CLASSES,
    VARIABLE_CLASSES,
    WEIGHT_ATTRIBUTES,
    optimizer_class,
)
from tapelint.analysis.names import dotted


class Kind(str, enum.Enum):
    OPTIMIZER = "optimizer"
    MODEL = "model"
    LAYER = "layer"
    LOSS = "loss"
    METRIC = "metric"
    TAPE = "tape"
    VARIABLE = "variable"
    WEIGHTS = "weights"  # `model.trainable_variables` and friends
    GRADIENTS = "gradients"  # what one `tape.gradient(...)` call returned (the list, or any element of it)
    SCHEDULE = "schedule"
    CONSTANT = "constant"
    CONTAINER = "container"
    FUNCTION = "function"
    CLASS = "class"
    INSTANCE = "instance"  # an object of a class defined in this module
    EXTERNAL = "external"  # the result of a call into a library we know by name only
    DATASET = "dataset"  # a `tf.data.Dataset` (made by tf.data or a Keras `*_dataset_from_*` helper)
    NONE = "none"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Value:
    kind: Kind
    # Identity of the object: the node that created it (a Call, a literal, a def), by id.
    key: int = 0
    node: cst.CSTNode | None = None
    # Canonical class for library objects (`keras.optimizers.Adam`), a local class name for instances.
    cls: str | None = None
    const: object = None
    # Containers: the values of each element in order (`keys` holds a dict's constant keys).
    items: tuple[frozenset["Value"], ...] = ()
    keys: tuple[object, ...] | None = None
    # A container whose one item stands for every element (`zip(...)`, `list(x)`, a comprehension).
    uniform: bool = False
    # For WEIGHTS: what they belong to.
    owner: frozenset["Value"] = frozenset()
    scope: Scope | None = None

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        extra = self.cls or (repr(self.const) if self.kind is Kind.CONSTANT else "")
        return f"<{self.kind.value}{' ' + extra if extra else ''}>"

    @property
    def short_class(self) -> str | None:
        return self.cls.rsplit(".", 1)[-1] if self.cls else None


UNKNOWN_VALUE = Value(Kind.UNKNOWN)
UNKNOWN = frozenset({UNKNOWN_VALUE})
NONE_VALUE = frozenset({Value(Kind.NONE)})

# Builtins that give back (some of) what they are given.
_PASS_THROUGH = frozenset({"list", "tuple", "sorted", "reversed", "iter"})
_BUDGET = 4000


def is_unknown(values: Iterable[Value]) -> bool:
    return any(v.kind is Kind.UNKNOWN for v in values)


def flatten(values: Iterable[Value], depth: int = 0) -> Iterator[Value]:
    """The values themselves and, for containers, everything they hold (to any depth)."""
    for value in values:
        yield value
        if value.kind is Kind.CONTAINER and depth < 8:
            for item in value.items:
                yield from flatten(item, depth + 1)


def _classify(qualified: str) -> tuple[Kind, str] | None:
    """What a call of a library callable with this canonical name creates."""
    if qualified in TAPE_CLASSES:
        return Kind.TAPE, qualified
    if qualified in VARIABLE_CLASSES:
        return Kind.VARIABLE, qualified
    if optimizer_class(qualified) is not None:
        return Kind.OPTIMIZER, qualified
    if qualified.startswith(SCHEDULE_PREFIX):
        return Kind.SCHEDULE, qualified
    if qualified in DATASET_SOURCES or qualified.startswith(DATASET_PREFIX) and qualified.count(".") == 3:
        return Kind.DATASET, "tensorflow.data.Dataset"
    last = qualified.rsplit(".", 1)[-1]
    if qualified in MODEL_CLASSES or qualified in LOAD_MODEL or qualified.startswith("keras.applications."):
        return (Kind.MODEL, qualified) if last[:1].isupper() or qualified in LOAD_MODEL else None
    if qualified.startswith("keras.layers.") and last[:1].isupper():
        return Kind.LAYER, qualified
    if qualified.startswith("keras.losses.") and last[:1].isupper():
        return Kind.LOSS, qualified
    if qualified.startswith("keras.metrics.") and last[:1].isupper():
        return Kind.METRIC, qualified
    return None


class Values:
    """The resolver for one module. Results are memoised; one budget bounds each top-level query."""

    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.memo: dict[tuple[int, int, int], tuple[cst.CSTNode, frozenset[Value]]] = {}
        self.active: set[tuple[int, int, int]] = set()
        self.budget = 0
        self.depth = 0
        self._sites: dict[int, list[CallSite]] = {}
        self._reaching: dict[tuple[str, int, int], list[Binding]] = {}

    # ------------------------------------------------------------------ entry point
    def of(self, expr: cst.BaseExpression | None, scope: Scope, order: int) -> frozenset[Value]:
        if expr is None:
            return UNKNOWN
        if self.depth == 0:
            self.budget = _BUDGET
        key = (id(expr), id(scope), order)
        cached = self.memo.get(key)
        # The node is kept with the answer: an id can be reused once a node passed in by a caller is gone.
        if cached is not None and cached[0] is expr:
            return cached[1]
        if key in self.active or self.budget <= 0 or self.depth > 60:
            return UNKNOWN
        self.budget -= 1
        self.active.add(key)
        self.depth += 1
        try:
            result = self._expr(expr, scope, order) or UNKNOWN
        finally:
            self.depth -= 1
            self.active.discard(key)
        # An answer cut short by the budget is not remembered: another query may finish it.
        if self.budget > 0:
            self.memo[key] = (expr, result)
        return result

    # ------------------------------------------------------------------ expressions
    def _expr(self, expr: cst.BaseExpression, scope: Scope, order: int) -> frozenset[Value]:
        # Exact types for the common cases: a failed isinstance against a libcst class (an ABC) costs a
        # call into ABCMeta, and this runs for every expression the rules ask about.
        kind = type(expr)
        if kind is cst.Name:
            return self._name(expr.value, expr, scope, order)  # type: ignore[attr-defined]
        if kind is cst.Attribute:
            return self._attribute(expr, scope, order)  # type: ignore[arg-type]
        if kind is cst.Call:
            return self._call(expr, scope, order)  # type: ignore[arg-type]
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            return self._sequence(expr, scope, order)
        if isinstance(expr, cst.Dict):
            return self._dict(expr, scope, order)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, scope, order)
        if isinstance(expr, (cst.Integer, cst.Float)):
            return frozenset({Value(Kind.CONSTANT, id(expr), expr, const=_number(expr))})
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            text = expr.evaluated_value if isinstance(expr, cst.SimpleString) else None
            return frozenset({Value(Kind.CONSTANT, id(expr), expr, const=text)})
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            inner = self.of(expr.expression, scope, order)
            if all(v.kind is Kind.CONSTANT and isinstance(v.const, (int, float)) for v in inner):
                return frozenset(Value(Kind.CONSTANT, id(expr), expr, const=-v.const) for v in inner)  # type: ignore[operator]
            return UNKNOWN
        if isinstance(expr, cst.BinaryOperation):
            return self._binary(expr, scope, order)
        if isinstance(expr, cst.IfExp):
            return self.of(expr.body, scope, order) | self.of(expr.orelse, scope, order)
        if isinstance(expr, cst.BooleanOperation):
            return self.of(expr.left, scope, order) | self.of(expr.right, scope, order)
        if isinstance(expr, cst.NamedExpr):
            return self.of(expr.value, scope, order)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            span = self.f.comprehension_spans.get(id(expr))
            if span is None:
                return UNKNOWN
            element = self.of(expr.elt, scope, span[0] + 1)
            return frozenset({Value(Kind.CONTAINER, id(expr), expr, items=(element,), uniform=True)})
        if isinstance(expr, cst.Lambda):
            return frozenset({Value(Kind.FUNCTION, id(expr), expr)})
        return UNKNOWN

    def _binary(self, expr: cst.BinaryOperation, scope: Scope, order: int) -> frozenset[Value]:
        left = self.of(expr.left, scope, order)
        right = self.of(expr.right, scope, order)
        if isinstance(expr.operator, cst.Add):
            # `[a] + metrics`: list concatenation keeps the items in order.
            lefts = [v for v in left if v.kind is Kind.CONTAINER and v.keys is None]
            rights = [v for v in right if v.kind is Kind.CONTAINER and v.keys is None]
            if lefts and rights and len(lefts) == len(left) and len(rights) == len(right):
                return frozenset(
                    Value(Kind.CONTAINER, id(expr), expr, items=a.items + b.items) for a in lefts for b in rights
                )
            weights = [v for v in (*left, *right) if v.kind is Kind.WEIGHTS]
            if weights and len(weights) == len(left) + len(right):
                owners = frozenset().union(*(w.owner for w in weights))
                return frozenset({Value(Kind.WEIGHTS, id(expr), expr, owner=owners)})
        numbers = [(a.const, b.const) for a in left for b in right
                   if a.kind is Kind.CONSTANT and b.kind is Kind.CONSTANT]
        if numbers and len(numbers) == len(left) * len(right):
            out = set()
            for a, b in numbers:
                computed = _arith(expr.operator, a, b)
                if computed is None:
                    return UNKNOWN
                out.add(Value(Kind.CONSTANT, id(expr), expr, const=computed))
            return frozenset(out)
        return UNKNOWN

    def _sequence(self, expr: cst.List | cst.Tuple | cst.Set, scope: Scope, order: int) -> frozenset[Value]:
        items: list[frozenset[Value]] = []
        for element in expr.elements:
            if isinstance(element, cst.StarredElement):
                inner = self.of(element.value, scope, order)
                spread = [v for v in inner if v.kind is Kind.CONTAINER]
                if len(spread) == 1 and len(inner) == 1:
                    items.extend(spread[0].items)
                    continue
                return frozenset({Value(Kind.CONTAINER, id(expr), expr, items=(*items, UNKNOWN))})
            items.append(self.of(element.value, scope, order))
        return frozenset({Value(Kind.CONTAINER, id(expr), expr, items=tuple(items))})

    def _dict(self, expr: cst.Dict, scope: Scope, order: int) -> frozenset[Value]:
        keys: list[object] = []
        items: list[frozenset[Value]] = []
        for element in expr.elements:
            if not isinstance(element, cst.DictElement):
                return UNKNOWN  # `**other`
            key_values = self.of(element.key, scope, order)
            only = next(iter(key_values))
            keys.append(only.const if len(key_values) == 1 and only.kind is Kind.CONSTANT else _NO_KEY)
            items.append(self.of(element.value, scope, order))
        return frozenset({Value(Kind.CONTAINER, id(expr), expr, items=tuple(items), keys=tuple(keys))})

    def _subscript(self, expr: cst.Subscript, scope: Scope, order: int) -> frozenset[Value]:
        base = self.of(expr.value, scope, order)
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return UNKNOWN
        index_values = self.of(expr.slice[0].slice.value, scope, order)
        index = next(iter(index_values)) if len(index_values) == 1 else UNKNOWN_VALUE
        out: set[Value] = set()
        for value in base:
            if value.kind is not Kind.CONTAINER:
                return UNKNOWN
            out |= _element(value, index.const if index.kind is Kind.CONSTANT else _NO_KEY)
        return frozenset(out) or UNKNOWN

    # ------------------------------------------------------------------ names
    def _name(self, name: str, node: cst.CSTNode, scope: Scope, order: int) -> frozenset[Value]:
        if name in ("True", "False"):
            return frozenset({Value(Kind.CONSTANT, const=name == "True")})
        if name == "None":
            return NONE_VALUE
        bindings = self.reaching(name, scope, order)
        if bindings:
            out: set[Value] = set()
            for binding in bindings:
                out |= self.binding_values(binding)
            return frozenset(out)
        param_scope = self._param_scope(name, scope)
        if param_scope is not None:
            return self.param_values(param_scope, name)
        fn = self.f.function_at(name, order)
        if fn is not None:
            return frozenset({Value(Kind.FUNCTION, id(fn.node), fn.node, scope=fn)})
        if name in self.f.classes:
            info = self.f.classes[name]
            return frozenset({Value(Kind.CLASS, id(info.node), info.node, cls=name)})
        return UNKNOWN

    def reaching(self, name: str, scope: Scope, order: int) -> list[Binding]:
        """The bindings of `name` that a read at (`scope`, `order`) may see. Kept per read: several
        analyses ask about the same read."""
        key = (name, id(scope), order)
        found = self._reaching.get(key)
        if found is None:
            found = self._reaching[key] = self._reaching_uncached(name, scope, order)
        return found

    def _reaching_uncached(self, name: str, scope: Scope, order: int) -> list[Binding]:
        f = self.f
        if not f.bindings_of(name):
            return []
        # Scope by scope (an index per scope: a common name has many bindings in other functions).
        here = [b for b in f.bindings_here(name, scope) if b.class_body is None and b.visible_at(order)]
        own = [b for b in here if b.comprehension is not None]
        if own:
            return [own[-1]]
        if here:
            return self._last_before(here, order)
        if name in scope.params:
            return []
        current = scope.parent
        while current is not None:
            here = [b for b in f.bindings_here(name, current) if b.class_body is None and b.visible_at(order)]
            if here:
                # A read from an inner function: the enclosing scope's value each time the function runs.
                runs = f.runs_at(scope, current)
                if not runs:
                    return here
                found: list[Binding] = []
                for when in runs:
                    found.extend(b for b in self._last_before(here, when) if b not in found)
                return found or here
            if name in current.params:
                return []
            current = current.parent
        return []

    def _last_before(self, bindings: list[Binding], order: int) -> list[Binding]:
        """The last binding before `order`, plus earlier ones that a conditional last one may not
        have replaced (`if c: opt = A()` after `opt = B()`)."""
        before = [b for b in bindings if b.ready < order]
        if not before:
            return []
        spans = blocks(self.f)
        found: list[Binding] = []
        for binding in reversed(before):
            found.append(binding)
            conditional = any(
                not (g.body.encloses(order) or (g.orelse is not None and g.orelse.encloses(order)))
                for g in spans.guards(binding.order)
            ) or bool(spans.loops_enclosing(binding.order)) and not spans.loops_enclosing(order)
            if not conditional:
                break
        return found

    def call_sites(self, scope: Scope) -> list[CallSite]:
        found = self._sites.get(id(scope))
        if found is None:
            found = self._sites[id(scope)] = self.f.call_sites_of_scope(scope)
        return found

    def _param_scope(self, name: str, scope: Scope) -> Scope | None:
        for current in scope.chain():
            if any(b.class_body is None for b in self.f.bindings_here(name, current)):
                return None
            if name in current.params:
                return current
        return None

    def param_values(self, scope: Scope, param: str) -> frozenset[Value]:
        """A parameter: the union of what its call sites pass, or its default where they pass nothing.
        A function nobody in sight calls may be called from anywhere: UNKNOWN joins the default."""
        if scope.class_name is not None and scope.params and scope.params[0] == param and param in ("self", "cls"):
            return frozenset({Value(self.class_kind(scope.class_name), cls=scope.class_name)})
        node = scope.node
        default = None
        if node is not None:
            for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
                if p.name.value == param:
                    default = p.default
        outer = scope.parent or self.f.module_scope
        sites = self.call_sites(scope)
        if not sites:
            if default is not None:
                return self.of(default, outer, scope.order) | UNKNOWN
            return UNKNOWN
        out: set[Value] = set()
        for site in sites:
            if any(a.star for a in site.node.args):
                return UNKNOWN
            arg = self.f.argument_for_param(site.node, scope, param)
            if arg is None:
                out |= self.of(default, outer, scope.order) if default is not None else UNKNOWN
            else:
                out |= self.of(arg, site.scope, site.order)
        return frozenset(out)

    def binding_values(self, binding: Binding) -> frozenset[Value]:
        f = self.f
        loop_iter = f.loop_bindings.get(id(binding))
        if binding.augmented:
            return UNKNOWN
        if loop_iter is not None:
            elements = self.elements(self.of(loop_iter, binding.scope, binding.order))
            return self._select(elements, binding.path, binding.scope, binding.order)
        if type(binding.node) is cst.With:  # (exact type: a failed isinstance costs an ABC check)
            # `with tf.GradientTape() as tape`
            return self.of(binding.value, binding.scope, binding.order)
        source = binding.source if binding.source is not None else binding.value
        if source is None:
            return UNKNOWN
        values = self.of(source, binding.scope, binding.order)
        return self._select(values, binding.path, binding.scope, binding.order)

    def _select(self, values: frozenset[Value], path: tuple[int, ...], scope: Scope, order: int) -> frozenset[Value]:
        for index in path:
            out: set[Value] = set()
            for value in values:
                if value.kind is not Kind.CONTAINER or index < 0:
                    return UNKNOWN
                out |= _element(value, index)
            values = frozenset(out) or UNKNOWN
        return values

    def elements(self, values: frozenset[Value]) -> frozenset[Value]:
        """What iterating over these values yields."""
        out: set[Value] = set()
        for value in values:
            if value.kind is Kind.CONTAINER:
                if value.keys is not None:  # iterating a dict yields its keys
                    out |= {Value(Kind.CONSTANT, const=k) for k in value.keys if k is not _NO_KEY} or UNKNOWN
                else:
                    for item in value.items:
                        out |= item
                    if not value.items:
                        continue
            elif value.kind is Kind.WEIGHTS:
                out.add(Value(Kind.VARIABLE, owner=frozenset({value})))
            elif value.kind is Kind.GRADIENTS:
                out.add(value)  # each element is one of that call's gradients
            else:
                return UNKNOWN
        return frozenset(out) or UNKNOWN

    # ------------------------------------------------------------------ attributes
    def _attribute(self, expr: cst.Attribute, scope: Scope, order: int) -> frozenset[Value]:
        name = dotted(expr)
        qualified = self.f.resolve(expr) if not self._defined_here(name) else None
        if qualified is not None and name is not None and name.split(".")[0] in self.f.imports.aliases:
            return frozenset({Value(Kind.EXTERNAL, cls=qualified)})
        attr = expr.attr.value
        base = self.of(expr.value, scope, order)
        if attr in WEIGHT_ATTRIBUTES:
            return frozenset({Value(Kind.WEIGHTS, id(expr), expr, owner=base)})
        out: set[Value] = set()
        # Bindings made directly to this attribute chain (`agent.opt = Adam()`, `self.opt = ...`).
        if name is not None and not name.startswith("self."):
            direct = self.reaching(name, scope, order)
            if direct:
                for binding in direct:
                    out |= self.binding_values(binding)
                return frozenset(out)
        for value in base:
            if value.kind in (Kind.MODEL, Kind.LAYER):
                # A local subclass: what its methods assign; else what Keras itself provides.
                own = self.member(value.cls, attr) if value.cls in self.f.classes else UNKNOWN
                out |= _keras_attribute(value, attr, expr) if is_unknown(own) else own
            elif value.kind in (Kind.INSTANCE, Kind.CLASS):
                out |= self.member(value.cls, attr)
            else:
                return UNKNOWN
        if is_unknown(out):
            return UNKNOWN
        return frozenset(out) or UNKNOWN

    def member(self, cls: str | None, attr: str) -> frozenset[Value]:
        """`obj.attr` for an object of the local class `cls`: what its methods assign to `self.attr`,
        else the class attribute, looked up through local base classes."""
        seen = set()
        current = cls
        while current is not None and current not in seen and current in self.f.classes:
            seen.add(current)
            assigned = [b for b in self.f.bindings_of(f"self.{attr}") if b.scope.class_name == current]
            if assigned:
                out: set[Value] = set()
                for binding in assigned:
                    out |= self.binding_values(binding)
                return frozenset(out)
            class_attr = [b for b in self.f.bindings_of(attr) if b.class_body == current]
            if class_attr:
                return self.binding_values(class_attr[-1])
            info = self.f.classes[current]
            if attr in info.methods:
                method = info.methods[attr]
                return frozenset({Value(Kind.FUNCTION, id(method.node), method.node, scope=method)})
            current = self._local_base(info)
        return UNKNOWN

    def _local_base(self, info: ClassInfo) -> str | None:
        for base in info.bases:
            if base in self.f.classes:
                return base
        return None

    def _defined_here(self, name: str | None) -> bool:
        """Is the root of `name` defined in this module (a def, a class, an assignment)? Then it is
        not the library object an import of the same name would be: a project module's definitions,
        put before a file that imports them, are read as written (tapelint.project)."""
        if name is None:
            return False
        root = name.split(".", 1)[0]
        return root in self.f.definitions or root in self.f.classes or any(
            b.class_body is None for b in self.f.bindings_of(root))

    def library_bases(self, cls: str | None) -> set[str]:
        """The library classes (`keras.layers.Layer`, `tensorflow.Module`, ...) a local class derives
        from, through the local classes between them."""
        found: set[str] = set()
        pending = [cls] if cls else []
        seen: set[str] = set()
        while pending:
            current = pending.pop()
            if current in seen or current not in self.f.classes:
                continue
            seen.add(current)
            for base in self.f.classes[current].bases:
                if base in self.f.classes:
                    pending.append(base)
                elif base:
                    found.add(base)
        return found

    def class_kind(self, cls: str) -> Kind:
        """MODEL, LAYER or METRIC for local subclasses of Keras models, layers and metrics, INSTANCE otherwise."""
        seen = set()
        current: str | None = cls
        while current is not None and current not in seen:
            seen.add(current)
            info = self.f.classes.get(current)
            if info is None:
                break
            for base in info.bases:
                if base.startswith("keras.metrics."):
                    return Kind.METRIC  # (a tf_keras Metric is also a Layer: the metric is what matters)
                if base in MODEL_CLASSES:
                    return Kind.MODEL
                if base.startswith("keras.layers.") or base == "keras.Layer":
                    return Kind.LAYER
            current = self._local_base(info)
        return Kind.INSTANCE

    # ------------------------------------------------------------------ calls
    def _call(self, call: cst.Call, scope: Scope, order: int) -> frozenset[Value]:
        f = self.f
        func = call.func
        qualified = f.resolve(func) if not self._defined_here(dotted(func)) else None
        if qualified in _CLIPS:
            return self._clipped(call, qualified, scope, order)
        if qualified is not None:
            classified = _classify(qualified)
            if classified is not None:
                kind, cls = classified
                return frozenset({Value(kind, id(call), call, cls=cls)})
            return frozenset({Value(Kind.EXTERNAL, id(call), call, cls=qualified)})
        if isinstance(func, cst.Name):
            name = func.value
            if name == "zip":
                return self._zip(call, scope, order)
            if name == "enumerate":
                inner = self.elements(self.of(arg_value(call, 0), scope, order))
                pair = (frozenset({Value(Kind.UNKNOWN)}), inner)
                row = frozenset({Value(Kind.CONTAINER, id(call) + 1, call, items=pair)})
                return frozenset({Value(Kind.CONTAINER, id(call), call, items=(row,), uniform=True)})
            if name in _PASS_THROUGH and len(call.args) == 1:
                inner = self.of(call.args[0].value, scope, order)
                if all(v.kind is Kind.CONTAINER for v in inner):
                    return inner
                return frozenset({Value(Kind.CONTAINER, id(call), call, items=(self.elements(inner),), uniform=True)})
        if type(func) is cst.Attribute and func.attr.value in ("values", "keys", "items", "copy"):
            receiver = self.of(func.value, scope, order)
            if all(v.kind is Kind.CONTAINER for v in receiver):
                out_view: set[Value] = set()
                for value in receiver:
                    out_view |= _dict_view(value, func.attr.value, call)
                return frozenset(out_view)
        if type(func) is cst.Attribute and func.attr.value in DATASET_METHODS:
            receiver = self.of(func.value, scope, order)
            if receiver and all(v.kind is Kind.DATASET for v in receiver):
                return frozenset({Value(Kind.DATASET, id(call), call, cls="tensorflow.data.Dataset")})
        if type(func) is cst.Attribute and func.attr.value in ("gradient", "jacobian"):
            receiver = self.of(func.value, scope, order)
            if receiver and all(v.kind is Kind.TAPE for v in receiver):
                return frozenset({Value(Kind.GRADIENTS, id(call), call)})
        callee = self.of(func, scope, order)
        out: set[Value] = set()
        for value in callee:
            if value.kind is Kind.FUNCTION and isinstance(value.node, cst.FunctionDef) and value.scope is not None:
                out |= self.returns(value.scope)
            elif value.kind is Kind.CLASS and value.cls is not None:
                out.add(Value(self.class_kind(value.cls), id(call), call, cls=value.cls))
            elif value.kind is Kind.MODEL and isinstance(func, cst.Name):
                return UNKNOWN  # the model's output: a tensor
            else:
                return UNKNOWN
        return frozenset(out) or UNKNOWN

    def _zip(self, call: cst.Call, scope: Scope, order: int) -> frozenset[Value]:
        columns = []
        for arg in call.args:
            if arg.star:
                return UNKNOWN
            columns.append(self.elements(self.of(arg.value, scope, order)))
        row = frozenset({Value(Kind.CONTAINER, id(call) + 1, call, items=tuple(columns))})
        return frozenset({Value(Kind.CONTAINER, id(call), call, items=(row,), uniform=True)})

    def _clipped(self, call: cst.Call, qualified: str, scope: Scope, order: int) -> frozenset[Value]:
        """Clipping keeps what the values are: clipped gradients are still those gradients."""
        inner = self.of(arg_value(call, 0, "t_list" if qualified.endswith("global_norm") else "t"), scope, order)
        if qualified.endswith("clip_by_global_norm"):
            # `(clipped list, global norm)`
            return frozenset({Value(Kind.CONTAINER, id(call), call, items=(inner, UNKNOWN))})
        return inner

    def returns(self, function: Scope) -> frozenset[Value]:
        sites = self.f.returns_of(function)
        if not sites:
            return NONE_VALUE
        out: set[Value] = set()
        for site in sites:
            out |= self.of(site.value, function, site.order) if site.value is not None else NONE_VALUE
        return frozenset(out)


_NO_KEY = object()
_CLIPS = frozenset({"tensorflow.clip_by_global_norm", "tensorflow.clip_by_norm", "tensorflow.clip_by_value",
                    "tensorflow.math.clip_by_norm", "tensorflow.math.clip_by_value", "keras.ops.clip"})


def _keras_attribute(model: Value, attr: str, node: cst.CSTNode) -> frozenset[Value]:
    """Attributes every Keras model provides: the optimizer given to `compile()`, its metrics, its
    layers."""
    if model.kind is not Kind.MODEL:
        return UNKNOWN
    if attr == "optimizer":
        return frozenset({Value(Kind.OPTIMIZER, id(node), node)})
    if attr == "metrics":
        return frozenset({Value(Kind.CONTAINER, id(node), node, items=(frozenset({Value(Kind.METRIC)}),), uniform=True)})
    if attr == "layers":
        return frozenset({Value(Kind.CONTAINER, id(node), node, items=(frozenset({Value(Kind.LAYER)}),), uniform=True)})
    return UNKNOWN


def _element(container: Value, key: object) -> frozenset[Value]:
    if container.keys is not None:
        if key is _NO_KEY:
            return frozenset().union(*container.items) if container.items else UNKNOWN
        for k, item in zip(container.keys, container.items):
            if k == key:
                return item
        if _NO_KEY in container.keys:
            return UNKNOWN
        return UNKNOWN  # a key set elsewhere (`d[k] = v`): not modelled
    if isinstance(key, bool) or not isinstance(key, int):
        return frozenset().union(*container.items) if container.items else UNKNOWN
    items = container.items
    if container.uniform:
        return items[0] if items else UNKNOWN
    if -len(items) <= key < len(items):
        return items[key]
    return UNKNOWN


def _dict_view(value: Value, method: str, call: cst.Call) -> frozenset[Value]:
    if value.keys is None:
        return UNKNOWN
    if method == "copy":
        return frozenset({value})
    if method == "values":
        return frozenset({Value(Kind.CONTAINER, id(call), call, items=value.items)})
    keys = tuple(frozenset({Value(Kind.CONSTANT, const=k)}) if k is not _NO_KEY else UNKNOWN for k in value.keys)
    if method == "keys":
        return frozenset({Value(Kind.CONTAINER, id(call), call, items=keys)})
    pairs = tuple(
        frozenset({Value(Kind.CONTAINER, id(call) + 1 + i, call, items=(k, v))})
        for i, (k, v) in enumerate(zip(keys, value.items))
    )
    return frozenset({Value(Kind.CONTAINER, id(call), call, items=pairs)})


def _number(node: cst.Integer | cst.Float) -> float | int | None:
    try:
        return node.evaluated_value
    except Exception:  # pragma: no cover - malformed literal
        return None


def _arith(op: cst.BaseBinaryOp, a: object, b: object) -> object:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or isinstance(a, bool) or isinstance(b, bool):
        return None
    try:
        if isinstance(op, cst.Add):
            return a + b
        if isinstance(op, cst.Subtract):
            return a - b
        if isinstance(op, cst.Multiply):
            return a * b
        if isinstance(op, cst.Divide):
            return a / b
        if isinstance(op, cst.Power):
            return a ** b if abs(b) < 64 else None
        if isinstance(op, cst.FloorDivide):
            return a // b
    except (ZeroDivisionError, OverflowError):
        return None
    return None


def values(facts: Facts) -> Values:
    """The module's resolver (one per `Facts`, so every rule shares its memo)."""
    return facts.cached("values", lambda: Values(facts))


def values_of(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> frozenset[Value]:
    return values(facts).of(expr, scope, order)


def reaching_assignments(facts: Facts, name: str, scope: Scope, order: int) -> list[Binding]:
    """Every assignment a read of `name` at (`scope`, `order`) may see, the latest first: the last one
    before it in the innermost scope that binds it, plus earlier ones that a conditional later one may
    not have replaced (`x = a` then `if c: x = b`). A dotted name (`self.head`) is the one binding the
    module's index gives.

    This is where a read becomes assignments for code that walks the assigned expression itself (a
    functional graph, a loss computation, a label pipeline); `values_of` answers what the name may
    hold, from the same assignments."""
    if "." in name:
        binding = facts.binding_before(name, scope, order)
        return [binding] if binding is not None else []
    return values(facts).reaching(name, scope, order)


def latest_assignment(facts: Facts, name: str, scope: Scope, order: int) -> Binding | None:
    """The latest assignment a read of `name` may see (the first of `reaching_assignments`): a witness
    for questions about some path ("may the loss be computed outside the tape?"), not what the name
    holds on every path."""
    found = reaching_assignments(facts, name, scope, order)
    return found[0] if found else None


def last_assignment(facts: Facts, name: str, scope: Scope, order: int) -> Binding | None:
    """The one assignment a read of `name` sees, or None when there is none or several may reach it
    (then no single expression is what the name holds)."""
    found = reaching_assignments(facts, name, scope, order)
    return found[0] if len(found) == 1 else None

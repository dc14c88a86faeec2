"""One model of every Keras model a module builds: its layers in order, its output, what it is made of.

This is the only reader of a model's structure. Every rule and analysis that asks "which layers does
this model have, in which order?", "what does it output?", "is it linear?" asks here, so that a
`Sequential([...])`, the same model built with `model.add(...)` (in any scope, through any name the
value model can follow: `self.model.add(...)` in a method, a model handed to a helper), a layer list
held in a variable, and a nested Sequential all read alike.

A model is a `KerasModel`, computed once per construction and shared. What cannot be read is
"unknown", never "empty": a layer that cannot be told apart is a `None` entry of the stack, a stack
that cannot be read at all is `None`, and an `.add(...)` whose receiver may be this model or another
one puts an unknown entry in every model it may reach.

It also reads `model.compile(...)` once (`compiles`, `compile_for`): the model(s) a call configures and the
optimizer, loss and metrics it is given.

Names are read through the value model: `values_of` for what a name holds, and `reaching_assignments`
where the assigned expression itself is read (whether a prediction is probabilities or logits).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

from tapelint.analysis.blocks import blocks
from tapelint.analysis.constants import boolean
from tapelint.analysis.facts import CallSite, Facts, Scope, arg_value, keyword_arg
from tapelint.analysis.keras import (
    ACTIVATION_LAYERS,
    LINEAR_ACTIVATIONS,
    PASSTHROUGH_LAYERS,
    SAME_WIDTH_LAYERS,
    UNKNOWN,
    UNKNOWN_LAYER,
    ACTIVATION_FUNCTIONS,
    Output,
    OutputInfo,
    _activation_name,
    _kind_from_activation,
    application_name,
    layer_activation,
    layer_class,
)
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, Value, reaching_assignments, values, values_of
from tapelint.analysis.vocabulary import FUNCTIONAL_CLASSES, INPUT_CALLS, LOAD_MODEL, MODEL_CLASSES, SEQUENTIAL_CLASSES


def is_sequential(facts: Facts, call: cst.CSTNode | None) -> bool:
    """Is this node a `Sequential(...)` construction (any spelling of the class)?"""
    return type(call) is cst.Call and facts.resolve(call.func) in SEQUENTIAL_CLASSES


def is_functional(facts: Facts, call: cst.CSTNode | None) -> bool:
    """Is this node a `Model(inputs, outputs)` construction?"""
    return type(call) is cst.Call and facts.resolve(call.func) in FUNCTIONAL_CLASSES


# ----------------------------------------------------------------------------- a Sequential's layers


@dataclass(frozen=True, eq=False)
class StackEntry:
    """One layer of a Sequential model, where it is written: an element of the layer list or the
    argument of a later `.add(...)`."""

    node: cst.BaseExpression
    scope: Scope
    order: int
    held: frozenset[Value]  # what the value model says the expression is
    added: CallSite | None = None  # the `.add(...)` call, for a layer added after construction
    # Added under an `if`, a `try` or a loop that the construction is not in: it may be missing, or repeated.
    conditional: bool = False

    @property
    def layer(self) -> tuple[str, cst.Call] | None:
        """(`Dense`, its construction) when the entry is one Keras layer construction."""
        found = keras_layers(self.held)
        return found[0] if found is not None and len(found) == 1 else None

    @property
    def model(self) -> Value | None:
        """The model the entry is, when it is one model (a nested Sequential, a backbone)."""
        if len(self.held) != 1:
            return None
        (value,) = self.held
        return value if value.kind is Kind.MODEL else None


Stack = tuple["StackEntry | None", ...]


def sequential_stack(facts: Facts, construction: cst.CSTNode) -> Stack | None:
    """The layers of a `Sequential(...)` construction in the order they run: the list it is built
    with, then every `.add(...)` the value model says reaches it, in program order. `None` entries
    are layers that cannot be read (a starred element, an `.add` on something that may be another
    model too); the whole answer is None when `construction` is not a Sequential or its layer list is
    not one the value model can read."""
    if not is_sequential(facts, construction):
        return None
    return facts.cached(("models.stack", id(construction)), lambda: _stack(facts, construction))  # type: ignore[arg-type]


def _stack(facts: Facts, construction: cst.Call) -> Stack | None:
    site = facts.call_site(construction)
    if site is None:
        return None
    out: list[StackEntry | None] = []
    listed = arg_value(construction, 0, "layers")
    resolver = values(facts)
    if isinstance(listed, (cst.List, cst.Tuple)):
        for element in listed.elements:
            if isinstance(element, cst.StarredElement):
                out.append(None)
                continue
            out.append(StackEntry(element.value, site.scope, site.order,
                                  resolver.of(element.value, site.scope, site.order)))
    elif listed is not None and not (type(listed) is cst.Name and listed.value == "None"):
        # `Sequential(layers)`: a list built elsewhere, read through the value model.
        held = resolver.of(listed, site.scope, site.order)
        if len(held) != 1:
            return None
        (container,) = held
        if container.kind is not Kind.CONTAINER or container.keys is not None or container.uniform:
            return None
        for item in container.items:
            nodes = {id(v.node) for v in item}
            node = next(iter(item)).node if len(nodes) == 1 else None
            if not isinstance(node, cst.BaseExpression) or any(v.kind is Kind.UNKNOWN for v in item):
                out.append(None)
                continue
            out.append(StackEntry(node, site.scope, site.order, item))
    for add, certain in _adds(facts).get(id(construction), ()):
        if not certain:
            out.append(None)
            continue
        layer = arg_value(add.node, 0, "layer")
        if layer is None or add.node.args[0].star:
            out.append(None)
            continue
        out.append(StackEntry(layer, add.scope, add.order, resolver.of(layer, add.scope, add.order), add,
                              _conditional(facts, add.order, site.order)))
    return tuple(out)


def _conditional(facts: Facts, order: int, built: int) -> bool:
    """Does the point `order` sit under an `if` branch, a `try` body or a loop that the construction at
    `built` is not in?"""
    spans = blocks(facts)
    for guard in spans.guards(order):
        if not (guard.body.encloses(built) or (guard.orelse is not None and guard.orelse.encloses(built))):
            return True
    if any(not loop.encloses(built) for loop in spans.loops_enclosing(order)):
        return True
    return spans.caught(order) and not spans.caught(built)


def _adds(facts: Facts) -> dict[int, list[tuple[CallSite, bool]]]:
    """Every `x.add(layer)` whose receiver may be a Sequential model, by the Sequential construction(s)
    it may reach; `certain` is False when the receiver may also be something else."""

    def compute() -> dict[int, list[tuple[CallSite, bool]]]:
        found: dict[int, list[tuple[CallSite, bool]]] = {}
        for site in facts.calls:
            func = site.node.func
            if site.method != "add" or type(func) is not cst.Attribute or not site.node.args:
                continue
            receivers = values_of(facts, func.value, site.scope, site.order)
            models = [v for v in receivers if v.kind is Kind.MODEL and is_sequential(facts, v.node)]
            certain = len(models) == 1 and len(receivers) == 1 and len(site.node.args) == 1
            for model in models:
                found.setdefault(id(model.node), []).append((site, certain))
        return found

    return facts.cached("models.adds", compute)


def sequential_constructions(facts: Facts) -> list[CallSite]:
    """Every `Sequential(...)` construction of the module."""
    return facts.cached("models.sequentials", lambda: [
        site for site in facts.calls if site.qualified in SEQUENTIAL_CLASSES])


def stack_layers(facts: Facts, construction: cst.CSTNode) -> list[tuple[str, cst.Call] | None] | None:
    """The stack as Keras layer constructions: (`Dense`, call), or None for an entry that is not one or that
    may be missing (added under a condition or in a loop): no layer is known to be at that place."""
    stack = sequential_stack(facts, construction)
    if stack is None:
        return None
    return [entry.layer if entry is not None and not entry.conditional else None for entry in stack]


def order_known(stack: Stack) -> bool:
    """Is the stack's order the order its layers run in? Its `.add(...)` calls are read in document
    order, which is run order only when they all sit in one scope; adds spread over functions run in
    the order those are called, which is not followed."""
    return len({id(entry.scope) for entry in stack if entry is not None and entry.added is not None}) <= 1


def layers_in_order(facts: Facts, construction: cst.CSTNode) -> list[tuple[str, cst.Call]] | None:
    """Every layer a model applies, first to last, its inputs (`keras.Input(...)`, `InputLayer`) left
    out: a Sequential's stack, or the one chain of single-input layer applications that a functional
    model's one output is computed with, back to a `keras.Input(...)`. None when a layer cannot be read
    or may be missing, when the stack's order is not known, or when the graph is not one chain (a merge,
    a sub-model, an activation function, a name that several assignments may reach)."""
    if is_sequential(facts, construction):
        stack = sequential_stack(facts, construction)
        if stack is None or not order_known(stack):
            return None
        out: list[tuple[str, cst.Call]] = []
        for entry in stack:
            if entry is not None and type(entry.node) is cst.Call and facts.resolve(entry.node.func) in INPUT_CALLS:
                continue
            layer = entry.layer if entry is not None and not entry.conditional else None
            if layer is None:
                return None
            if layer[0] not in ("Input", "InputLayer"):
                out.append(layer)
        return out
    if not is_functional(facts, construction):
        return None
    site = facts.call_site(construction)  # type: ignore[arg-type]
    outputs = arg_value(construction, 1, "outputs")  # type: ignore[arg-type]
    if site is None or outputs is None:
        return None
    return _layer_chain(facts, outputs, site.scope, site.order)


def _layer_chain(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> list[tuple[str, cst.Call]] | None:
    """The layers applied one after the other to compute `expr` from a `keras.Input(...)`, first first."""
    found: list[tuple[str, cst.Call]] = []
    for _ in range(_CHAIN_STEPS):
        if type(expr) is cst.Name:
            reaching = reaching_assignments(facts, expr.value, scope, order)
            if len(reaching) != 1:
                return None
            binding = reaching[0]
            if binding.value is None or binding.index is not None or binding.path or binding.augmented:
                return None
            expr, scope, order = binding.value, binding.scope, binding.order
            continue
        if type(expr) is not cst.Call:
            return None
        if facts.resolve(expr.func) in INPUT_CALLS:
            found.reverse()
            return found
        func = expr.func
        if type(func) is cst.Call:
            cls = layer_class(facts, func)
            layer = (cls, func) if cls is not None else None
        else:
            held = layer_constructions(facts, func, scope, order)
            layer = held[0] if held is not None and len(held) == 1 else None
        positional = [arg for arg in expr.args if arg.keyword is None]
        if layer is None or len(positional) != 1 or positional[0].star:
            return None
        if layer[0] != "InputLayer":
            found.append(layer)
        site = facts.call_site(expr)
        if site is not None:
            scope, order = site.scope, site.order
        expr = positional[0].value
    return None


_CHAIN_STEPS = 64


def width_entry_before(stack: Stack, end: int) -> StackEntry | None:
    """The last entry before position `end` of a Sequential's stack that sets the width of what it outputs
    (`Dense(1)` before `Dropout` before `end`, or a model nested there), or None when one from there on
    cannot be read or may be missing. Width-keeping layers (`SAME_WIDTH_LAYERS`) are skipped, there or not."""
    for entry in reversed(stack[:end]):
        if entry is None:
            return None
        layer = entry.layer
        if layer is not None and layer[0] in SAME_WIDTH_LAYERS:
            continue
        return None if entry.conditional else entry
    return None


def width_layer_before(stack: Stack, end: int) -> tuple[str, cst.Call] | None:
    """The Keras layer `width_entry_before` finds (None when that entry is not one layer)."""
    entry = width_entry_before(stack, end)
    return entry.layer if entry is not None else None


def sequential_width_layer(facts: Facts, construction: cst.CSTNode) -> tuple[str, cst.Call] | None:
    """The layer that sets the width of a Sequential's output (`Dense(1)` in
    `Sequential([Dense(32), Dense(1), Dropout(0.1)])`, its `.add(...)` calls included), or None when a
    layer from there on cannot be read."""
    stack = sequential_stack(facts, construction)
    if stack is None:
        return None
    return width_layer_before(stack, len(stack))


# How a model is built: a Sequential (its stack), a functional `Model(inputs, outputs)`, a subclass of this
# module, a `keras.applications` network, or `load_model(...)`.
ModelKind = Literal["sequential", "functional", "subclass", "application", "loaded"]


@dataclass
class KerasModel:
    """A model built in this module, as far as it can be read statically."""

    construction: cst.CSTNode
    kind: ModelKind
    name: str
    layers: list[tuple[str, cst.CSTNode]] = field(default_factory=list)  # (class or UNKNOWN_LAYER, node)
    stack: Stack | None = None  # a Sequential's layers as written (None: not a Sequential, or unreadable)
    output: OutputInfo = field(default_factory=lambda: UNKNOWN)
    application: str | None = None
    class_name: str | None = None




class ModelReader:
    """Reads models and the kind of value an expression holds (probabilities or logits)."""

    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self._subclasses_in_progress: set[str] = set()

    # --- models
    def model_of(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> KerasModel | None:
        if expr is None or depth > 8:
            return None
        f = self.f
        if type(expr) is cst.Call:  # (exact type: a failed isinstance costs an ABC check)
            qualified = f.resolve(expr.func)
            app = application_name(f, expr)
            if app is not None:
                include_top = boolean(arg_value(expr, 0, "include_top"))
                info = KerasModel(expr, "application", app, application=app)
                if include_top is not False:
                    act = _activation_name(f, arg_value(expr, None, "classifier_activation")) if keyword_arg(
                        expr, "classifier_activation") else "softmax"
                    info.output = OutputInfo(_kind_from_activation(act), expr, f"`{app}` classifier", act)
                return info
            if qualified in SEQUENTIAL_CLASSES:
                return self._sequential(expr)
            if qualified in FUNCTIONAL_CLASSES:
                outputs = arg_value(expr, 1, "outputs")
                info = KerasModel(expr, "functional", "Model")
                if outputs is not None:
                    info.output = self.value_kind(outputs, scope, expr_order(f, expr, order), depth + 1)
                return info
            if qualified in LOAD_MODEL:
                return KerasModel(expr, "loaded", "load_model")
            name = dotted(expr.func)
            if name is not None and name in f.classes and self._is_model_class(name):
                return self._subclass(expr, name)
            if name is not None and name in f.functions:
                functions = [f.functions[name]]
            else:
                # A builder method (`self.model = self.create_model()`) or any callee the value model can
                # name: what the function returns.
                callee = values_of(f, expr.func, scope, order)
                functions = [v.scope for v in callee if v.kind is Kind.FUNCTION and v.scope is not None]
                if len(functions) != len(callee):
                    return None
            for func in functions:
                for ret in f.returns_of(func):
                    returned = self.model_of(ret.value, func, ret.order, depth + 1)
                    if returned is not None:
                        return returned
            return None
        name = dotted(expr)
        if name is None:
            return None
        if name == "self" and scope.class_name and self._is_model_class(scope.class_name):
            return self._subclass(f.classes[scope.class_name].node, scope.class_name)
        # What the name holds is the value model's answer (assignments, parameters through their call
        # sites, returns of helpers, attributes): one model, read from where it is built.
        held = values_of(f, expr, scope, order)
        nodes = {id(v.node) for v in held}
        if len(nodes) != 1:
            return None
        value = next(iter(held))
        if value.kind not in (Kind.MODEL, Kind.LAYER):
            return None
        if value.node is None:
            # `self` (or a parameter holding it) of a local model class.
            if value.cls is not None and value.cls in f.classes and self._is_model_class(value.cls):
                return self._subclass(f.classes[value.cls].node, value.cls)
            return None
        if type(value.node) is not cst.Call:
            return None
        made = f.call_site(value.node)
        if made is None:
            return None
        return self.model_of(value.node, made.scope, made.order, depth + 1)

    def _is_model_class(self, name: str, depth: int = 0) -> bool:
        cls = self.f.classes.get(name)
        if cls is None or depth > 5:
            return False
        for base in cls.bases:
            if base in MODEL_CLASSES or base in ("keras.layers.Layer", "keras.Layer"):
                return True
            if base in self.f.classes and self._is_model_class(base, depth + 1):
                return True
        return False

    def _sequential(self, call: cst.Call) -> KerasModel:
        def compute() -> KerasModel:
            info = KerasModel(call, "sequential", "Sequential")
            stack = sequential_stack(self.f, call)
            info.stack = stack
            # Anything that is not a Keras layer we can read (a custom layer, a sub-model, a starred
            # list) makes the output unknown rather than skipping to the layer before it.
            for entry in stack if stack is not None else (None,):
                layer = entry.layer if entry is not None else None
                if layer is not None:
                    info.layers.append(layer)
                else:
                    info.layers.append((UNKNOWN_LAYER, entry.node if entry is not None else call))
            info.output = self._sequential_output(info)
            return info

        return self.f.cached(("models.sequential", id(call)), compute)

    def _sequential_output(self, info: KerasModel) -> OutputInfo:
        maybe_missing = {id(e.node) for e in info.stack or () if e is not None and e.conditional}
        for cls, call in reversed(info.layers):
            if cls == "InputLayer" or cls == "Input" or self._identity(cls, call):
                continue
            if id(call) in maybe_missing:
                return UNKNOWN  # the last layer that decides the output may not be there
            if cls == "TimeDistributed" and isinstance(call, cst.Call):
                # `TimeDistributed(Dense(n, activation="softmax"))` applies the inner layer per step.
                inner = arg_value(call, 0, "layer")
                inner_cls = layer_class(self.f, inner) if isinstance(inner, cst.Call) else None
                if inner_cls is None or inner_cls not in ACTIVATION_LAYERS:
                    return UNKNOWN
                act = layer_activation(self.f, inner, inner_cls)  # type: ignore[arg-type]
                return OutputInfo(_kind_from_activation(act), inner, f"`TimeDistributed({inner_cls})` layer", act)
            if cls == UNKNOWN_LAYER:
                # A model nested in the Sequential (`Sequential([body, head])`): its own output.
                entry = next((e for e in info.stack or () if e is not None and e.node is call), None)
                if entry is not None and isinstance(call, (cst.Name, cst.Attribute, cst.Call)):
                    nested = self.model_of(call, entry.scope, entry.order, 1)
                    if nested is not None and nested.construction is not info.construction:
                        return nested.output
                return UNKNOWN
            if type(call) is not cst.Call:
                return UNKNOWN
            act = layer_activation(self.f, call, cls)
            return OutputInfo(_kind_from_activation(act), call, f"`{cls}` layer", act)
        return UNKNOWN

    def _subclass(self, node: cst.CSTNode, class_name: str) -> KerasModel:
        if class_name in self._subclasses_in_progress:
            # Its `call` returns (through helpers) a call of the class itself: known to be this subclass,
            # with nothing more said about its output while that is being worked out.
            return KerasModel(node, "subclass", class_name, class_name=class_name)

        def compute() -> KerasModel:
            info = KerasModel(node, "subclass", class_name, class_name=class_name)
            cls = self.f.classes[class_name]
            call = cls.methods.get("call")
            if call is not None:
                kinds = [self.value_kind(r.value, call, r.order) for r in self.f.returns_of(call)]
                if kinds and all(k.kind == kinds[0].kind for k in kinds):
                    info.output = kinds[0]
            for binding in self.f.bindings_in_class(class_name):
                if isinstance(binding.value, cst.Call):
                    cls_name = layer_class(self.f, binding.value)
                    if cls_name is not None:
                        info.layers.append((cls_name, binding.value))
            return info

        def guarded() -> KerasModel:
            self._subclasses_in_progress.add(class_name)
            try:
                return compute()
            finally:
                self._subclasses_in_progress.discard(class_name)

        return self.f.cached(("subclass", class_name), guarded)

    # --- values
    def value_kind(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> OutputInfo:
        """Whether `expr` holds probabilities, logits, or something else."""
        f = self.f
        if expr is None or depth > 10:
            return UNKNOWN
        if isinstance(expr, cst.Call):
            qualified = f.resolve(expr.func)
            if qualified in ACTIVATION_FUNCTIONS:
                named = ACTIVATION_FUNCTIONS[qualified]
                return OutputInfo(_kind_from_activation(named), expr, f"`{dotted(expr.func)}`", named)
            if qualified in ("tensorflow.squeeze", "tensorflow.reshape", "tensorflow.identity",
                             "keras.ops.squeeze", "keras.ops.reshape"):
                return self.value_kind(arg_value(expr, 0), scope, order, depth + 1)
            # `Layer(...)(x)`: a functional layer application
            if isinstance(expr.func, cst.Call):
                applied = layer_class(f, expr.func)
                if applied is not None:
                    if self._identity(applied, expr.func):
                        return self.value_kind(arg_value(expr, 0), scope, order, depth + 1)
                    act = layer_activation(f, expr.func, applied)
                    return OutputInfo(_kind_from_activation(act), expr.func, f"`{applied}` layer", act)
                return UNKNOWN
            # `self.dense(x)` where `self.dense = Dense(...)`
            func_name = dotted(expr.func)
            if func_name is not None:
                layer = self._layer_held_by(expr.func, scope, order)
                if layer is not None:
                    cls, call = layer
                    if self._identity(cls, call):
                        return self.value_kind(arg_value(expr, 0), scope, order, depth + 1)
                    act = layer_activation(f, call, cls)
                    return OutputInfo(_kind_from_activation(act), call, f"`{cls}` layer", act)
                model = self.model_of(expr.func, scope, order, depth + 1)
                if model is not None:
                    return model.output
                # A helper of this module that returns the prediction: `forward(x)`.
                helper = f.functions.get(func_name)
                if helper is not None:
                    returned = [self.value_kind(r.value, helper, r.order, depth + 1) for r in f.returns_of(helper)]
                    if returned and all(k.kind is returned[0].kind for k in returned):
                        return returned[0]
            return UNKNOWN
        if isinstance(expr, cst.Subscript):
            return self.value_kind(expr.value, scope, order, depth + 1)
        name = dotted(expr)
        if name is not None:
            # Every definition that may reach the read must agree: a value assigned in a branch
            # (`if not training: x = tf.nn.softmax(x)`) is not the only one that reaches a read after it.
            reaching = reaching_assignments(f, name, scope, order)
            if not reaching:
                return self._kind_from_param(name, scope, depth)
            kinds: list[OutputInfo] = []
            for binding in reaching:
                if binding.value is None or binding.index is not None:
                    return UNKNOWN
                kinds.append(self.value_kind(binding.value, binding.scope, binding.order, depth + 1))
                if kinds[-1].kind is not kinds[0].kind:
                    return UNKNOWN
            return kinds[0]
        return UNKNOWN

    def _identity(self, cls: str, call: cst.CSTNode) -> bool:
        """Layers that hand their input on unchanged in kind: Dropout, Reshape, ... and
        `Activation("linear", dtype="float32")`, the mixed-precision guide's cast to float32."""
        if cls in PASSTHROUGH_LAYERS:
            return True
        return cls == "Activation" and isinstance(call, cst.Call) and layer_activation(self.f, call, cls) == "linear"

    def _kind_from_param(self, name: str, scope: Scope, depth: int) -> OutputInfo:
        """A parameter (`def xent(logits, labels)`): follow the module's call sites when they all agree."""
        func = self.f.param_scope(name, scope)
        if func is None or "." in name:
            return UNKNOWN
        sites = self.f.call_sites_of_scope(func)
        if len(sites) > 16:  # a utility called everywhere: not worth the (exponential) walk
            return UNKNOWN
        found: OutputInfo | None = None
        for site in sites:
            arg = self.f.argument_for_param(site.node, func, name)
            info = self.value_kind(arg, site.scope, site.order, depth + 1)
            if info.kind is Output.UNKNOWN or (found is not None and found.kind is not info.kind):
                return UNKNOWN
            found = info
        return found or UNKNOWN

    def _layer_held_by(self, func: cst.BaseExpression, scope: Scope, order: int) -> tuple[str, cst.Call] | None:
        """The one Keras layer a called name holds (`self.dense` for `self.dense = Dense(...)`), by the
        value model."""
        found = layer_constructions(self.f, func, scope, order)
        return found[0] if found and len(found) == 1 else None


def expr_order(facts: Facts, call: cst.Call, default: int) -> int:
    site = facts.call_site(call)
    return site.order if site is not None else default


def model_reader(facts: Facts) -> ModelReader:
    return facts.cached("model_reader", lambda: ModelReader(facts))


def trains_a_model(facts: Facts) -> bool:
    """Does this module build or train a network (layers, models, a tape, `fit`)? Optimizer unit tests
    that step a bare variable do not."""

    def compute() -> bool:
        if facts.uses_gradient_tape:
            return True
        for site in facts.calls:
            q = site.qualified or ""
            if q.startswith(("keras.layers.", "keras.applications.")) or q in MODEL_CLASSES or q in (
                "keras.models.load_model", "keras.saving.load_model"
            ):
                return True
            if site.method in ("fit", "train_on_batch") and site.receiver is not None:
                return True
        return any(
            base in MODEL_CLASSES or base in ("keras.layers.Layer", "keras.Layer")
            for cls in facts.classes.values() for base in cls.bases
        )

    return facts.cached("trains_a_model", compute)


# Layers that compute an affine map of their input when built without an activation.
_AFFINE_LAYERS = frozenset({"Dense", "EinsumDense", "Conv1D", "Conv2D", "Conv3D", "Embedding", "InputLayer",
                            "Input", "Flatten", "Reshape", "Dropout", "Normalization", "Rescaling"})
_NONLINEAR_WORDS = ("relu", "sigmoid", "tanh", "softmax", "elu", "gelu", "swish", "silu", "selu", "softplus",
                    "activations", "log_softmax", "hard_", "mish")


def _affine_layer(facts: Facts, cls: str, call: cst.Call) -> bool:
    if cls not in _AFFINE_LAYERS:
        return cls == "Activation" and layer_activation(facts, call, cls) == "linear"
    if cls in ACTIVATION_LAYERS:
        return layer_activation(facts, call, cls) in LINEAR_ACTIVATIONS
    return True


def is_linear_model(facts: Facts, construction: cst.CSTNode, class_name: str | None) -> bool:
    """True only when a model provably applies no nonlinearity anywhere (a linear or logistic-free
    regression): a Sequential of affine layers, or a subclass whose layers are all affine and whose
    `call` applies no activation. Unknown layers or helpers make the answer False."""
    if class_name is not None:
        info = facts.classes.get(class_name)
        if info is None or "call" not in info.methods:
            return False
        layers = [b for b in facts.bindings
                  if b.scope.class_name == class_name and isinstance(b.value, cst.Call)
                  and layer_class(facts, b.value) is not None]
        if not all(_affine_layer(facts, layer_class(facts, b.value) or "", b.value) for b in layers):  # type: ignore[arg-type]
            return False
        call = info.methods["call"]
        attributes = {b.target for b in layers}
        for site in facts.calls:
            if not call.contains(site.scope):
                continue
            qualified = site.qualified or ""
            if qualified:
                if any(word in qualified.rsplit(".", 1)[-1] for word in _NONLINEAR_WORDS) or qualified.startswith(
                        "keras.activations"):
                    return False
                continue
            if site.func not in attributes:
                return False  # a helper or sub-model we do not read
        return bool(layers)
    if not isinstance(construction, cst.Call):
        return False
    if not is_sequential(facts, construction):
        cls = layer_class(facts, construction)
        return cls is not None and _affine_layer(facts, cls, construction)
    # `Sequential([normalizer, Dense(1)])`: each layer read through the value model, `.add` calls included.
    stack = stack_layers(facts, construction)
    if not stack:
        return False
    return all(layer is not None and _affine_layer(facts, layer[0], layer[1]) for layer in stack)


def layer_constructions(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int
                        ) -> list[tuple[str, cst.Call]] | None:
    """The Keras layer constructions `expr` may be (`Dense`, call), or None when any is not one."""
    return keras_layers(values_of(facts, expr, scope, order))


def keras_layers(held: frozenset[Value]) -> list[tuple[str, cst.Call]] | None:
    """The Keras layer constructions these values are (`Dense`, call), or None when any is not one."""
    out: list[tuple[str, cst.Call]] = []
    for value in held:
        if value.kind is not Kind.LAYER or type(value.node) is not cst.Call or value.cls is None:
            return None
        if not value.cls.startswith("keras.layers."):
            return None
        out.append((value.cls.rsplit(".", 1)[-1], value.node))
    return out


# ----------------------------------------------------------------------------- compile()


@dataclass(frozen=True, eq=False)
class Compile:
    """A `model.compile(...)` call: the model(s) it may configure and what it is given (the expressions
    as written; None where an argument is not passed)."""

    site: CallSite
    models: frozenset[Value]  # what the receiver may be, by the value model
    optimizer: cst.BaseExpression | None
    loss: cst.BaseExpression | None
    metrics: cst.BaseExpression | None

    def keyword(self, name: str) -> cst.Arg | None:
        """A keyword argument (`run_eagerly=`, `jit_compile=`, `steps_per_execution=`)."""
        return keyword_arg(self.site.node, name)


def compiles(facts: Facts) -> list[Compile]:
    """Every `x.compile(...)` call of the module, in document order: the one reader of what a model is
    compiled with."""

    def compute() -> list[Compile]:
        found: list[Compile] = []
        for site in facts.calls:
            func = site.node.func
            if site.method != "compile" or type(func) is not cst.Attribute:
                continue
            node = site.node
            found.append(Compile(site, values_of(facts, func.value, site.scope, site.order),
                                 arg_value(node, 0, "optimizer"), arg_value(node, 1, "loss"),
                                 arg_value(node, 2, "metrics")))
        return found

    return facts.cached("models.compiles", compute)


def compile_for(facts: Facts, use: CallSite) -> Compile | None:
    """The `compile()` that configured the model a later call on it (`model.fit(...)`) runs with: the last
    one before it, in its scope or one around it or inside it, whose model is the one the call's receiver
    holds (by the value model: one known model, the same at both). None when that cannot be told."""
    func = use.node.func
    if type(func) is not cst.Attribute:
        return None
    receiver = values_of(facts, func.value, use.scope, use.order)
    if len(receiver) != 1 or next(iter(receiver)).kind not in (Kind.MODEL, Kind.INSTANCE):
        return None
    before = [c for c in compiles(facts) if c.models == receiver and c.site.order < use.order and (
        c.site.scope is use.scope or c.site.scope.contains(use.scope) or use.scope.contains(c.site.scope))]
    return before[-1] if before else None

"""Which layer consumes which layer's output, and what a layer's kernel is initialized with.

`successors(facts)` pairs each Dense/convolution layer construction with the weighted layer that takes
its output next: neighbours in a `Sequential([...])` list (or its `.add` calls), and in functional or
subclassed code a layer applied to a tensor that another layer's application computed
(`out = Dense(1)(h)` with `h = Dense(64)(x)`; `self.d2(self.d1(x))`). Layers that keep the units apart
(Dropout, an activation, BatchNorm, pooling, Flatten) may sit in between and are listed. Anything else
between the two (an `Add` of a residual branch, a custom layer, a concatenation) ends the chain: no pair.

`constant_initializer(facts, expr, scope, order)` says whether an initializer argument is provably a
constant (`"zeros"`, `Zeros()`, `Ones()`, `Constant(c)`, `tf.zeros_initializer()`), and which one.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Facts, Scope, arg_value, keyword_arg
from tapelint.analysis.keras import NOISE_LAYERS, layer_activation, layer_class
from tapelint.analysis.models import layer_constructions, sequential_constructions, stack_layers
from tapelint.analysis.outputs import UNIT_LAYERS, constant_number, origins
from tapelint.analysis.values import Kind, values_of

# Layers that hand each unit on by itself: identical units stay identical through them.
KEEP_UNITS = frozenset({
    "Activation", "ReLU", "LeakyReLU", "ELU", "Softmax", "BatchNormalization", "LayerNormalization",
    "Flatten", "Reshape", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
    "AveragePooling3D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D", "GlobalAveragePooling1D",
    "GlobalAveragePooling2D", "GlobalAveragePooling3D", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D",
    "AvgPool2D", "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalAvgPool1D", "GlobalAvgPool2D",
    "UpSampling1D", "UpSampling2D", "UpSampling3D", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D",
    "Cropping1D", "Cropping2D", "Cropping3D", "ActivityRegularization",
})
# Layers that draw random numbers per unit while training: they tell identical units apart.
NOISE = NOISE_LAYERS
# Weighted layers that may take the output of a Dense/convolution layer.
FOLLOWING = frozenset({*UNIT_LAYERS, "EinsumDense", "SeparableConv1D", "SeparableConv2D", "DepthwiseConv2D",
                       "LSTM", "GRU", "SimpleRNN", "Bidirectional", "MultiHeadAttention", "ConvLSTM2D"})
_SKIP_AT_START = frozenset({"InputLayer", "Input"})

_ZEROS = frozenset({"keras.initializers.Zeros", "keras.initializers.zeros", "tensorflow.zeros_initializer",
                    "tensorflow.compat.v1.zeros_initializer", "tensorflow.compat.v1.initializers.zeros"})
_ONES = frozenset({"keras.initializers.Ones", "keras.initializers.ones", "tensorflow.ones_initializer",
                   "tensorflow.compat.v1.ones_initializer", "tensorflow.compat.v1.initializers.ones"})
_CONSTANT = frozenset({"keras.initializers.Constant", "keras.initializers.constant", "tensorflow.constant_initializer",
                       "tensorflow.compat.v1.constant_initializer", "tensorflow.compat.v1.initializers.constant"})
# The string identifiers Keras 3 resolves to a constant initializer (checked on Keras 3.15).
_STRINGS = {"zeros": 0.0, "Zeros": 0.0, "zero": 0.0, "ones": 1.0, "Ones": 1.0, "one": 1.0}


@dataclass(frozen=True)
class ConstantInit:
    value: float | None  # None: a constant whose value is not known here
    text: str  # as written, for messages


def constant_initializer(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int
                         ) -> ConstantInit | None:
    """The constant an initializer argument fills a weight with, when every value it may hold is one
    constant initializer; None when it is something else or cannot be told."""
    if expr is None:
        return None
    found = values_of(facts, expr, scope, order)
    values: set[float | None] = set()
    for value in found:
        if value.kind is Kind.CONSTANT and isinstance(value.const, str) and value.const in _STRINGS:
            values.add(_STRINGS[value.const])
        elif value.kind is Kind.EXTERNAL and isinstance(value.node, cst.Call) and value.cls is not None:
            if value.cls in _ZEROS:
                values.add(0.0)
            elif value.cls in _ONES:
                values.add(1.0)
            elif value.cls in _CONSTANT:
                site = facts.call_site(value.node)
                argument = arg_value(value.node, 0, "value")
                if argument is None:
                    values.add(0.0)  # `Constant()` fills with 0
                elif site is not None:
                    values.add(constant_number(facts, argument, site.scope, site.order))
                else:
                    values.add(None)
            else:
                return None
        else:
            return None
    if not values:
        return None
    text = facts.module.code_for_node(expr)
    return ConstantInit(next(iter(values)) if len(values) == 1 else None, text)


def layer_initializer(facts: Facts, construction: cst.Call, keyword: str) -> ConstantInit | None:
    """`constant_initializer` of a layer construction's `kernel_initializer=` (or another keyword)."""
    site = facts.call_site(construction)
    arg = keyword_arg(construction, keyword)
    if site is None or arg is None:
        return None
    return constant_initializer(facts, arg.value, site.scope, site.order)


@dataclass(frozen=True)
class Successor:
    """`layer` computes a tensor that `following` (a weighted layer) takes next, through `between`."""

    layer: cst.Call
    layer_class: str
    following: cst.Call
    following_class: str
    between: tuple[tuple[str, cst.Call], ...]

    @property
    def through_noise(self) -> bool:
        return any(cls in NOISE for cls, _ in self.between)

    def first_activation(self, facts: Facts) -> str | None:
        """The activation applied to the layer's output: its own, else the first activation layer
        between it and `following` ("<unknown>" when one cannot be read; None when linear)."""
        own = layer_activation(facts, self.layer, self.layer_class)
        if own is not None:
            return own
        for cls, call in self.between:
            if cls in ("Activation", "ReLU", "LeakyReLU", "ELU", "Softmax"):
                return layer_activation(facts, call, cls) if cls != "LeakyReLU" else "leaky_relu"
        return None


def successors(facts: Facts) -> list[Successor]:
    """Every (Dense/convolution layer, next weighted layer) pair this module wires together."""
    return facts.cached("layer_successors", lambda: _Graph(facts).pairs())


class _Graph:
    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.found: dict[tuple[int, int], Successor] = {}

    def pairs(self) -> list[Successor]:
        applications = self._applications()
        for site in sequential_constructions(self.f):
            layers = stack_layers(self.f, site.node)
            if layers is not None:
                self._sequence(layers)
        for key, (cls, construction, scope, order) in applications.items():
            call = self.f.call_by_node[key].node
            if cls not in FOLLOWING:
                continue
            self._functional(applications, cls, construction, arg_value(call, 0, "inputs"), scope, order)
        return list(self.found.values())

    def _add(self, layer: tuple[str, cst.Call], following: tuple[str, cst.Call],
             between: list[tuple[str, cst.Call]]) -> None:
        key = (id(layer[1]), id(following[1]))
        if key not in self.found:
            self.found[key] = Successor(layer[1], layer[0], following[1], following[0], tuple(between))

    # ----- Sequential models
    def _sequence(self, layers: list[tuple[str, cst.Call] | None]) -> None:
        for index, layer in enumerate(layers):
            if layer is None or layer[0] not in UNIT_LAYERS:
                continue
            between: list[tuple[str, cst.Call]] = []
            for after in layers[index + 1:]:
                if after is None:
                    break
                if after[0] in KEEP_UNITS or after[0] in NOISE:
                    between.append(after)
                    continue
                if after[0] in FOLLOWING:
                    self._add(layer, after, between)
                break

    # ----- functional and subclassed models
    def _applications(self) -> dict[int, tuple[str, cst.Call, Scope, int]]:
        """Calls that apply a layer construction of this module: `Dense(1)(h)`, `self.out(h)`, `layer(h)`."""
        f = self.f
        out: dict[int, tuple[str, cst.Call, Scope, int]] = {}
        held: set[str] = set()
        for site in f.calls:
            func = site.node.func
            if isinstance(func, cst.Call):
                cls = layer_class(f, func)
                if cls is not None:
                    out[id(site.node)] = (cls, func, site.scope, site.order)
        for binding in f.bindings:
            if isinstance(binding.value, cst.Call) and binding.index is None and not binding.path:
                if layer_class(f, binding.value) is not None:
                    held.add(binding.target)
        for name in held:
            for site in f.calls_to(name):
                found = layer_constructions(f, site.node.func, site.scope, site.order)
                if found and len(found) == 1:
                    out[id(site.node)] = (found[0][0], found[0][1], site.scope, site.order)
        return out

    def _functional(self, applications: dict[int, tuple[str, cst.Call, Scope, int]], cls: str,
                    construction: cst.Call, inputs: cst.BaseExpression | None, scope: Scope, order: int) -> None:
        between: list[tuple[str, cst.Call]] = []
        for _ in range(16):
            found = origins(self.f, inputs, scope, order)
            if not found or len(found) != 1 or not isinstance(found[0].expr, cst.Call):
                return
            producer = applications.get(id(found[0].expr))
            if producer is None:
                return
            producer_cls, producer_construction, scope, order = producer
            if producer_cls in UNIT_LAYERS:
                self._add((producer_cls, producer_construction), (cls, construction), list(reversed(between)))
                return
            if producer_cls not in KEEP_UNITS and producer_cls not in NOISE:
                return
            between.append((producer_cls, producer_construction))
            inputs = arg_value(found[0].expr, 0, "inputs")

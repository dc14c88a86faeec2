"""What tapelint knows about Keras objects: optimizers, losses, layers, models and their outputs.

All lookups go through `Facts`, so a name is followed through assignments, module-level globals,
factory functions, parameters (via the module's call sites) and `self.` attributes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import libcst as cst

from tapelint.analysis.constants import boolean, number, string
from tapelint.analysis.facts import DEFINITION_TYPES, Binding, CallSite, Facts, Scope, arg_value, keyword_arg
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, values_of
from tapelint.analysis.walk import child_nodes
from tapelint.analysis.vocabulary import (  # noqa: F401  (re-exported: rules import them from here)
    ADAPTIVE_OPTIMIZERS,
    APPLICATIONS_PREFIX,
    APPLY_METHODS,
    LOSS_SCALE_WRAPPERS,
    MODEL_CLASSES,
    OPTIMIZER_CLASSES,
    SCHEDULE_PREFIX,
    SGD_OPTIMIZERS,
    is_legacy_optimizer,
    optimizer_class,
)



@dataclass
class LearningRate:
    value: float | None
    node: cst.BaseExpression | None  # the expression the value came from
    via_schedule: str | None = None


def learning_rate(facts: Facts, call: CallSite) -> LearningRate:
    """The (initial) learning rate an optimizer construction uses, through names and schedules."""
    expr = arg_value(call.node, 0, "learning_rate")
    if expr is None:
        expr = arg_value(call.node, None, "lr")
    if expr is None:
        return LearningRate(None, None)
    return _lr_value(facts, expr, call.scope, call.order)


def _lr_value(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> LearningRate:
    """A number, or the initial rate of the schedule the expression holds (by the value model)."""
    value = number(facts, expr, scope, order)
    if value is not None:
        return LearningRate(value, expr)
    found = values_of(facts, expr, scope, order)
    if len(found) != 1:
        return LearningRate(None, expr)
    (held,) = found
    if held.kind is not Kind.SCHEDULE or not isinstance(held.node, cst.Call) or held.cls is None:
        return LearningRate(None, expr)
    name = held.cls.rsplit(".", 1)[-1]
    initial = arg_value(held.node, 0, "initial_learning_rate")
    site = facts.call_site(held.node)
    if initial is None or site is None:
        return LearningRate(None, held.node, name)
    return LearningRate(number(facts, initial, site.scope, site.order), initial, name)


# ----------------------------------------------------------------------------- losses


class LossFamily(str, enum.Enum):
    CATEGORICAL = "categorical"
    SPARSE = "sparse"
    BINARY = "binary"


_LOSS_CLASSES = {
    "CategoricalCrossentropy": LossFamily.CATEGORICAL,
    "CategoricalFocalCrossentropy": LossFamily.CATEGORICAL,
    "SparseCategoricalCrossentropy": LossFamily.SPARSE,
    "BinaryCrossentropy": LossFamily.BINARY,
    "BinaryFocalCrossentropy": LossFamily.BINARY,
}
_LOSS_FUNCTIONS = {
    "categorical_crossentropy": LossFamily.CATEGORICAL,
    "categorical_focal_crossentropy": LossFamily.CATEGORICAL,
    "sparse_categorical_crossentropy": LossFamily.SPARSE,
    "binary_crossentropy": LossFamily.BINARY,
    "binary_focal_crossentropy": LossFamily.BINARY,
}
# The `tf.nn` cross-entropies take logits by definition: `(labels, logits)`, no `from_logits` switch.
_TF_NN_LOSSES = {
    "softmax_cross_entropy_with_logits": LossFamily.CATEGORICAL,
    "softmax_cross_entropy_with_logits_v2": LossFamily.CATEGORICAL,
    "sparse_softmax_cross_entropy_with_logits": LossFamily.SPARSE,
    "sigmoid_cross_entropy_with_logits": LossFamily.BINARY,
    "weighted_cross_entropy_with_logits": LossFamily.BINARY,
}
_LOSS_STRINGS = {
    "categorical_crossentropy": LossFamily.CATEGORICAL,
    "sparse_categorical_crossentropy": LossFamily.SPARSE,
    "binary_crossentropy": LossFamily.BINARY,
}


@dataclass
class LossSpec:
    """A cross-entropy loss: where it was built and whether it expects logits."""

    family: LossFamily
    from_logits: bool | None  # None: not a constant
    construction: cst.Call | None  # the class construction or function call that sets from_logits
    from_logits_arg: cst.Arg | None
    name: str  # class or function name, for messages
    is_function: bool = False
    raw_op: bool = False  # a `tf.nn.*_with_logits` op: always logits, arguments `(labels, logits)`


def _loss_from_call(facts: Facts, call: cst.Call) -> LossSpec | None:
    qualified = facts.resolve(call.func)
    if qualified and qualified.startswith("tensorflow.nn.") and qualified.count(".") == 2:
        last = qualified.rsplit(".", 1)[-1]
        raw_family = _TF_NN_LOSSES.get(last)
        if raw_family is None:
            return None
        return LossSpec(raw_family, True, call, None, f"tf.nn.{last}", is_function=True, raw_op=True)
    if qualified and qualified.startswith("tensorflow.compat.v1.losses."):
        last = qualified.rsplit(".", 1)[-1]
        tf1_family = _TF1_LOSSES.get(last)
        if tf1_family is None:
            return None
        return LossSpec(tf1_family, True, call, None, f"tf.compat.v1.losses.{last}", is_function=True, raw_op=True)
    if not qualified or not qualified.startswith("keras.losses."):
        return None
    last = qualified.rsplit(".", 1)[-1]
    family = _LOSS_CLASSES.get(last)
    is_function = False
    if family is None:
        family = _LOSS_FUNCTIONS.get(last)
        is_function = family is not None
    if family is None:
        return None
    arg = keyword_arg(call, "from_logits")
    if arg is None and not is_function:
        positional = [a for a in call.args if a.keyword is None]
        arg = positional[0] if positional else None
    if arg is None:
        from_logits: bool | None = False
    else:
        from_logits = boolean(arg.value)
    return LossSpec(family, from_logits, call, arg, last, is_function)


@dataclass
class LossCall:
    """A place where a cross-entropy is evaluated on a prediction."""

    site: CallSite
    spec: LossSpec
    y_pred: cst.BaseExpression | None
    y_true: cst.BaseExpression | None


# Keras metrics that compute a cross-entropy and take `from_logits=` like the losses do.
_XENT_METRICS = {
    "SparseCategoricalCrossentropy": LossFamily.SPARSE,
    "CategoricalCrossentropy": LossFamily.CATEGORICAL,
    "BinaryCrossentropy": LossFamily.BINARY,
}
# TF1's `tf.compat.v1.losses` ops take logits, with the arguments `(labels, logits)`.
_TF1_LOSSES = {
    "sparse_softmax_cross_entropy": LossFamily.SPARSE,
    "softmax_cross_entropy": LossFamily.CATEGORICAL,
    "sigmoid_cross_entropy": LossFamily.BINARY,
}


def _metric_from_call(facts: Facts, call: cst.Call) -> LossSpec | None:
    """`keras.metrics.SparseCategoricalCrossentropy(from_logits=...)` (keyword only: `name` comes first)."""
    qualified = facts.resolve(call.func) or ""
    if not qualified.startswith("keras.metrics."):
        return None
    last = qualified.rsplit(".", 1)[-1]
    family = _XENT_METRICS.get(last)
    if family is None:
        return None
    arg = keyword_arg(call, "from_logits")
    from_logits = False if arg is None else boolean(arg.value)
    return LossSpec(family, from_logits, call, arg, f"{last} metric")


def metric_calls(facts: Facts) -> list[LossCall]:
    """Every cross-entropy metric fed a prediction: `metric.update_state(y, p)` and `metric(y, p)`,
    with the metric read through the value model."""

    def compute() -> list[LossCall]:
        found: list[LossCall] = []
        for site in facts.calls:
            func = site.node.func
            target = func.value if type(func) is cst.Attribute and func.attr.value == "update_state" else func
            if type(func) is cst.Attribute and target is func:
                continue
            held = values_of(facts, target, site.scope, site.order)
            metrics = [v for v in held if v.kind is Kind.METRIC and isinstance(v.node, cst.Call)]
            if not metrics or len(metrics) != len(held):
                continue
            specs = [_metric_from_call(facts, v.node) for v in metrics]  # type: ignore[arg-type]
            if any(spec is None for spec in specs) or len({(s.family, s.from_logits) for s in specs}) != 1:  # type: ignore[union-attr]
                continue
            found.append(LossCall(site, specs[0], arg_value(site.node, 1, "y_pred"),  # type: ignore[arg-type]
                                  arg_value(site.node, 0, "y_true")))
        return found

    return facts.cached("metric_calls", compute)


def loss_object(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> LossSpec | None:
    """The loss object an expression refers to (`loss_fn`, `self.loss_fn`, a constructor call)."""
    if expr is None or depth > 5:
        return None
    kind = type(expr)  # exact types: a failed isinstance against a libcst class costs an ABC check
    if kind is cst.Call:
        spec = _loss_from_call(facts, expr)  # type: ignore[arg-type]
        if spec is not None and not spec.is_function:
            return spec
        return None
    if kind is cst.SimpleString:
        family = _LOSS_STRINGS.get(string(expr) or "")
        return LossSpec(family, False, None, None, string(expr) or "", False) if family else None
    name = dotted(expr)
    if name is None:
        return None
    binding = facts.binding_before(name, scope, order)
    if binding is None or binding.value is None or binding.index is not None:
        return None
    return loss_object(facts, binding.value, binding.scope, binding.order, depth + 1)


def loss_calls(facts: Facts) -> list[LossCall]:
    """Every cross-entropy evaluation in the module: `loss_fn(y, p)`, `categorical_crossentropy(y, p)`."""

    def compute() -> list[LossCall]:
        found: list[LossCall] = []
        for site in facts.calls:
            call = site.node
            spec = _loss_from_call(facts, call)
            if spec is not None and spec.raw_op:
                found.append(LossCall(site, spec, arg_value(call, 1, "logits"), arg_value(call, 0, "labels")))
                continue
            if spec is not None and spec.is_function:
                found.append(LossCall(site, spec, arg_value(call, 1, "y_pred"), arg_value(call, 0, "y_true")))
                continue
            spec = loss_object(facts, call.func, site.scope, site.order)
            if spec is not None:
                found.append(LossCall(site, spec, arg_value(call, 1, "y_pred"), arg_value(call, 0, "y_true")))
        return found

    return facts.cached("loss_calls", compute)


# ----------------------------------------------------------------------------- layers and models


class Output(str, enum.Enum):
    PROBABILITIES = "probabilities"
    LOGITS = "logits"
    OTHER = "other"  # relu, tanh, ...: neither
    UNKNOWN = "unknown"


PROBABILITY_ACTIVATIONS = frozenset({"softmax", "sigmoid"})
LINEAR_ACTIVATIONS = frozenset({"linear", None})
ACTIVATION_FUNCTIONS = {
    "tensorflow.nn.softmax": "softmax",
    "tensorflow.math.softmax": "softmax",
    "tensorflow.nn.sigmoid": "sigmoid",
    "tensorflow.math.sigmoid": "sigmoid",
    "tensorflow.sigmoid": "sigmoid",
    "keras.activations.softmax": "softmax",
    "keras.activations.sigmoid": "sigmoid",
    "keras.ops.softmax": "softmax",
    "keras.ops.sigmoid": "sigmoid",
    "keras.backend.softmax": "softmax",
    "keras.backend.sigmoid": "sigmoid",
    "tensorflow.nn.relu": "relu",
    "tensorflow.nn.tanh": "tanh",
    "tensorflow.math.tanh": "tanh",
    "tensorflow.tanh": "tanh",
    "keras.activations.relu": "relu",
    "keras.activations.tanh": "tanh",
    "keras.activations.linear": "linear",
}
WEIGHTED_LAYERS = frozenset(
    {
        "Dense", "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "Conv1DTranspose", "Conv3DTranspose",
        "SeparableConv2D", "SeparableConv1D", "DepthwiseConv2D", "Embedding", "LSTM", "GRU", "SimpleRNN",
        "BatchNormalization", "LayerNormalization", "MultiHeadAttention", "EinsumDense", "Bidirectional",
        "ConvLSTM2D", "GroupNormalization",
    }
)
ACTIVATION_LAYERS = frozenset({"Dense", "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "SeparableConv2D",
                               "DepthwiseConv2D", "EinsumDense"})
PASSTHROUGH_LAYERS = frozenset({"Dropout", "Reshape", "Flatten", "Permute", "SpatialDropout1D",
                                "SpatialDropout2D", "GaussianNoise", "ActivityRegularization"})

# keras.applications families that contain BatchNormalization layers.
BATCHNORM_APPLICATIONS = (
    "ResNet", "EfficientNet", "MobileNet", "DenseNet", "Inception", "Xception", "NASNet", "ConvNeXt",
    "RegNet",
)
UNKNOWN_LAYER = "<unknown layer>"


def layer_class(facts: Facts, call: cst.Call) -> str | None:
    """`Dense` if the call constructs a Keras layer, else None."""
    if not isinstance(call, cst.Call):
        return None
    qualified = facts.resolve(call.func)
    if qualified and qualified.startswith("keras.layers."):
        return qualified.rsplit(".", 1)[-1]
    return None


def application_name(facts: Facts, call: cst.Call) -> str | None:
    qualified = facts.resolve(call.func)
    if qualified and qualified.startswith(APPLICATIONS_PREFIX):
        last = qualified.rsplit(".", 1)[-1]
        if last[:1].isupper():
            return last
    return None


def application_has_batchnorm(name: str) -> bool:
    return name.startswith(BATCHNORM_APPLICATIONS)


def _activation_name(facts: Facts, expr: cst.BaseExpression | None) -> str | None:
    if expr is None:
        return None
    text = string(expr)
    if text is not None:
        return text.lower()
    if isinstance(expr, cst.Name) and expr.value == "None":
        return None
    qualified = facts.resolve(expr)
    if qualified in ACTIVATION_FUNCTIONS:
        return ACTIVATION_FUNCTIONS[qualified]
    return "<unknown>"


def layer_activation(facts: Facts, call: cst.Call, cls: str) -> str | None:
    """The activation a layer construction applies ("softmax", "relu", None for linear)."""
    if cls == "Softmax":
        return "softmax"
    if cls in ("Activation",):
        return _activation_name(facts, arg_value(call, 0, "activation"))
    if cls == "ReLU":
        return "relu"
    if cls in ACTIVATION_LAYERS:
        position = 1 if cls in ("Dense", "EinsumDense") else None
        return _activation_name(facts, arg_value(call, position, "activation"))
    return "<unknown>"


def _kind_from_activation(activation: str | None) -> Output:
    if activation in PROBABILITY_ACTIVATIONS:
        return Output.PROBABILITIES
    if activation in LINEAR_ACTIVATIONS:
        return Output.LOGITS
    if activation == "<unknown>":
        return Output.UNKNOWN
    return Output.OTHER


@dataclass
class OutputInfo:
    kind: Output
    node: cst.CSTNode | None = None  # where the final activation (or its absence) is written
    description: str = ""
    activation: str | None = None


UNKNOWN = OutputInfo(Output.UNKNOWN)


@dataclass
class ModelInfo:
    """A model built in this module, as far as it can be read statically."""

    construction: cst.CSTNode
    kind: str  # "sequential" | "functional" | "subclass" | "application" | "loaded" | "unknown"
    name: str
    layers: list[tuple[str, cst.Call]] = field(default_factory=list)
    output: OutputInfo = field(default_factory=lambda: UNKNOWN)
    application: str | None = None
    class_name: str | None = None


_BRANCHING = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.Match)
_BRANCHING_TYPES = frozenset(_BRANCHING)


class ModelReader:
    """Reads models and the kind of value an expression holds (probabilities or logits)."""

    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self._subclasses_in_progress: set[str] = set()
        # id(scope root) -> the branches around every node of it, once a second question about that scope
        # comes (None after the first: one question is answered by a search that stops early).
        self._branch_maps: dict[int, dict[int, tuple[int, ...]] | None] = {}
        self._top_branch_maps: dict[int, dict[int, tuple[int, ...]]] = {}

    # --- models
    def model_of(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> ModelInfo | None:
        if expr is None or depth > 8:
            return None
        f = self.f
        if type(expr) is cst.Call:  # (exact type: a failed isinstance costs an ABC check)
            qualified = f.resolve(expr.func)  # type: ignore[attr-defined]
            app = application_name(f, expr)  # type: ignore[arg-type]
            if app is not None:
                include_top = boolean(arg_value(expr, 0, "include_top"))
                info = ModelInfo(expr, "application", app, application=app)
                if include_top is not False:
                    act = _activation_name(f, arg_value(expr, None, "classifier_activation")) if keyword_arg(
                        expr, "classifier_activation") else "softmax"
                    info.output = OutputInfo(_kind_from_activation(act), expr, f"`{app}` classifier", act)
                return info
            if qualified in ("keras.Sequential", "keras.models.Sequential"):
                return self._sequential(expr, scope, order)
            if qualified in ("keras.Model", "keras.models.Model"):
                outputs = arg_value(expr, 1, "outputs")
                info = ModelInfo(expr, "functional", "Model")
                if outputs is not None:
                    info.output = self.value_kind(outputs, scope, expr_order(f, expr, order), depth + 1)
                return info
            if qualified in ("keras.models.load_model", "keras.saving.load_model"):
                return ModelInfo(expr, "loaded", "load_model")
            name = dotted(expr.func)
            if name is not None and name in f.classes and self._is_model_class(name):
                return self._subclass(expr, name)
            if name is not None and name in f.functions:
                functions = [f.functions[name]]
            else:
                # A builder method (`self.model = self.create_model()`) or any callee the value model can
                # name: what the function returns.
                callee = values_of(f, expr.func, scope, order)  # type: ignore[attr-defined]
                functions = [v.scope for v in callee if v.kind is Kind.FUNCTION and v.scope is not None]
                if len(functions) != len(callee):
                    return None
            for func in functions:
                for ret in f.returns_of(func):
                    info = self.model_of(ret.value, func, ret.order, depth + 1)
                    if info is not None:
                        return info
            return None
        name = dotted(expr)
        if name is None:
            return None
        if name == "self" and scope.class_name and self._is_model_class(scope.class_name):
            return self._subclass(f.classes[scope.class_name].node, scope.class_name)
        binding = f.binding_before(name, scope, order)
        if binding is None:
            return self._model_from_param(name, scope, depth)
        if binding.value is None or binding.index is not None:
            return None
        info = self.model_of(binding.value, binding.scope, binding.order, depth + 1)
        if info is not None and info.kind == "sequential":
            self._add_calls(info, name, binding)
        return info

    def _model_from_param(self, name: str, scope: Scope, depth: int) -> ModelInfo | None:
        """A parameter: follow the module's call sites when they all agree."""
        func = self.f.param_scope(name, scope)
        if func is None:
            return None
        found: ModelInfo | None = None
        for site in self.f.call_sites_of_scope(func):
            arg = self.f.argument_for_param(site.node, func, name)
            info = self.model_of(arg, site.scope, site.order, depth + 1)
            if info is None:
                return None
            if found is not None and found.construction is not info.construction:
                return None
            found = info
        return found

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

    def _sequential(self, call: cst.Call, scope: Scope, order: int) -> ModelInfo:
        info = ModelInfo(call, "sequential", "Sequential")
        layers_expr = arg_value(call, 0, "layers")
        if isinstance(layers_expr, (cst.List, cst.Tuple)):
            for element in layers_expr.elements:
                value = element.value
                cls = layer_class(self.f, value) if isinstance(value, cst.Call) else None
                # Anything that is not a Keras layer we can read (a custom layer, a sub-model, a
                # starred list) makes the output unknown rather than skipping to the layer before it.
                info.layers.append((cls or UNKNOWN_LAYER, value))  # type: ignore[arg-type]
        elif layers_expr is not None:
            info.layers.append((UNKNOWN_LAYER, layers_expr))  # type: ignore[arg-type]
        info.output = self._sequential_output(info)
        return info

    def _add_calls(self, info: ModelInfo, name: str, binding: Binding) -> None:
        added = False
        for site in self.f.method_calls(name, "add"):
            if site.order > binding.order and site.scope is binding.scope:
                layer = arg_value(site.node, 0, "layer")
                if layer is not None and all(layer is not existing for _, existing in info.layers):
                    cls = layer_class(self.f, layer) if isinstance(layer, cst.Call) else None
                    info.layers.append((cls or UNKNOWN_LAYER, layer))  # type: ignore[arg-type]
                    added = True
        if added:
            info.output = self._sequential_output(info)

    def _sequential_output(self, info: ModelInfo) -> OutputInfo:
        for cls, call in reversed(info.layers):
            if cls == "InputLayer" or cls == "Input" or self._identity(cls, call):
                continue
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
                site = self.f.call_site(info.construction) if isinstance(info.construction, cst.Call) else None
                if site is not None and isinstance(call, (cst.Name, cst.Attribute, cst.Call)):
                    nested = self.model_of(call, site.scope, site.order, 1)
                    if nested is not None and nested.construction is not info.construction:
                        return nested.output
                return UNKNOWN
            act = layer_activation(self.f, call, cls)
            return OutputInfo(_kind_from_activation(act), call, f"`{cls}` layer", act)
        return UNKNOWN

    def _subclass(self, node: cst.CSTNode, class_name: str) -> ModelInfo:
        if class_name in self._subclasses_in_progress:
            # Its `call` returns (through helpers) a call of the class itself: known to be this subclass,
            # with nothing more said about its output while that is being worked out.
            return ModelInfo(node, "subclass", class_name, class_name=class_name)

        def compute() -> ModelInfo:
            info = ModelInfo(node, "subclass", class_name, class_name=class_name)
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

        def guarded() -> ModelInfo:
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
                act = ACTIVATION_FUNCTIONS[qualified]
                return OutputInfo(_kind_from_activation(act), expr, f"`{dotted(expr.func)}`", act)
            if qualified in ("tensorflow.squeeze", "tensorflow.reshape", "tensorflow.identity",
                             "keras.ops.squeeze", "keras.ops.reshape"):
                return self.value_kind(arg_value(expr, 0), scope, order, depth + 1)
            # `Layer(...)(x)`: a functional layer application
            if isinstance(expr.func, cst.Call):
                cls = layer_class(f, expr.func)
                if cls is not None:
                    if self._identity(cls, expr.func):
                        return self.value_kind(arg_value(expr, 0), scope, order, depth + 1)
                    act = layer_activation(f, expr.func, cls)
                    return OutputInfo(_kind_from_activation(act), expr.func, f"`{cls}` layer", act)
                return UNKNOWN
            # `self.dense(x)` where `self.dense = Dense(...)`
            func_name = dotted(expr.func)
            if func_name is not None:
                layer = self._layer_held_by(func_name, scope, order)
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
                    kinds = [self.value_kind(r.value, helper, r.order, depth + 1) for r in f.returns_of(helper)]
                    if kinds and all(k.kind is kinds[0].kind for k in kinds):
                        return kinds[0]
            return UNKNOWN
        if isinstance(expr, cst.Subscript):
            return self.value_kind(expr.value, scope, order, depth + 1)
        name = dotted(expr)
        if name is not None:
            binding = f.binding_before(name, scope, order)
            if binding is None:
                return self._kind_from_param(name, scope, depth)
            if binding.value is None or binding.index is not None:
                return UNKNOWN
            result = self.value_kind(binding.value, binding.scope, binding.order, depth + 1)
            # A value assigned in a branch (`if not training: x = tf.nn.softmax(x)`) may not be the one
            # that reaches this read: the definitions before the branch reach it too, and must agree.
            current = binding
            while current.scope is scope and self._assigned_in_branch(current, expr):
                earlier = f.binding_before(name, current.scope, current.order)
                if earlier is None or earlier.scope is not current.scope:
                    break
                if earlier.value is None or earlier.index is not None:
                    return UNKNOWN
                if self.value_kind(earlier.value, earlier.scope, earlier.order, depth + 1).kind is not result.kind:
                    return UNKNOWN
                current = earlier
            return result
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

    def _assigned_in_branch(self, binding: Binding, use: cst.CSTNode) -> bool:
        """Is `binding` made inside an `if`/loop/`try` block that does not also hold `use`?"""
        if binding.scope.node is None:
            # At module level the blocks around a node all lie in its top-level statement: map that
            # statement alone (a script's module body is most of the file).
            around_binding = self._around_at_top(binding.target_node)
            around_use = self._around_at_top(use)
            if around_binding is not None and around_use is not None:
                return any(block not in around_use for block in around_binding)
        root = binding.scope.node if binding.scope.node is not None else self.f.module
        if id(root) not in self._branch_maps:
            self._branch_maps[id(root)] = None
            found = _branches_around(root, binding.target_node, use)
        else:
            found = self._branch_maps[id(root)]  # type: ignore[assignment]
            if found is None:
                found = self._branch_maps[id(root)] = _branches_around(root)
        around_binding = found.get(id(binding.target_node), ())
        around_use = found.get(id(use), ())
        return any(block not in around_use for block in around_binding)

    def _around_at_top(self, node: cst.CSTNode) -> tuple[int, ...] | None:
        """The branching statements around `node` in the module's own body (None when the node is not
        one the collector numbered)."""
        index = self.f.top_statement.get(id(node))
        if index is None or index < 0:
            return None
        found = self._top_branch_maps.get(index)
        if found is None:
            statement = self.f.module.body[index]
            # A definition is another scope: nothing in it is in the module's own body.
            found = self._top_branch_maps[index] = {} if type(statement) in DEFINITION_TYPES \
                else _branches_around(statement)
        return found.get(id(node), ())

    def _layer_held_by(self, name: str, scope: Scope, order: int) -> tuple[str, cst.Call] | None:
        binding = self.f.binding_before(name, scope, order)
        if binding is None or not isinstance(binding.value, cst.Call):
            return None
        cls = layer_class(self.f, binding.value)
        return (cls, binding.value) if cls is not None else None


def _branches_around(root: cst.CSTNode, *nodes: cst.CSTNode) -> dict[int, tuple[int, ...]]:
    """For each of `nodes` found in `root`'s own body (not inside a nested def, class or lambda): the ids
    of the branching statements around it, outermost first. The search stops once all are found. With
    no `nodes`, the same for every node of that body."""
    wanted_ids = {id(node) for node in nodes}
    every = not nodes
    found: dict[int, tuple[int, ...]] = {}
    stack: list[tuple[cst.CSTNode, tuple[int, ...]]] = [(root, ())]
    while stack and (every or len(found) < len(wanted_ids)):
        node, around = stack.pop()
        kind = type(node)  # parsed nodes are of these exact classes: no isinstance per node
        if node is not root and kind in DEFINITION_TYPES:
            continue  # another scope
        if every or id(node) in wanted_ids:
            found[id(node)] = around
        inner = (*around, id(node)) if kind in _BRANCHING_TYPES else around
        for child in reversed(child_nodes(node)):
            stack.append((child, inner))
    return found


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
    qualified = facts.resolve(construction.func)
    if qualified not in ("keras.Sequential", "keras.models.Sequential"):
        cls = layer_class(facts, construction)
        return cls is not None and _affine_layer(facts, cls, construction)
    layers_expr = arg_value(construction, 0, "layers")
    if not isinstance(layers_expr, (cst.List, cst.Tuple)) or not layers_expr.elements:
        return False
    site = facts.call_site(construction)
    for element in layers_expr.elements:
        # `Sequential([normalizer, Dense(1)])`: each element read through the value model.
        found = layer_constructions(facts, element.value, site.scope, site.order) if site else None
        if not found:
            return False
        for cls, call in found:
            if not _affine_layer(facts, cls, call):
                return False
    return True


def layer_constructions(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int
                        ) -> list[tuple[str, cst.Call]] | None:
    """The Keras layer constructions `expr` may be (`Dense`, call), or None when any is not one."""
    out: list[tuple[str, cst.Call]] = []
    for value in values_of(facts, expr, scope, order):
        if value.kind is not Kind.LAYER or not isinstance(value.node, cst.Call) or value.cls is None:
            return None
        if not value.cls.startswith("keras.layers."):
            return None
        out.append((value.cls.rsplit(".", 1)[-1], value.node))
    return out


# Layers that keep the size of the last axis of their input.
SAME_WIDTH_LAYERS = frozenset({"Dropout", "Activation", "Softmax", "ReLU", "LeakyReLU", "BatchNormalization",
                               "LayerNormalization", "GaussianNoise", "ActivityRegularization"})


def sequential_layers(facts: Facts, construction: cst.Call, scope: Scope, order: int
                      ) -> list[tuple[str, cst.Call] | None]:
    """The layers of `Sequential([...])` and of its later `.add(...)` calls in the same scope, in order;
    None for one that cannot be read."""
    out: list[tuple[str, cst.Call] | None] = []
    listed = arg_value(construction, 0, "layers")
    if isinstance(listed, (cst.List, cst.Tuple)):
        for element in listed.elements:
            out.append(_one_layer(facts, element.value, scope, order) if not isinstance(
                element, cst.StarredElement) else None)
    elif listed is not None:
        return [None]
    for binding in facts.bindings_of_value(construction):
        if binding.index is not None or binding.path:
            continue
        later = [b.order for b in facts.bindings_of(binding.target) if b.scope is binding.scope and b.order > binding.order]
        end = min(later, default=1 << 60)
        for site in facts.calls_to(f"{binding.target}.add"):
            if site.scope is binding.scope and binding.order < site.order < end:
                out.append(_one_layer(facts, arg_value(site.node, 0, "layer"), site.scope, site.order))
    return out


def _one_layer(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> tuple[str, cst.Call] | None:
    if expr is None:
        return None
    found = layer_constructions(facts, expr, scope, order)
    return found[0] if found and len(found) == 1 else None


def sequential_width_layer(facts: Facts, construction: cst.Call, scope: Scope, order: int
                           ) -> tuple[str, cst.Call] | None:
    """The last layer of a `Sequential` (its list, then its `.add(...)` calls) that sets the width of its
    output (`Dense(1)` in `Sequential([Dense(32), Dense(1), Dropout(0.1)])`), or None when a layer from
    there on cannot be read."""
    for layer in reversed(sequential_layers(facts, construction, scope, order)):
        if layer is None:
            return None
        if layer[0] in SAME_WIDTH_LAYERS:
            continue
        return layer
    return None

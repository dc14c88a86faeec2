"""The Keras vocabulary tapelint reads: learning rates, layer classes and their activations, and what a
final activation makes of a model's output (probabilities or logits). Losses and metrics are read in
`evaluations.py`.

Models themselves (their layers, output, construction) are read in `models.py`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.constants import number, string
from tapelint.analysis.facts import CallSite, Facts, Scope, arg_value
from tapelint.analysis.values import Kind, values_of
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


# ----------------------------------------------------------------------------- layers and models


class Output(str, enum.Enum):
    PROBABILITIES = "probabilities"
    LOGITS = "logits"
    OTHER = "other"  # a known activation that gives neither (relu, tanh, log_softmax: OTHER_ACTIVATIONS)
    UNKNOWN = "unknown"


PROBABILITY_ACTIVATIONS = frozenset({"softmax", "sigmoid"})
LINEAR_ACTIVATIONS = frozenset({"linear", None})
# Keras activations whose outputs are neither probabilities nor logits: unbounded, negative, or log-scale
# (checked against Keras 3.15's `keras.activations`). The ones that stay in [0, 1] (`hard_sigmoid`,
# `sparse_sigmoid`, `sparsemax`) and names Keras does not define (a registered custom activation) are
# not here: their kind is unknown.
OTHER_ACTIVATIONS = frozenset({
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "swish", "hard_silu", "hard_swish",
    "mish", "softplus", "softsign", "squareplus", "sparse_plus", "tanh", "hard_tanh", "tanh_shrink",
    "soft_shrink", "hard_shrink", "exponential", "log_softmax", "log_sigmoid", "glu",
})
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
    "tensorflow.nn.elu": "elu",
    "tensorflow.nn.selu": "selu",
    "tensorflow.nn.relu6": "relu6",
    "tensorflow.nn.leaky_relu": "leaky_relu",
    "tensorflow.nn.softplus": "softplus",
    "tensorflow.math.softplus": "softplus",
    "tensorflow.nn.log_softmax": "log_softmax",
    "tensorflow.math.log_softmax": "log_softmax",
    "keras.activations.elu": "elu",
    "keras.activations.selu": "selu",
    "keras.activations.softplus": "softplus",
    "keras.activations.leaky_relu": "leaky_relu",
    "keras.activations.log_softmax": "log_softmax",
    "keras.activations.exponential": "exponential",
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
# Layers whose output shape is their input's (Keras 3's `compute_output_shape` returns `input_shape` for
# each), so the last axis keeps its width through them. The one list both the Sequential stack reader and
# the functional graph reader skip when they look for the layer that sets a width. Anything else (`Lambda`,
# `Reshape`, `Flatten`, a custom layer) leaves the width unknown.
SAME_WIDTH_LAYERS = frozenset({
    "Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise", "GaussianDropout",
    "AlphaDropout", "BatchNormalization", "LayerNormalization", "UnitNormalization", "GroupNormalization",
    "Activation", "Softmax", "ReLU", "LeakyReLU", "PReLU", "ELU", "ActivityRegularization", "Masking", "Identity",
    "Rescaling", "Normalization",
})
# Layers that draw random numbers per unit while training (drop, scale or perturb each one) and hand
# their input on unchanged at inference.
NOISE_LAYERS = frozenset({"Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise",
                          "GaussianDropout", "AlphaDropout"})

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
    if cls == "ReLU":
        return "relu"
    if cls in ("LeakyReLU", "ELU"):
        return "leaky_relu" if cls == "LeakyReLU" else "elu"
    if cls == "Activation" or cls in ACTIVATION_LAYERS:
        position = 0 if cls == "Activation" else 1 if cls in ("Dense", "EinsumDense") else None
        expr = arg_value(call, position, "activation")
        if expr is None and any(arg.star for arg in call.args):
            return "<unknown>"  # `Dense(10, **config)`: the activation may be in there
        return _activation_name(facts, expr)
    return "<unknown>"


def _kind_from_activation(activation: str | None) -> Output:
    if activation in PROBABILITY_ACTIVATIONS:
        return Output.PROBABILITIES
    if activation in LINEAR_ACTIVATIONS:
        return Output.LOGITS
    if activation in OTHER_ACTIVATIONS:
        return Output.OTHER
    return Output.UNKNOWN


@dataclass
class OutputInfo:
    kind: Output
    node: cst.CSTNode | None = None  # where the final activation (or its absence) is written
    description: str = ""
    activation: str | None = None


UNKNOWN = OutputInfo(Output.UNKNOWN)

"""The one reader of loss and metric evaluations: which calls evaluate a loss or a metric, which one it is
(kind, whether it takes logits, where it is built), and on which `(y_true, y_pred)`.

- `loss_of(...)`: what a loss expression is, for every Keras loss, by kind, whether it is written as a string
  (`"mse"`), a class (`MeanSquaredError()`), a function (`keras.losses.mse`) or a name holding one of them.
- `evaluations(facts)`: every call that evaluates a loss or metric: `loss_fn(y, p)`, `metric.update_state(y, p)`,
  `keras.losses.mse(y, p)`, `tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=p)`.

Names are read through the value model (`values_of`): a name bound to several values is read only when every
value is the same loss; otherwise the answer is unknown and there is no evaluation.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.constants import boolean, string
from tapelint.analysis.facts import CallSite, Facts, Scope
from tapelint.analysis.values import Kind, Value, values, values_of


class LossKind(str, enum.Enum):
    CATEGORICAL = "categorical"  # one-hot targets, one distribution over the last axis
    SPARSE = "sparse"  # integer class ids, one distribution over the last axis
    BINARY = "binary"  # each output an independent probability
    REGRESSION = "regression"  # a distance between values: MSE, MAE, Huber, log-cosh, ...
    OTHER = "other"  # hinge, KL divergence, Poisson, cosine, a custom loss, ...


CROSS_ENTROPIES = frozenset({LossKind.CATEGORICAL, LossKind.SPARSE, LossKind.BINARY})

# Canonical function names, and the kind of each (Keras 3's `keras.losses` plus Keras 2 aliases).
_FUNCTIONS: dict[str, LossKind] = {
    "categorical_crossentropy": LossKind.CATEGORICAL,
    "categorical_focal_crossentropy": LossKind.CATEGORICAL,
    "sparse_categorical_crossentropy": LossKind.SPARSE,
    "binary_crossentropy": LossKind.BINARY,
    "binary_focal_crossentropy": LossKind.BINARY,
    "mean_squared_error": LossKind.REGRESSION,
    "mean_absolute_error": LossKind.REGRESSION,
    "mean_absolute_percentage_error": LossKind.REGRESSION,
    "mean_squared_logarithmic_error": LossKind.REGRESSION,
    "huber": LossKind.REGRESSION,
    "log_cosh": LossKind.REGRESSION,
    "categorical_hinge": LossKind.OTHER,
    "hinge": LossKind.OTHER,
    "squared_hinge": LossKind.OTHER,
    "kl_divergence": LossKind.OTHER,
    "poisson": LossKind.OTHER,
    "cosine_similarity": LossKind.OTHER,
}
_ALIASES = {
    "mse": "mean_squared_error", "MSE": "mean_squared_error",
    "mae": "mean_absolute_error", "MAE": "mean_absolute_error",
    "mape": "mean_absolute_percentage_error", "MAPE": "mean_absolute_percentage_error",
    "msle": "mean_squared_logarithmic_error", "MSLE": "mean_squared_logarithmic_error",
    "logcosh": "log_cosh", "huber_loss": "huber", "bce": "binary_crossentropy", "BCE": "binary_crossentropy",
    "kld": "kl_divergence", "KLD": "kl_divergence", "kullback_leibler_divergence": "kl_divergence",
}
_CLASSES = {
    "CategoricalCrossentropy": "categorical_crossentropy",
    "CategoricalFocalCrossentropy": "categorical_focal_crossentropy",
    "SparseCategoricalCrossentropy": "sparse_categorical_crossentropy",
    "BinaryCrossentropy": "binary_crossentropy",
    "BinaryFocalCrossentropy": "binary_focal_crossentropy",
    "MeanSquaredError": "mean_squared_error",
    "MeanAbsoluteError": "mean_absolute_error",
    "MeanAbsolutePercentageError": "mean_absolute_percentage_error",
    "MeanSquaredLogarithmicError": "mean_squared_logarithmic_error",
    "Huber": "huber",
    "LogCosh": "log_cosh",
    "CategoricalHinge": "categorical_hinge",
    "Hinge": "hinge",
    "SquaredHinge": "squared_hinge",
    "KLDivergence": "kl_divergence",
    "Poisson": "poisson",
    "CosineSimilarity": "cosine_similarity",
}
# Where `from_logits` sits among the positional arguments (Keras 3.x signatures): first in the loss classes,
# third in the functions (after `y_true, y_pred`); the focal losses take their focusing settings first.
_CLASS_FROM_LOGITS = {
    "CategoricalCrossentropy": 0, "SparseCategoricalCrossentropy": 0, "BinaryCrossentropy": 0,
    "CategoricalFocalCrossentropy": 2, "BinaryFocalCrossentropy": 3,
}
_FUNCTION_FROM_LOGITS = {
    "categorical_crossentropy": 2, "sparse_categorical_crossentropy": 2, "binary_crossentropy": 2,
    "categorical_focal_crossentropy": 4, "binary_focal_crossentropy": 5,
}
# Keras metrics that compute a cross-entropy and take `from_logits=` (keyword only: `name` comes first).
_XENT_METRICS = {
    "SparseCategoricalCrossentropy": "sparse_categorical_crossentropy",
    "CategoricalCrossentropy": "categorical_crossentropy",
    "BinaryCrossentropy": "binary_crossentropy",
}
# The TensorFlow cross-entropy ops: logits by definition, no `from_logits` switch. For each, the canonical
# loss and the keyword of its labels (its logits are always `logits`, second).
_OPS = {
    "tensorflow.nn.softmax_cross_entropy_with_logits": ("categorical_crossentropy", ("labels",)),
    "tensorflow.nn.softmax_cross_entropy_with_logits_v2": ("categorical_crossentropy", ("labels",)),
    "tensorflow.nn.sparse_softmax_cross_entropy_with_logits": ("sparse_categorical_crossentropy", ("labels",)),
    "tensorflow.nn.sigmoid_cross_entropy_with_logits": ("binary_crossentropy", ("labels",)),
    "tensorflow.nn.weighted_cross_entropy_with_logits": ("binary_crossentropy", ("labels", "targets")),
    "tensorflow.compat.v1.losses.sparse_softmax_cross_entropy": ("sparse_categorical_crossentropy", ("labels",)),
    "tensorflow.compat.v1.losses.softmax_cross_entropy": ("categorical_crossentropy", ("onehot_labels",)),
    "tensorflow.compat.v1.losses.sigmoid_cross_entropy": ("binary_crossentropy", ("multi_class_labels",)),
}
# Public functions of `keras.losses`/`keras.metrics` that are not losses or metrics.
_NOT_LOSSES = frozenset({"get", "serialize", "deserialize"})
CUSTOM = "<custom>"


@dataclass(frozen=True, eq=False)
class Loss:
    """A loss (or cross-entropy metric) as written: its canonical function name, its kind, whether it takes
    logits, and where that is set."""

    name: str  # "mean_squared_error", "categorical_crossentropy"; CUSTOM for a loss outside the vocabulary
    kind: LossKind
    from_logits: bool | None  # None: not a constant; False for the losses that take no such switch
    node: cst.CSTNode  # the string, construction, function reference or op call
    written: str  # as the user wrote it, for messages: "mse", "CategoricalCrossentropy", "tf.nn.<op>"
    from_logits_arg: cst.Arg | None = None  # the argument that sets `from_logits`, when given
    op: bool = False  # a TensorFlow op (`tf.nn.*_with_logits`): always logits, arguments `(labels, logits)`

    @property
    def construction(self) -> cst.Call | None:
        """The call that sets `from_logits` (a class construction, a function or op call), if any."""
        return self.node if type(self.node) is cst.Call else None

    @property
    def cross_entropy(self) -> bool:
        return self.kind in CROSS_ENTROPIES

    @property
    def family(self) -> LossKind | None:
        """The cross-entropy family (categorical, sparse, binary); None for other losses."""
        return self.kind if self.kind in CROSS_ENTROPIES else None


def _canonical(word: str) -> str | None:
    word = _ALIASES.get(word, word)
    return word if word in _FUNCTIONS else None


def _positional(call: cst.Call, position: int) -> cst.Arg | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position] if position < len(positional) else None


def _arg(call: cst.Call, position: int | None, keywords: tuple[str, ...]) -> cst.Arg | None:
    """The argument passed for a parameter, by keyword or by position (None when `*args` hides it)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in keywords:
            return arg
    if position is None or any(a.star == "*" for a in call.args):
        return None
    return _positional(call, position)


def _switch(call: cst.Call, position: int | None) -> tuple[bool | None, cst.Arg | None]:
    """(from_logits, the argument that sets it): False by default; None when not a constant, or when
    `**kwargs` may set it."""
    arg = _arg(call, position, ("from_logits",))
    if arg is None:
        return (None, None) if any(a.star for a in call.args) else (False, None)
    return boolean(arg.value), arg


def _function_loss(call: cst.Call | None, node: cst.CSTNode, last: str) -> Loss | None:
    """A `keras.losses` (or `keras.metrics`) function: referenced (`node`), or called (`call`)."""
    function = _canonical(last)
    if function is None:
        return None
    from_logits: bool | None = False
    arg = None
    if call is not None and _FUNCTIONS[function] in CROSS_ENTROPIES:
        from_logits, arg = _switch(call, _FUNCTION_FROM_LOGITS.get(function))
    return Loss(function, _FUNCTIONS[function], from_logits, node, last, arg)


def _construction(facts: Facts, call: cst.Call) -> tuple[str, str, Loss | None] | None:
    """("loss"|"metric", class name, its reading) when `call` builds a Keras loss or metric object."""
    qualified = facts.resolve(call.func) or ""
    last = qualified.rsplit(".", 1)[-1]
    if not last[:1].isupper() or qualified.count(".") != 2:
        return None
    if qualified.startswith("keras.losses."):
        name = _CLASSES.get(last)
        if name is None:
            return "loss", last, Loss(CUSTOM, LossKind.OTHER, None, call, last)
        from_logits: bool | None = False
        arg: cst.Arg | None = None
        if _FUNCTIONS[name] in CROSS_ENTROPIES:
            from_logits, arg = _switch(call, _CLASS_FROM_LOGITS.get(last))
        return "loss", last, Loss(name, _FUNCTIONS[name], from_logits, call, last, arg)
    if qualified.startswith("keras.metrics."):
        name = _XENT_METRICS.get(last)
        if name is None:
            return "metric", last, None
        switch, given = _switch(call, None)
        return "metric", last, Loss(name, _FUNCTIONS[name], switch, call, f"{last} metric", given)
    return None


def _in_document_order(facts: Facts, held: frozenset[Value]) -> list[Value]:
    """The values of a name, first written first: the answer names the same construction on every run (a
    set's order depends on the nodes' ids)."""

    def order(value: Value) -> int:
        node = value.node
        site = facts.call_site(node) if type(node) is cst.Call else None
        if site is not None:
            return site.order
        bound = facts.bindings_of_value(node) if node is not None else []
        return min((b.order for b in bound), default=1 << 60)

    return sorted(held, key=order)


def loss_of(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> Loss | None:
    """What loss `expr` is: a loss string, a `keras.losses` class construction or function, or a name that
    holds one of them (every value the value model gives it must be the same loss). None otherwise."""
    if expr is None or depth > 6:
        return None
    text = string(expr)
    if text is not None:
        canonical = _canonical(text)
        return Loss(canonical, _FUNCTIONS[canonical], False, expr, text) if canonical else None
    if type(expr) is cst.Call:
        built = _construction(facts, expr)
        if built is None or built[0] != "loss" or built[2] is None or built[2].name == CUSTOM:
            return None
        return built[2]
    resolved = facts.resolve(expr)
    if resolved is not None and resolved.startswith("keras.losses."):
        return _function_loss(None, expr, resolved.rsplit(".", 1)[-1])
    if type(expr) not in (cst.Name, cst.Attribute):
        return None
    found: list[Loss] = []
    for value in _in_document_order(facts, values_of(facts, expr, scope, order)):
        if value.kind is Kind.UNKNOWN or value.node is None or value.node is expr:
            return None
        site = facts.call_site(value.node) if type(value.node) is cst.Call else None
        where_scope, where_order = (site.scope, site.order) if site is not None else (scope, order)
        loss = loss_of(facts, value.node, where_scope, where_order, depth + 1) if isinstance(
            value.node, cst.BaseExpression) else None
        if loss is None:
            return None
        found.append(loss)
    if not found or len({(loss.name, loss.from_logits) for loss in found}) != 1:
        return None
    return found[0]


@dataclass(frozen=True, eq=False)
class Evaluation:
    """A call that evaluates a loss or metric on `(y_true, y_pred)`."""

    site: CallSite
    role: str  # "loss" | "metric" | "op" (a TensorFlow cross-entropy op taking `(labels, logits)`)
    name: str  # as Keras (or TF) names it: `CategoricalCrossentropy`, `mse`, `softmax_cross_entropy_with_logits`
    loss: Loss | None  # what it computes; None for a metric outside the vocabulary (an accuracy, an IoU)
    y_true_arg: cst.Arg | None
    y_pred_arg: cst.Arg | None
    construction: cst.Call | None = None  # where the loss or metric object is built (None for a function)
    custom: bool = False  # an object of a `keras.losses.Loss` subclass defined in this module

    @property
    def y_true(self) -> cst.BaseExpression | None:
        return self.y_true_arg.value if self.y_true_arg is not None else None

    @property
    def y_pred(self) -> cst.BaseExpression | None:
        return self.y_pred_arg.value if self.y_pred_arg is not None else None


_Object = tuple[str, str, "Loss | None", "cst.Call | None", bool]  # role, name, loss, construction, custom


def _object(facts: Facts, value: Value, callee: cst.BaseExpression) -> _Object | None:
    """What a value the value model gives `callee` is, when it is a loss or metric to evaluate."""
    if value.kind in (Kind.LOSS, Kind.METRIC) and type(value.node) is cst.Call:
        built = _construction(facts, value.node)
        if built is not None:
            role, name, loss = built
            return role, name, loss, value.node, False
        return None
    if value.kind is Kind.INSTANCE and value.cls and type(value.node) is cst.Call and any(
            base.startswith("keras.losses.") for base in values(facts).library_bases(value.cls)):
        # `Loss.__call__(y_true, y_pred)` calls the subclass's `call`: its kind is the subclass's own.
        return "loss", value.cls, Loss(CUSTOM, LossKind.OTHER, None, value.node, value.cls), value.node, True
    if value.kind is Kind.EXTERNAL and value.cls \
            and value.cls.startswith(("keras.losses.", "keras.metrics.")) and value.cls.count(".") == 2:
        last = value.cls.rsplit(".", 1)[-1]
        if last[:1].islower() and last not in _NOT_LOSSES:  # a function, held by a name
            role = "loss" if value.cls.startswith("keras.losses.") else "metric"
            # (a reference to a library function has no node of its own: the callee stands for it)
            return role, last, _function_loss(None, value.node or callee, last), None, False
    return None


def _evaluation(facts: Facts, site: CallSite) -> Evaluation | None:
    call = site.node
    qualified = site.qualified or ""
    op = _OPS.get(qualified)
    if op is not None:
        canonical, label_keywords = op
        last = qualified.rsplit(".", 1)[-1]
        written = f"tf.nn.{last}" if qualified.startswith("tensorflow.nn.") else f"tf.compat.v1.losses.{last}"
        op_loss = Loss(canonical, _FUNCTIONS[canonical], True, call, written, op=True)
        return Evaluation(site, "op", last, op_loss, _arg(call, 0, label_keywords), _arg(call, 1, ("logits",)))
    if qualified.startswith(("keras.losses.", "keras.metrics.")):
        last = qualified.rsplit(".", 1)[-1]
        if not last[:1].islower() or qualified.count(".") != 2 or last in _NOT_LOSSES:
            return None
        role = "loss" if qualified.startswith("keras.losses.") else "metric"
        loss: Loss | None = _function_loss(call, call, last)
        if loss is None and role == "loss":
            loss = Loss(CUSTOM, LossKind.OTHER, None, call, last)
        return Evaluation(site, role, last, loss, _arg(call, 0, ("y_true",)), _arg(call, 1, ("y_pred",)))
    func = call.func
    if type(func) is cst.Attribute and func.attr.value == "update_state":
        target: cst.BaseExpression = func.value
    elif type(func) in (cst.Name, cst.Attribute, cst.Call):
        target = func
    else:
        return None
    # `keras.losses.MeanSquaredError()(y, p)`: the construction itself (as a value it is its own)
    held = values_of(facts, target, site.scope, site.order)
    read: list[_Object] = []
    for value in _in_document_order(facts, held):
        found = _object(facts, value, target)
        if found is None:
            return None
        read.append(found)
    if not read or len({(r[0], r[1], r[2].name if r[2] else None, r[2].from_logits if r[2] else None)
                        for r in read}) != 1:
        return None  # not a loss, or names bound to different losses: unknown
    role, name, held_loss, construction, custom = read[0]
    if target is not func and role != "metric":
        return None  # `update_state` is a metric's
    return Evaluation(site, role, name, held_loss, _arg(call, 0, ("y_true",)), _arg(call, 1, ("y_pred",)),
                      construction, custom)


def evaluations(facts: Facts) -> list[Evaluation]:
    """Every evaluation of a loss or metric in the module: Keras loss and metric objects, functions and
    custom `Loss` subclasses, and the TensorFlow cross-entropy ops."""

    def compute() -> list[Evaluation]:
        found: list[Evaluation] = []
        for site in facts.calls:
            evaluation = _evaluation(facts, site)
            if evaluation is not None:
                found.append(evaluation)
        return found

    return facts.cached("evaluations.evaluations", compute)


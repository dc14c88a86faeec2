"""Where a loss meets a model's output and its targets: the one answer to "which head, which loss, which
targets?" for the head/loss/target mismatch rules (TL111-TL117).

- The loss itself (`Loss`, `loss_of`, and the loss calls of a custom loop) is evaluations.py's answer.
- `Head`: a model's output as the loss sees it: its final activation (`OutputInfo`, from models.py) and the
  width of its last axis (outputs.py's one width reader, also through the shape model; never read off the
  activation's own layer, since a `Reshape` after it keeps the activation and changes the width).
- `meetings(facts)`: every place a loss meets a head: `compile(loss=...)` on a model this module builds (with
  the targets of every `fit` that runs that compile), and `loss_fn(y, model(x))` in a custom loop.

The targets are labels.py's answer (`LabelInfo`); nothing here guesses what they are. Where a part cannot be
read the meeting carries an unknown (`units` None, `Output.UNKNOWN`, `Encoding.UNKNOWN`), and rules stay
silent on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tapelint.analysis.evaluations import Loss, LossKind, evaluations, loss_of
from tapelint.analysis.facts import CallSite, Facts, Scope, arg_value
from tapelint.analysis.keras import UNKNOWN, Output, OutputInfo, layer_class
from tapelint.analysis.labels import UNKNOWN as UNKNOWN_TARGETS
from tapelint.analysis.labels import LabelInfo, fit_targets, label_reader
from tapelint.analysis.models import (
    Compile, KerasModel, compile_for, compiles, model_reader,
)
from tapelint.analysis.outputs import model_units as output_units
from tapelint.analysis.shapes import shape_of


@dataclass(frozen=True, eq=False)
class Head:
    """A model's output as a loss sees it."""

    output: OutputInfo  # its final activation (or none), and where that is written
    units: float | None  # the width of its last axis, when proved
    model: KerasModel | None = None

    @property
    def activation(self) -> str | None:
        """"softmax", "sigmoid", "relu", ... ; None for a linear output; "<unknown>" when not known."""
        if self.output.kind is Output.UNKNOWN:
            return "<unknown>"
        return self.output.activation

    @property
    def node(self) -> cst.CSTNode | None:
        return self.output.node


def model_units(facts: Facts, model: KerasModel) -> float | None:
    """The width of a model's output: the layer that sets it in a Sequential, the shape of `outputs` for a
    functional model, the width of what a subclass's `call` returns. None when it cannot be proved. The
    width is never read off the output activation's layer (`model.output.node`): a `Reshape` or `Flatten`
    after it keeps the activation and changes the width."""
    if model.kind in ("sequential", "subclass"):
        return output_units(facts, model.construction, model.class_name)
    if model.kind == "functional" and type(model.construction) is cst.Call:
        outputs = arg_value(model.construction, 1, "outputs")
        site = facts.call_site(model.construction)
        if outputs is None or site is None or type(outputs) in (cst.List, cst.Tuple, cst.Dict):
            return None
        return _units(facts, outputs, site.scope, site.order)
    return None


def _units(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> float | None:
    shape = shape_of(facts, expr, scope, order) if expr is not None else None
    return float(shape.last_dim) if shape is not None and shape.last_dim is not None else None


def head_of_prediction(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> Head:
    """The head whose output `expr` holds (`model(x)`, a name bound to it, `tf.nn.sigmoid(logits)`)."""
    output = model_reader(facts).value_kind(expr, scope, order) if expr is not None else UNKNOWN
    return Head(output, _units(facts, expr, scope, order))


@dataclass(frozen=True, eq=False)
class Meeting:
    """One place a loss meets a model's output and (where they can be read) its targets."""

    site: CallSite  # the loss call, or the `compile()` call
    loss: Loss
    head: Head
    targets: LabelInfo = field(default_factory=lambda: UNKNOWN_TARGETS)
    targets_node: cst.CSTNode | None = None  # the `y` of the loss call or of `fit`
    compiled: Compile | None = None  # set when the loss is given to `compile()`


def _compile_targets(facts: Facts, compiled: Compile) -> tuple[LabelInfo, cst.CSTNode | None]:
    """The targets of every `fit` that runs this compile, when they all agree (else unknown)."""
    found: list[tuple[LabelInfo, cst.CSTNode | None]] = []
    for site in facts.calls:
        if site.method not in ("fit", "train_on_batch") or site.order <= compiled.site.order:
            continue
        if compile_for(facts, site) is not compiled:
            continue
        found.append((fit_targets(facts, site), arg_value(site.node, 1, "y") or arg_value(site.node, 0, "x")))
    if not found:
        return UNKNOWN_TARGETS, None
    first = found[0][0]
    for info, _ in found[1:]:
        if info != first:
            return UNKNOWN_TARGETS, None
    return found[0]


def meetings(facts: Facts) -> list[Meeting]:
    """Every place in the module where a loss meets a model's output: `compile(loss=...)` on a model read
    from this module (targets from its `fit` calls), and loss calls in custom loops."""

    def compute() -> list[Meeting]:
        found: list[Meeting] = []
        reader = model_reader(facts)
        labels = label_reader(facts)
        for compiled in compiles(facts):
            site = compiled.site
            loss = loss_of(facts, compiled.loss, site.scope, site.order)
            if loss is None or type(site.node.func) is not cst.Attribute:
                continue
            model = reader.model_of(site.node.func.value, site.scope, site.order)
            if model is None:
                continue
            head = Head(model.output, model_units(facts, model), model)
            targets, where = _compile_targets(facts, compiled)
            found.append(Meeting(site, loss, head, targets, where, compiled))
        for evaluation in evaluations(facts):
            loss, site = evaluation.loss, evaluation.site
            if evaluation.role == "metric" or loss is None:
                continue
            y_true, y_pred = evaluation.y_true, evaluation.y_pred
            head = head_of_prediction(facts, y_pred, site.scope, site.order)
            targets = labels.encoding(y_true, site.scope, site.order) if y_true is not None else UNKNOWN_TARGETS
            found.append(Meeting(site, loss, head, targets, y_true))
        return found

    return facts.cached("heads.meetings", compute)


def single_unit_multiclass(facts: Facts) -> dict[int, Meeting]:
    """The one-unit output layers whose loss or targets need several classes, by `id` of the layer node:
    a categorical cross-entropy on one unit (always 0), or a binary or sparse categorical cross-entropy on
    one unit with targets proved to have more than two classes. TL112 reports them; TL106 leaves a softmax
    on such a layer to it, since the missing units are the cause."""

    def compute() -> dict[int, Meeting]:
        found: dict[int, Meeting] = {}
        for meeting in meetings(facts):
            head = meeting.head
            if head.units != 1 or head.node is None:
                continue
            kind = meeting.loss.kind
            classes = meeting.targets.classes
            if kind is LossKind.CATEGORICAL or (
                    kind in (LossKind.BINARY, LossKind.SPARSE) and classes is not None and classes > 2):
                found.setdefault(id(head.node), meeting)
        return found

    return facts.cached("heads.single_unit_multiclass", compute)


# The values each output activation can take: (lowest, highest), inclusive or approached.
ACTIVATION_RANGES: dict[str, tuple[float, float]] = {
    "sigmoid": (0.0, 1.0), "hard_sigmoid": (0.0, 1.0), "softmax": (0.0, 1.0),
    "tanh": (-1.0, 1.0), "softsign": (-1.0, 1.0),
    "relu": (0.0, float("inf")), "softplus": (0.0, float("inf")), "exponential": (0.0, float("inf")),
    "relu6": (0.0, 6.0), "elu": (-1.0, float("inf")),
}


def targets_outside(info: LabelInfo, low: float, high: float) -> str | None:
    """How the targets are proved to leave [low, high] ("below 0", "above 1"), or None when they are not."""
    below, above = info.below, info.above
    if below is not None and below <= low:
        return f"below {low:g}"
    if above is not None and above >= high:
        return f"above {high:g}"
    return None


def activation_argument(facts: Facts, node: cst.CSTNode | None) -> cst.BaseExpression | None:
    """The `activation=` argument of an output layer construction (`Dense(10, activation="sigmoid")`, the
    string of `Activation("sigmoid")`), or None."""
    if type(node) is not cst.Call:
        return None
    cls = layer_class(facts, node)
    if cls is None:
        return None
    return arg_value(node, 1 if cls in ("Dense", "EinsumDense") else (0 if cls == "Activation" else None), "activation")

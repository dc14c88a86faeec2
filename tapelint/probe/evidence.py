"""The probe's evidence as typed records: what `measure.py` records while the user's steps run, what the child
writes as JSON, and what `findings.py` and `confirm.py` read. No TensorFlow here.

Each record reads and writes the JSON keys the probe has always written (the `measurements` and `optimizers` of
`tapelint probe --format json`), so the report format users see does not change. Unknown keys are ignored when
reading, missing ones take their defaults: a report written by an older child still reads.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

# A number the JSON can carry: NaN and the infinities are written as the strings "nan", "inf", "-inf".
Number = Union[float, str, None]


def number(value: Any) -> float | None:
    """A measured number as a float (NaN and the infinities included), or None when it is not a number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if value in ("nan", "inf", "-inf"):
        return float(value)
    return None


def finite(value: Any) -> float | None:
    """A measured number when it is finite, else None."""
    n = number(value)
    return n if n is not None and math.isfinite(n) else None


class Record:
    """Reads and writes a dataclass as the probe's JSON. `KEYS` renames fields whose JSON key is not a Python
    name (`class`); `NESTED` names the fields that hold records (`list`, `dict` of records, or one)."""

    KEYS: ClassVar[dict[str, str]] = {}
    NESTED: ClassVar[dict[str, tuple[type, str]]] = {}

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            key = cls.KEYS.get(f.name, f.name)
            if key not in data:
                continue
            value = data[key]
            nested = cls.NESTED.get(f.name)
            if nested is not None and value is not None:
                kind, shape = nested
                if shape == "list":
                    value = [kind.from_dict(v) for v in value]  # type: ignore[attr-defined]
                elif shape == "dict":
                    value = {k: kind.from_dict(v) for k, v in value.items()}  # type: ignore[attr-defined]
                else:
                    value = kind.from_dict(value)  # type: ignore[attr-defined]
            values[f.name] = value
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            out[type(self).KEYS.get(f.name, f.name)] = _plain(value)
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass
class Site(Record):
    """A place in the user's code (1-based lines, 0-based columns)."""

    path: str | None = None
    line: int = 1
    end_line: int | None = None
    column: int = 0
    end_column: int | None = None
    function: str | None = None


@dataclass
class VariableEvidence(Record):
    """One trainable variable's gradient in one step (from every `tape.gradient` call of the step that asked
    for it)."""

    name: str
    shape: list[int | None] = field(default_factory=list)
    kernel: bool = False
    layer: str | None = None
    layer_class: str | None = None
    activation: str | None = None
    units: int | None = None
    layer_site: Site | None = None
    none: bool = False
    zero: bool = False
    nonfinite: bool = False
    norm: Number = None
    mav: Number = None
    # Share of units (last axis) whose kernel column got an all-zero gradient in this step.
    dead: float | None = None
    # The units that got some gradient in this step, as a hex bit mask (bit i = unit i); ReLU kernels only.
    alive: str | None = None
    # Which `tape.gradient` call of the step measured it first (0, 1, ...): tapes are compared within a call.
    call: int = 0
    # A row-sparse gradient (an Embedding's IndexedSlices): how many rows it touched; `mav` is over those rows.
    touched_rows: int | None = None
    # Why an exactly-zero gradient is zero, when the probe can see it.
    zero_cause: str | None = None
    # An identity number for the variable within the run (names repeat: every unnamed tf.Variable is "Variable").
    key: int | None = None

    NESTED = {"layer_site": (Site, "one")}


@dataclass
class UpdateEvidence(Record):
    """How one variable moved over one step."""

    changed: bool = False
    ratio: float | None = None
    kernel: bool = False


@dataclass
class ApplyEvidence(Record):
    """One optimizer call in a step."""

    optimizer: int = 0
    site: Site | None = None
    variables: list[str] = field(default_factory=list)
    none_gradients: int = 0
    # Gradients handed to the optimizer that hold NaN or Inf: a LossScaleOptimizer skips such a step.
    nonfinite_gradients: int = 0

    NESTED = {"site": (Site, "one")}


@dataclass
class BroadcastEvidence(Record):
    """An element-wise op inside the tape that broadcast a (B,) tensor against a (B, 1) one into (B, B), with
    exactly one operand computed from the model's output."""

    step: int
    op: str
    shapes: list[list[int | None]] = field(default_factory=list)
    output_shape: list[int | None] = field(default_factory=list)
    tainted: int = 0
    site: Site | None = None

    NESTED = {"site": (Site, "one")}


@dataclass
class StepEvidence(Record):
    """One training step: from a `tape.gradient` on the model's variables to the next one on them."""

    index: int
    observation: bool = False
    site: Site | None = None
    loss: Number = None
    target_shape: list[int | None] | None = None
    variables: list[VariableEvidence] = field(default_factory=list)
    applies: list[ApplyEvidence] = field(default_factory=list)
    # Per variable name (unique within the step); None when the step was not closed.
    updates: dict[str, UpdateEvidence] | None = None
    batch: int | None = None
    device: str | None = None
    ended_by: str = ""
    # How many `tape.gradient` calls the step made (a GAN's two tapes, two gradients from one persistent tape).
    gradient_calls: int = 1
    # The gradients were read by some op before the next step (summed into an accumulator, clipped, ...).
    gradients_used: bool = False
    # Where the loss took a difference of two values both computed from the model (`s_i - s_j`), if it did.
    difference_site: Site | None = None

    NESTED = {"site": (Site, "one"), "difference_site": (Site, "one"), "variables": (VariableEvidence, "list"),
              "applies": (ApplyEvidence, "list"),
              "updates": (UpdateEvidence, "dict")}

    @property
    def applied(self) -> bool:
        return bool(self.applies)

    @property
    def changed(self) -> bool:
        return any(u.changed for u in (self.updates or {}).values())


@dataclass
class OptimizerEvidence(Record):
    id: int
    class_name: str = "Optimizer"
    site: Site | None = None
    learning_rate: float | None = None
    applies: int = 0
    # A LossScaleOptimizer: it skips a step whose gradients are not finite and lowers its scale.
    skips_nonfinite: bool = False

    KEYS = {"class_name": "class"}
    NESTED = {"site": (Site, "one")}


@dataclass
class ModelCall(Record):
    """The first call of one model inside a tape, per step."""

    step: int
    model_id: int = 0
    model: str = "model"
    model_class: str = ""
    site: Site | None = None
    model_site: Site | None = None
    training: bool | str | None = "absent"
    dropout: list[str] = field(default_factory=list)
    batchnorm: list[str] = field(default_factory=list)
    input_normalized: bool = False
    trainable_variables: int = 0
    frozen_variables: int = 0
    frozen_layers: list[str] = field(default_factory=list)
    batch: int | None = None
    input_dtype: str | None = None
    input_min: Number = None
    input_max: Number = None

    NESTED = {"site": (Site, "one"), "model_site": (Site, "one")}


@dataclass
class LossCall(Record):
    """The first call of a Keras loss inside a tape, per step."""

    step: int
    class_name: str = "Loss"
    site: Site | None = None
    loss_site: Site | None = None
    from_logits: bool | None = None
    reduction: str = ""
    keras_logits: bool = False
    y_true_shape: list[int | None] | None = None
    y_pred_shape: list[int | None] | None = None
    value: Number = None
    result_shape: list[int] | None = None
    probability_loss: bool = False
    reconciles_ranks: bool = False
    batch: int | None = None
    pred_min: Number = None
    pred_max: Number = None
    in_unit_interval: bool | None = None
    rows_sum_to_one: bool | None = None
    classes: int | None = None
    # Share of samples whose true-class probability is below the loss's clip epsilon (the wrong side).
    saturated_wrong: float | None = None
    # Samples whose true-class probability lies outside the clip [eps, 1 - eps] on either side: the clip passes
    # them no gradient. Counted for probabilities that are not a Keras softmax's (Keras uses those logits).
    clipped: int | None = None
    samples: int | None = None

    KEYS = {"class_name": "class"}
    NESTED = {"site": (Site, "one"), "loss_site": (Site, "one")}


@dataclass
class Evidence(Record):
    """Everything one probe run measured."""

    device: str | None = None
    gpus: list[str] = field(default_factory=list)
    steps_completed: int = 0
    steps: list[StepEvidence] = field(default_factory=list)
    optimizers: list[OptimizerEvidence] = field(default_factory=list)
    model_calls: list[ModelCall] = field(default_factory=list)
    loss_calls: list[LossCall] = field(default_factory=list)
    broadcasts: list[BroadcastEvidence] = field(default_factory=list)
    # Why the probe ran more steps than asked (small batches, gradients accumulated over steps), or None.
    extended: str | None = None
    # How the run ended, as the runner reports it ("stopped", "ended", "raised", ...): set by the reader.
    status: str | None = None

    NESTED = {"steps": (StepEvidence, "list"), "optimizers": (OptimizerEvidence, "list"),
              "model_calls": (ModelCall, "list"), "loss_calls": (LossCall, "list"),
              "broadcasts": (BroadcastEvidence, "list")}

    @property
    def crashed(self) -> bool:
        return self.status in ("raised", "exited", "crashed", "timeout")

    def optimizer(self, ident: int) -> OptimizerEvidence | None:
        return next((o for o in self.optimizers if o.id == ident), None)


def read_evidence(data: Any, status: str | None = None) -> Evidence:
    """The evidence of a child's JSON report (or an Evidence already); an empty one for None."""
    evidence = Evidence() if not data else Evidence.from_dict(data)
    if status is not None:
        evidence.status = status
    return evidence

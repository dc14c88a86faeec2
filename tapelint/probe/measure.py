"""What the probe records while the user's training step runs, and the numbers it computes from it.

Runs in the process that executes the step (the probe's child, or the caller of `probe_step`). The
evidence it produces is plain JSON-able data; `findings.py` turns it into findings without TensorFlow.
"""

from __future__ import annotations

import math
import os
import sys
import weakref
from typing import Any, Callable

import numpy as np

# Keras's probability cross-entropies clip their input to [EPSILON, 1 - EPSILON]; below it no gradient flows.
CLIP_EPSILON = 1e-7
PROBABILITY_LOSSES = {
    "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "BinaryCrossentropy",
    "CategoricalFocalCrossentropy", "BinaryFocalCrossentropy",
}
RELU_ACTIVATIONS = {"relu", "relu6"}
NORMALIZING_LAYERS = ("Rescaling", "Normalization", "Embedding", "TextVectorization", "StringLookup",
                      "IntegerLookup", "Hashing", "CategoryEncoding", "Discretization")


class StopProbe(BaseException):
    """Raised inside the user's script to end it once the probed steps are done.

    A BaseException, so that the script's own `except Exception:` blocks let it through."""


# ----------------------------------------------------------------------------------------------------
# Where in the user's code something happened


_library_dirs: tuple[str, ...] | None = None
_user_file_cache: dict[str, bool] = {}


def _libraries() -> tuple[str, ...]:
    global _library_dirs
    if _library_dirs is None:
        import sysconfig

        import tapelint

        dirs = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        dirs.add(os.path.dirname(tapelint.__file__))
        for name in ("tensorflow", "keras", "tf_keras", "numpy"):
            module = sys.modules.get(name)
            if module is not None and getattr(module, "__file__", None):
                dirs.add(os.path.dirname(module.__file__))
        _library_dirs = tuple(os.path.realpath(d) + os.sep for d in dirs)
    return _library_dirs


def is_user_file(filename: str) -> bool:
    known = _user_file_cache.get(filename)
    if known is None:
        if not filename or filename.startswith("<"):
            known = False
        else:
            real = os.path.realpath(filename)
            known = not real.startswith(_libraries())
        _user_file_cache[filename] = known
    return known


def _positions(frame: Any) -> tuple[int, int, int, int]:
    line = frame.f_lineno or 0
    try:
        index = frame.f_lasti // 2
        for i, pos in enumerate(frame.f_code.co_positions()):
            if i == index:
                if pos[0] is not None and pos[2] is not None:
                    return pos[0], pos[1] or pos[0], pos[2], pos[3] if pos[3] is not None else pos[2]
                break
    except (AttributeError, ValueError):
        pass
    return line, line, 0, 0


def user_site(frame: Any) -> dict[str, Any] | None:
    """The innermost frame at or above `frame` that belongs to the user's code, as a location. A location
    already (a traced step's, taken when it was traced: see instrument.trace_site) is returned as it is."""
    if isinstance(frame, dict):
        return frame
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            line, end_line, column, end_column = _positions(frame)
            return {"path": os.path.abspath(frame.f_code.co_filename), "line": line, "end_line": end_line,
                    "column": column, "end_column": end_column, "function": frame.f_code.co_name}
        frame = frame.f_back
    return None


def last_user_frame(error: BaseException) -> dict[str, Any] | None:
    import traceback

    if isinstance(error, SyntaxError) and error.filename:
        return {"path": os.path.abspath(error.filename), "line": error.lineno or 1, "end_line": error.lineno or 1,
                "column": max((error.offset or 1) - 1, 0), "end_column": max((error.offset or 1) - 1, 0),
                "function": "<module>"}
    found = None
    for entry in traceback.extract_tb(error.__traceback__):
        if is_user_file(entry.filename):
            found = {"path": os.path.abspath(entry.filename), "line": entry.lineno or 1,
                     "end_line": getattr(entry, "end_lineno", None) or entry.lineno or 1,
                     "column": getattr(entry, "colno", None) or 0,
                     "end_column": getattr(entry, "end_colno", None) or 0, "function": entry.name}
    return found


def one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


# ----------------------------------------------------------------------------------------------------
# Small helpers on tensors and variables


def var_key(variable: Any) -> int:
    """Keras 3 variables wrap a tf.Variable; both spellings of one variable get the same key."""
    inner = getattr(variable, "_value", None)
    if inner is not None and hasattr(inner, "assign") and hasattr(inner, "handle"):
        return id(inner)
    return id(variable)


def is_trainable_variable(value: Any) -> bool:
    return hasattr(value, "assign") and hasattr(value, "numpy") and bool(getattr(value, "trainable", False))


def var_name(variable: Any) -> str:
    path = getattr(variable, "path", None)
    if isinstance(path, str) and path:
        return path
    name = str(getattr(variable, "name", "variable"))
    return name[:-2] if name.endswith(":0") else name


def to_numpy(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    try:
        if hasattr(value, "values") and hasattr(value, "indices") and hasattr(value, "dense_shape"):
            import tensorflow as tf

            value = tf.convert_to_tensor(value)
        if hasattr(value, "numpy"):
            return np.asarray(value.numpy())
        return np.asarray(value)
    except Exception:  # noqa: BLE001 - a value we cannot read is recorded as unknown
        return None


def _float(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else (None if math.isnan(number) else number)


def _finite_or_text(value: float) -> float | str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def shape_of(value: Any) -> list[int | None] | None:
    shape = getattr(value, "shape", None)
    if shape is None:
        return None
    try:
        return [None if d is None else int(d) for d in tuple(shape)]
    except (TypeError, ValueError):
        return None


def first_array(value: Any) -> Any:
    """The first tensor-like leaf of a structure (models can take dicts and tuples)."""
    if isinstance(value, dict):
        for item in value.values():
            return first_array(item)
        return None
    if isinstance(value, (list, tuple)):
        return first_array(value[0]) if value else None
    return value if hasattr(value, "shape") else None


# ----------------------------------------------------------------------------------------------------
# The recorder


class Step:
    def __init__(self, index: int, observation: bool, site: dict[str, Any] | None) -> None:
        self.index = index
        self.observation = observation
        self.site = site
        self.keys: set[int] = set()
        self.variables: list[dict[str, Any]] = []
        self.before: dict[int, tuple[Any, np.ndarray]] = {}
        self.loss: float | str | None = None
        self.target_shape: list[int | None] | None = None
        self.applies: list[dict[str, Any]] = []
        self.updates: dict[str, dict[str, Any]] | None = None
        self.batch: int | None = None
        self.device: str | None = None
        self.ended_by = ""
        self.gradient_done = False

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "observation": self.observation, "site": self.site, "loss": self.loss,
                "target_shape": self.target_shape, "variables": self.variables, "applies": self.applies,
                "updates": self.updates, "batch": self.batch, "device": self.device, "ended_by": self.ended_by}


class Recorder:
    """Collects evidence from the instrumented calls. `steps` training steps are measured; at the next
    gradient call on the same variables one more gradient is measured (after the last update), then
    `StopProbe` is raised."""

    def __init__(self, steps: int = 1, checkpoint: Callable[[], None] | None = None) -> None:
        self.max_steps = max(1, steps)
        self.checkpoint = checkpoint or (lambda: None)
        self.steps: list[Step] = []
        self.current: Step | None = None
        self.completed = 0
        self.stopped = False
        self.layer_sites: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
        self.loss_sites: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
        self.optimizers: list[dict[str, Any]] = []
        self._optimizer_refs: list[tuple[weakref.ref, dict[str, Any]]] = []
        self.models: list[weakref.ref] = []
        self._model_ids: set[int] = set()
        self._structure: dict[int, dict[str, Any]] = {}
        self.model_calls: list[dict[str, Any]] = []
        self.loss_calls: list[dict[str, Any]] = []
        self.gpus: list[str] = []

    # -- creation sites ------------------------------------------------------------------------------
    def layer_created(self, layer: Any, frame: Any) -> None:
        try:
            if layer not in self.layer_sites:
                site = user_site(frame)
                if site is not None:
                    self.layer_sites[layer] = site
        except TypeError:
            pass

    def loss_created(self, loss: Any, frame: Any) -> None:
        try:
            if loss not in self.loss_sites:
                self.loss_sites[loss] = user_site(frame) or {}
        except TypeError:
            pass

    def optimizer_created(self, optimizer: Any, frame: Any) -> None:
        if any(ref() is optimizer for ref, _ in self._optimizer_refs):
            return
        info = {"id": len(self.optimizers) + 1, "class": type(optimizer).__name__, "site": user_site(frame),
                "learning_rate": None, "applies": 0}
        self.optimizers.append(info)
        self._optimizer_refs.append((weakref.ref(optimizer), info))

    def _optimizer_info(self, optimizer: Any) -> dict[str, Any]:
        for ref, info in self._optimizer_refs:
            if ref() is optimizer:
                return info
        self.optimizer_created(optimizer, None)
        return self._optimizer_refs[-1][1]

    def register_model(self, model: Any) -> None:
        if id(model) not in self._model_ids:
            self._model_ids.add(id(model))
            self.models.append(weakref.ref(model))

    # -- gradient calls --------------------------------------------------------------------------------
    def before_gradient(self, variables: list[Any], frame: Any) -> bool:
        """Called before a `tape.gradient` on trainable variables. Returns True when this call is the
        observation after the last probed step."""
        if self.stopped:
            raise StopProbe()
        keys = {var_key(v) for v in variables}
        site = user_site(frame)
        if self.current is None:
            self._start(keys, site, observation=False)
        elif keys & self.current.keys:
            # The same variables again: the previous step is over.
            self._finish_current("the next gradient call")
            self._start(keys, site, observation=self.completed >= self.max_steps)
        else:
            # Another tape in the same step (a GAN's generator and discriminator).
            self.current.keys |= keys
        return self.current is not None and self.current.observation

    def _start(self, keys: set[int], site: dict[str, Any] | None, observation: bool) -> None:
        step = Step(len(self.steps) + 1, observation, site)
        step.keys = set(keys)
        self.steps.append(step)
        self.current = step

    def after_gradient(self, target: Any, sources: list[Any], gradients: list[Any]) -> None:
        step = self.current
        if step is None:
            return
        loss = to_numpy(target)
        if loss is not None and loss.size:
            step.target_shape = [int(d) for d in loss.shape]
            value = float(np.sum(loss.astype(np.float64)))
            if step.loss is None:
                step.loss = _finite_or_text(value)
        layers = self._variable_layers()
        for variable, gradient in zip(sources, gradients):
            if not is_trainable_variable(variable):
                continue
            step.variables.append(self._measure(variable, gradient, layers))
            if step.device is None and gradient is not None:
                step.device = _short_device(getattr(gradient, "device", "") or "")
            if not step.observation:
                current = to_numpy(variable)
                if current is not None:
                    step.before[var_key(variable)] = (variable, np.array(current, copy=True))
        step.gradient_done = True
        if step.batch is None:
            step.batch = self._batch_size(step)
        if step.observation:
            step.ended_by = "the probe"
            self.stopped = True
            self.current = None
            self.checkpoint()
            raise StopProbe()

    def _batch_size(self, step: Step) -> int | None:
        for call in self.model_calls:
            if call["step"] == step.index and call.get("batch"):
                return call["batch"]
        for call in self.loss_calls:
            if call["step"] == step.index and call.get("batch"):
                return call["batch"]
        return None

    def _measure(self, variable: Any, gradient: Any, layers: dict[int, Any]) -> dict[str, Any]:
        shape = shape_of(variable) or []
        layer = layers.get(var_key(variable))
        info: dict[str, Any] = {"name": var_name(variable), "shape": shape, "kernel": len(shape) >= 2,
                                "layer": getattr(layer, "name", None) if layer is not None else None,
                                "layer_class": type(layer).__name__ if layer is not None else None,
                                "activation": _activation_name(layer), "units": shape[-1] if len(shape) >= 2 else None,
                                "layer_site": self.layer_sites.get(layer) if layer is not None else None}
        values = to_numpy(gradient)
        if gradient is None or values is None:
            info.update(none=gradient is None, zero=False, nonfinite=False, norm=None, mav=None, dead=None)
            return info
        values = values.astype(np.float32, copy=False)
        finite = bool(np.isfinite(values).all())
        magnitude = np.abs(values)
        info["none"] = False
        info["nonfinite"] = not finite
        info["zero"] = bool(finite and not magnitude.any())
        info["norm"] = _finite_or_text(float(np.sqrt(np.sum(np.square(values, dtype=np.float64)))))
        info["mav"] = _finite_or_text(float(magnitude.mean(dtype=np.float64))) if magnitude.size else 0.0
        if len(shape) >= 2 and shape[-1]:
            columns = magnitude.reshape(-1, magnitude.shape[-1])
            info["dead"] = float((columns.max(axis=0) == 0).mean())
        else:
            info["dead"] = None
        return info

    def _finish_current(self, ended_by: str) -> None:
        step = self.current
        if step is None:
            return
        self.current = None
        step.ended_by = ended_by
        updates: dict[str, dict[str, Any]] = {}
        for _, (variable, before) in step.before.items():
            after = to_numpy(variable)
            if after is None or after.shape != before.shape:
                continue
            delta = after.astype(np.float64) - before.astype(np.float64)
            norm_before = float(np.sqrt(np.sum(np.square(before, dtype=np.float64))))
            norm_delta = float(np.sqrt(np.sum(np.square(delta))))
            updates[var_name(variable)] = {
                "changed": bool(np.any(delta != 0)),
                "ratio": (norm_delta / norm_before) if norm_before > 0 else None,
                "kernel": before.ndim >= 2,
            }
        step.before = {}
        step.updates = updates
        self.completed += 1
        self.checkpoint()

    def finish(self, ended_by: str = "the end of the script") -> None:
        """The script ended (or was stopped): close the step that is still open."""
        if self.current is not None and not self.current.observation:
            self._finish_current(ended_by)
        self.current = None

    # -- optimizer, loss and model calls -----------------------------------------------------------------
    def optimizer_applied(self, optimizer: Any, grads: Any, variables: Any, frame: Any) -> None:
        if self.stopped:
            return
        info = self._optimizer_info(optimizer)
        info["applies"] += 1
        if info["learning_rate"] is None:
            info["learning_rate"] = _learning_rate(optimizer)
        if self.current is None:
            return
        grads = list(grads) if grads is not None else []
        names = [var_name(v) for v in variables] if variables is not None else []
        self.current.applies.append({
            "optimizer": info["id"], "site": user_site(frame), "variables": names,
            "none_gradients": sum(1 for g in grads if g is None),
        })

    def forward_index(self) -> int:
        """The step a forward computation belongs to: it runs before that step's `tape.gradient`."""
        if self.current is None:
            return len(self.steps) + 1
        return self.current.index + 1 if self.current.gradient_done else self.current.index

    def loss_called(self, loss: Any, y_true: Any, y_pred: Any, result: Any, frame: Any) -> None:
        index = self.forward_index()
        if self.stopped or index > self.max_steps + 1 or any(c["step"] == index for c in self.loss_calls):
            return
        cls = type(loss).__name__
        from_logits = getattr(loss, "from_logits", None)
        if from_logits is None:
            from_logits = (getattr(loss, "_fn_kwargs", None) or {}).get("from_logits")
        pred = to_numpy(y_pred)
        true = to_numpy(y_true)
        call: dict[str, Any] = {
            "step": index, "site": user_site(frame), "loss_site": self.loss_sites.get(loss),
            "class": cls, "from_logits": bool(from_logits) if from_logits is not None else None,
            "reduction": str(getattr(loss, "reduction", "")), "keras_logits": hasattr(y_pred, "_keras_logits"),
            "y_true_shape": shape_of(y_true), "y_pred_shape": shape_of(y_pred), "value": None,
            "probability_loss": cls in PROBABILITY_LOSSES, "reconciles_ranks": hasattr(loss, "_fn_kwargs"),
            "batch": (shape_of(y_pred) or [None])[0],
        }
        value = to_numpy(result)
        if value is not None and value.size:
            call["value"] = _finite_or_text(float(np.mean(value.astype(np.float64))))
            call["result_shape"] = [int(d) for d in value.shape]
        if pred is not None and pred.size and np.issubdtype(pred.dtype, np.floating):
            pred = pred.astype(np.float32, copy=False)
            call["pred_min"] = _finite_or_text(float(np.min(pred)))
            call["pred_max"] = _finite_or_text(float(np.max(pred)))
            in_unit = bool(np.all((pred >= 0) & (pred <= 1)))
            call["in_unit_interval"] = in_unit
            if pred.ndim >= 2 and pred.shape[-1] >= 2:
                sums = pred.astype(np.float64).sum(axis=-1)
                call["rows_sum_to_one"] = bool(in_unit and np.all(np.abs(sums - 1.0) < 1e-3))
                call["classes"] = int(pred.shape[-1])
            else:
                call["rows_sum_to_one"] = False
                call["classes"] = 2
            call["saturated_wrong"] = _saturated_wrong(cls, true, pred)
        self.loss_calls.append(call)

    def model_called(self, layer: Any, args: tuple, kwargs: dict[str, Any], frame: Any) -> None:
        index = self.forward_index()
        if self.stopped or index > self.max_steps + 1:
            return
        if any(c["step"] == index and c["model_id"] == id(layer) for c in self.model_calls):
            return
        self.register_model(layer)
        structure = self._structure_of(layer)
        if "training" in kwargs:
            training = kwargs["training"]
        elif len(args) > 1 and isinstance(args[1], bool):
            training = args[1]
        else:
            training = "absent"
        x = first_array(args[0] if args else kwargs.get("inputs", kwargs.get("x")))
        call: dict[str, Any] = {
            "step": index, "model_id": id(layer), "model": getattr(layer, "name", type(layer).__name__),
            "model_class": type(layer).__name__, "site": user_site(frame),
            "model_site": self.layer_sites.get(layer),
            "training": training if isinstance(training, bool) or training is None else str(training),
            **structure,
        }
        values = to_numpy(x)
        if values is not None and values.size:
            call["batch"] = int(values.shape[0]) if values.ndim else None
            call["input_dtype"] = str(values.dtype)
            if np.issubdtype(values.dtype, np.number):
                call["input_min"] = _finite_or_text(float(np.min(values)))
                call["input_max"] = _finite_or_text(float(np.max(values)))
        self.model_calls.append(call)

    def _structure_of(self, layer: Any) -> dict[str, Any]:
        cached = self._structure.get(id(layer))
        if cached is not None:
            return cached
        dropout, batchnorm, normalizing, frozen, trainable = [], [], False, 0, 0
        try:
            sublayers = list(layer._flatten_layers(include_self=True, recursive=True))
        except Exception:  # noqa: BLE001 - not a Keras 3 layer
            sublayers = [layer]
        for sub in sublayers:
            cls = type(sub).__name__
            if "Dropout" in cls and float(getattr(sub, "rate", 0) or 0) > 0:
                dropout.append(sub.name)
            if "BatchNormalization" in cls and getattr(sub, "trainable", False):
                batchnorm.append(sub.name)
            if cls.endswith(NORMALIZING_LAYERS) or "preprocessing" in type(sub).__module__:
                normalizing = True
        try:
            trainable = len(layer.trainable_variables)
            frozen = len(layer.non_trainable_variables)
        except Exception:  # noqa: BLE001
            pass
        frozen_layers = [s.name for s in sublayers if s is not layer and not getattr(s, "trainable", True)
                         and getattr(s, "weights", None)]
        structure = {"dropout": dropout, "batchnorm": batchnorm, "input_normalized": normalizing,
                     "trainable_variables": trainable, "frozen_variables": frozen,
                     "frozen_layers": [n for n in frozen_layers][:5]}
        self._structure[id(layer)] = structure
        return structure

    def _variable_layers(self) -> dict[int, Any]:
        layers: dict[int, Any] = {}
        candidates = list(self.layer_sites.keys())
        for ref in self.models:
            model = ref()
            if model is None:
                continue
            try:
                candidates.extend(model._flatten_layers(include_self=True, recursive=True))
            except Exception:  # noqa: BLE001
                pass
        for layer in candidates:
            own = list(getattr(layer, "_trainable_variables", []) or []) + \
                list(getattr(layer, "_non_trainable_variables", []) or [])
            for variable in own:
                layers.setdefault(var_key(variable), layer)
        return layers

    # -- the result -----------------------------------------------------------------------------------
    def evidence(self) -> dict[str, Any]:
        for ref, info in self._optimizer_refs:
            optimizer = ref()
            if optimizer is not None and info["learning_rate"] is None:
                info["learning_rate"] = _learning_rate(optimizer)
        device = next((s.device for s in self.steps if s.device), None)
        return {
            "device": device, "gpus": self.gpus, "steps_completed": self.completed,
            "steps": [s.to_dict() for s in self.steps], "optimizers": self.optimizers,
            "model_calls": self.model_calls, "loss_calls": self.loss_calls,
        }


def _short_device(device: str) -> str:
    if "device:" in device:
        return device.rsplit("device:", 1)[1]
    return device or "CPU:0"


def _activation_name(layer: Any) -> str | None:
    activation = getattr(layer, "activation", None) if layer is not None else None
    if activation is None:
        return None
    return getattr(activation, "__name__", None) or type(activation).__name__


def _learning_rate(optimizer: Any) -> float | None:
    try:
        return _float(np.asarray(to_numpy(optimizer.learning_rate)))
    except Exception:  # noqa: BLE001
        return None


def _saturated_wrong(cls: str, true: np.ndarray | None, pred: np.ndarray) -> float | None:
    """The share of samples whose probability for the true class is below Keras's clip epsilon: the clip
    passes no gradient, so those samples stop teaching anything."""
    if true is None or not true.size:
        return None
    try:
        if cls.startswith("Sparse"):
            labels = true.reshape(-1).astype(np.int64)
            rows = pred.reshape(-1, pred.shape[-1])
            if labels.shape[0] != rows.shape[0]:
                return None
            p_true = rows[np.arange(rows.shape[0]), np.clip(labels, 0, rows.shape[-1] - 1)]
        elif cls.startswith("Binary"):
            t = true.astype(np.float32).reshape(-1)
            p = pred.reshape(-1)
            if t.shape != p.shape:
                return None
            p_true = np.where(t > 0.5, p, 1.0 - p)
        else:
            if true.shape != pred.shape:
                return None
            p_true = (true.astype(np.float32) * pred).sum(axis=-1).reshape(-1)
        return float((p_true < CLIP_EPSILON).mean()) if p_true.size else None
    except (ValueError, IndexError):
        return None

"""What the probe records while the user's training step runs, and the numbers it computes from it.

Runs in the process that executes the step (the probe's child, or the caller of `probe_step`). The
evidence it produces is typed (`evidence.py`) and written as JSON; `findings.py` turns it into findings without
TensorFlow.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
import weakref
from collections import deque
from typing import Any, Callable

import numpy as np

from tapelint.probe.broadcast import OpWatch
from tapelint.probe.evidence import (ApplyEvidence, BroadcastEvidence, Evidence, LossCall, ModelCall,
                                     OptimizerEvidence, Site, StepEvidence, UpdateEvidence, VariableEvidence)

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
            file = getattr(sys.modules.get(name), "__file__", None)
            if isinstance(file, str) and file:
                dirs.add(os.path.dirname(file))
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

# A batch below this many samples says little about single ReLU units or clipped probabilities (the default of
# `dead-relu-min-batch`); small batches are pooled over steps into windows of this many samples.
POOL_SAMPLES = 8
POOL_WINDOWS = 2
# How far past --steps the probe may run: to fill the pooled windows, or to wait for an update whose gradients
# are accumulated over several steps.
EXTRA_STEPS_MAX = 32
_GENERIC_NAME = re.compile(r"Variable(_\d+)?$")
# A traced step's callback only queues what it got (`Recorder.defer`); the queue is measured at the latest when a
# step could stop the probe, when it holds this many bytes, or this long after its oldest entry began (a script
# killed at a timeout loses at most the last second of its steps' evidence; a step slower than that is measured
# right after it).
DEFER_BYTES = 256 * 2 ** 20
DEFER_SECONDS = 1.0


class GradientSummary:
    """One dense gradient as a traced step measured it in its graph (instrument.py), in place of the gradient:
    what `Recorder._measure` reads of a gradient, without handing the whole tensor to the host. `alive`: per
    unit (last axis), whether its column got some gradient (and no NaN), for kernels only."""

    __slots__ = ("nonfinite", "zero", "norm", "mav", "size", "alive", "device")

    def __init__(self, nonfinite: bool, zero: bool, norm: float, mav: float, size: int,
                 alive: np.ndarray | None, device: str) -> None:
        self.nonfinite, self.zero, self.norm, self.mav = nonfinite, zero, norm, mav
        self.size, self.alive, self.device = size, alive, device


class Step:
    """A step being recorded: its evidence and what is needed to close it."""

    def __init__(self, index: int, observation: bool, site: dict[str, Any] | None) -> None:
        self.record = StepEvidence(index=index, observation=observation, site=_site(site), gradient_calls=0)
        self.keys: set[int] = set()
        self.tape: Any = None
        self.gradient_sites: set[tuple[Any, Any]] = set()
        self.by_key: dict[int, VariableEvidence] = {}
        self.before: dict[int, tuple[Any, np.ndarray]] = {}
        self.gradient_done = False

    @property
    def index(self) -> int:
        return self.record.index

    @property
    def observation(self) -> bool:
        return self.record.observation


_SITES: dict[int, tuple[dict[str, Any], Site]] = {}


def _site(site: dict[str, Any] | None) -> Site | None:
    """The typed site of a location. A traced step hands the same location dict every time it runs: its Site is
    made once (records share it; nothing changes a Site once made)."""
    if not site:
        return None
    known = _SITES.get(id(site))
    if known is not None and known[0] is site:
        return known[1]
    typed = Site.from_dict(site)
    if len(_SITES) > 4096:
        _SITES.clear()
    _SITES[id(site)] = (site, typed)
    return typed


class Recorder:
    """Collects evidence from the instrumented calls. `steps` training steps are measured; at the next
    gradient call on the same variables one more gradient is measured (after the last update), then
    `StopProbe` is raised. Small batches and accumulated gradients can make it run a few steps more (see
    `_extension`)."""

    def __init__(self, steps: int = 1, checkpoint: Callable[[], None] | None = None) -> None:
        self.max_steps = max(1, steps)
        self.checkpoint = checkpoint or (lambda: None)
        self.steps: list[Step] = []
        self.current: Step | None = None
        self.completed = 0
        self.stopped = False
        self.extended: str | None = None
        self.extra_steps = 0
        self.layer_sites: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
        self.loss_sites: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
        self.optimizers: list[OptimizerEvidence] = []
        self._optimizer_refs: list[tuple[weakref.ref, OptimizerEvidence]] = []
        self.models: list[weakref.ref] = []
        self._model_ids: set[int] = set()
        self._structure: dict[int, dict[str, Any]] = {}
        self.model_calls: list[ModelCall] = []
        self.loss_calls: list[LossCall] = []
        self.broadcasts: list[BroadcastEvidence] = []
        self.gpus: list[str] = []
        self._names: dict[int, str] = {}
        # The `tape.gradient` lines of traced functions whose graph reads the gradients (an accumulator).
        self._traced_use: set[tuple[Any, Any]] = set()
        self._taken_names: set[str] = set()
        self.watch = OpWatch(_op_site)
        # Work handed over by traced steps' callbacks, not yet run (see `defer`).
        self._later: deque[Callable[[], None]] = deque()
        self._later_bytes = 0
        self._later_since = 0.0
        self._gradient_callbacks = 0
        self._draining = False
        # Set by `finish`: the sources hand over everything they may hold.
        self.finishing = False
        # Functions that queue work kept elsewhere (the stashes of traced steps), run first by `drain`.
        self.sources: list[Callable[[], None]] = []

    # -- work of traced steps ------------------------------------------------------------------------------
    def defer(self, work: Callable[[], None], gradient_calls: int, nbytes: int) -> None:
        """A traced step's callback hands its values over as `work` (which measures them) and returns at once: the
        step pays for the hand-over only. The queue runs, in order, before anything else reaches the recorder
        (`drain`), and at the latest in the callback whose `gradient_calls` could end the probed steps: a step
        starts at a gradient call, and the observation step comes after `max_steps` completed ones, so the first
        `max_steps` gradient calls can never stop the probe."""
        if self.sources and not self._draining:
            # Work kept elsewhere came first (a stash written earlier in this same step).
            self._draining = True
            try:
                for source in self.sources:
                    source()
            finally:
                self._draining = False
        self.queue(work, gradient_calls, nbytes)
        if self._gradient_callbacks > self.max_steps or self._later_bytes > DEFER_BYTES or \
                time.monotonic() - self._later_since > DEFER_SECONDS:
            self.drain()

    def queue(self, work: Callable[[], None], gradient_calls: int, nbytes: int) -> None:
        if not self._later:
            self._later_since = time.monotonic()
        self._gradient_callbacks += gradient_calls
        self._later.append(work)
        self._later_bytes += nbytes

    def gradient_calls_seen(self) -> int:
        """The gradient calls handed over so far (measured or queued)."""
        return self._gradient_callbacks

    def count_gradient_call(self) -> None:
        """An eager gradient call, measured at once: it counts towards the end of the probed steps too."""
        self._gradient_callbacks += 1

    def queued_since(self) -> float | None:
        return self._later_since if self._later else None

    def queued_bytes(self) -> int:
        return self._later_bytes

    def drain(self) -> None:
        """Run the queued work of traced steps, in the order the steps ran. StopProbe from it ends the queue. Not
        re-entered (a checkpoint taken while the queue runs sees the steps run so far)."""
        later = self._later
        if self._draining:
            return
        self._draining = True
        try:
            for source in self.sources:
                source()
            while later:
                later.popleft()()
        finally:
            later.clear()
            self._later_bytes = 0
            self._draining = False

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
        info = OptimizerEvidence(id=len(self.optimizers) + 1, class_name=type(optimizer).__name__,
                                 site=_site(user_site(frame)), skips_nonfinite=_skips_nonfinite(optimizer))
        self.optimizers.append(info)
        self._optimizer_refs.append((weakref.ref(optimizer), info))

    def _optimizer_info(self, optimizer: Any) -> OptimizerEvidence:
        for ref, info in self._optimizer_refs:
            if ref() is optimizer:
                return info
        self.optimizer_created(optimizer, None)
        return self._optimizer_refs[-1][1]

    def register_model(self, model: Any) -> None:
        if id(model) not in self._model_ids:
            self._model_ids.add(id(model))
            self.models.append(weakref.ref(model))

    # -- names ---------------------------------------------------------------------------------------
    def name_of(self, variable: Any, frame: Any = None) -> str:
        """One name per variable for the whole run: its Keras path, its own name, or for an unnamed
        `tf.Variable` the name the user's code binds it to (`w`, `self.b`); repeated names get `#2`, `#3`."""
        key = var_key(variable)
        known = self._names.get(key)
        if known is not None:
            return known
        name = var_name(variable)
        if _GENERIC_NAME.match(name):
            name = _user_binding(variable, frame) or name
        unique, n = name, 1
        while unique in self._taken_names:
            n += 1
            unique = f"{name}#{n}"
        self._names[key] = unique
        self._taken_names.add(unique)
        return unique

    # -- gradient calls --------------------------------------------------------------------------------
    def before_gradient(self, variables: list[Any], frame: Any, tape: Any = None,
                        values: dict[int, np.ndarray] | None = None) -> bool:
        """Called before a `tape.gradient` on trainable variables. Returns True when this call is the
        observation after the last probed step. `values`: the variables' values now, by `var_key`, where the
        caller has read them already (a traced step reads them in its graph); the others are read here."""
        if self.stopped:
            raise StopProbe()
        broadcast, difference, used = self.watch.take()
        self.watch.stop()
        keys = {var_key(v) for v in variables}
        for variable in variables:
            self.name_of(variable, frame)
        site = user_site(frame)
        current = self.current
        if current is not None and current.gradient_done and (used or _site_key(current.record.site)
                                                              in self._traced_use):
            current.record.gradients_used = True
        if current is None:
            self._start(keys, site, tape, observation=self.completed >= self.max_steps and not self._extend())
        elif keys & current.keys and not (tape is not None and _same(current.tape, tape)
                                          and not current.record.applies
                                          and _site_key(_site(site)) not in current.gradient_sites):
            # The same variables again, from a new tape (or from the same line again: a traced step reuses its
            # tape object every time it runs): the previous step is over.
            self._finish_current("the next gradient call", values)
            self._start(keys, site, tape, observation=self.completed >= self.max_steps and not self._extend())
        else:
            # Another tape in the same step (a GAN's generator and discriminator), or a second gradient from
            # the same persistent tape (a penalty) before the update.
            current.keys |= keys
        step = self.current
        assert step is not None
        step.record.gradient_calls += 1
        step.gradient_sites.add(_site_key(_site(site)))
        if broadcast is not None and not any(b.step == step.index for b in self.broadcasts):
            self.broadcasts.append(BroadcastEvidence.from_dict({**broadcast, "step": step.index,
                                                                "site": _site(broadcast.get("site"))}))
        if difference is not None and step.record.difference_site is None:
            step.record.difference_site = _site(difference)
        return step.observation

    def _start(self, keys: set[int], site: dict[str, Any] | None, tape: Any, observation: bool) -> None:
        step = Step(len(self.steps) + 1, observation, site)
        step.keys = set(keys)
        step.tape = _ref(tape)
        self.steps.append(step)
        self.current = step

    def _extend(self) -> bool:
        """Whether to run one more step past --steps, and why (kept in `extended`)."""
        if self.extra_steps >= EXTRA_STEPS_MAX or not self.steps:
            return False
        reason = self._extension()
        if reason is None:
            return False
        self.extra_steps += 1
        self.extended = reason
        return True

    def _extension(self) -> str | None:
        last = self.steps[-1].record
        if not last.applies and not last.changed and last.gradients_used:
            return "the gradients were kept (accumulated) without an update: the probe waited for the update"
        skipping = {o.id for o in self.optimizers if o.skips_nonfinite}
        measured = any(v.nonfinite for v in last.variables)
        if any((a.nonfinite_gradients or measured) and a.optimizer in skipping for a in last.applies):
            return ("the loss-scale optimizer skipped an update whose gradients were not finite: the probe waited "
                    "for a finite step")
        records = [s.record for s in self.steps if not s.observation]
        batch = next((r.batch for r in records if r.batch), None)
        # Pooling small batches shows units dying or outputs saturating under the updates; without one, nothing
        # changes from step to step.
        if batch is None or batch >= POOL_SAMPLES or not any(r.changed for r in records):
            return None
        wants = any(v.alive is not None for r in records for v in r.variables) or \
            any(c.samples is not None for c in self.loss_calls)
        if not wants:
            return None
        if sum(r.batch or 0 for r in records) >= POOL_SAMPLES * POOL_WINDOWS:
            return None
        return f"batches of {batch}: the probe ran until {POOL_SAMPLES * POOL_WINDOWS} samples could be pooled"

    def after_gradient(self, target: Any, sources: list[Any], gradients: list[Any],
                       values: dict[int, np.ndarray] | None = None) -> None:
        """`gradients` hold tensors, or the `GradientSummary` a traced step computed in its graph; `values` as in
        `before_gradient` (the weights before this step's update)."""
        step = self.current
        if step is None:
            return
        record = step.record
        loss = to_numpy(target)
        if loss is not None and loss.size and record.loss is None:
            record.target_shape = [int(d) for d in loss.shape]
            record.loss = _finite_or_text(float(np.sum(loss.astype(np.float64))))
        layers = self._variable_layers()
        call = record.gradient_calls - 1
        for variable, gradient in zip(sources, gradients):
            if not is_trainable_variable(variable):
                continue
            key = var_key(variable)
            measured = self._measure(variable, gradient, layers)
            measured.call, measured.key = call, key
            known = step.by_key.get(key)
            if known is None:
                step.by_key[key] = measured
                record.variables.append(measured)
            else:
                _merge(known, measured)
            if record.device is None and gradient is not None:
                record.device = _short_device(getattr(gradient, "device", "") or "")
            if not step.observation and key not in step.before:
                current = values.get(key) if values else None
                if current is None:
                    current = to_numpy(variable)
                if current is not None:
                    step.before[key] = (variable, np.array(current, copy=True))
        step.gradient_done = True
        if record.batch is None:
            record.batch = self._batch_size(step)
        if step.observation:
            record.ended_by = "the probe"
            self.stopped = True
            self.current = None
            self.watch.stop()
            self.checkpoint()
            raise StopProbe()
        self.watch.watch_gradients([g for g in gradients if g is not None and not isinstance(g, GradientSummary)])

    def traced_gradients(self, gradients: list[Any], site: dict[str, Any] | None) -> None:
        """A tf.function's trace computed these gradients at `site`: whether its graph reads them is seen now,
        once, and holds for every step that runs the graph."""
        if self.stopped or site is None:
            return
        key = _site_key(Site.from_dict(site))
        self.watch.watch_gradients([g for g in gradients if g is not None],
                                   on_use=lambda: self._traced_use.add(key))

    def _batch_size(self, step: Step) -> int | None:
        for call in self.model_calls:
            if call.step == step.index and call.batch:
                return call.batch
        for loss_call in self.loss_calls:
            if loss_call.step == step.index and loss_call.batch:
                return loss_call.batch
        return None

    def _measure(self, variable: Any, gradient: Any, layers: dict[int, Any]) -> VariableEvidence:
        shape = shape_of(variable) or []
        layer = layers.get(var_key(variable))
        activation = _activation_name(layer)
        info = VariableEvidence(
            name=self.name_of(variable), shape=shape, kernel=len(shape) >= 2,
            layer=getattr(layer, "name", None) if layer is not None else None,
            layer_class=type(layer).__name__ if layer is not None else None, activation=activation,
            units=shape[-1] if len(shape) >= 2 else None,
            layer_site=_site(self.layer_sites.get(layer)) if layer is not None else None)
        if isinstance(gradient, GradientSummary):
            info.nonfinite = gradient.nonfinite
            info.zero = gradient.zero
            info.norm = _finite_or_text(gradient.norm)
            info.mav = _finite_or_text(gradient.mav) if gradient.size else 0.0
            alive = gradient.alive
            if alive is not None and len(shape) >= 2 and shape[-1]:
                info.dead = float(1.0 - alive.mean())
                if activation in RELU_ACTIVATIONS:
                    info.alive = _mask(alive)
            return info
        values = to_numpy(gradient)
        if gradient is None or values is None:
            info.none = gradient is None
            return info
        values = values.astype(np.float32, copy=False)
        finite = bool(np.isfinite(values).all())
        magnitude = np.abs(values)
        info.nonfinite = not finite
        info.zero = bool(finite and not magnitude.any())
        info.norm = _finite_or_text(float(np.sqrt(np.sum(np.square(values, dtype=np.float64)))))
        rows = _touched_rows(gradient)
        if rows is not None and magnitude.ndim >= 1:
            # A row-sparse gradient: untouched rows say nothing about the size of the gradient.
            info.touched_rows = int(rows.size)
            magnitude = magnitude[rows] if rows.size else magnitude[:0]
        info.mav = _finite_or_text(float(magnitude.mean(dtype=np.float64))) if magnitude.size else 0.0
        if len(shape) >= 2 and shape[-1] and rows is None:
            columns = np.abs(values).reshape(-1, values.shape[-1])
            alive = columns.max(axis=0) > 0
            info.dead = float(1.0 - alive.mean())
            if activation in RELU_ACTIVATIONS:
                info.alive = _mask(alive)
        return info

    def _finish_current(self, ended_by: str, values: dict[int, np.ndarray] | None = None) -> None:
        step = self.current
        if step is None:
            return
        self.current = None
        step.record.ended_by = ended_by
        updates: dict[str, UpdateEvidence] = {}
        for key, (variable, before) in step.before.items():
            after = values.get(key) if values else None
            if after is None:
                after = to_numpy(variable)
            if after is None or after.shape != before.shape:
                continue
            delta = after.astype(np.float64) - before.astype(np.float64)
            norm_before = float(np.sqrt(np.sum(np.square(before, dtype=np.float64))))
            norm_delta = float(np.sqrt(np.sum(np.square(delta))))
            updates[self._names.get(key) or var_name(variable)] = UpdateEvidence(
                changed=bool(np.any(delta != 0)), ratio=(norm_delta / norm_before) if norm_before > 0 else None,
                kernel=before.ndim >= 2)
        step.before = {}
        step.record.updates = updates
        self.completed += 1
        self.checkpoint()

    def finish(self, ended_by: str = "the end of the script") -> None:
        """The script ended (or was stopped): close the step that is still open."""
        self.finishing = True
        try:
            self.drain()
        except StopProbe:
            pass
        self.watch.stop()
        if self.current is not None and not self.current.observation:
            if self.current.gradient_done and (self.watch.take()[2] or _site_key(self.current.record.site)
                                               in self._traced_use):
                self.current.record.gradients_used = True
            self._finish_current(ended_by)
        self.current = None

    # -- optimizer, loss and model calls -----------------------------------------------------------------
    def optimizer_applied(self, optimizer: Any, grads: Any, variables: Any, frame: Any) -> None:
        if self.stopped:
            return
        info = self._optimizer_info(optimizer)
        info.applies += 1
        if info.learning_rate is None:
            info.learning_rate = _learning_rate(optimizer)
        if self.current is None:
            return
        if self.watch.mode == "gradients":
            _, _, used = self.watch.take()
            self.watch.stop()
            self.current.record.gradients_used = self.current.record.gradients_used or used
        grads = list(grads) if grads is not None else []
        names = [self.name_of(v) for v in variables] if variables is not None else []
        nonfinite = 0
        if info.skips_nonfinite:
            for g in grads:
                values = to_numpy(g)
                if values is not None and np.issubdtype(values.dtype, np.floating) and not np.isfinite(values).all():
                    nonfinite += 1
        self.current.record.applies.append(ApplyEvidence(
            optimizer=info.id, site=_site(user_site(frame)), variables=names,
            none_gradients=sum(1 for g in grads if g is None), nonfinite_gradients=nonfinite))

    def forward_index(self) -> int:
        """The step a forward computation belongs to: it runs before that step's `tape.gradient`."""
        if self.current is None:
            return len(self.steps) + 1
        return self.current.index + 1 if self.current.gradient_done else self.current.index

    def loss_called(self, loss: Any, y_true: Any, y_pred: Any, result: Any, frame: Any) -> None:
        index = self.forward_index()
        if self.stopped or index > self.max_steps + EXTRA_STEPS_MAX + 1 or \
                any(c.step == index for c in self.loss_calls):
            return
        cls = type(loss).__name__
        from_logits = getattr(loss, "from_logits", None)
        if from_logits is None:
            from_logits = (getattr(loss, "_fn_kwargs", None) or {}).get("from_logits")
        pred = to_numpy(y_pred)
        true = to_numpy(y_true)
        call = LossCall(
            step=index, site=_site(user_site(frame)), loss_site=_site(self.loss_sites.get(loss)),
            class_name=cls, from_logits=bool(from_logits) if from_logits is not None else None,
            reduction=str(getattr(loss, "reduction", "")), keras_logits=hasattr(y_pred, "_keras_logits"),
            y_true_shape=shape_of(y_true), y_pred_shape=shape_of(y_pred),
            probability_loss=cls in PROBABILITY_LOSSES, reconciles_ranks=hasattr(loss, "_fn_kwargs"),
            batch=(shape_of(y_pred) or [None])[0])
        value = to_numpy(result)
        if value is not None and value.size:
            call.value = _finite_or_text(float(np.mean(value.astype(np.float64))))
            call.result_shape = [int(d) for d in value.shape]
        if pred is not None and pred.size and np.issubdtype(pred.dtype, np.floating):
            pred = pred.astype(np.float32, copy=False)
            call.pred_min = _finite_or_text(float(np.min(pred)))
            call.pred_max = _finite_or_text(float(np.max(pred)))
            in_unit = bool(np.all((pred >= 0) & (pred <= 1)))
            call.in_unit_interval = in_unit
            if pred.ndim >= 2 and pred.shape[-1] >= 2:
                sums = pred.astype(np.float64).sum(axis=-1)
                call.rows_sum_to_one = bool(in_unit and np.all(np.abs(sums - 1.0) < 1e-3))
                call.classes = int(pred.shape[-1])
            else:
                call.rows_sum_to_one = False
                call.classes = 2
            p_true = _true_class_probability(cls, true, pred)
            if p_true is not None and p_true.size:
                call.saturated_wrong = float((p_true < CLIP_EPSILON).mean())
                if call.probability_loss and not call.from_logits and not call.keras_logits and in_unit:
                    high = np.float32(1.0) - np.float32(CLIP_EPSILON)
                    call.clipped = int(((p_true < np.float32(CLIP_EPSILON)) | (p_true > high)).sum())
                    call.samples = int(p_true.size)
        self.loss_calls.append(call)

    def outputs_computed(self, result: Any) -> None:
        """A model returned `result` inside a recording tape (eagerly, or while a tf.function is traced): the
        op watch follows it to the step's gradient."""
        if not self.stopped and result is not None:
            self.watch.taint_outputs(_tensors(result))

    def model_called(self, layer: Any, args: tuple, kwargs: dict[str, Any], frame: Any) -> None:
        index = self.forward_index()
        if self.stopped or index > self.max_steps + EXTRA_STEPS_MAX + 1:
            return
        if any(c.step == index and c.model_id == id(layer) for c in self.model_calls):
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
        call = ModelCall(
            step=index, model_id=id(layer), model=getattr(layer, "name", type(layer).__name__),
            model_class=type(layer).__name__, site=_site(user_site(frame)),
            model_site=_site(self.layer_sites.get(layer)),
            training=training if isinstance(training, bool) or training is None else str(training), **structure)
        values = to_numpy(x)
        if values is not None and values.size:
            call.batch = int(values.shape[0]) if values.ndim else None
            call.input_dtype = str(values.dtype)
            if np.issubdtype(values.dtype, np.number):
                call.input_min = _finite_or_text(float(np.min(values)))
                call.input_max = _finite_or_text(float(np.max(values)))
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
    def typed_evidence(self) -> Evidence:
        try:
            self.drain()
        except StopProbe:
            pass
        for ref, info in self._optimizer_refs:
            optimizer = ref()
            if optimizer is not None and info.learning_rate is None:
                info.learning_rate = _learning_rate(optimizer)
        device = next((s.record.device for s in self.steps if s.record.device), None)
        return Evidence(device=device, gpus=list(self.gpus), steps_completed=self.completed,
                        steps=[s.record for s in self.steps], optimizers=self.optimizers,
                        model_calls=self.model_calls, loss_calls=self.loss_calls, broadcasts=self.broadcasts,
                        extended=self.extended)

    def evidence(self) -> dict[str, Any]:
        """The evidence as JSON-able data, the form the child writes for the parent."""
        return self.typed_evidence().to_dict()


def _op_site(frame: Any) -> dict[str, Any] | None:
    """The user's line of an op the watch flags. While a tf.function is traced the frames are autograph's generated
    code, which the instrumentation (when installed) maps back to the user's lines."""
    instrument = sys.modules.get("tapelint.probe.instrument")
    trace_site = getattr(instrument, "trace_site", None)
    return trace_site(frame) if trace_site is not None else user_site(frame)


def _site_key(site: Site | None) -> tuple[Any, Any]:
    return (site.path, site.line) if site is not None else (None, None)


def _ref(obj: Any) -> Any:
    if obj is None:
        return None
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def _same(ref: Any, obj: Any) -> bool:
    return ref is not None and ref() is obj


def _merge(known: VariableEvidence, new: VariableEvidence) -> None:
    """A second gradient of one variable in one step (a penalty from the same persistent tape)."""
    if known.none:
        call = known.call
        for f in ("none", "zero", "nonfinite", "norm", "mav", "dead", "alive", "touched_rows"):
            setattr(known, f, getattr(new, f))
        known.call = call
        return
    if new.none:
        return
    known.nonfinite = known.nonfinite or new.nonfinite
    known.zero = known.zero and new.zero
    if known.dead is not None and new.dead is not None:
        known.dead = min(known.dead, new.dead)
    if known.alive is not None and new.alive is not None:
        known.alive = format(int(known.alive, 16) | int(new.alive, 16), "x")


def _mask(alive: np.ndarray) -> str:
    bits = np.packbits(alive.astype(np.uint8), bitorder="little")
    return format(int.from_bytes(bits.tobytes(), "little"), "x")


def _touched_rows(gradient: Any) -> np.ndarray | None:
    """The rows a row-sparse gradient (IndexedSlices) touched, or None for a dense one."""
    if not (hasattr(gradient, "values") and hasattr(gradient, "indices") and hasattr(gradient, "dense_shape")):
        return None
    try:
        return np.unique(np.asarray(gradient.indices.numpy()).reshape(-1))
    except Exception:  # noqa: BLE001
        return None


def _tensors(value: Any) -> list[Any]:
    try:
        import tensorflow as tf

        return [t for t in tf.nest.flatten(value) if hasattr(t, "shape") and hasattr(t, "dtype")]
    except Exception:  # noqa: BLE001
        return []


def _user_binding(variable: Any, frame: Any) -> str | None:
    """The name a user frame binds `variable` to: a local, an attribute of `self`, or a global."""
    depth = 0
    while frame is not None and not isinstance(frame, dict) and depth < 6:
        if is_user_file(frame.f_code.co_filename):
            depth += 1
            scopes = [("", frame.f_locals)]
            owner = frame.f_locals.get("self")
            if owner is not None:
                try:
                    scopes.append(("self.", vars(owner)))
                except TypeError:
                    pass
            scopes.append(("", frame.f_globals))
            for prefix, scope in scopes:
                for name, value in list(scope.items()):
                    if value is variable and not name.startswith("__"):
                        return prefix + name
        frame = frame.f_back
    return None


def _skips_nonfinite(optimizer: Any) -> bool:
    """A loss-scale optimizer skips an update whose gradients are not finite (Keras 3 and tf_keras)."""
    for module_name, class_name in (("keras.src.optimizers.loss_scale_optimizer", "LossScaleOptimizer"),
                                    ("tf_keras.src.mixed_precision.loss_scale_optimizer", "BaseLossScaleOptimizer")):
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module is not None else None
        if cls is not None and isinstance(optimizer, cls):
            return True
    return False


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


def _true_class_probability(cls: str, true: np.ndarray | None, pred: np.ndarray) -> np.ndarray | None:
    """Each sample's predicted probability of its true class, for the probability losses' label layouts."""
    if true is None or not true.size:
        return None
    try:
        if cls.startswith("Sparse"):
            labels = true.reshape(-1).astype(np.int64)
            rows = pred.reshape(-1, pred.shape[-1])
            if labels.shape[0] != rows.shape[0]:
                return None
            return rows[np.arange(rows.shape[0]), np.clip(labels, 0, rows.shape[-1] - 1)]
        if cls.startswith("Binary"):
            t = true.astype(np.float32).reshape(-1)
            p = pred.reshape(-1)
            if t.shape != p.shape:
                return None
            return np.where(t > 0.5, p, np.float32(1.0) - p)
        if true.shape != pred.shape:
            return None
        return (true.astype(np.float32) * pred).sum(axis=-1).reshape(-1)
    except (ValueError, IndexError):
        return None

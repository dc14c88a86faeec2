"""Patches what a custom training loop goes through so that a Recorder sees it: `tf.GradientTape.gradient`,
the optimizers' `apply`, loss `__call__`, and layer/model `__init__` and `__call__` (Keras 3, and tf_keras
when it is installed). `install()` returns a function that undoes every patch.

A `tf.function` runs as a graph, as it does without the probe ("graph" mode): while it is traced, each hook
adds a host callback (`tf.py_function`, stateful, so automatic control dependencies keep it and run the
callbacks in program order) that hands the values to the Recorder when the step runs. The gradients the
user gets back pass through an identity that depends on the gradient callback, so the callback reads the
weights before any update that uses those gradients. Functions the callbacks cannot live in (XLA,
`jit_compile=True`), and every function in "eager" mode, run eagerly; `traced_rerun()` then runs the last
such call once more as a graph after the probe stopped, to surface graph-only errors."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from tapelint.probe.measure import Recorder, is_trainable_variable


class _State:
    recorder: Recorder | None = None
    layer_depth = 0
    loss_depth = 0
    apply_depth = 0
    # "graph": tf.functions run traced, measured through host callbacks; "eager": they run eagerly.
    mode = "graph"
    # tf.function name -> "graph" or the reason it ran eagerly, in the order they were first called.
    functions: dict[str, str] = {}
    # The last call of a function that ran eagerly: (function, args, kwargs), for `traced_rerun`.
    last_eager_call: tuple[Any, tuple, dict] | None = None
    # Errors inside the probe's own callbacks (never the user's): reported as notes.
    callback_errors: list[str] = []
    # Generated autograph file -> its source map, to name the user's line in traced code.
    source_maps: dict[str, Any] = {}


STATE = _State()


def _watching() -> bool:
    recorder = STATE.recorder
    return recorder is not None and not recorder.stopped


def _recording() -> bool:
    from tensorflow.python.eager import record

    return record.could_possibly_record()


def _gradient_wrapper(original: Callable) -> Callable:
    @functools.wraps(original)
    def gradient(self: Any, target: Any, sources: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = STATE.recorder
        if recorder is None:
            return original(self, target, sources, *args, **kwargs)
        import tensorflow as tf

        if not tf.executing_eagerly():
            return original(self, target, sources, *args, **kwargs)
        flat = tf.nest.flatten(sources)
        trainable = [v for v in flat if is_trainable_variable(v)]
        if not trainable:
            return original(self, target, sources, *args, **kwargs)
        recorder.before_gradient(trainable, sys._getframe(1))
        result = original(self, target, sources, *args, **kwargs)
        recorder.after_gradient(target, flat, tf.nest.flatten(result, expand_composites=False))
        return result

    return gradient


def _apply_wrapper(original: Callable) -> Callable:
    @functools.wraps(original)
    def apply(self: Any, grads: Any, trainable_variables: Any = None, *args: Any, **kwargs: Any) -> Any:
        if STATE.apply_depth or not _watching():
            return original(self, grads, trainable_variables, *args, **kwargs)
        grads = list(grads)
        variables = list(trainable_variables) if trainable_variables is not None else \
            list(getattr(self, "_trainable_variables", []) or [])
        STATE.recorder.optimizer_applied(self, grads, variables, sys._getframe(1))  # type: ignore[union-attr]
        STATE.apply_depth += 1
        try:
            return original(self, grads, trainable_variables if trainable_variables is None else variables,
                            *args, **kwargs)
        finally:
            STATE.apply_depth -= 1

    return apply


def _apply_gradients_wrapper(original: Callable) -> Callable:
    """For optimizers whose `apply_gradients` does not go through `apply` (tf_keras, legacy)."""

    @functools.wraps(original)
    def apply_gradients(self: Any, grads_and_vars: Any, *args: Any, **kwargs: Any) -> Any:
        if STATE.apply_depth or not _watching():
            return original(self, grads_and_vars, *args, **kwargs)
        pairs = list(grads_and_vars)
        STATE.recorder.optimizer_applied(self, [g for g, _ in pairs], [v for _, v in pairs],  # type: ignore[union-attr]
                                         sys._getframe(1))
        STATE.apply_depth += 1
        try:
            return original(self, pairs, *args, **kwargs)
        finally:
            STATE.apply_depth -= 1

    return apply_gradients


def _init_wrapper(original: Callable, kind: str) -> Callable:
    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        recorder = STATE.recorder
        if recorder is not None:
            frame = sys._getframe(1)
            if kind == "layer":
                recorder.layer_created(self, frame)
            elif kind == "loss":
                recorder.loss_created(self, frame)
            else:
                recorder.optimizer_created(self, frame)

    return __init__


def _loss_call_wrapper(original: Callable) -> Callable:
    @functools.wraps(original)
    def __call__(self: Any, y_true: Any, y_pred: Any, *args: Any, **kwargs: Any) -> Any:
        if STATE.loss_depth or not _watching():
            return original(self, y_true, y_pred, *args, **kwargs)
        STATE.loss_depth += 1
        try:
            result = original(self, y_true, y_pred, *args, **kwargs)
        finally:
            STATE.loss_depth -= 1
        if _recording():
            STATE.recorder.loss_called(self, y_true, y_pred, result, sys._getframe(1))  # type: ignore[union-attr]
        return result

    return __call__


def _layer_call_wrapper(original: Callable) -> Callable:
    @functools.wraps(original)
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        # Only the outermost call (the model the loop calls) is recorded; the layers inside it pass through.
        if STATE.layer_depth or not _watching():
            return original(self, *args, **kwargs)
        STATE.layer_depth += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            STATE.layer_depth -= 1
        if _recording():
            STATE.recorder.model_called(self, args, kwargs, sys._getframe(1))  # type: ignore[union-attr]
        return result

    return __call__


def _targets() -> list[tuple[Any, str, Callable[[Callable], Callable]]]:
    import tensorflow as tf

    targets: list[tuple[Any, str, Callable[[Callable], Callable]]] = [
        (tf.GradientTape, "gradient", _gradient_wrapper),
    ]
    try:
        from keras.src.layers.layer import Layer
        from keras.src.losses.loss import Loss
        from keras.src.optimizers.base_optimizer import BaseOptimizer

        targets += [
            (BaseOptimizer, "__init__", lambda f: _init_wrapper(f, "optimizer")),
            (BaseOptimizer, "apply", _apply_wrapper),
            (Loss, "__init__", lambda f: _init_wrapper(f, "loss")),
            (Loss, "__call__", _loss_call_wrapper),
            (Layer, "__init__", lambda f: _init_wrapper(f, "layer")),
            (Layer, "__call__", _layer_call_wrapper),
        ]
        for module_name, class_name in (("keras.src.optimizers.loss_scale_optimizer", "LossScaleOptimizer"),
                                        ("keras.src.optimizers.multi_optimizer", "MultiOptimizer")):
            try:
                cls = getattr(importlib.import_module(module_name), class_name)
            except (ImportError, AttributeError):
                continue
            if "apply" in vars(cls):
                targets.append((cls, "apply", _apply_wrapper))
    except ImportError:
        pass
    # Keras 2 through tf_keras, only when the user has it.
    if importlib.util.find_spec("tf_keras") is not None:  # type: ignore[attr-defined]
        try:
            import tf_keras

            optimizer_classes = [tf_keras.optimizers.Optimizer]
            legacy = getattr(getattr(tf_keras.optimizers, "legacy", None), "Optimizer", None)
            if legacy is not None and legacy not in optimizer_classes:
                optimizer_classes.append(legacy)
            for cls in optimizer_classes:
                targets += [(cls, "__init__", lambda f: _init_wrapper(f, "optimizer")),
                            (cls, "apply_gradients", _apply_gradients_wrapper)]
            targets += [
                (tf_keras.losses.Loss, "__init__", lambda f: _init_wrapper(f, "loss")),
                (tf_keras.losses.Loss, "__call__", _loss_call_wrapper),
                (tf_keras.layers.Layer, "__init__", lambda f: _init_wrapper(f, "layer")),
                (tf_keras.layers.Layer, "__call__", _layer_call_wrapper),
            ]
        except Exception:  # noqa: BLE001 - a broken tf_keras must not stop the probe of a Keras 3 script
            pass
    return targets


def install(recorder: Recorder) -> Callable[[], None]:
    """Patch the classes and route what they see to `recorder`. Returns the undo function."""
    STATE.recorder = recorder
    undo: list[tuple[Any, str, Any, bool]] = []
    for cls, attr, wrap in _targets():
        own = attr in vars(cls)
        original = getattr(cls, attr)
        if getattr(original, "__tapelint_wrapped__", False):
            continue
        wrapped = wrap(original)
        wrapped.__tapelint_wrapped__ = True  # type: ignore[attr-defined]
        setattr(cls, attr, wrapped)
        undo.append((cls, attr, original, own))

    def uninstall() -> None:
        for cls, attr, original, own in reversed(undo):
            if own:
                setattr(cls, attr, original)
            else:
                delattr(cls, attr)
        STATE.recorder = None
        STATE.layer_depth = STATE.loss_depth = STATE.apply_depth = 0

    return uninstall


@contextmanager
def installed(recorder: Recorder) -> Iterator[Recorder]:
    uninstall = install(recorder)
    try:
        yield recorder
    finally:
        uninstall()

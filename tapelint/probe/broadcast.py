"""Watches the TensorFlow ops of a probed step through an op callback (the mechanism `enable_check_numerics`
uses), registered only while it is needed:

- from the model's call inside a recording tape to the step's `tape.gradient`: the model's outputs are tainted,
  the taint follows every op, and an element-wise binary op that broadcasts a (B,) operand against a (B, 1)
  one into (B, B), with exactly one operand computed from the model, is a target-shape broadcast (TL814). A
  difference of two tainted operands (a pairwise loss, `s_i - s_j`) is noted as such, never flagged;
- from `tape.gradient` until the gradients are read, the next model call or an optimizer step: whether any op
  reads the returned gradients (summed into an accumulator, clipped), which tells gradient accumulation from
  a loop that drops its gradients.

Imported only in the process that runs the step; TensorFlow is imported lazily by `OpWatch.start`.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any, Callable

# Element-wise binary ops whose operands broadcast (TensorFlow's op type names, measured on TF 2.21).
ELEMENTWISE_BINARY = frozenset({
    "Sub", "AddV2", "Add", "Mul", "RealDiv", "Div", "DivNoNan", "SquaredDifference", "Maximum", "Minimum", "Pow",
    "FloorDiv", "FloorMod", "Xdivy", "Xlogy", "MulNoNan", "Atan2", "TruncateDiv",
})
DIFFERENCE_OPS = frozenset({"Sub", "SquaredDifference"})
# Ops that pass gradients on without reading them (a tf.function's outputs, the probe's own callbacks).
PASS_THROUGH_OPS = frozenset({"Identity", "IdentityN", "NoOp", "EagerPyFunc", "StopGradient"})


def _static_shape(tensor: Any) -> tuple[int | None, ...] | None:
    try:
        dims = tensor.shape
        if dims.rank is None:
            return None
        return tuple(None if d is None else int(d) for d in dims)
    except (AttributeError, TypeError, ValueError):
        return None


def target_broadcast(shapes: list[tuple[int | None, ...] | None],
                     output: tuple[int | None, ...] | None) -> int | None:
    """B when the operands are (B,) and (B, 1) in either order and the output is (B, B) with B > 1, else None."""
    if len(shapes) != 2 or output is None or any(s is None for s in shapes):
        return None
    a, b = shapes
    assert a is not None and b is not None
    for flat, column in ((a, b), (b, a)):
        if len(flat) == 1 and len(column) == 2 and column[1] == 1 and flat[0] is not None \
                and flat[0] == column[0] and flat[0] > 1 and tuple(output) == (flat[0], flat[0]):
            return flat[0]
    return None


class _Refs:
    """Tensors by identity: ids with weak references, so that a recycled id is never mistaken for a tensor."""

    def __init__(self) -> None:
        self._refs: dict[int, Any] = {}

    def add(self, tensor: Any) -> None:
        try:
            self._refs[id(tensor)] = weakref.ref(tensor)
        except TypeError:
            pass

    def __contains__(self, tensor: Any) -> bool:
        ref = self._refs.get(id(tensor))
        return ref is not None and ref() is tensor

    def clear(self) -> None:
        self._refs.clear()

    def __bool__(self) -> bool:
        return bool(self._refs)


class OpWatch:
    """One op callback, switched on and off by the recorder. `site` finds the user's line of an op."""

    def __init__(self, site: Callable[[Any], Any]) -> None:
        self._site = site
        self._registered = False
        self.tainted = _Refs()
        self.gradients = _Refs()
        self.mode: str | None = None  # "taint" (forward and loss) or "gradients" (after tape.gradient)
        # What the watch saw in the current step; the recorder collects and resets it.
        self.broadcast: dict[str, Any] | None = None
        self.difference_site: Any = None
        self.gradients_used = False
        self._on_use: Callable[[], None] | None = None

    # -- switching ------------------------------------------------------------------------------------
    def _register(self) -> None:
        if self._registered:
            return
        try:
            from tensorflow.python.framework import op_callbacks

            op_callbacks.add_op_callback(self._callback)
            self._registered = True
        except Exception:  # noqa: BLE001 - without the hook the probe simply sees less
            self._registered = False

    def stop(self) -> None:
        self.mode = None
        self._on_use = None
        self.tainted.clear()
        self.gradients.clear()
        if self._registered:
            try:
                from tensorflow.python.framework import op_callbacks

                op_callbacks.remove_op_callback(self._callback)
            except Exception:  # noqa: BLE001
                pass
            self._registered = False

    def taint_outputs(self, outputs: list[Any]) -> None:
        """The model returned these inside a recording tape: follow them until the step's gradient."""
        if self.mode == "gradients":
            self.stop()
        for tensor in outputs:
            self.tainted.add(tensor)
        if self.tainted:
            self.mode = "taint"
            self._register()

    def watch_gradients(self, gradients: list[Any], on_use: Callable[[], None] | None = None) -> None:
        """`tape.gradient` returned these: note whether some op reads them before the next step (and call
        `on_use` when one does: a traced step's ops are seen once, when it is traced)."""
        self.stop()
        self._on_use = on_use
        for tensor in gradients:
            if tensor is not None:
                self.gradients.add(tensor)
        if self.gradients:
            self.mode = "gradients"
            self._register()

    def take(self) -> tuple[dict[str, Any] | None, Any, bool]:
        found = (self.broadcast, self.difference_site, self.gradients_used)
        self.broadcast, self.difference_site, self.gradients_used = None, None, False
        return found

    # -- the callback ---------------------------------------------------------------------------------
    def _callback(self, op_type: str, inputs: Any, attrs: Any, outputs: Any, op_name: Any = None,
                  graph: Any = None) -> None:
        try:
            if self.mode == "taint":
                self._taint(op_type, list(inputs or ()), list(outputs or ()))
            elif self.mode == "gradients":
                if any(t in self.gradients for t in inputs or ()):
                    if op_type in PASS_THROUGH_OPS:
                        for tensor in outputs or ():
                            self.gradients.add(tensor)
                        return None
                    self.gradients_used = True
                    on_use = self._on_use
                    self.stop()
                    if on_use is not None:
                        on_use()
        except Exception:  # noqa: BLE001 - the watch must never break the user's op
            pass
        return None

    def _taint(self, op_type: str, inputs: list[Any], outputs: list[Any]) -> None:
        marks = [t in self.tainted for t in inputs]
        if not any(marks):
            return
        for tensor in outputs:
            self.tainted.add(tensor)
        if op_type not in ELEMENTWISE_BINARY or len(inputs) != 2:
            return
        if all(marks):
            if op_type in DIFFERENCE_OPS and self.difference_site is None:
                shapes = [_static_shape(t) for t in inputs]
                if all(s is not None and len(s) >= 1 for s in shapes):
                    self.difference_site = self._site(sys._getframe(1))
            return
        if self.broadcast is not None or not outputs:
            return
        shapes = [_static_shape(t) for t in inputs]
        output = _static_shape(outputs[0])
        batch = target_broadcast(shapes, output)
        if batch is None:
            return
        self.broadcast = {"op": op_type, "shapes": [list(s) for s in shapes if s is not None],
                          "output_shape": list(output or ()), "tainted": marks.index(True),
                          "site": self._site(sys._getframe(1))}

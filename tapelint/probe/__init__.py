"""The runtime probe: runs training steps with instrumentation and reports TL8xx findings with numbers.

The only part of tapelint that imports TensorFlow, and only when a probe actually runs: importing this
package is cheap. `run_probe` runs a script in a child process; `probe_step` measures objects you already
have, in this process, for your own tests:

    report = probe_step(model, x, y, loss_fn, optimizer)
    assert not report.findings, report.render()
"""

from __future__ import annotations

from typing import Any

from tapelint.probe.report import ProbeResult
from tapelint.probe.runner import run_probe

__all__ = ["ProbeResult", "probe_step", "run_probe"]


def probe_step(model: Any, x: Any, y: Any, loss_fn: Any, optimizer: Any, steps: int = 1,
               settings: dict[str, Any] | None = None, restore_weights: bool = True) -> ProbeResult:
    """Run `steps` training steps of `model` on one batch, the way a correct GradientTape loop does
    (`model(x, training=True)`, `loss_fn(y, predictions)`, `tape.gradient`, `optimizer.apply_gradients`),
    measure them like `tapelint probe` does, and return the result.

    The model's weights are put back afterwards unless `restore_weights=False`; the optimizer keeps its
    advanced state (its slots and iteration count). `settings` overrides `[tool.tapelint.probe]` keys.
    """
    import time

    import tensorflow as tf

    from tapelint.probe.instrument import installed
    from tapelint.probe.measure import Recorder, StopProbe, last_user_frame, one_line
    from tapelint.probe_settings import validate_probe_settings

    checked = validate_probe_settings(dict(settings or {}), "probe_step(settings=...)")
    recorder = Recorder(steps)
    recorder.register_model(model)
    if hasattr(optimizer, "apply"):
        recorder.optimizer_created(optimizer, None)
    saved = [w.numpy().copy() for w in model.weights] if restore_weights else None
    status, error = "ended", None
    started = time.monotonic()
    with installed(recorder):
        try:
            for _ in range(steps + 1):
                with tf.GradientTape() as tape:
                    predictions = model(x, training=True)
                    loss = loss_fn(y, predictions)
                variables = model.trainable_variables
                gradients = tape.gradient(loss, variables)
                pairs = [(g, v) for g, v in zip(gradients, variables) if g is not None]
                if pairs:
                    optimizer.apply_gradients(pairs)
        except StopProbe:
            status = "stopped"
        except Exception as caught:  # noqa: BLE001 - reported in the result, like a script's error
            status, error = "raised", {"message": one_line(caught), "type": type(caught).__name__,
                                       "frame": last_user_frame(caught)}
        recorder.finish()
    if saved is not None:
        for weight, value in zip(model.weights, saved):
            weight.assign(value)
    payload = {"status": "stopped" if recorder.stopped else status, "error": error,
               "evidence": recorder.evidence()}
    return ProbeResult.from_payload(payload, display_script="<probe_step>", settings=checked, steps=steps,
                                    elapsed=time.monotonic() - started)

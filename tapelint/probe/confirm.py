"""Marks static findings confirmed, refuted or not checked from what the probe measured, and merges the
runtime findings in beside them (`tapelint PATH --probe SCRIPT`). No TensorFlow here."""

from __future__ import annotations

import os
import re
from typing import Callable

from tapelint.diagnostic import Diagnostic, ProbeVerdict
from tapelint.probe.evidence import OptimizerEvidence, Site, StepEvidence
from tapelint.probe.report import ProbeResult

Verdict = ProbeVerdict


def _same_file(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def _codes(result: ProbeResult, code: str) -> list[Diagnostic]:
    return [d for d in result.findings if d.code == code]


def _steps(result: ProbeResult) -> list[StepEvidence]:
    return [s for s in result.evidence.steps if not s.observation]


def _optimizer_at(result: ProbeResult, d: Diagnostic) -> OptimizerEvidence | None:
    for optimizer in result.evidence.optimizers:
        site = optimizer.site
        if site is not None and _same_file(site.path, d.path) and site.line <= d.line <= (site.end_line or site.line):
            return optimizer
    return None


def _updates(result: ProbeResult) -> tuple[int, int]:
    changed = total = 0
    for step in _steps(result):
        for update in (step.updates or {}).values():
            total += 1
            changed += bool(update.changed)
    return changed, total


def _tl001(result: ProbeResult, d: Diagnostic) -> Verdict:
    changed, total = _updates(result)
    if not total:
        return Verdict("not-checked", "no step finished, so no update could be observed")
    optimizer = _optimizer_at(result, d)
    if optimizer is not None and optimizer.applies:
        return Verdict("refuted", f"`{optimizer.class_name}` was applied {optimizer.applies} time(s); "
                                  f"{changed} of {total} variable updates changed weights")
    applies = sum(o.applies for o in result.evidence.optimizers)
    if changed == 0:
        return Verdict("confirmed", f"no weights changed after the gradient: 0 of {total} trainable variables "
                                    f"moved in {len(_steps(result))} step(s), and no optimizer was applied"
                       if not applies else f"no weights changed after the gradient (0 of {total})")
    return Verdict("refuted", f"{changed} of {total} variable updates changed weights "
                              f"({applies} optimizer call(s))")


def _tl201(result: ProbeResult, d: Diagnostic) -> Verdict:
    large = _codes(result, "TL808")
    dead = [f for f in _codes(result, "TL804") if dict(f.extra).get("grew")]
    if large:
        return Verdict("confirmed", large[0].message)
    if dead:
        return Verdict("confirmed", "dead units appear after the first update: " + dead[0].message)
    ratios = [u.ratio for s in _steps(result) for u in (s.updates or {}).values() if u.kernel and u.ratio]
    if not ratios:
        return Verdict("not-checked", "no update ran during the probe, so the learning rate's effect was not seen")
    return Verdict("refuted", f"largest first update |dw|/|w| = {max(ratios):.3g}, and no ReLU layer lost its "
                              f"units")


def _tl301(result: ProbeResult, d: Diagnostic) -> Verdict:
    calls = result.evidence.model_calls
    steps = result.evidence.steps
    if not calls or not steps:
        return Verdict("not-checked", "no model call inside a tape was seen")
    call = max(calls, key=lambda c: c.frozen_variables)
    receiving = sum(1 for v in steps[0].variables if not v.none and not v.zero)
    total = len(steps[0].variables)
    frozen = call.frozen_variables
    layers = ", ".join(f"`{n}`" for n in call.frozen_layers)
    evidence = (f"{receiving} of {total} variables given to `tape.gradient` receive a non-zero gradient; "
                f"`{call.model}` holds {frozen} frozen variable(s)" + (f" ({layers})" if layers else ""))
    return Verdict("confirmed" if frozen else "refuted", evidence)


def _tl101(result: ProbeResult, d: Diagnostic) -> Verdict:
    found = _codes(result, "TL811")
    if found:
        return Verdict("confirmed", found[0].message)
    calls = [c for c in result.evidence.loss_calls if c.from_logits]
    if calls:
        c = calls[0]
        return Verdict("refuted", f"`{c.class_name}(from_logits=True)` received values in "
                                  f"[{c.pred_min}, {c.pred_max}], not probabilities")
    return Verdict("not-checked", "no loss with from_logits=True was called inside a tape")


def _tl102(result: ProbeResult, d: Diagnostic) -> Verdict:
    calls = [c for c in result.evidence.loss_calls if c.probability_loss and c.from_logits is False]
    if not calls:
        return Verdict("not-checked", "no probability loss with from_logits=False was called inside a tape")
    c = calls[0]
    if c.in_unit_interval is False:
        return Verdict("confirmed", f"`{c.class_name}` (from_logits=False) received values in "
                                    f"[{c.pred_min}, {c.pred_max}]: logits, not probabilities")
    saturated = _codes(result, "TL813")
    if saturated:
        return Verdict("confirmed", saturated[0].message)
    return Verdict("refuted", f"`{c.class_name}` received probabilities in [{c.pred_min}, {c.pred_max}]"
                              + (" from a Keras softmax, whose logits Keras uses" if c.keras_logits else ""))


def _tl501(result: ProbeResult, d: Diagnostic) -> Verdict:
    optimizer = _optimizer_at(result, d)
    if optimizer is not None and optimizer.learning_rate is not None:
        return Verdict("confirmed", f"`{optimizer.class_name}` runs with learning_rate={optimizer.learning_rate:g}")
    return Verdict("not-checked", "the optimizer created here was not seen running")


def _tl005(result: ProbeResult, d: Diagnostic) -> Verdict:
    here = [s for s in result.evidence.steps
            if s.site is not None and _same_file(s.site.path, d.path) and s.site.line == d.line]
    if len(here) >= 2:
        return Verdict("refuted", f"`tape.gradient` ran {len(here)} times on this line without an error "
                                  f"(a new tape each iteration)")
    return Verdict("not-checked", "the probe did not see this `tape.gradient` run twice")


def _none_gradient(result: ProbeResult, d: Diagnostic) -> Verdict:
    found = _codes(result, "TL801")
    if found:
        return Verdict("confirmed", found[0].message)
    first = result.evidence.steps[0].variables if result.evidence.steps else []
    return Verdict("refuted", f"all {len(first)} trainable variables given to `tape.gradient` got a gradient")


def _tl006(result: ProbeResult, d: Diagnostic) -> Verdict:
    stuck = [f for f in _codes(result, "TL807") if dict(f.extra).get("applied")]
    if stuck:
        return Verdict("confirmed", stuck[0].message)
    changed, total = _updates(result)
    if total and changed == total:
        return Verdict("refuted", f"all {total} trainable variables changed after the update")
    return Verdict("not-checked", "no update that reached every variable was observed")


def _tl107(result: ProbeResult, d: Diagnostic) -> Verdict:
    for code in ("TL813", "TL802"):
        found = _codes(result, code)
        if found:
            return Verdict("confirmed", found[0].message)
    return Verdict("not-checked", "no saturated output or zero gradient in the probed steps; a larger step "
                                  "or more steps can still saturate it")


def _tl108(result: ProbeResult, d: Diagnostic) -> Verdict:
    found = _codes(result, "TL803") or _codes(result, "TL802")
    if found:
        return Verdict("confirmed", found[0].message)
    return Verdict("not-checked", "the loss and the gradients stayed finite and non-zero in the probed steps")


def _tl302(result: ProbeResult, d: Diagnostic) -> Verdict:
    found = _codes(result, "TL812")
    if found:
        return Verdict("confirmed", found[0].message)
    calls = [c for c in result.evidence.model_calls if c.training == "absent"]
    if calls:
        return Verdict("refuted", f"`{calls[0].model}` has no Dropout or trainable BatchNormalization, so the "
                                  f"flag changes nothing here")
    return Verdict("not-checked", "no model call without `training=` was seen inside a tape")


CHECKS: dict[str, Callable[[ProbeResult, Diagnostic], Verdict]] = {
    "TL001": _tl001, "TL005": _tl005, "TL003": _none_gradient, "TL004": _none_gradient, "TL007": _none_gradient,
    "TL006": _tl006, "TL107": _tl107, "TL108": _tl108, "TL302": _tl302, "TL101": _tl101, "TL102": _tl102, "TL201": _tl201, "TL301": _tl301, "TL501": _tl501,
}


# The error a static finding predicts, as TensorFlow raises it (type, and text of its message; TF 2.21): when the
# script raises exactly that on the finding's line, the finding is confirmed.
PREDICTED_ERRORS: dict[str, tuple[str, str]] = {
    "TL005": ("RuntimeError", "A non-persistent GradientTape can only be used to compute one set of gradients"),
}


def verdict_for(result: ProbeResult, d: Diagnostic) -> Verdict:
    error = result.error or {}
    frame = error.get("frame")
    if frame and _same_file(frame.get("path"), d.path) and frame.get("line") == d.line:
        message = str(error.get("message") or "")
        predicted = PREDICTED_ERRORS.get(d.code)
        if predicted is not None and error.get("type") == predicted[0] and predicted[1] in message:
            return Verdict("confirmed", f"the script raised here, as predicted: {message}")
        # Confirmed only when the error names what the finding names (`lr=` -> 'lr'): another finding on
        # the same line is merely cut short by it.
        tokens = [t.strip("=()., ") for t in re.findall(r"`([^`]+)`", d.message)]
        if any(len(t) >= 2 and t in message for t in tokens):
            return Verdict("confirmed", f"the script raised here: {message}")
        return Verdict("not-checked", f"the script raised on this line first: {message}")
    check = CHECKS.get(d.code)
    if check is None:
        return Verdict("not-checked", f"the probe has no runtime check for {d.code}")
    if not result.gradient_calls and d.code != "TL501":
        reason = result.failure or "no training step ran"
        return Verdict("not-checked", reason)
    return check(result, d)


def executed_files(result: ProbeResult, script: str) -> set[str]:
    """The user files the probe saw running: the script and the files of every recorded site."""
    files = {os.path.realpath(script)}

    def add(site: Site | None) -> None:
        if site is not None and site.path:
            files.add(os.path.realpath(site.path))

    evidence = result.evidence
    for step in evidence.steps:
        add(step.site)
        for variable in step.variables:
            add(variable.layer_site)
    for optimizer in evidence.optimizers:
        add(optimizer.site)
    for loss_call in evidence.loss_calls:
        add(loss_call.site)
    for model_call in evidence.model_calls:
        add(model_call.site)
    return files


def merge(static: list[Diagnostic], result: ProbeResult, script: str,
          enabled: Callable[[Diagnostic], bool] = lambda d: True) -> list[Diagnostic]:
    """Static findings in the files the probe ran get a verdict; the runtime findings are added."""
    files = executed_files(result, script)
    out = []
    for d in static:
        if d.probe is None and os.path.realpath(d.path) in files:
            d = d.with_changes(probe=verdict_for(result, d))
        out.append(d)
    out += [d for d in result.findings if enabled(d)]
    out.sort(key=Diagnostic.sort_key)
    return out

"""Turns the probe's evidence (the typed records of `evidence.py`) into TL8xx findings, using the thresholds of
`[tool.tapelint.probe]`. No TensorFlow here: the parent process runs it on the child's report."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tapelint.probe.evidence import (Evidence, LossCall, Site, StepEvidence, VariableEvidence, finite, number,
                                     read_evidence)

Finding = dict[str, Any]

# A pooled window of small batches is judged dead only at this share, or when it grew this much since the first
# window: units silent for 8 separate samples are rarer than for one batch of 8, but samples of one step apart
# are not independent draws either.
POOLED_DEAD_STRICT = 0.9
POOLED_DEAD_GROWTH = 0.2

def _fmt(value: Any, digits: int = 3) -> str:
    n = number(value)
    if n is None:
        return "?"
    if math.isnan(n) or math.isinf(n):
        return str(n)
    if n == 0:
        return "0"
    if abs(n) >= 1e4 or abs(n) < 1e-3:
        return f"{n:.{digits - 1}e}"
    return f"{n:.{digits}g}"


def _pct(value: float) -> str:
    return f"{round(value * 100):d}%"


def _names(items: list[str], limit: int = 4) -> str:
    shown = ", ".join(f"`{n}`" for n in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _finding(code: str, site: Site | None, message: str, severity: str | None = None, **data: Any) -> Finding:
    where = site or Site()
    found = {"code": code, "path": where.path, "line": where.line or 1,
             "end_line": where.end_line or where.line or 1, "column": where.column or 0,
             "end_column": where.end_column or where.column or 0, "message": message, "data": data}
    if severity is not None:
        found["severity"] = severity
    return found


class _Run:
    """The evidence with what several detectors ask of it."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence
        self.steps = evidence.steps
        self.updates_before: dict[int, int] = {}
        done = 0
        for step in self.steps:
            self.updates_before[step.index] = done
            if step.changed:
                done += 1

    def label(self, step: StepEvidence) -> str:
        done = self.updates_before.get(step.index, 0)
        if step.observation and done:
            return f"after {done} update{'s' if done != 1 else ''}"
        return f"at step {step.index}"

    def skipped_nonfinite(self, step: StepEvidence) -> bool:
        """A loss-scale optimizer got non-finite gradients in this step, so it skipped the update (by design)."""
        # The gradients handed to it are counted eagerly; in a traced step only the measured ones are seen.
        measured = any(v.nonfinite for v in step.variables)
        for apply in step.applies:
            optimizer = self.evidence.optimizer(apply.optimizer)
            if (apply.nonfinite_gradients or measured) and optimizer is not None and optimizer.skips_nonfinite:
                return True
        return False


def compute_findings(evidence: Evidence | dict[str, Any] | None, settings: dict[str, Any]) -> list[Finding]:
    if not evidence:
        return []
    typed = read_evidence(evidence)
    if not typed.steps:
        return []
    run = _Run(typed)
    out: list[Finding] = []
    out += _none_gradients(run)
    out += _zero_gradients(run)
    out += _nan_gradients(run)
    out += _dead_units(run, settings)
    out += _vanishing_exploding(run, settings)
    out += _not_updated(run)
    out += _update_too_large(run, settings)
    out += _unnormalized_input(typed, settings)
    out += _initial_loss(typed, settings)
    out += _probabilities_with_logits(typed)
    out += _training_flag(typed)
    out += _saturated(run, settings)
    out += _broadcast(run)
    return out


def evidence_notes(evidence: Evidence | dict[str, Any] | None, settings: dict[str, Any]) -> list[str]:
    """What the report should say about how the evidence was gathered, and what it could not judge."""
    if not evidence:
        return []
    typed = read_evidence(evidence)
    run = _Run(typed)
    notes = []
    if typed.extended:
        notes.append(f"ran past --steps: {typed.extended}")
    skipped = [step.index for step in typed.steps if run.skipped_nonfinite(step)]
    if skipped:
        which = f"step {skipped[0]}" if len(skipped) == 1 else \
            f"steps {', '.join(map(str, skipped[:-1]))} and {skipped[-1]}" if len(skipped) <= 4 else \
            f"{len(skipped)} steps ({skipped[0]} to {skipped[-1]})"
        notes.append(f"{which}: update skipped: gradients not finite (the loss-scale optimizer lowers its scale and "
                     f"skips the step)")
    for pool in _pooled_relu(run, settings):
        if pool.windows:
            continue
        unreached = f"; {pool.unreached} more passed no gradient back from the loss at all, which says nothing " \
                    "about units" if pool.unreached else ""
        notes.append(f"dead ReLU units of `{pool.name}` not judged (batch {pool.batch}, {pool.leftover} sample"
                     f"{'s' if pool.leftover != 1 else ''} that passed a gradient back; "
                     f"{settings['dead-relu-min-batch']} needed{unreached})")
    return notes


# ---------------------------------------------------------------------------------------------------------------
# Gradients


def _none_gradients(run: _Run) -> list[Finding]:
    for step in run.steps:
        none = [v.name for v in step.variables if v.none]
        if none:
            total = len(step.variables)
            which = "all" if len(none) == total else f"{len(none)} of"
            return [_finding("TL801", step.site,
                             f"`tape.gradient` returned None for {which} {total} trainable variables "
                             f"({_names(none)}) {run.label(step)}: the loss does not depend on them",
                             variables=none, total=total, step=step.index)]
    return []


def _cancelled_bias(step: StepEvidence, variable: VariableEvidence) -> str | None:
    """Why a bias's gradient is exactly zero, when the step shows it: its own layer's kernel gets a non-zero
    gradient, so the loss's gradient at the layer's outputs is not zero, only its sum over the batch is. Then
    adding one constant to every output leaves the loss as it is, as in a loss of differences (`s_i - s_j`)."""
    if variable.kernel or variable.layer is None or len(variable.shape) != 1:
        return None
    kernel = next((v for v in step.variables if v.layer == variable.layer and v.kernel and v.call == variable.call
                   and not v.none and not v.zero and not v.nonfinite), None)
    if kernel is None:
        return None
    cause = (f"`{kernel.name}` of the same layer gets a gradient, so the loss's gradient at `{variable.layer}`'s "
             f"outputs sums to exactly zero over the batch: adding one constant to every output does not change "
             f"the loss")
    if step.difference_site is not None:
        cause += f", which takes a difference of two model outputs on line {step.difference_site.line}"
    return cause


def _zero_gradients(run: _Run) -> list[Finding]:
    explained_finding: Finding | None = None
    for step in run.steps:
        zero = [v for v in step.variables if v.zero]
        if not zero:
            continue
        total = len(step.variables)
        causes = {v.name: _cancelled_bias(step, v) for v in zero}
        unexplained = [v.name for v in zero if causes[v.name] is None]
        loss = f"; loss {_fmt(step.loss)}" if step.loss is not None else ""
        if unexplained:
            which = f"all {total}" if len(unexplained) == total else f"{len(unexplained)} of {total}"
            return [_finding("TL802", step.site,
                             f"the gradient of {which} trainable variables is exactly zero {run.label(step)} "
                             f"({_names(unexplained)}){loss}",
                             variables=unexplained, total=total, step=step.index)]
        if explained_finding is None:
            first = zero[0]
            names = [v.name for v in zero]
            explained_finding = _finding(
                "TL802", step.site,
                f"the gradient of {_names(names)} is exactly zero {run.label(step)} by construction: "
                f"{causes[first.name]}; it never learns, which is harmless if intended",
                severity="info", variables=names, total=total, step=step.index, cause=causes[first.name])
    return [explained_finding] if explained_finding is not None else []


def _nan_gradients(run: _Run) -> list[Finding]:
    steps = run.steps
    # Every update went to a loss-scale optimizer, and some step had finite gradients: its scale works.
    scaled = any(o.skips_nonfinite for o in run.evidence.optimizers) and \
        all(o.skips_nonfinite for o in run.evidence.optimizers if o.applies) and \
        any(s.variables and not any(v.nonfinite for v in s.variables) for s in steps)
    for step in steps:
        bad = [v.name for v in step.variables if v.nonfinite]
        loss = number(step.loss)
        loss_bad = loss is not None and not math.isfinite(loss)
        if not (bad or loss_bad):
            continue
        if bad and not loss_bad and scaled and (run.skipped_nonfinite(step) or step.observation):
            # A loss-scale optimizer skips such a step and lowers its scale (the gradient after the last probed
            # update would be skipped too).
            continue
        what = f"NaN or Inf in the gradient of {_names(bad)}" if bad else "the gradients are finite"
        return [_finding("TL803", step.site, f"{what} {run.label(step)}; loss {_fmt(step.loss)}",
                         variables=bad, loss=step.loss, step=step.index)]
    return []


def _usable_relu(variable: VariableEvidence) -> bool:
    # An all-zero kernel gradient says nothing about single units (TL802 and TL813 speak for it).
    return variable.dead is not None and not variable.zero and not variable.none and not variable.nonfinite \
        and variable.activation in ("relu", "relu6")


def _relu_history(run: _Run) -> dict[str, list[tuple[StepEvidence, VariableEvidence]]]:
    history: dict[str, list[tuple[StepEvidence, VariableEvidence]]] = {}
    for step in run.steps:
        for variable in step.variables:
            if _usable_relu(variable):
                history.setdefault(variable.name, []).append((step, variable))
    return history


@dataclass
class _Window:
    dead: float  # the share of units that got no gradient from any sample of the window
    first: int
    last: int
    samples: int
    silent: int  # samples whose gradient to the kernel was exactly zero: every unit dead for them


@dataclass
class _Pool:
    name: str
    batch: int
    windows: list[_Window]
    leftover: int  # samples after the last window
    unreached: int  # samples left out: the loss passed no gradient back for them at all
    first_dead: float  # the share of dead units at the first step with a gradient


def _reached(step: StepEvidence, variable: VariableEvidence) -> bool:
    """Whether the loss passed a gradient back at this step: some other variable of the same `tape.gradient`
    call got a finite gradient that is not exactly zero (the next layer's bias gets one whenever the loss does)."""
    return any(other is not variable and other.call == variable.call and not other.none and not other.zero
               and not other.nonfinite for other in step.variables)


def _pooled_relu(run: _Run, settings: dict[str, Any]) -> list[_Pool]:
    """For ReLU kernels trained on batches below `dead-relu-min-batch`: the units that got a gradient from any
    sample, pooled over consecutive steps into windows of at least that many samples.

    A unit is dead for a window when no sample of it passed the unit a gradient. A sample whose gradient to the
    whole kernel is exactly zero, while the loss did pass a gradient back (the next layer got one), is one for
    which every unit is dead: the strongest evidence there is, and it counts like any other sample (leaving it
    out once left the seed's dying head unjudged). Only a sample for which the loss passed nothing back at all
    (every gradient of its step exactly zero: a clipped probability, a zero loss) says nothing about units, and
    is left out: the evidence falls short when fewer than `dead-relu-min-batch` samples remain."""
    min_batch = settings["dead-relu-min-batch"]
    out = []
    history: dict[str, list[tuple[StepEvidence, VariableEvidence]]] = {}
    unreached: dict[str, int] = {}
    for step in run.steps:
        for variable in step.variables:
            if variable.dead is None or variable.alive is None or variable.none or variable.nonfinite \
                    or variable.activation not in ("relu", "relu6"):
                continue
            if variable.zero and not _reached(step, variable):
                unreached[variable.name] = unreached.get(variable.name, 0) + (step.batch or 1)
                continue
            history.setdefault(variable.name, []).append((step, variable))
    for name in unreached:
        history.setdefault(name, [])
    for name, seen in history.items():
        batch = seen[0][0].batch if seen else next(
            (s.batch for s in run.steps for v in s.variables if v.name == name), None)
        units = seen[0][1].units or 0 if seen else 0
        if batch is None or batch >= min_batch:
            continue
        live = [variable for _, variable in seen if not variable.zero]
        pool = _Pool(name, batch, [], 0, unreached.get(name, 0), (live[0].dead or 0.0) if live else 1.0)
        alive, samples, silent, first = 0, 0, 0, None
        for step, variable in seen:
            assert variable.alive is not None
            alive |= int(variable.alive, 16)
            samples += step.batch or 1
            silent += (step.batch or 1) if variable.zero else 0
            first = step.index if first is None else first
            if samples >= min_batch and units:
                pool.windows.append(_Window(1.0 - bin(alive).count("1") / units, first, step.index, samples, silent))
                alive, samples, silent, first = 0, 0, 0, None
        pool.leftover = samples
        out.append(pool)
    return out


def _dead_units(run: _Run, settings: dict[str, Any]) -> list[Finding]:
    threshold = settings["dead-relu-fraction"]
    min_batch = settings["dead-relu-min-batch"]
    out = []
    for name, seen in _relu_history(run).items():
        batch = seen[0][0].batch
        if batch is not None and batch < min_batch:
            continue
        worst_step, worst = max(seen, key=lambda pair: pair[1].dead or 0.0)
        assert worst.dead is not None
        if worst.dead < threshold:
            continue
        layer = worst.layer or name
        trail = " -> ".join(_pct(v.dead or 0.0) for _, v in seen)
        out.append(_finding(
            "TL804", worst.layer_site or worst_step.site,
            f"{_pct(worst.dead)} of the {worst.units} units of `{layer}` ({worst.layer_class}, {worst.activation}) "
            f"get an all-zero gradient for the whole batch {run.label(worst_step)} "
            f"(per step: {trail}; threshold {_pct(threshold)})",
            layer=layer, fractions=[v.dead for _, v in seen], threshold=threshold,
            grew=len(seen) > 1 and (seen[-1][1].dead or 0.0) > (seen[0][1].dead or 0.0)))
    for pool in _pooled_relu(run, settings):
        windows = pool.windows
        flagged = None
        for i, window in enumerate(windows):
            base = windows[0].dead if i else pool.first_dead
            grew = (i > 0 or window.last > window.first) and window.dead - base >= POOLED_DEAD_GROWTH
            if window.dead >= threshold and (window.dead >= POOLED_DEAD_STRICT or grew):
                flagged = (window, grew)
        if flagged is None:
            continue
        window, grew = flagged
        step, variable = next((s, v) for s in run.steps for v in s.variables if v.name == pool.name)
        layer = variable.layer or pool.name
        trail = " -> ".join(_pct(w.dead) for w in windows)
        silent = f" ({window.silent} of them passed none to any unit of the layer)" if window.silent else ""
        out.append(_finding(
            "TL804", variable.layer_site or step.site,
            f"{_pct(window.dead)} of the {variable.units} units of `{layer}` ({variable.layer_class}, "
            f"{variable.activation}) got an all-zero gradient from every one of {window.samples} samples pooled over "
            f"steps {window.first}-{window.last}{silent} (batches of {pool.batch}; per window of >= {min_batch} "
            f"samples: {trail}; threshold {_pct(threshold)}, and {_pct(POOLED_DEAD_STRICT)} or growth of "
            f"{_pct(POOLED_DEAD_GROWTH)} for pooled windows)",
            layer=layer, fractions=[w.dead for w in windows], threshold=threshold, pooled=True,
            grew=bool(grew or (len(windows) > 1 and windows[-1].dead > windows[0].dead))))
    return out


def _vanishing_exploding(run: _Run, settings: dict[str, Any]) -> list[Finding]:
    step = run.steps[0]
    # Kernels with a real gradient only (an exactly zero or None one is TL801/TL802's finding), compared within
    # one `tape.gradient` call: a GAN's generator is not compared with its discriminator.
    calls: dict[int, list[VariableEvidence]] = {}
    for v in step.variables:
        mav = finite(v.mav)
        if v.kernel and not v.none and not v.zero and mav is not None and mav > 0:
            calls.setdefault(v.call, []).append(v)
    for kernels in calls.values():
        if len(kernels) < 2:
            continue
        first, last = kernels[0], kernels[-1]
        first_mav, last_mav = finite(first.mav), finite(last.mav)
        assert first_mav is not None and last_mav is not None
        ratio = first_mav / last_mav
        where = first.layer_site or step.site
        rows = f" over the {first.touched_rows} rows it touched" if first.touched_rows is not None else ""
        numbers = (f"mean |gradient| of the first kernel `{first.layer or first.name}` is {_fmt(first_mav)}{rows}, "
                   f"of the last `{last.layer or last.name}` {_fmt(last_mav)} (ratio {_fmt(ratio)})")
        if ratio < settings["vanishing-ratio"] and first_mav < settings["vanishing-floor"]:
            return [_finding("TL805", where,
                             f"the gradient vanishes before the first layers: {numbers}; thresholds: ratio "
                             f"< {_fmt(settings['vanishing-ratio'])} and < {_fmt(settings['vanishing-floor'])}",
                             ratio=ratio, first=first_mav, last=last_mav, layers=len(kernels))]
        if ratio > settings["exploding-ratio"] and first_mav > settings["exploding-floor"]:
            return [_finding("TL806", where,
                             f"the gradient explodes towards the first layers: {numbers}; thresholds: ratio "
                             f"> {_fmt(settings['exploding-ratio'])} and > {_fmt(settings['exploding-floor'])}",
                             ratio=ratio, first=first_mav, last=last_mav, layers=len(kernels))]
    return []


# ---------------------------------------------------------------------------------------------------------------
# Updates


def _optimizer_site(evidence: Evidence, applied_ids: set[int], want_applied: bool) -> Site | None:
    for optimizer in evidence.optimizers:
        if (optimizer.id in applied_ids) == want_applied and optimizer.site is not None:
            return optimizer.site
    return None


def _not_updated(run: _Run) -> list[Finding]:
    evidence = run.evidence
    closed = [s for s in run.steps if not s.observation and s.updates is not None]
    for i, step in enumerate(closed):
        updates = step.updates or {}
        if evidence.crashed and i == len(closed) - 1 and step.ended_by == "the end of the script":
            # The script raised inside this step: the update it did not reach is its error's, not a finding.
            continue
        if run.skipped_nonfinite(step):
            continue
        changed = [name for name, u in updates.items() if u.changed]
        total = len(updates)
        if not step.applies and not changed:
            if any(later.applies for later in closed[i + 1:]):
                continue  # the gradients were accumulated into a later update
            unused = [o for o in evidence.optimizers if not o.applies]
            site = (unused[0].site if unused else None) or step.site
            who = f"the `{unused[0].class_name}` created here was never applied; " \
                if unused and unused[0].site is not None else ""
            grad_line = step.site.line if step.site is not None else None
            return [_finding("TL807", site,
                             f"{who}the gradients of step {step.index} (`tape.gradient` on line {grad_line}) "
                             f"reached no optimizer before {step.ended_by or 'the end'}: 0 of {total} "
                             f"trainable variables changed",
                             step=step.index, changed=0, total=total, applied=False)]
        grads = {v.name: v for v in step.variables}
        # A gradient below 1e-6 can round away against float32 weights under plain SGD; TL805 speaks for it.
        stuck = [name for name, u in updates.items() if not u.changed and name in grads
                 and not grads[name].none and not grads[name].zero and (finite(grads[name].mav) or 0.0) >= 1e-6]
        if stuck:
            applied = {a.optimizer for a in step.applies}
            site = _optimizer_site(evidence, applied, True) or step.site
            return [_finding("TL807", site,
                             f"after step {step.index}, {len(stuck)} of {total} trainable variables with a "
                             f"non-zero gradient did not change ({_names(stuck)}): not passed to the optimizer, "
                             f"or a learning rate of 0",
                             step=step.index, changed=len(changed), total=total, applied=bool(applied),
                             variables=stuck)]
    return []


def _update_too_large(run: _Run, settings: dict[str, Any]) -> list[Finding]:
    limit = settings["update-ratio-max"]
    for step in run.steps:
        updates = step.updates
        if step.observation or not updates:
            continue
        ratios = sorted(((u.ratio, name) for name, u in updates.items() if u.kernel and u.ratio is not None),
                        reverse=True)
        if not ratios:
            continue
        large = [(r, n) for r, n in ratios if r > limit]
        if not large:
            return []
        applied = {a.optimizer for a in step.applies}
        optimizers = [o for o in run.evidence.optimizers if o.id in applied]
        opt = optimizers[0] if optimizers else None
        site = (opt.site if opt else None) or step.site
        by = f" by `{opt.class_name}` (learning_rate={_fmt(opt.learning_rate)})" if opt else ""
        listed = ", ".join(f"`{n}` {_fmt(r)}" for r, n in large[:3])
        return [_finding("TL808", site,
                         f"update {step.index}{by} moved weights by more than {_fmt(limit)} of their norm "
                         f"(|dw|/|w|: {listed}); a healthy step is about 1e-3",
                         ratios={n: r for r, n in large}, limit=limit, step=step.index,
                         learning_rate=opt.learning_rate if opt else None)]
    return []


# ---------------------------------------------------------------------------------------------------------------
# Inputs, losses and outputs


def _unnormalized_input(evidence: Evidence, settings: dict[str, Any]) -> list[Finding]:
    for call in evidence.model_calls:
        low, high = number(call.input_min), number(call.input_max)
        if low is None or high is None or call.input_normalized:
            continue
        dtype = str(call.input_dtype or "")
        if "int" in dtype and "float" not in dtype:
            continue
        if low >= 0 and high > settings["input-max"]:
            return [_finding("TL809", call.site,
                             f"the batch fed to `{call.model}` ranges {_fmt(low)}..{_fmt(high)} "
                             f"({call.input_dtype}) and the model has no Rescaling or Normalization layer "
                             f"(threshold {_fmt(settings['input-max'])})",
                             low=low, high=high, model=call.model)]
    return []


def _initial_loss(evidence: Evidence, settings: dict[str, Any]) -> list[Finding]:
    call = next((c for c in evidence.loss_calls if c.step == 1), None)
    if call is None or not call.probability_loss or number(call.value) is None:
        return []
    classes = call.classes or 0
    # The mean loss of a few samples strays far from ln(classes) by chance (one sample of a 3-class net: 0.3..2.5).
    if classes < 2 or (call.batch or 0) < settings["dead-relu-min-batch"]:
        return []
    value = number(call.value)
    assert value is not None
    expected = math.log(classes)
    if not math.isfinite(value) or abs(value - expected) <= settings["initial-loss-ratio"] * expected:
        return []
    hint = ""
    batch = call.batch
    if batch and abs(value - batch * expected) < 0.5 * expected * batch and call.reduction == "sum":
        hint = f"; the loss is summed over the batch of {batch}, not averaged"
    return [_finding("TL810", call.site,
                     f"the first loss is {_fmt(value)}; a {classes}-class classifier that has learned nothing "
                     f"starts near ln({classes}) = {_fmt(expected)}{hint}",
                     value=value, expected=expected, classes=classes)]


def _probabilities_with_logits(evidence: Evidence) -> list[Finding]:
    for call in evidence.loss_calls:
        if not call.from_logits:
            continue
        if call.rows_sum_to_one or call.keras_logits:
            recovered = (" Keras found the softmax's logits this time, but a raw `tf.nn.softmax` or another "
                         "backend would apply the softmax twice") if call.keras_logits else \
                " The loss applies a second softmax, and the gradients shrink"
            shape = "every row sums to 1" if call.rows_sum_to_one else "a softmax or sigmoid output"
            return [_finding("TL811", call.loss_site or call.site,
                             f"`{call.class_name}(from_logits=True)` received probabilities: values in "
                             f"[{_fmt(call.pred_min)}, {_fmt(call.pred_max)}], {shape}.{recovered}",
                             loss=call.class_name, keras_logits=bool(call.keras_logits))]
    return []


def _training_flag(evidence: Evidence) -> list[Finding]:
    for call in evidence.model_calls:
        if call.training != "absent":
            continue
        layers = list(call.dropout) + list(call.batchnorm)
        if not layers:
            continue
        return [_finding("TL812", call.site,
                         f"`{call.model}` was called inside the tape without `training=True`; its "
                         f"{_names(layers)} run in inference mode, unlike in `fit`",
                         model=call.model, layers=layers)]
    return []


def _all_zero(step: StepEvidence | None) -> tuple[int, int]:
    """How many of the step's gradients are exactly zero, of how many."""
    if step is None:
        return 0, 0
    return sum(1 for v in step.variables if v.zero), len(step.variables)


def _saturated(run: _Run, settings: dict[str, Any]) -> list[Finding]:
    """Probabilities outside the loss's clip [eps, 1 - eps], on either side, get no gradient through the clip.
    Reported at the first step where it occurs: the first loss call with a clipped sample that starts a window of
    at least `dead-relu-min-batch` samples (one batch, or small batches pooled over consecutive steps) of which
    `saturated-fraction` are clipped, when a step of that window, or of the saturated steps right after it, has
    gradients that are all exactly zero (the clip did stop the gradient)."""
    by_step = {s.index: s for s in run.steps}
    min_samples = settings["dead-relu-min-batch"]
    share = settings["saturated-fraction"]
    calls = [c for c in run.evidence.loss_calls if c.clipped is not None and c.samples]

    def clipped_share(window: list[LossCall]) -> float:
        return sum(c.clipped or 0 for c in window) / sum(c.samples or 0 for c in window)

    for start, first in enumerate(calls):
        if not first.clipped:
            continue
        end = start
        while end < len(calls) and sum(c.samples or 0 for c in calls[start:end + 1]) < min_samples:
            end += 1
        if end >= len(calls):
            break  # too few samples left to judge
        window = calls[start:end + 1]
        fraction = clipped_share(window)
        if fraction < share:
            continue
        after = end + 1
        while after < len(calls) and clipped_share([calls[after]]) >= share:
            after += 1
        stopped = next(((call, counts) for call in calls[start:after]
                        for counts in [_all_zero(by_step.get(call.step))] if counts[1] and counts[0] == counts[1]),
                       None)
        if stopped is None:
            continue
        call, (zeros, total) = stopped
        samples = sum(c.samples or 0 for c in window)
        clipped = sum(c.clipped or 0 for c in window)
        label = "at step 1" if first.step == 1 else \
            f"from step {first.step}, after {first.step - 1} update{'s' if first.step > 2 else ''}"
        who = f"the {samples} samples of the batch" if len(window) == 1 else \
            f"the {samples} samples pooled over steps {window[0].step}-{window[-1].step} (batches of {first.samples})"
        return [_finding("TL813", first.site,
                         f"{_pct(fraction)} of {who} give their true class a "
                         f"probability of 0 or 1, outside the loss's clip [1e-7, 1 - 1e-7], {label} "
                         f"(max {_fmt(first.pred_max)}, loss {_fmt(first.value)}): `{first.class_name}` clips "
                         f"them and passes no gradient; {zeros} of {total} gradients are exactly zero at step "
                         f"{call.step}",
                         fraction=fraction, step=first.step, loss=first.value, samples=samples, clipped=clipped)]
    return []


def _broadcast(run: _Run) -> list[Finding]:
    import numpy as np

    for call in run.evidence.loss_calls:
        true, pred = call.y_true_shape, call.y_pred_shape
        if not true or not pred or true == pred or call.reconciles_ranks:
            continue
        try:
            shape = list(np.broadcast_shapes(tuple(d or 1 for d in true), tuple(d or 1 for d in pred)))
        except ValueError:
            continue
        if math.prod(shape) > max(math.prod(d or 1 for d in true), math.prod(d or 1 for d in pred)):
            return [_finding("TL814", call.site,
                             f"`{call.class_name}` got y_true {tuple(true)} and y_pred {tuple(pred)}, which "
                             f"broadcast to {tuple(shape)}: every target is compared with every prediction",
                             y_true=true, y_pred=pred)]
    for found in run.evidence.broadcasts:
        shapes = [tuple(s) for s in found.shapes]
        model_side = shapes[found.tainted] if found.tainted < len(shapes) else None
        other = shapes[1 - found.tainted] if len(shapes) == 2 else None
        return [_finding("TL814", found.site,
                         f"`{found.op}` broadcast {shapes[0]} against {shapes[1]} into "
                         f"{tuple(found.output_shape)} inside the tape at step {found.step}: the model's output "
                         f"{model_side} met {other}, so every target is compared with every prediction",
                         op=found.op, shapes=[list(s) for s in shapes], output=found.output_shape)]
    for step in run.steps:
        shape = step.target_shape or []
        batch = step.batch
        if len(shape) >= 2 and batch and batch > 1 and shape[0] == batch and shape[1] == batch:
            return [_finding("TL814", step.site,
                             f"the loss given to `tape.gradient` has shape {tuple(shape)} for a batch of {batch}: "
                             f"targets of shape ({batch},) met predictions of shape ({batch}, 1)",
                             target_shape=shape)]
    return []

"""Turns the probe's evidence (plain data from `measure.py`) into TL8xx findings, using the thresholds of
`[tool.tapelint.probe]`. No TensorFlow here: the parent process runs it on the child's report."""

from __future__ import annotations

import math
from typing import Any

Finding = dict[str, Any]


def _num(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if value in ("nan", "inf", "-inf"):
        return float(value)
    return None


def _fmt(value: Any, digits: int = 3) -> str:
    number = _num(value)
    if number is None:
        return "?"
    if math.isnan(number) or math.isinf(number):
        return str(number)
    if number == 0:
        return "0"
    if abs(number) >= 1e4 or abs(number) < 1e-3:
        return f"{number:.{digits - 1}e}"
    return f"{number:.{digits}g}"


def _pct(value: float) -> str:
    return f"{round(value * 100):d}%"


def _names(items: list[str], limit: int = 4) -> str:
    shown = ", ".join(f"`{n}`" for n in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _finding(code: str, site: dict[str, Any] | None, message: str, **data: Any) -> Finding:
    site = site or {}
    return {"code": code, "path": site.get("path"), "line": site.get("line") or 1,
            "end_line": site.get("end_line") or site.get("line") or 1, "column": site.get("column") or 0,
            "end_column": site.get("end_column") or site.get("column") or 0, "message": message, "data": data}


def _step_label(step: dict[str, Any]) -> str:
    if step.get("observation") and step.get("updates_before"):
        done = step["updates_before"]
        return f"after {done} update{'s' if done != 1 else ''}"
    return f"at step {step['index']}"


def compute_findings(evidence: dict[str, Any] | None, settings: dict[str, Any]) -> list[Finding]:
    if not evidence:
        return []
    steps: list[dict[str, Any]] = [dict(s) for s in evidence.get("steps") or []]
    if not steps:
        return []
    updates = 0
    for step in steps:
        step["updates_before"] = updates
        if any(u.get("changed") for u in (step.get("updates") or {}).values()):
            updates += 1
    out: list[Finding] = []
    out += _none_gradients(steps)
    out += _zero_gradients(steps)
    out += _nan_gradients(steps)
    out += _dead_units(steps, settings)
    out += _vanishing_exploding(steps, settings)
    out += _not_updated(steps, evidence)
    out += _update_too_large(steps, evidence, settings)
    out += _unnormalized_input(evidence, settings)
    out += _initial_loss(evidence, settings)
    out += _probabilities_with_logits(evidence)
    out += _training_flag(evidence)
    out += _saturated(evidence, steps, settings)
    out += _broadcast(evidence, steps)
    return out


def _none_gradients(steps: list[dict[str, Any]]) -> list[Finding]:
    for step in steps:
        variables = step["variables"]
        none = [v["name"] for v in variables if v.get("none")]
        if none:
            total = len(variables)
            which = "all" if len(none) == total else f"{len(none)} of"
            return [_finding("TL801", step.get("site"),
                             f"`tape.gradient` returned None for {which} {total} trainable variables "
                             f"({_names(none)}) {_step_label(step)}: the loss does not depend on them",
                             variables=none, total=total, step=step["index"])]
    return []


def _zero_gradients(steps: list[dict[str, Any]]) -> list[Finding]:
    for step in steps:
        variables = step["variables"]
        zero = [v["name"] for v in variables if v.get("zero")]
        if zero:
            total = len(variables)
            which = f"all {total}" if len(zero) == total else f"{len(zero)} of {total}"
            loss = f"; loss {_fmt(step.get('loss'))}" if step.get("loss") is not None else ""
            return [_finding("TL802", step.get("site"),
                             f"the gradient of {which} trainable variables is exactly zero {_step_label(step)} "
                             f"({_names(zero)}){loss}",
                             variables=zero, total=total, step=step["index"])]
    return []


def _nan_gradients(steps: list[dict[str, Any]]) -> list[Finding]:
    for step in steps:
        bad = [v["name"] for v in step["variables"] if v.get("nonfinite")]
        loss = _num(step.get("loss"))
        loss_bad = loss is not None and not math.isfinite(loss)
        if bad or loss_bad:
            what = f"NaN or Inf in the gradient of {_names(bad)}" if bad else "the gradients are finite"
            return [_finding("TL803", step.get("site"),
                             f"{what} {_step_label(step)}; loss {_fmt(step.get('loss'))}",
                             variables=bad, loss=step.get("loss"), step=step["index"])]
    return []


def _dead_units(steps: list[dict[str, Any]], settings: dict[str, Any]) -> list[Finding]:
    threshold = settings["dead-relu-fraction"]
    min_batch = settings["dead-relu-min-batch"]
    history: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for step in steps:
        batch = step.get("batch")
        if batch is not None and batch < min_batch:
            continue
        for variable in step["variables"]:
            # An all-zero kernel gradient says nothing about single units (TL802 and TL813 speak for it).
            if variable.get("dead") is None or variable.get("zero") or \
                    variable.get("activation") not in ("relu", "relu6"):
                continue
            history.setdefault(variable["name"], []).append((step, variable))
    out = []
    for name, seen in history.items():
        worst_step, worst = max(seen, key=lambda pair: pair[1]["dead"])
        if worst["dead"] < threshold:
            continue
        layer = worst.get("layer") or name
        trail = " -> ".join(_pct(v["dead"]) for _, v in seen)
        units = worst.get("units")
        out.append(_finding(
            "TL804", worst.get("layer_site") or worst_step.get("site"),
            f"{_pct(worst['dead'])} of the {units} units of `{layer}` ({worst.get('layer_class')}, "
            f"{worst.get('activation')}) get an all-zero gradient for the whole batch {_step_label(worst_step)} "
            f"(per step: {trail}; threshold {_pct(threshold)})",
            layer=layer, fractions=[v["dead"] for _, v in seen], threshold=threshold,
            grew=len(seen) > 1 and seen[-1][1]["dead"] > seen[0][1]["dead"],
        ))
    return out


def _vanishing_exploding(steps: list[dict[str, Any]], settings: dict[str, Any]) -> list[Finding]:
    step = steps[0]
    kernels = [v for v in step["variables"] if v.get("kernel") and _num(v.get("mav")) is not None
               and math.isfinite(_num(v["mav"]))]  # type: ignore[arg-type]
    if len(kernels) < 2:
        return []
    first, last = kernels[0], kernels[-1]
    first_mav, last_mav = _num(first["mav"]), _num(last["mav"])
    assert first_mav is not None and last_mav is not None
    if last_mav <= 0:
        return []
    ratio = first_mav / last_mav
    where = first.get("layer_site") or step.get("site")
    first_name = first.get("layer") or first["name"]
    last_name = last.get("layer") or last["name"]
    numbers = (f"mean |gradient| of the first kernel `{first_name}` is {_fmt(first_mav)}, of the last "
               f"`{last_name}` {_fmt(last_mav)} (ratio {_fmt(ratio)})")
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


def _optimizer_site(evidence: dict[str, Any], applied_ids: set[int], want_applied: bool) -> dict[str, Any] | None:
    for optimizer in evidence.get("optimizers") or []:
        if (optimizer["id"] in applied_ids) == want_applied and optimizer.get("site"):
            return optimizer["site"]
    return None


def _not_updated(steps: list[dict[str, Any]], evidence: dict[str, Any]) -> list[Finding]:
    for step in steps:
        updates = step.get("updates")
        if step.get("observation") or updates is None:
            continue
        changed = [name for name, u in updates.items() if u["changed"]]
        total = len(updates)
        if not step.get("applies") and not changed:
            unused = [o for o in evidence.get("optimizers") or [] if not o.get("applies")]
            site = (unused[0].get("site") if unused else None) or step.get("site")
            who = f"the `{unused[0]['class']}` created here was never applied; " if unused and unused[0].get("site") \
                else ""
            grad_line = (step.get("site") or {}).get("line")
            return [_finding("TL807", site,
                             f"{who}the gradients of step {step['index']} (`tape.gradient` on line {grad_line}) "
                             f"reached no optimizer before {step.get('ended_by') or 'the end'}: 0 of {total} "
                             f"trainable variables changed",
                             step=step["index"], changed=0, total=total, applied=False)]
        grads = {v["name"]: v for v in step["variables"]}
        # A gradient below 1e-6 can round away against float32 weights under plain SGD; TL805 speaks for it.
        stuck = [name for name, u in updates.items() if not u["changed"]
                 and not grads.get(name, {}).get("none") and not grads.get(name, {}).get("zero")
                 and (_num(grads.get(name, {}).get("mav")) or 0.0) >= 1e-6]
        if stuck:
            applied = {a["optimizer"] for a in step.get("applies") or []}
            site = _optimizer_site(evidence, applied, True) or step.get("site")
            return [_finding("TL807", site,
                             f"after step {step['index']}, {len(stuck)} of {total} trainable variables with a "
                             f"non-zero gradient did not change ({_names(stuck)}): not passed to the optimizer, "
                             f"or a learning rate of 0",
                             step=step["index"], changed=len(changed), total=total, applied=bool(applied),
                             variables=stuck)]
    return []


def _update_too_large(steps: list[dict[str, Any]], evidence: dict[str, Any], settings: dict[str, Any]) -> list[Finding]:
    limit = settings["update-ratio-max"]
    for step in steps:
        updates = step.get("updates")
        if step.get("observation") or not updates:
            continue
        ratios = sorted(((u["ratio"], name) for name, u in updates.items()
                         if u.get("kernel") and u.get("ratio") is not None), reverse=True)
        if not ratios:
            continue
        large = [(r, n) for r, n in ratios if r > limit]
        if not large:
            return []
        applied = {a["optimizer"] for a in step.get("applies") or []}
        optimizers = [o for o in evidence.get("optimizers") or [] if o["id"] in applied]
        opt = optimizers[0] if optimizers else None
        site = (opt or {}).get("site") or step.get("site")
        by = f" by `{opt['class']}` (learning_rate={_fmt(opt.get('learning_rate'))})" if opt else ""
        listed = ", ".join(f"`{n}` {_fmt(r)}" for r, n in large[:3])
        return [_finding("TL808", site,
                         f"update {step['index']}{by} moved weights by more than {_fmt(limit)} of their norm "
                         f"(|dw|/|w|: {listed}); a healthy step is about 1e-3",
                         ratios={n: r for r, n in large}, limit=limit, step=step["index"],
                         learning_rate=(opt or {}).get("learning_rate"))]
    return []


def _first_call(calls: list[dict[str, Any]]) -> dict[str, Any] | None:
    return calls[0] if calls else None


def _unnormalized_input(evidence: dict[str, Any], settings: dict[str, Any]) -> list[Finding]:
    for call in evidence.get("model_calls") or []:
        low, high = _num(call.get("input_min")), _num(call.get("input_max"))
        if low is None or high is None or call.get("input_normalized"):
            continue
        if "int" in str(call.get("input_dtype", "")) and "float" not in str(call.get("input_dtype", "")):
            continue
        if low >= 0 and high > settings["input-max"]:
            return [_finding("TL809", call.get("site"),
                             f"the batch fed to `{call['model']}` ranges {_fmt(low)}..{_fmt(high)} "
                             f"({call.get('input_dtype')}) and the model has no Rescaling or Normalization layer "
                             f"(threshold {_fmt(settings['input-max'])})",
                             low=low, high=high, model=call["model"])]
    return []


def _initial_loss(evidence: dict[str, Any], settings: dict[str, Any]) -> list[Finding]:
    calls = [c for c in evidence.get("loss_calls") or [] if c["step"] == 1]
    call = _first_call(calls)
    if call is None or not call.get("probability_loss") or _num(call.get("value")) is None:
        return []
    classes = call.get("classes") or 0
    if classes < 2:
        return []
    value = _num(call["value"])
    assert value is not None
    expected = math.log(classes)
    if not math.isfinite(value) or abs(value - expected) <= settings["initial-loss-ratio"] * expected:
        return []
    hint = ""
    batch = call.get("batch")
    if batch and abs(value - batch * expected) < 0.5 * expected * batch and call.get("reduction") == "sum":
        hint = f"; the loss is summed over the batch of {batch}, not averaged"
    return [_finding("TL810", call.get("site"),
                     f"the first loss is {_fmt(value)}; a {classes}-class classifier that has learned nothing "
                     f"starts near ln({classes}) = {_fmt(expected)}{hint}",
                     value=value, expected=expected, classes=classes)]


def _probabilities_with_logits(evidence: dict[str, Any]) -> list[Finding]:
    for call in evidence.get("loss_calls") or []:
        if not call.get("from_logits"):
            continue
        if call.get("rows_sum_to_one") or call.get("keras_logits"):
            recovered = (" Keras found the softmax's logits this time, but a raw `tf.nn.softmax` or another "
                         "backend would apply the softmax twice") if call.get("keras_logits") else \
                " The loss applies a second softmax, and the gradients shrink"
            shape = "every row sums to 1" if call.get("rows_sum_to_one") else "a softmax or sigmoid output"
            return [_finding("TL811", call.get("loss_site") or call.get("site"),
                             f"`{call['class']}(from_logits=True)` received probabilities: values in "
                             f"[{_fmt(call.get('pred_min'))}, {_fmt(call.get('pred_max'))}], {shape}.{recovered}",
                             loss=call["class"], keras_logits=bool(call.get("keras_logits")))]
    return []


def _training_flag(evidence: dict[str, Any]) -> list[Finding]:
    for call in evidence.get("model_calls") or []:
        if call.get("training") != "absent":
            continue
        layers = (call.get("dropout") or []) + (call.get("batchnorm") or [])
        if not layers:
            continue
        return [_finding("TL812", call.get("site"),
                         f"`{call['model']}` was called inside the tape without `training=True`; its "
                         f"{_names(layers)} run in inference mode, unlike in `fit`",
                         model=call["model"], layers=layers)]
    return []


def _saturated(evidence: dict[str, Any], steps: list[dict[str, Any]], settings: dict[str, Any]) -> list[Finding]:
    grads_by_step = {s["index"]: s for s in steps}
    for call in evidence.get("loss_calls") or []:
        if not call.get("probability_loss") or call.get("from_logits") or call.get("keras_logits"):
            continue
        fraction = call.get("saturated_wrong")
        if fraction is None or fraction < settings["saturated-fraction"]:
            continue
        step = grads_by_step.get(call["step"])
        zero = ""
        if step is not None:
            total = len(step["variables"])
            zeros = sum(1 for v in step["variables"] if v.get("zero"))
            zero = f"; {zeros} of {total} gradients are exactly zero"
        label = "at step 1" if call["step"] == 1 else f"after {call['step'] - 1} update{'s' if call['step'] > 2 else ''}"
        return [_finding("TL813", call.get("site"),
                         f"{_pct(fraction)} of the batch gives its true class a probability below 1e-7 {label} "
                         f"(max {_fmt(call.get('pred_max'))}, loss {_fmt(call.get('value'))}): "
                         f"`{call['class']}` clips it and passes no gradient{zero}",
                         fraction=fraction, step=call["step"], loss=call.get("value"))]
    return []


def _broadcast(evidence: dict[str, Any], steps: list[dict[str, Any]]) -> list[Finding]:
    for call in evidence.get("loss_calls") or []:
        true, pred = call.get("y_true_shape"), call.get("y_pred_shape")
        if not true or not pred or true == pred or call.get("reconciles_ranks"):
            continue
        try:
            import numpy as np

            shape = list(np.broadcast_shapes(tuple(d or 1 for d in true), tuple(d or 1 for d in pred)))
        except (ValueError, ImportError):
            continue
        if math.prod(shape) > max(math.prod(d or 1 for d in true), math.prod(d or 1 for d in pred)):
            return [_finding("TL814", call.get("site"),
                             f"`{call['class']}` got y_true {tuple(true)} and y_pred {tuple(pred)}, which "
                             f"broadcast to {tuple(shape)}: every target is compared with every prediction",
                             y_true=true, y_pred=pred)]
    for step in steps:
        shape = step.get("target_shape") or []
        batch = step.get("batch")
        if len(shape) >= 2 and batch and batch > 1 and shape[0] == batch and shape[1] == batch:
            return [_finding("TL814", step.get("site"),
                             f"the loss given to `tape.gradient` has shape {tuple(shape)} for a batch of {batch}: "
                             f"targets of shape ({batch},) met predictions of shape ({batch}, 1)",
                             target_shape=shape)]
    return []

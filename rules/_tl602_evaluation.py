"""Which model calls are evaluation code run in training mode (`training=True`, or a subclass whose
`call` defaults to it).

A call is evaluation code when it is provably not part of a training step and its output is used to
measure the model: it runs under no tape (nor do its callers), its function neither opens a tape nor
applies gradients, it is not inside a loop of training steps, and it is a Keras `test_step` /
`predict_step` override, or its output reaches a metric update, or it runs in an epoch loop outside
the training batches (a validation pass). Several stochastic passes (Monte-Carlo dropout:
`[model(x, training=True) for _ in range(T)]`) are deliberate and left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.blocks import blocks
from tapelint.analysis.constants import boolean
from tapelint.analysis.dataflow import names_in
from tapelint.analysis.epochs import STEP_METHODS, loops, metric_uses
from tapelint.analysis.facts import CallSite, Facts, Scope, keyword_arg
from tapelint.analysis.gradients import under_tape
from tapelint.analysis.models import model_reader
from tapelint.analysis.modes import call_defaults_to_training, mode_layers
from tapelint.analysis.reads import value_kept

KERAS_EVAL_METHODS = frozenset({"test_step", "predict_step"})


@dataclass(eq=False)
class TrainingModeEvaluation:
    site: CallSite
    layers: list[str]  # the Dropout/BatchNorm-like layers the called model holds
    default: bool  # True when `training=True` comes from the model's own `call` default
    why: str  # what makes it evaluation code, for messages


def _trains_here(facts: Facts, scope: Scope) -> bool:
    """Is the function a training step: does it open a tape or step an optimizer outside any loop of its
    own? (A `train()` that runs the whole loop is placed by its loops instead.)"""
    if scope.is_module:
        return False
    spans = blocks(facts)
    points = [t.order for t in facts.tapes if t.scope is scope]
    points += [c.order for c in facts.calls if c.scope is scope and c.method in STEP_METHODS and c.receiver]
    return any(spans.innermost_loop(order) is None for order in points)


def _repeated_passes(facts: Facts, site: CallSite) -> bool:
    """Several stochastic passes over the same input: a comprehension, or a loop whose target the body
    never reads (`for _ in range(T)`)."""
    if any(span[0] < site.order <= span[1] for span in facts.comprehension_spans.values()):
        return True
    loop = blocks(facts).innermost_loop(site.order)
    if loop is None or not isinstance(loop.node, cst.For):
        return False
    targets = names_in(loop.node.target)
    if not targets or targets <= {"_"}:
        return True
    return not any(use.name in targets and loop.order < use.order <= loop.end_order and use.node is not loop.node.target
                   for use in facts.uses_in_scope(site.scope))


def _feeds_metric(facts: Facts, site: CallSite) -> bool:
    """The call's output reaches a metric update in the same function (directly, or through names bound
    from it: `logits = model(x)`, `loss = loss_fn(y, logits)`, `val_loss.update_state(loss)`)."""
    updates = [u.site for u in metric_uses(facts) if u.what == "update" and u.site.scope is site.scope]
    for update in updates:
        if any(a.value is site.node for a in update.node.args):
            return True  # `acc.update_state(y, model(x))`: the update call comes first in document order
    updates = [u for u in updates if u.order > site.order]
    if not updates:
        return False
    names = {b.target for b in facts.bindings_of_value(site.node)}
    for _ in range(4):
        grown = set(names)
        for binding in facts.bindings:
            if binding.scope is site.scope and binding.order > site.order and binding.value is not None:
                if names_in(binding.value) & names:
                    grown.add(binding.target)
        if grown == names:
            break
        names = grown
    if not names:
        return False
    return any(names_in(arg.value) & names for update in updates for arg in update.node.args)


def training_mode_evaluations(facts: Facts) -> list[TrainingModeEvaluation]:
    def compute() -> list[TrainingModeEvaluation]:
        placement = loops(facts)
        epochs = placement.epoch_loops()
        batches = [loop for loop, _ in placement.batch_loops() if all(loop is not e for e in epochs)]
        found: list[TrainingModeEvaluation] = []
        for site in facts.calls:
            call = site.node
            name = site.func
            if name is None or site.qualified is not None or any(a.star for a in call.args):
                continue
            cls = facts.classes.get(site.scope.class_name or "")
            if name in facts.functions or (name.startswith("self.") and cls is not None and name[5:] in cls.methods):
                continue  # a helper or method of this file, not a model
            flag = keyword_arg(call, "training")
            if flag is not None:
                if boolean(flag.value) is not True:
                    continue
                default = False
            elif call_defaults_to_training(facts, site):
                default = True
            else:
                continue
            if under_tape(facts, site, every_caller=False, levels=2) or _trains_here(facts, site.scope):
                continue
            keras_eval = site.scope.class_name is not None and site.scope.simple_name in KERAS_EVAL_METHODS
            around = placement.loops_around(site.scope, site.order)
            if any(loop is b for loop in around for b in batches):
                continue  # inside a loop of training steps
            if keras_eval:
                why = f"in `{site.scope.simple_name}`, which Keras runs for evaluation"
            elif _feeds_metric(facts, site):
                why = "its output feeds a metric update"
            elif any(loop is e for loop in around for e in epochs) and value_kept(facts, site) is not False:
                why = "it runs in the epoch loop, outside the training steps"
            else:
                continue
            if _repeated_passes(facts, site):
                continue  # Monte-Carlo dropout: several stochastic passes on purpose
            layers = mode_layers(facts, call.func, site.scope, site.order)
            if layers:
                found.append(TrainingModeEvaluation(site, layers, default, why))
        return found

    return facts.cached("evaluation.training_mode_evaluations", compute)

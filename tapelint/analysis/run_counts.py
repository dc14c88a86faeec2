"""How often code runs, relative to a training step: the one home of that question.

- once: at import (module level, outside any loop), or where a `def` runs: decorators, default values and
  annotations belong to the enclosing scope (the facts collector opens a function's scope at its body), so
  `def step(x, opt=Adam())` makes its optimizer once, however often `step` is called;
- per step: inside a tape block that repeats, the loop that runs the steps, a step function, or a layer's
  `call` (`steps.per_step` says which, for messages);
- per trace: in the body of a function TensorFlow traces, where making variables again is rejected on the
  first call (`tracing.created_on_every_trace`);
- per call: in a function that is none of these.

TL202 (optimizers), TL304 (layers and variables) and TL403 (variables in traced code) ask `creation_count`
of the call that makes an object.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapelint.analysis.blocks import blocks
from tapelint.analysis.facts import CallSite, Facts, Scope
from tapelint.analysis.steps import PerStep, per_step, step_functions
from tapelint.analysis.tracing import Traced, created_on_every_trace


@dataclass(frozen=True)
class RunCount:
    kind: str  # "once" | "per-call" | "per-step" | "per-trace"
    step: PerStep | None = None  # per step: where and why, for messages
    trace: "tuple[Traced, str] | None" = None  # per trace: how the scope runs traced, and what is made


def creation_count(facts: Facts, site: CallSite) -> RunCount:
    """How often the object made by the call `site` is made."""
    traced = created_on_every_trace(facts, site)
    if traced is not None:
        return RunCount("per-trace", trace=traced)
    step = per_step(facts, site.scope, site.order)
    if step is not None:
        return RunCount("per-step", step=step)
    if site.scope.is_module and blocks(facts).innermost_loop(site.order) is None:
        return RunCount("once")
    return RunCount("per-call")


def tape_repeats(facts: Facts, scope: Scope, order: int) -> bool:
    """Is it certain that the tape block around `order` in `scope` runs more than once: in a loop, or in a
    step function? (A script's single step opens its tape once; a function nobody here calls may be called
    once or often.)"""
    for tape in facts.tapes:
        if tape.scope is scope and tape.encloses(order):
            return (blocks(facts).innermost_loop(tape.order) is not None
                    or any(step is tape.scope for step in step_functions(facts)))
    return False

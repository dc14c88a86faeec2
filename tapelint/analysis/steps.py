"""Where code runs once per training step: step functions, the loop that runs the steps, `call`.

Rules about objects that must be created once (optimizers, layers, variables) ask here whether a
construction sits in code that runs on every step.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapelint.analysis.blocks import Span, blocks
from tapelint.analysis.facts import Facts, Scope

KERAS_STEP_METHODS = frozenset({"train_step", "test_step"})
CALL_METHODS = frozenset({"call", "__call__", "forward"})
# `apply` alone is too common a method name (pandas) to mark a training loop.
STEP_APPLY_METHODS = frozenset({"apply_gradients", "minimize"})


@dataclass(frozen=True)
class PerStep:
    kind: str  # "tape" | "step" | "loop" | "call"
    label: str  # for messages: "inside the `with tape` block", "in the step function `train_step`", ...


def step_functions(facts: Facts) -> list[Scope]:
    """Functions that run one training step, over and over: they open a tape outside any loop of
    their own and are `tf.function`s, are called from a loop, or are a Keras model's `train_step`.
    (A `main()` or `train()` that runs its steps in its own loop is not one; a function is never
    judged by its name.)"""

    def compute() -> list[Scope]:
        spans = blocks(facts)
        found = []
        for scope in facts.scopes:
            if scope.is_module:
                continue
            tapes = [t for t in facts.tapes if t.scope is scope and spans.innermost_loop(t.order) is None]
            if not tapes:
                continue
            called_in_loop = any(
                site.loop_depth > 0 or spans.innermost_loop(site.order) is not None
                for site in facts.call_sites_of_scope(scope)
            )
            # Keras calls `train_step`/`test_step` once per batch: the method name is its API, not a guess.
            keras_step = scope.class_name is not None and scope.simple_name in KERAS_STEP_METHODS
            if scope.is_tf_function or called_in_loop or keras_step:
                found.append(scope)
        return found

    return facts.cached("step_functions", compute)


def step_loops(facts: Facts) -> list[Span]:
    """Loops whose body runs a training step: a tape, an apply call or a call of a step function whose
    innermost loop is that loop."""

    def compute() -> list[Span]:
        spans = blocks(facts)
        found: list[Span] = []
        orders = [t.order for t in facts.tapes]
        orders += [c.order for c in facts.calls if c.method in STEP_APPLY_METHODS and c.receiver]
        orders += [site.order for step in step_functions(facts) for site in facts.call_sites_of_scope(step)]
        for order in orders:
            loop = spans.innermost_loop(order)
            if loop is not None and all(loop is not known for known in found):
                found.append(loop)
        return found

    return facts.cached("step_loops", compute)


def call_method(scope: Scope) -> bool:
    """Is `scope` the `call`/`__call__` method of a class?"""
    return scope.class_name is not None and scope.simple_name in CALL_METHODS


def per_step(facts: Facts, scope: Scope, order: int) -> PerStep | None:
    """Why the code at `order` in `scope` runs on every training step, or None."""
    for tape in facts.tapes:
        if tape.scope is scope and tape.encloses(order):
            return PerStep("tape", f"inside the `with {tape.name or 'GradientTape()'}` block")
    spans = blocks(facts)
    loop = spans.innermost_loop(order)
    if loop is not None and any(loop is known for known in step_loops(facts)):
        return PerStep("loop", "inside the training loop")
    if loop is None:
        for step in step_functions(facts):
            if step is scope:
                return PerStep("step", f"in the step function `{scope.simple_name}`")
    if call_method(scope):
        return PerStep("call", f"in `{scope.name}`, which runs on every forward pass")
    return None

"""Pairs each cross-entropy with the prediction it is fed: in custom loops and in `compile()`."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import CallSite, Facts
from tapelint.analysis.keras import LossSpec, OutputInfo, loss_calls, loss_object, metric_calls
from tapelint.analysis.models import compiles, model_reader


@dataclass
class FedLoss:
    spec: LossSpec
    output: OutputInfo  # what the prediction is: probabilities, logits, ...
    site: CallSite  # the loss call, or the compile() call
    via_compile: bool = False


def fed_losses(facts: Facts) -> list[FedLoss]:
    def compute() -> list[FedLoss]:
        reader = model_reader(facts)
        found: list[FedLoss] = []
        for call in (*loss_calls(facts), *metric_calls(facts)):
            output = reader.value_kind(call.y_pred, call.site.scope, call.site.order)
            found.append(FedLoss(call.spec, output, call.site))
        for compiled in compiles(facts):
            site = compiled.site
            spec = loss_object(facts, compiled.loss, site.scope, site.order)
            if spec is None:
                continue
            model = reader.model_of(site.node.func.value, site.scope, site.order)  # type: ignore[attr-defined]
            if model is None:
                continue
            found.append(FedLoss(spec, model.output, site, via_compile=True))
        return found

    return facts.cached("fed_losses", compute)


def report_node(fed: FedLoss) -> cst.CSTNode:
    """Where a from_logits mismatch is best shown: the `from_logits=` argument, else the loss."""
    if fed.spec.from_logits_arg is not None:
        return fed.spec.from_logits_arg
    if fed.spec.construction is not None:
        return fed.spec.construction
    return fed.site.node

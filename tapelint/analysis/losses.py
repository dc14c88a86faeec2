"""Pairs each cross-entropy with the prediction it is fed: in custom loops and in `compile()`. The losses
are evaluations.py's answer; this module adds what the prediction is."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.evaluations import Loss, evaluations, loss_of
from tapelint.analysis.facts import CallSite, Facts
from tapelint.analysis.keras import OutputInfo
from tapelint.analysis.models import compiles, model_reader


@dataclass
class FedLoss:
    spec: Loss  # a cross-entropy (a loss, an op or a cross-entropy metric)
    output: OutputInfo  # what the prediction is: probabilities, logits, ...
    site: CallSite  # the loss call, or the compile() call
    via_compile: bool = False


def fed_losses(facts: Facts) -> list[FedLoss]:
    def compute() -> list[FedLoss]:
        reader = model_reader(facts)
        found: list[FedLoss] = []
        for evaluation in evaluations(facts):
            loss = evaluation.loss
            if loss is None or not loss.cross_entropy:
                continue
            site = evaluation.site
            found.append(FedLoss(loss, reader.value_kind(evaluation.y_pred, site.scope, site.order), site))
        for compiled in compiles(facts):
            site = compiled.site
            loss = loss_of(facts, compiled.loss, site.scope, site.order)
            if loss is None or not loss.cross_entropy:
                continue
            model = reader.model_of(site.node.func.value, site.scope, site.order)  # type: ignore[attr-defined]
            if model is None:
                continue
            found.append(FedLoss(loss, model.output, site, via_compile=True))
        return found

    return facts.cached("fed_losses", compute)


def report_node(fed: FedLoss) -> cst.CSTNode:
    """Where a from_logits mismatch is best shown: the `from_logits=` argument, else the loss."""
    if fed.spec.from_logits_arg is not None:
        return fed.spec.from_logits_arg
    if fed.spec.construction is not None:
        return fed.spec.construction
    return fed.site.node

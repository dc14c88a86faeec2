"""What the head/loss/target rules (TL111-TL114, TL117) share: how a finding names the output layer, and the
one-word fixes that rewrite a string literal (an activation, a loss name)."""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.constants import string
from tapelint.analysis.heads import Head, Meeting
from tapelint.rule import PendingFix, Rule


def replace_string(node: cst.CSTNode | None, old: str | None, new: str, title: str) -> PendingFix | None:
    """An unsafe fix writing `new` in place of the string literal `node` (same quotes), when `node` is a
    plain string literal (holding `old`, when given)."""
    if type(node) is not cst.SimpleString:
        return None
    text = string(node)
    if text is None or (old is not None and text != old):
        return None
    quote = node.value[-1]
    return PendingFix(title, False, [(node, f"{quote}{new}{quote}")])


def causes(meeting: Meeting, *, head: bool = False, loss: bool = False,
           targets: bool = False) -> list[tuple[cst.CSTNode | None, str]]:
    """The places a finding's cause lies, for `Rule.report(related=...)`: the output layer, the loss, where the
    targets are made (each only where the analysis holds its node; a None is left out by `report`)."""
    out: list[tuple[cst.CSTNode | None, str]] = []
    if head:
        activation = meeting.head.activation
        known = activation is not None and activation != "<unknown>"
        out.append((meeting.head.node, f"the `{activation}` output layer" if known else "the output layer"))
    if loss:
        out.append((meeting.loss.node, f"the `{meeting.loss.written}` loss"))
    if targets:
        out.append((meeting.targets.node, "the targets"))
    return out


def head_where(rule: Rule, head: Head) -> str:
    """The output layer as a message names it: "`Dense` layer at line 12"."""
    where = head.output.description or "the output layer"
    location = rule.location(head.node) if head.node is not None else None
    return f"{where} at {location}" if location else where

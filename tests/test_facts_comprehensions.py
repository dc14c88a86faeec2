"""Facts.comprehension_elements: which orders lie inside a comprehension's element (not its `for` parts)."""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Facts

_SOURCE = """
inner = [[tape.gradient(loss, v) for v in group] for group in groups]
iterated = [g for g in tape.gradient(loss, variables)]
keyed = {name: tape.gradient(loss, v) for name, v in pairs}
"""


def _inside(facts: Facts, order: int) -> bool:
    return any(start < order <= end for start, end in facts.comprehension_elements)


def test_a_call_in_an_element_is_inside_and_a_call_in_the_iterable_is_not():
    facts = Facts(cst.parse_module(_SOURCE), _SOURCE)
    gradients = [site for site in facts.calls if site.method == "gradient"]
    assert [_inside(facts, site.order) for site in gradients] == [True, False, True]
    assert len(facts.comprehension_elements) == 4

"""Every rule's VALID and INVALID examples, run as tests."""

from __future__ import annotations

import pytest

from tapelint.registry import all_rules
from tests.rule_harness import check_invalid, check_valid

VALID = [pytest.param(r, e, id=f"{r.code}-valid-{i}") for r in all_rules() for i, e in enumerate(r.VALID)]
INVALID = [pytest.param(r, e, id=f"{r.code}-invalid-{i}") for r in all_rules() for i, e in enumerate(r.INVALID)]


@pytest.mark.parametrize(("rule", "example"), VALID)
def test_rule_stays_silent_on_valid_example(rule, example):
    check_valid(rule, example)


@pytest.mark.parametrize(("rule", "example"), INVALID)
def test_rule_reports_invalid_example(rule, example):
    check_invalid(rule, example)

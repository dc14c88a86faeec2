"""Precision and recall on the hand-labelled real-world corpus (tests/realworld/).

The targets are the ones tapelint promises users: findings they can trust (precision >= 0.95 overall,
>= 0.9 for every rule that fires) and most of the labelled problems found (recall >= 0.8).
"""

from __future__ import annotations

import pytest

from tests.realworld.score import load_labels, report, score

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def outcome():
    result = score(jobs=1)
    print("\n" + report(result, details=True))
    return result


def test_corpus_is_large_enough_and_labelled():
    files, labels = load_labels()
    assert len(files) >= 150, f"only {len(files)} labelled real-world files"
    assert labels, "no labelled problems"


def test_overall_precision_is_at_least_0_95(outcome):
    assert outcome.precision >= 0.95, report(outcome, details=True)


def test_every_rule_that_fires_is_at_least_0_9_precise(outcome):
    weak = {code: (tp, fp) for code, (tp, fp, _) in outcome.per_rule().items() if tp + fp and tp / (tp + fp) < 0.9}
    assert not weak, f"rules below 0.9 precision (right, wrong): {weak}\n" + report(outcome, details=True)


def test_recall_of_labelled_problems_is_at_least_0_8(outcome):
    assert outcome.recall >= 0.8, report(outcome, details=True)

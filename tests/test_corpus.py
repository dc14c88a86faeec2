"""Recall and false positives over a corpus of realistic training programs.

Each file in tests/corpus/ declares what tapelint must report in a header comment:

    # expect: TL001 TL201      (these codes, each at least once)
    # expect: none             (a correct program: nothing at all may be reported)

Findings of other codes than those declared count as false positives.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tapelint.config import Config
from tapelint.engine import lint_source

CORPUS = Path(__file__).parent / "corpus"
_EXPECT = re.compile(r"^#\s*expect:\s*(?P<codes>.+)$", re.MULTILINE)


def expectations(text: str) -> set[str] | None:
    match = _EXPECT.search(text)
    if match is None:
        return None
    codes = match.group("codes").split("#")[0].split()
    return set() if codes == ["none"] else {c.strip(",") for c in codes}


def corpus_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.py"))


def evaluate() -> tuple[int, int, list[str], list[str]]:
    expected_total = found_total = 0
    misses: list[str] = []
    false_positives: list[str] = []
    config = Config(preview=True)  # every rule, preview ones too: the corpus measures what the rules find
    for path in corpus_files():
        text = path.read_text(encoding="utf-8")
        expected = expectations(text)
        assert expected is not None, f"{path.name} has no `# expect:` header"
        reported = {d.code for d in lint_source(text, str(path), config, force=True)}
        for code in expected:
            expected_total += 1
            if code in reported:
                found_total += 1
            else:
                misses.append(f"{path.name}: {code} not reported")
        for code in sorted(reported - expected):
            false_positives.append(f"{path.name}: unexpected {code}")
    return expected_total, found_total, misses, false_positives


def test_corpus_has_buggy_and_clean_programs():
    files = corpus_files()
    texts = [p.read_text(encoding="utf-8") for p in files]
    assert sum(1 for t in texts if expectations(t) == set()) >= 5
    assert sum(1 for t in texts if expectations(t)) >= 10


def test_corpus_recall_and_false_positives():
    expected, found, misses, false_positives = evaluate()
    recall = found / expected if expected else 1.0
    print(f"\ncorpus: {len(corpus_files())} programs, recall {found}/{expected} = {recall:.3f}, "
          f"false positives {len(false_positives)}")
    assert not false_positives, "\n".join(false_positives)
    assert recall == 1.0, "\n".join(misses)


if __name__ == "__main__":  # pragma: no cover - prints the figures for the closing note
    e, f, m, fp = evaluate()
    print(f"programs={len(corpus_files())} expected={e} found={f} recall={f / max(e, 1):.3f} fp={len(fp)}")
    for line in m + fp:
        print(" ", line)

"""Scores tapelint on the hand-labelled real-world corpus: precision per rule and overall, and recall.

    python -m tests.realworld.score            # the table
    python -m tests.realworld.score --details  # plus every false alarm and every miss

A finding matches a label of the same code in the same file (and notebook cell) within
`LINE_TOLERANCE` lines; each label matches at most one finding. Every finding that matches no
`expected` label is a false alarm, whether or not it is listed under `rejected`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tapelint.config import Config
from tapelint.diagnostic import Diagnostic
from tapelint.runner import lint_paths

HERE = Path(__file__).resolve().parent
FILES = HERE / "files"
LABELS = HERE / "labels"
LINE_TOLERANCE = 2
# Runtime-only and opinionated codes are not judged here.
JUDGED = ("TL0", "TL1", "TL2", "TL3", "TL4", "TL5", "TL6", "TL7")


@dataclass(frozen=True)
class Label:
    path: str  # files/<slug>/<path>, relative to FILES
    code: str
    line: int
    cell: int | None
    why: str


@dataclass
class Score:
    files: int = 0
    findings: list[Diagnostic] = field(default_factory=list)
    true_positives: list[tuple[Diagnostic, Label]] = field(default_factory=list)
    false_positives: list[Diagnostic] = field(default_factory=list)
    misses: list[Label] = field(default_factory=list)
    expected: list[Label] = field(default_factory=list)

    @property
    def precision(self) -> float:
        total = len(self.true_positives) + len(self.false_positives)
        return len(self.true_positives) / total if total else 1.0

    @property
    def recall(self) -> float:
        return len(self.true_positives) / len(self.expected) if self.expected else 1.0

    def per_rule(self) -> dict[str, tuple[int, int, int]]:
        """code -> (true positives, false positives, misses)."""
        tp = Counter(d.code for d, _ in self.true_positives)
        fp = Counter(d.code for d in self.false_positives)
        fn = Counter(label.code for label in self.misses)
        return {code: (tp[code], fp[code], fn[code]) for code in sorted(set(tp) | set(fp) | set(fn))}


def load_labels() -> tuple[list[str], list[Label]]:
    files: list[str] = []
    labels: list[Label] = []
    for toml_path in sorted(LABELS.glob("*.toml")):
        slug = toml_path.stem.split("--")[0]  # `keras-io--2.toml` labels more files of files/keras-io/
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        for entry in data.get("files", []):
            rel = f"{slug}/{entry['path']}"
            if not (FILES / rel).is_file():
                raise SystemExit(f"{toml_path.name}: {entry['path']} is not in files/{slug}/")
            if rel not in files:  # a file may be labelled in several tomls (one per wave of rules)
                files.append(rel)
            for item in entry.get("expected", []):
                labels.append(Label(rel, item["code"], int(item["line"]), item.get("cell"), item.get("why", "")))
    return files, labels


def _relative(diagnostic: Diagnostic) -> str:
    return Path(diagnostic.path).resolve().relative_to(FILES).as_posix()


def score(jobs: int | None = None) -> Score:
    files, labels = load_labels()
    result = lint_paths([FILES / f for f in files], Config(), jobs=jobs)
    found = [d for d in result.diagnostics if d.code.startswith(JUDGED)]
    outcome = Score(files=len(files), findings=found, expected=list(labels))
    unmatched = list(labels)
    for diagnostic in sorted(found, key=Diagnostic.sort_key):
        rel = _relative(diagnostic)
        candidates = [
            label for label in unmatched
            if label.path == rel and label.code == diagnostic.code and label.cell == diagnostic.cell
            and abs(label.line - diagnostic.line) <= LINE_TOLERANCE
        ]
        if candidates:
            best = min(candidates, key=lambda label: abs(label.line - diagnostic.line))
            unmatched.remove(best)
            outcome.true_positives.append((diagnostic, best))
        else:
            outcome.false_positives.append(diagnostic)
    outcome.misses = unmatched
    return outcome


def _where(path: str, cell: int | None, line: int) -> str:
    return f"{path}:{'cell ' + str(cell) + ':' if cell else ''}{line}"


def report(outcome: Score, details: bool = False) -> str:
    lines = [
        f"real-world corpus: {outcome.files} files, {len(outcome.findings)} findings, "
        f"{len(outcome.expected)} labelled problems",
        f"precision {outcome.precision:.3f} ({len(outcome.true_positives)} right, "
        f"{len(outcome.false_positives)} wrong), recall {outcome.recall:.3f} "
        f"({len(outcome.true_positives)} of {len(outcome.expected)} found)",
        "",
        "code    right  wrong  missed  precision",
    ]
    for code, (tp, fp, fn) in outcome.per_rule().items():
        precision = tp / (tp + fp) if tp + fp else 1.0
        lines.append(f"{code:6}  {tp:5}  {fp:5}  {fn:6}  {precision:9.2f}")
    if details:
        lines.append("\nfalse alarms:")
        for d in outcome.false_positives:
            lines.append(f"  {_where(_relative(d), d.cell, d.line)} {d.code} {d.message}")
        lines.append("\nmisses:")
        for label in outcome.misses:
            lines.append(f"  {_where(label.path, label.cell, label.line)} {label.code} {label.why}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list every false alarm and every miss")
    args = parser.parse_args(argv)
    print(report(score(), args.details))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Scores tapelint on the hand-labelled real-world corpus: precision per rule and overall, and recall.

    python -m tests.realworld.score                      # both halves and the whole corpus
    python -m tests.realworld.score --half tune          # the tune half only: what rule work may look at
    python -m tests.realworld.score --half check         # the check half only: the held-out measure
    python -m tests.realworld.score --details            # plus every false alarm and every miss

A finding matches a label of the same code in the same file (and notebook cell) within
`LINE_TOLERANCE` lines; each label matches at most one finding. Every finding that matches no
`expected` label is a false alarm, whether or not it is listed under `rejected` (`--details` says which
false alarms were judged there and which nobody has judged yet).

The corpus is split by repository into two halves by a fixed rule (`half_of`): the first byte of the
SHA-256 of the repository's `owner/name` (as its labels' `repo` spells it), even -> tune, odd -> check.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

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
# The semantic figures leave out the syntax error and the Keras 3 API rules: they say what tapelint finds
# about training itself, which is what the project reports.
NOT_SEMANTIC = frozenset({"TL000", "TL501", "TL502"})
HALVES = ("tune", "check")


def half_of(repo: str) -> str:
    """The half a repository belongs to: the first byte of sha256(`owner/name`), even -> tune, odd -> check.
    Fixed once, before any score was looked at; not to be changed to move a repository."""
    return "tune" if hashlib.sha256(repo.encode("utf-8")).digest()[0] % 2 == 0 else "check"


@dataclass(frozen=True)
class Label:
    path: str  # files/<slug>/<path>, relative to FILES
    code: str
    line: int
    cell: int | None
    why: str


@dataclass(frozen=True)
class Repository:
    name: str  # owner/name
    slug: str  # files/<slug>/
    half: str  # half_of(name)
    stated_halves: frozenset[str]  # the `half = ...` its label files state, if any
    files: tuple[str, ...]  # relative to FILES


@dataclass
class Corpus:
    repositories: dict[str, Repository]  # by owner/name
    files: list[str]
    expected: list[Label]
    rejected: list[Label]

    def half_of_path(self, rel: str) -> str:
        return self.repo_of_path(rel).half

    def repo_of_path(self, rel: str) -> Repository:
        slug = rel.split("/", 1)[0]
        return next(r for r in self.repositories.values() if r.slug == slug)

    def only(self, half: str) -> Corpus:
        if half == "all":
            return self
        _check_half(half)
        keep = {name: repo for name, repo in self.repositories.items() if repo.half == half}
        slugs = {repo.slug for repo in keep.values()}
        inside = lambda rel: rel.split("/", 1)[0] in slugs  # noqa: E731
        return Corpus(keep, [f for f in self.files if inside(f)], [lb for lb in self.expected if inside(lb.path)],
                      [lb for lb in self.rejected if inside(lb.path)])


def _check_half(half: str) -> None:
    if half not in (*HALVES, "all"):
        raise ValueError(f"half must be one of tune, check, all; not {half!r}")


def _label(toml_name: str, rel: str, item: dict) -> Label:
    try:
        return Label(rel, item["code"], int(item["line"]), item.get("cell"), item.get("why", ""))
    except KeyError as missing:
        raise SystemExit(f"{toml_name}: a label of {rel} has no {missing}") from None


def load_corpus(half: str = "all") -> Corpus:
    """Every label file: the repositories with their halves, the labelled files, `expected` and `rejected`.
    Other keys of a file entry (`other`: bugs no rule covers, `bait`: sites rightly left alone) are notes."""
    _check_half(half)
    repositories: dict[str, Repository] = {}
    slug_repo: dict[str, str] = {}
    files: list[str] = []
    expected: list[Label] = []
    rejected: list[Label] = []
    for toml_path in sorted(LABELS.glob("*.toml")):
        slug = toml_path.stem.split("--")[0]  # `keras-io--2.toml` labels more files of files/keras-io/
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        name = data.get("repo")
        if not isinstance(name, str) or name.count("/") != 1:
            raise SystemExit(f"{toml_path.name}: no `repo = \"owner/name\"`")
        if slug_repo.setdefault(slug, name) != name:
            raise SystemExit(f"{toml_path.name}: repo {name} but other labels of files/{slug}/ say {slug_repo[slug]}")
        repo = repositories.get(name) or Repository(name, slug, half_of(name), frozenset(), ())
        if repo.slug != slug:
            raise SystemExit(f"{toml_path.name}: {name} is vendored in files/{repo.slug}/, not files/{slug}/")
        stated = repo.stated_halves | ({data["half"]} if "half" in data else set())
        repo_files = list(repo.files)
        for entry in data.get("files", []):
            rel = f"{slug}/{entry['path']}"
            if not (FILES / rel).is_file():
                raise SystemExit(f"{toml_path.name}: {entry['path']} is not in files/{slug}/")
            if rel not in files:  # a file may be labelled in several tomls (one per wave of rules)
                files.append(rel)
                repo_files.append(rel)
            expected.extend(_label(toml_path.name, rel, item) for item in entry.get("expected", []))
            rejected.extend(_label(toml_path.name, rel, item) for item in entry.get("rejected", []))
        repositories[name] = Repository(name, slug, repo.half, frozenset(stated), tuple(repo_files))
    return Corpus(repositories, files, expected, rejected).only(half)


def load_labels(half: str = "all") -> tuple[list[str], list[Label]]:
    """The labelled files (relative to FILES) and their `expected` labels, of one half or of all."""
    corpus = load_corpus(half)
    return corpus.files, corpus.expected


@dataclass
class Score:
    files: int = 0
    findings: list[Diagnostic] = field(default_factory=list)
    true_positives: list[tuple[Diagnostic, Label]] = field(default_factory=list)
    false_positives: list[Diagnostic] = field(default_factory=list)
    misses: list[Label] = field(default_factory=list)
    expected: list[Label] = field(default_factory=list)
    half: str = "all"
    repositories: int = 0
    rejected: list[Label] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # the labelled files, relative to FILES

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

    def restricted(self, keep: Callable[[str], bool]) -> Score:
        """The same score over the codes `keep` accepts."""
        return Score(
            files=self.files, findings=[d for d in self.findings if keep(d.code)],
            true_positives=[(d, lb) for d, lb in self.true_positives if keep(d.code)],
            false_positives=[d for d in self.false_positives if keep(d.code)],
            misses=[lb for lb in self.misses if keep(lb.code)], expected=[lb for lb in self.expected if keep(lb.code)],
            half=self.half, repositories=self.repositories, rejected=[lb for lb in self.rejected if keep(lb.code)],
            paths=self.paths)

    @property
    def semantic(self) -> Score:
        """Every code but TL000 (syntax error), TL501 and TL502 (Keras 3 API removals)."""
        return self.restricted(lambda code: code not in NOT_SEMANTIC)

    def of_half(self, corpus: Corpus, half: str) -> Score:
        """This whole-corpus score cut down to one half (matching never crosses files, so it is the same as
        scoring that half alone)."""
        if half == "all":
            return self
        part = corpus.only(half)
        inside = set(part.files)
        return Score(
            files=len(part.files), findings=[d for d in self.findings if _relative(d) in inside],
            true_positives=[(d, lb) for d, lb in self.true_positives if lb.path in inside],
            false_positives=[d for d in self.false_positives if _relative(d) in inside],
            misses=[lb for lb in self.misses if lb.path in inside], expected=list(part.expected), half=half,
            repositories=len(part.repositories), rejected=list(part.rejected), paths=list(part.files))

    def judged_false_alarms(self) -> tuple[list[Diagnostic], list[Diagnostic]]:
        """The false alarms split into those a `rejected` label judges and those nobody has judged."""
        judged, unjudged = [], []
        for d in self.false_positives:
            (judged if any(_near(lb, d) for lb in self.rejected) else unjudged).append(d)
        return judged, unjudged


def _near(label: Label, diagnostic: Diagnostic) -> bool:
    return (label.path == _relative(diagnostic) and label.code == diagnostic.code and label.cell == diagnostic.cell
            and abs(label.line - diagnostic.line) <= LINE_TOLERANCE)


def _relative(diagnostic: Diagnostic) -> str:
    return Path(diagnostic.path).resolve().relative_to(FILES).as_posix()


def score(jobs: int | None = None, half: str = "all", corpus: Corpus | None = None) -> Score:
    """Lint the labelled files of `half` (tune, check or all) and match the findings with the labels."""
    corpus = (corpus or load_corpus()).only(half)
    files, labels = corpus.files, corpus.expected
    result = lint_paths([FILES / f for f in files], Config(), jobs=jobs)
    found = [d for d in result.diagnostics if d.code.startswith(JUDGED)]
    outcome = Score(files=len(files), findings=found, expected=list(labels), half=half,
                    repositories=len(corpus.repositories), rejected=list(corpus.rejected), paths=list(files))
    unmatched = list(labels)
    for diagnostic in sorted(found, key=Diagnostic.sort_key):
        candidates = [label for label in unmatched if _near(label, diagnostic)]
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


def _figures(name: str, outcome: Score) -> str:
    return (f"{name}precision {outcome.precision:.3f} ({len(outcome.true_positives)} right, "
            f"{len(outcome.false_positives)} wrong), recall {outcome.recall:.3f} "
            f"({len(outcome.true_positives)} of {len(outcome.expected)} found)")


def _section(outcome: Score, details: bool) -> list[str]:
    title = "whole corpus" if outcome.half == "all" else f"{outcome.half} half"
    lines = [
        f"real-world corpus, {title}: {outcome.files} files from {outcome.repositories} repositories, "
        f"{len(outcome.findings)} findings, {len(outcome.expected)} labelled problems",
        _figures("overall:  ", outcome),
        _figures("semantic: ", outcome.semantic) + f"  (all codes but {', '.join(sorted(NOT_SEMANTIC))})",
        "",
        "code    right  wrong  missed  precision",
    ]
    for code, (tp, fp, fn) in outcome.per_rule().items():
        precision = tp / (tp + fp) if tp + fp else 1.0
        lines.append(f"{code:6}  {tp:5}  {fp:5}  {fn:6}  {precision:9.2f}")
    if details:
        judged, unjudged = outcome.judged_false_alarms()
        lines.append(f"\nfalse alarms judged in `rejected` ({len(judged)}):")
        lines.extend(f"  {_where(_relative(d), d.cell, d.line)} {d.code} {d.message}" for d in judged)
        lines.append(f"\nfalse alarms nobody has judged ({len(unjudged)}):")
        lines.extend(f"  {_where(_relative(d), d.cell, d.line)} {d.code} {d.message}" for d in unjudged)
        lines.append(f"\nmisses ({len(outcome.misses)}):")
        lines.extend(f"  {_where(lb.path, lb.cell, lb.line)} {lb.code} {lb.why}" for lb in outcome.misses)
    return lines


def report(outcome: Score, details: bool = False, corpus: Corpus | None = None) -> str:
    """The figures of `outcome`; for a whole-corpus score, each half's figures after the whole corpus's."""
    lines = _section(outcome, details)
    if outcome.half == "all":
        corpus = corpus or load_corpus()
        for half in HALVES:
            part = corpus.only(half)
            names = ", ".join(sorted(part.repositories, key=str.lower))
            lines += ["", "", *_section(outcome.of_half(corpus, half), details), "", f"repositories: {names}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list every false alarm and every miss")
    parser.add_argument("--half", choices=("tune", "check", "all"), default="all",
                        help="score one half of the corpus (default: all, which reports each half too)")
    args = parser.parse_args(argv)
    corpus = load_corpus()
    print(report(score(half=args.half, corpus=corpus), args.details, corpus))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

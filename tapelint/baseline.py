"""Baselines: record today's findings (`tapelint baseline`) so that `check --baseline FILE` reports only new ones.

A finding is known by what it says about the code, not by where the code sits: its rule, its file (relative
to the project root: the folder of the pyproject.toml, else the folder `tapelint baseline` ran in), its notebook cell, the flagged source text (whitespace-normalised) and its
context: the names of the enclosing `def`s and `class`es. Lines moving above it, functions being
reordered and edits elsewhere leave the key as it is. Identical keys are counted: a baseline holding one
finding with a key and a run that finds two reports one of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from tapelint.diagnostic import Diagnostic
from tapelint.errors import InputError
from tapelint.escape import unicode_text

BASELINE_VERSION = 1
DEFAULT_BASELINE = ".tapelint-baseline.json"
# A flagged span longer than this is kept as its start, its end and a hash of the whole: the file stays
# readable, and the key still changes when the span does.
MAX_SOURCE = 160

SourceLines = Callable[[str, "int | None"], "list[str] | None"]

_SCOPE = re.compile(r"^(\s*)(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True, order=True)
class Key:
    """What identifies a finding across edits (see the module docstring)."""

    path: str
    cell: int  # 0 outside notebooks
    code: str
    context: str
    source: str

    def digest(self, occurrence: int = 0) -> str:
        """A stable hash of the key and the finding's place among identical ones (GitLab's fingerprint)."""
        text = json.dumps([self.path, self.cell, self.code, self.context, self.source, occurrence])
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _squash(text: str) -> str:
    return " ".join(text.split())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def scope_name(lines: list[str], line: int) -> str:
    """The dotted names of the `def`s and `class`es around 1-based `line`, found by indentation (a context
    for the key, so a plain text scan is enough: it gives the same answer for the same text)."""
    if not 1 <= line <= len(lines):
        return ""
    names: list[str] = []
    current = lines[line - 1]
    limit = _indent(current) if current.strip() else 1 << 30
    match = _SCOPE.match(current)
    if match:
        names.append(match.group(2))  # a finding on a `def` line belongs to that function
    for index in range(line - 2, -1, -1):
        text = lines[index]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        depth = _indent(text)
        if depth >= limit:
            continue
        match = _SCOPE.match(text)
        if match:
            names.append(match.group(2))
        limit = depth
        if depth == 0:
            break
    return ".".join(reversed(names))


def flagged_source(lines: list[str], d: Diagnostic) -> str:
    """The finding's span, whitespace-normalised: the text on its first line from its column, and on
    its last line up to its end column, when it spans several (the body between is left out, so an edit
    inside a flagged block does not make the finding new)."""
    if not 1 <= d.line <= len(lines):
        return ""
    first = lines[d.line - 1]
    if d.end_line == d.line:
        text = first[d.column:max(d.end_column, d.column)]
    else:
        last = lines[d.end_line - 1][:d.end_column] if 1 <= d.end_line <= len(lines) else ""
        text = first[d.column:] + " ... " + last
    text = _squash(text)
    if len(text) > MAX_SOURCE:
        whole = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        text = f"{text[:MAX_SOURCE // 2]} ... {text[-MAX_SOURCE // 4:]} #{whole}"
    return text


def relative_path(path: str, root: Path) -> str:
    """`path` relative to `root`, with `/` separators (`..` where it lies outside)."""
    if path.startswith("<"):
        return path  # <stdin>
    try:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:  # another drive, on Windows
        relative = os.path.abspath(path)
    return unicode_text(Path(relative).as_posix())


def finding_key(d: Diagnostic, root: Path, source_lines: SourceLines) -> Key:
    lines = source_lines(d.path, d.cell) or []
    # The enclosing scope, not the whole line: fixing one finding on a line must not make another finding
    # on the same line new. Two findings alike in one scope are told apart by counting.
    context = scope_name(lines, d.line) or "<module>"
    return Key(relative_path(d.path, root), d.cell or 0, d.code, unicode_text(context),
               unicode_text(flagged_source(lines, d)))


def keyed(diagnostics: Iterable[Diagnostic], root: Path, source_lines: SourceLines) -> list[tuple[Key, int, Diagnostic]]:
    """Each finding with its key and its occurrence among findings of the same key (in report order)."""
    seen: Counter[Key] = Counter()
    out = []
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        key = finding_key(d, root, source_lines)
        out.append((key, seen[key], d))
        seen[key] += 1
    return out


@dataclass
class Baseline:
    path: Path
    counts: Counter[Key]
    names: dict[str, str]  # code -> rule name, kept so the file reads well
    # The project root the entries' paths are relative to; the file stores it relative to its own folder,
    # so the project can be moved or cloned anywhere.
    root: Path

    def render(self) -> str:
        findings = [{"path": key.path, **({"cell": key.cell} if key.cell else {}), "code": key.code,
                     "name": self.names.get(key.code, ""), "context": key.context, "source": key.source,
                     "count": count}
                    for key, count in sorted(self.counts.items())]
        root = relative_path(str(self.root), self.path.parent)
        return json.dumps({"tool": "tapelint", "version": BASELINE_VERSION, "root": root, "findings": findings},
                          indent=2, ensure_ascii=False) + "\n"


def record(diagnostics: list[Diagnostic], path: Path, root: Path, source_lines: SourceLines) -> Baseline:
    """A baseline of `diagnostics`, to be written at `path`, with paths relative to `root` (the project's)."""
    baseline = Baseline(path, Counter(), {}, root)
    for key, _, d in keyed(diagnostics, root, source_lines):
        baseline.counts[key] += 1
        baseline.names[d.code] = d.name
    return baseline


def write(baseline: Baseline) -> None:
    from tapelint.atomic import write_atomic

    try:
        if baseline.path.parent != Path(""):
            baseline.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(baseline.path, baseline.render())
    except OSError as error:
        raise InputError(f"cannot write the baseline {baseline.path}: {error.strerror or error}") from None


def load(path: Path) -> Baseline:
    """Read a baseline file; anything wrong with it is one InputError line (exit 2)."""
    where = f"baseline {path}"
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise InputError(f"{where}: no such file (record one with `tapelint baseline -o {path}`)") from None
    except IsADirectoryError:
        raise InputError(f"{where}: is a folder, not a baseline file") from None
    except OSError as error:
        raise InputError(f"{where}: cannot read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise InputError(f"{where}: not UTF-8 text, so not a tapelint baseline") from None
    except (ValueError, RecursionError) as error:
        detail = f" (line {error.lineno})" if isinstance(error, json.JSONDecodeError) else ""
        raise InputError(f"{where}: not valid JSON{detail}; record it again with `tapelint baseline`") from None
    if not isinstance(data, dict) or data.get("tool") != "tapelint" or "findings" not in data:
        raise InputError(f"{where}: not a tapelint baseline (no \"tool\": \"tapelint\" and \"findings\")")
    if data.get("version") != BASELINE_VERSION:
        raise InputError(f"{where}: version {data.get('version')!r} is not one this tapelint reads "
                         f"({BASELINE_VERSION}); record it again with `tapelint baseline`")
    root = data.get("root", ".")
    if not isinstance(root, str):
        raise InputError(f"{where}: `root` must be a folder name (a string)")
    baseline = Baseline(path, Counter(), {}, path.parent / root)
    findings = data["findings"]
    if not isinstance(findings, list):
        raise InputError(f"{where}: `findings` must be a list")
    for number, entry in enumerate(findings, 1):
        try:
            key = Key(entry["path"], entry.get("cell", 0), entry["code"], entry["context"], entry["source"])
            count = entry.get("count", 1)
            valid = (all(isinstance(v, str) for v in (key.path, key.code, key.context, key.source))
                     and type(key.cell) is int and type(count) is int and count >= 1)
        except (KeyError, TypeError, AttributeError):
            valid = False
        if not valid:
            raise InputError(f"{where}: entry {number} is malformed (it needs path, code, context, source "
                             "and a count of at least 1)")
        baseline.counts[key] += count
        if isinstance(entry.get("name"), str):
            baseline.names[key.code] = entry["name"]
    return baseline


@dataclass
class Outcome:
    new: list[Diagnostic]
    known: int  # findings the baseline held, not reported
    stale: list[tuple[Key, int]]  # entries (and how many of each) no longer found


def apply(baseline: Baseline, diagnostics: list[Diagnostic], source_lines: SourceLines,
          checked: Callable[[Key], bool] = lambda key: True) -> Outcome:
    """Split findings into new ones and those the baseline holds. An entry is stale when fewer findings
    have its key than it counts; only entries `checked` says this run looked at (its files, its rules) can be."""
    remaining = Counter(baseline.counts)
    new = []
    known = 0
    for key, _, d in keyed(diagnostics, baseline.root, source_lines):
        if remaining[key] > 0:
            remaining[key] -= 1
            known += 1
        else:
            new.append(d)
    stale = sorted((key, count) for key, count in remaining.items() if count > 0 and checked(key))
    new.sort(key=Diagnostic.sort_key)
    return Outcome(new, known, stale)


def covered_by(paths: list[str], root: Path, codes: Iterable[str]) -> Callable[[Key], bool]:
    """Whether a baseline entry lies in what a run checked: a file named or under a folder named, for an
    enabled rule (an entry for a file or rule the run did not look at is not stale)."""
    enabled = set(codes)
    prefixes = []
    for name in paths:
        if name == "-":
            continue
        relative = relative_path(name, root)
        prefixes.append("" if relative == "." else relative.rstrip("/"))

    def checked(key: Key) -> bool:
        if key.code not in enabled:
            return False
        if key.path.startswith("<"):
            return "-" in paths
        return any(key.path == p or key.path.startswith(p + "/") or (p == "" and not key.path.startswith("../"))
                   for p in prefixes)

    return checked


def stale_line(key: Key, count: int, names: dict[str, str]) -> str:
    from tapelint.escape import printable

    where = f"{key.path}:cell {key.cell}" if key.cell else key.path
    times = f" ({count} times)" if count > 1 else ""
    name = f" [{names[key.code]}]" if names.get(key.code) else ""
    return printable(f"{where}: {key.code}{name} no longer found: `{key.source}` in `{key.context}`{times}")

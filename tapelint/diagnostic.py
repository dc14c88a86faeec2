"""The plain data every part of tapelint exchanges: diagnostics, fixes, severities.

Positions are libcst's: 1-based lines, 0-based columns. Reporters convert at the edges.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any


class Severity(str, enum.Enum):
    """How bad a finding is: error = will fail or never learn, warning = likely wrong, info = worth knowing."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class Confidence(str, enum.Enum):
    """HIGH: the code says it outright. INFERRED: a heuristic or a guess across functions."""

    HIGH = "high"
    INFERRED = "inferred"


@dataclass(frozen=True)
class TextEdit:
    """Replace the text between two positions (end exclusive) with `text`."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column + 1,
            "end_line": self.end_line,
            "end_column": self.end_column + 1,
            "text": self.text,
        }


@dataclass(frozen=True)
class Fix:
    """A change a rule proposes. `safe` fixes never change what the program computes."""

    title: str
    edits: tuple[TextEdit, ...]
    safe: bool = True

    @property
    def applicability(self) -> str:
        return "safe" if self.safe else "unsafe"

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "applicability": self.applicability,
            "edits": [e.to_dict() for e in self.edits],
        }


@dataclass(frozen=True)
class ProbeVerdict:
    """What the runtime probe found about a static finding."""

    status: str  # "confirmed" | "refuted" | "not-checked"
    evidence: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "evidence": self.evidence}


def _place_dict(path: str, line: int, column: int, end_line: int, end_column: int) -> dict[str, Any]:
    """A place in the JSON shape: 1-based columns, like the text output."""
    return {"path": path, "line": line, "column": column + 1, "end_line": end_line, "end_column": end_column + 1}


@dataclass(frozen=True)
class Related:
    """Another place a finding's cause lies (the softmax layer, the frozen backbone, the optimizer), as
    rustc's notes and SARIF's relatedLocations name it. `path` is the file it is in (the finding's own, or
    another module of the project); `cell` the notebook cell, numbered as findings number theirs."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    cell: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data = _place_dict(self.path, self.line, self.column, self.end_line, self.end_column)
        data["message"] = self.message
        if self.cell is not None:
            data["cell"] = self.cell
        return data

    def where(self, path: str, cell: int | None = None) -> str:
        """The place as a message cites it, seen from a finding in `path` (and `cell`): `line 71`,
        `cell 3, line 2`, or `model.py:71` in another file."""
        if self.path != path:
            return f"{self.path}:{self.line}" if self.cell is None else f"{self.path}:cell {self.cell}:{self.line}"
        if self.cell is not None and self.cell != cell:
            return f"cell {self.cell}, line {self.line}"
        return f"line {self.line}"


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    severity: Severity
    confidence: Confidence = Confidence.HIGH
    fix: Fix | None = None
    cell: int | None = None
    probe: ProbeVerdict | None = None
    # Where the cause lies, when that is elsewhere; part of equality (a cached finding keeps it).
    related: tuple[Related, ...] = ()
    extra: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code, self.message)

    def with_changes(self, **changes: Any) -> "Diagnostic":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape (columns 1-based, like the text output)."""
        data: dict[str, Any] = {
            **_place_dict(self.path, self.line, self.column, self.end_line, self.end_column),
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "confidence": self.confidence.value,
            "message": self.message,
            "fix": self.fix.to_dict() if self.fix else None,
            "related": [r.to_dict() for r in self.related],
        }
        if self.cell is not None:
            data["cell"] = self.cell
        if self.probe is not None:
            data["probe"] = self.probe.to_dict()
        return data

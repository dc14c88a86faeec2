"""The Rule base class, the context a rule sees, and the Valid/Invalid examples that test it."""

from __future__ import annotations

import functools
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping

import libcst as cst

from tapelint.analysis.blocks import positions
from tapelint.analysis.facts import Facts
from tapelint.diagnostic import Confidence, Severity
from tapelint.triggers import Trigger, occurs


@dataclass(frozen=True)
class Valid:
    """Code the rule must stay silent on."""

    code: str
    why: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)  # a [tool.tapelint] table


@dataclass(frozen=True)
class Invalid:
    """Code the rule must report. `line`/`column` (1-based, as shown to users) are checked when given;
    `expected_fix` is the whole module after applying the rule's fix."""

    code: str
    line: int | None = None
    column: int | None = None
    expected_fix: str | None = None
    count: int = 1
    config: Mapping[str, Any] = field(default_factory=dict)  # a [tool.tapelint] table
    message_contains: str | None = None


@dataclass(frozen=True)
class Option:
    """A per-rule setting read from `[tool.tapelint.<rule-name>]`."""

    default: Any
    type: type
    doc: str


@dataclass
class PendingFix:
    title: str
    safe: bool
    # (node to replace, replacement node or source text)
    changes: list[tuple[cst.CSTNode, cst.CSTNode | str]]


@dataclass
class Report:
    node: cst.CSTNode
    message: str
    severity: Severity
    confidence: Confidence
    fix: PendingFix | None = None
    code: str = ""
    name: str = ""
    # (node, what it is) for each place the cause lies: the engine gives each its position
    related: tuple[tuple[cst.CSTNode, str], ...] = ()


# Line of the linted module -> (cell number, line in that cell), or None; set for notebooks only.
CellLines = Callable[[int], "tuple[int, int] | None"]


def describe_line(line: int, cell: int | None = None) -> str:
    """A line as messages cite it: `line 12` in a .py file, `cell 3, line 2` in a notebook (cells
    numbered like the findings' `cell`)."""
    return f"line {line}" if cell is None else f"cell {cell}, line {line}"


@dataclass
class RuleContext:
    path: str
    source: str
    module: cst.Module
    options: Mapping[str, Any]
    keras_version: int | None = None  # 2 when the project targets tf_keras / Keras 2
    # Shared by every rule on one file, so the analysis runs once, on first use.
    shared: dict[str, Any] = field(default_factory=dict)
    cell_lines: CellLines | None = None
    # Definitions imported from other modules of the project, put before the file's own lines.
    prelude: Any = None

    @property
    def facts(self) -> Facts:
        if "facts" not in self.shared:
            facts = self.shared["facts"] = Facts(self.module, self.source)
            facts.importers = self.shared.get("importers")
        return self.shared["facts"]


class Rule(cst.BatchableCSTVisitor):
    """One lint rule. Subclasses set the class attributes and either visit nodes or override `check()`.

    `check()` runs after the traversal and is where rules that only query the shared `Facts` work.
    """

    code: ClassVar[str] = ""
    # Set on each class by _visitor_names, in its own __dict__ (not inherited).
    _visitor_names_cache: ClassVar[tuple[str, ...]]
    name: ClassVar[str] = ""
    message: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.WARNING
    # Other severities some findings of the rule carry, and when (documented next to `severity`).
    also_severity: ClassVar[Mapping[Severity, str]] = {}
    confidence: ClassVar[Confidence] = Confidence.HIGH
    default_enabled: ClassVar[bool] = True
    # The rule's message says something never happens (an optimizer never applied, a metric never reset):
    # such a rule stays in preview until it has been right on real code at least once (tapelint.maturity).
    claims_absence: ClassVar[bool] = False
    # The rule runs on a file only when one of these occurs in its text (a cheap test before any
    # parsing): a word or pattern (tapelint.triggers), or a tuple of them that must all occur.
    triggers: ClassVar[tuple[Trigger | tuple[Trigger, ...], ...]] = ("tensorflow", "keras")
    options: ClassVar[Mapping[str, Option]] = {}
    fixable: ClassVar[bool] = False
    # Runtime-only findings (TL8xx) are reported by the probe; the static pass never runs them.
    runtime_only: ClassVar[bool] = False
    # What the runtime probe checks to confirm or refute this finding ("" = nothing).
    probe: ClassVar[str] = ""
    VALID: ClassVar[list[Valid]] = []
    INVALID: ClassVar[list[Invalid]] = []

    def __init__(self, context: RuleContext) -> None:
        super().__init__()
        self.context = context
        self.reports: list[Report] = []
        self.crash: BaseException | None = None

    @property
    def facts(self) -> Facts:
        return self.context.facts

    def option(self, key: str) -> Any:
        if key in self.context.options:
            return self.context.options[key]
        return self.options[key].default

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        *,
        fix: PendingFix | None = None,
        severity: Severity | None = None,
        confidence: Confidence | None = None,
        related: "Iterable[tuple[cst.CSTNode | None, str]]" = (),
        **fields: Any,
    ) -> None:
        """`related`: (node, a short phrase naming it, e.g. "the softmax") for each place the cause lies, when
        the analysis knows its exact node; a None node is left out, so a rule can pass what it may not know."""
        text = message if message is not None else self.message.format(**fields)
        places = tuple((place, what) for place, what in related if place is not None and place is not node)
        self.reports.append(
            Report(node, text, severity or self.severity, confidence or self.confidence, fix, self.code, self.name,
                   places)
        )

    def location(self, node: cst.CSTNode) -> str | None:
        """Where `node` starts, for a message that points at another line: `line 12`, or `cell 3, line 2`
        in a notebook. None when the node has no position."""
        position = positions(self.context.shared, self.context.module).get(node)
        if position is None:
            return None
        line = position.start.line
        prelude = self.context.prelude
        if prelude is not None:
            if line <= prelude.lines:
                found = prelude.locate(line)
                return f"line {found[1]} of `{Path(found[0].path).name}`" if found else None
            line -= prelude.lines
        in_cell = self.context.cell_lines(line) if self.context.cell_lines is not None else None
        return describe_line(line) if in_cell is None else describe_line(in_cell[1], in_cell[0])

    def check(self) -> None:
        """Called once after the traversal; analysis-driven rules do their work here."""

    # Each visit function is guarded so that a rule that raises stops only itself: the batched
    # traversal and the other rules carry on, and the engine turns the crash into one diagnostic.
    def get_visitors(self) -> Mapping[str, Callable[[cst.CSTNode], None]]:
        return {name: self._guard(getattr(self, name)) for name in self._visitor_names()}

    @classmethod
    def _visitor_names(cls) -> tuple[str, ...]:
        # libcst finds these with inspect.getmembers on every instance, which costs more than the
        # traversal on small files; the names depend only on the class.
        cached = cls.__dict__.get("_visitor_names_cache")
        if cached is None:
            cached = tuple(
                name for name in dir(cls)
                if (name.startswith("visit_") or name.startswith("leave_")) and callable(getattr(cls, name))
                and not getattr(getattr(cls, name), "_is_no_op", False)
            )
            cls._visitor_names_cache = cached
        return cached

    def _guard(self, func: Callable[[cst.CSTNode], None]) -> Callable[[cst.CSTNode], None]:
        @functools.wraps(func)
        def guarded(node: cst.CSTNode) -> None:
            if self.crash is not None:
                return
            try:
                func(node)
            except Exception as error:  # noqa: BLE001 - isolation is the point
                self.crash = error

        return guarded

    def run_check(self) -> None:
        if self.crash is not None:
            return
        try:
            self.check()
        except Exception as error:  # noqa: BLE001
            self.crash = error

    @classmethod
    def docs(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def applies_to(cls, source: str) -> bool:
        return bool(applicable_rules((cls,), source))


def applicable_rules(rules: "Iterable[type[Rule]]", source: str) -> list[type[Rule]]:
    """The rules whose trigger words occur in `source` (`Rule.applies_to`, for many rules at once). Rules
    share words (`losses`, `GradientTape`, `.fit(`: 346 triggers, 141 distinct), and each is looked for
    in the text once."""
    present: dict[Trigger, bool] = {}

    def has(trigger: Trigger) -> bool:
        found = present.get(trigger)
        if found is None:
            found = present[trigger] = occurs(trigger, source)
        return found

    chosen = []
    for rule in rules:
        if rule.runtime_only:
            continue
        for trigger in rule.triggers:
            if all(has(word) for word in trigger) if isinstance(trigger, tuple) else has(trigger):
                chosen.append(rule)
                break
    return chosen

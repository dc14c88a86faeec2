"""libcst's positions (PositionProvider's ranges) for the nodes a file's findings need, without a position
pass over the whole file.

libcst computes positions by generating the code of the whole module while counting lines, which costs
about 1.3 times the parse, and `MetadataWrapper.resolve` adds a full (empty) visit that rebuilds every
node on top. A file's findings sit in a few of its statements, so the code is generated only for the
top-level statement that holds an asked-for node, starting at that statement's line. The line comes
from CPython's `ast` (a fraction of the libcst parse) and is checked: the statement's generated text
must be the source text at that line, else, and for nodes outside any top-level statement, the whole
module's positions are computed as before. The answers are PositionProvider's either way.

This reaches into libcst's codegen (`_codegen`, `_gen_impl`, the position-providing codegen state):
the libcst version is pinned in pyproject.toml for that reason.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Mapping

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState

from tapelint.analysis.walk import contains


def full_positions(module: cst.Module) -> Mapping[cst.CSTNode, Any]:
    """PositionProvider's map for the whole module, without the rebuilding visit `resolve` adds."""
    provider = PositionProvider()
    provider._computed = {}
    provider._gen_impl(module)
    return provider._computed


class LazyPositions:
    """`get(node)` answers as `MetadataWrapper(module).resolve(PositionProvider).get(node)` would.

    `statement_of(node)` may say which top-level statement (index into `module.body`) holds a node,
    or None when it does not know; then the statements are searched."""

    def __init__(self, module: cst.Module, source: str,
                 statement_of: Callable[[cst.CSTNode], int | None] | None = None) -> None:
        self.module = module
        self.source = source
        self.statement_of = statement_of
        self._full: Mapping[cst.CSTNode, Any] | None = None
        self._done: dict[int, Mapping[cst.CSTNode, Any] | None] = {}
        self._starts: list[int] | None = None  # first line of each top-level statement's code
        self._line_offsets: list[int] | None = None

    def __getitem__(self, node: cst.CSTNode) -> Any:
        found = self.get(node)
        if found is None:
            raise KeyError(node)
        return found

    def __contains__(self, node: object) -> bool:
        return isinstance(node, cst.CSTNode) and self.get(node) is not None

    def get(self, node: cst.CSTNode, default: Any = None) -> Any:
        if self._full is not None:
            return self._full.get(node, default)
        index = self._statement_index(node) if node is not self.module else None
        if index is not None:
            computed = self._statement_positions(index)
            if computed is not None and node in computed:
                return computed[node]
        return self.full().get(node, default)

    def full(self) -> Mapping[cst.CSTNode, Any]:
        if self._full is None:
            self._full = full_positions(self.module)
        return self._full

    # ----- which statement
    def _statement_index(self, node: cst.CSTNode) -> int | None:
        body = self.module.body
        if self.statement_of is not None:
            index = self.statement_of(node)
            if index is not None and 0 <= index < len(body):
                return index
        for index, statement in enumerate(body):
            if statement is node or contains(statement, node):
                return index
        return None

    # ----- one statement's positions
    def _statement_positions(self, index: int) -> Mapping[cst.CSTNode, Any] | None:
        if index in self._done:
            return self._done[index]
        result = None
        start = self._start_line(index)
        if start is not None:
            result = self._generate(index, start)
        self._done[index] = result
        return result

    def _start_line(self, index: int) -> int | None:
        if self._starts is None:
            self._starts = self._statement_starts()
        return self._starts[index] if index < len(self._starts) else None

    def _statement_starts(self) -> list[int]:
        """The line where each top-level statement's code (its leading blank and comment lines included)
        begins, from CPython's parse; [] when the two parsers disagree on the statements."""
        try:
            tree = ast.parse(self.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return []
        nodes = tree.body
        starts: list[int] = []
        position = 0
        for statement in self.module.body:
            if position >= len(nodes):
                return []
            first = nodes[position]
            line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
            leading = len(statement.leading_lines)
            decorators = getattr(statement, "decorators", ())
            if decorators:
                leading += len(decorators[0].leading_lines)
            starts.append(line - leading)
            # `a = 1; b = 2` is one libcst line and two CPython statements.
            position += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        return starts if position == len(nodes) else []

    def _generate(self, index: int, line: int) -> Mapping[cst.CSTNode, Any] | None:
        if self._line_offsets is None:
            self._line_offsets = [0, *(match.end() for match in NEWLINE_RE.finditer(self.source))]
        if not 1 <= line <= len(self._line_offsets):
            return None
        module = self.module
        provider = PositionProvider()
        provider._computed = {}
        state = PositionProvidingCodegenState(
            default_indent=module.default_indent, default_newline=module.default_newline, provider=provider)
        state.line = line
        state.column = 0
        module.body[index]._codegen(state)
        offset = self._line_offsets[line - 1]
        text = "".join(state.tokens)
        if not self.source.startswith(text, offset):
            # The file's last statement without its newline: libcst drops it only after generating.
            last = index == len(module.body) - 1 and not module.has_trailing_newline and not module.footer
            if not (last and state.tokens and self.source.startswith("".join(state.tokens[:-1]), offset)
                    and offset + len(text) - len(state.tokens[-1]) == len(self.source)):
                return None
        return provider._computed

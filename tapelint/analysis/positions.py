"""libcst's positions (PositionProvider's ranges) for the nodes a file's findings need, without a position
pass over the whole file.

libcst computes positions by generating the code of the whole module while counting lines, which costs
about 1.3 times the parse, and `MetadataWrapper.resolve` adds a full (empty) visit that rebuilds every
node on top. A file's findings sit in a few of its statements, so the code is generated only for the
statement that holds an asked-for node (a top-level statement, or inside a class or function the
statement of its body), starting at that statement's line with the indentation of the blocks around
it. The line is where the statement's generated text occurs in the source, when it occurs there exactly
once at the start of a line, inside the text of the statement around it (a text search costs far less
than any parse). When a text is ambiguous, the line comes from CPython's `ast` (about a tenth of the
libcst parse) and is checked: the statement's generated text must be the source text at that line, else,
and for nodes outside any statement, the whole module's positions are computed as before. The answers
are PositionProvider's either way.

This reaches into libcst's codegen (`_codegen`, `_gen_impl`, the position-providing codegen state):
the libcst version is pinned in pyproject.toml for that reason.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from typing import Any, Callable, Mapping

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import PositionProvider
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState

from tapelint.analysis.walk import contains


def full_positions(module: cst.Module) -> Mapping[cst.CSTNode, Any]:
    """PositionProvider's map for the whole module, without the rebuilding visit `resolve` adds."""
    provider = PositionProvider()
    provider._computed = {}
    provider._gen_impl(module)
    return provider._computed


_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)


class LazyPositions:
    """`get(node)` answers as `MetadataWrapper(module).resolve(PositionProvider).get(node)` would.

    `statement_of(node)` may say which top-level statement (index into `module.body`) holds a node,
    or None when it does not know; then the statements are searched. Inside a class or function the
    code is generated for the statement of its body that holds the node (methods of a large class),
    with the indentation of the blocks around it."""

    def __init__(self, module: cst.Module, source: str,
                 statement_of: Callable[[cst.CSTNode], int | None] | None = None) -> None:
        self.module = module
        self.source = source
        self.statement_of = statement_of
        self._full: Mapping[cst.CSTNode, Any] | None = None
        # id(statement) -> its positions, or None when they could not be had statement-wise
        self._done: dict[int, Mapping[cst.CSTNode, Any] | None] = {}
        self._tree: ast.Module | None | bool = False  # CPython's parse, made on first use
        self._ast_of: dict[int, ast.stmt] = {}  # id(libcst statement) -> CPython's first statement of it
        # id(libcst statement) -> the line its code (leading blank and comment lines included) begins on
        self._starts: dict[int, int] = {}
        self._placed: set[int] = set()  # ids of the blocks whose statements have their lines in _starts
        self._line_offsets: list[int] | None = None
        self._line_start_set: set[int] = set()

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
            computed = self._positions_around(node, index)
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

    def _positions_around(self, node: cst.CSTNode, index: int) -> Mapping[cst.CSTNode, Any] | None:
        """The positions of the innermost statement of a class or function body that holds `node`,
        starting from the top-level statement `index`."""
        found = self._around_by_text(node, index)
        if found is not None:
            return found
        tree = self._parsed()
        if tree is None:
            return None
        statement: cst.BaseStatement = self.module.body[index]
        if not self._place(self.module, self.module.body, tree.body):
            return None
        indents: list[str] = []
        while isinstance(statement, _DEFINITIONS) and statement is not node \
                and isinstance(statement.body, cst.IndentedBlock):
            block = statement.body
            inner = next((s for s in block.body if s is node or contains(s, node)), None)
            if inner is None:
                break  # in the header: the decorators, the name, the parameters
            parsed = self._ast_of.get(id(statement))  # the same definition, as CPython parsed it
            if not isinstance(parsed, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    or not self._place(block, block.body, parsed.body):
                break
            indents.append(self.module.default_indent if block.indent is None else block.indent)
            statement = inner
        key = id(statement)
        if key not in self._done:
            line = self._starts.get(key)
            self._done[key] = self._generate(statement, line, indents) if line is not None else None
        return self._done[key]

    # ----- where statements start: by their text
    def _around_by_text(self, node: cst.CSTNode, index: int) -> Mapping[cst.CSTNode, Any] | None:
        """Place the innermost statement holding `node` by its generated text: it, or a statement around
        it, must occur exactly once at the start of a line in the file, and each statement below that one
        exactly once inside the text of the one above it. None when a text is ambiguous or absent (two
        identical statements, the last line without its newline); CPython's parse places them then."""
        module = self.module
        statement: cst.BaseStatement = module.body[index]
        chain: list[tuple[cst.BaseStatement, list[str]]] = [(statement, [])]
        indents: list[str] = []
        while isinstance(statement, _DEFINITIONS) and statement is not node \
                and isinstance(statement.body, cst.IndentedBlock):
            block = statement.body
            inner = next((s for s in block.body if s is node or contains(s, node)), None)
            if inner is None:
                break
            indents = [*indents, module.default_indent if block.indent is None else block.indent]
            statement = inner
            chain.append((statement, indents))
        key = id(statement)
        if key in self._done:
            return self._done[key]
        offsets = self._offsets()
        texts: dict[int, str] = {}

        def text(level: int) -> str:
            if level not in texts:
                current, current_indents = chain[level]
                state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
                state.indent_tokens = list(current_indents)
                current._codegen(state)
                texts[level] = "".join(state.tokens)
            return texts[level]

        # From the inside out: the innermost statement whose text occurs once in the whole file anchors the
        # search, so the text of a large class around a finding is generated only when nothing inside it
        # is unique. Then down to the innermost statement, each inside the one above it.
        for anchor in range(len(chain) - 1, -1, -1):
            start = self._only_line_start(text(anchor), 0, len(self.source))
            if start is not None:
                break
        else:
            return None
        end = start + len(text(anchor))
        for level in range(anchor + 1, len(chain)):
            at = self._only_line_start(text(level), start, end)
            if at is None:
                return None
            start, end = at, at + len(text(level))
        line = bisect_right(offsets, start)  # offsets[line - 1] == start
        computed = self._generate(statement, line, indents)
        if computed is not None:
            self._done[key] = computed
        return computed

    def _only_line_start(self, text: str, start: int, end: int) -> int | None:
        """Where `text` occurs in `source[start:end]` starting a line, when it does exactly once."""
        if not text:
            return None
        starts = self._line_start_set
        found = None
        at = self.source.find(text, start, end)
        while at >= 0:
            if at in starts:
                if found is not None:
                    return None
                found = at
            at = self.source.find(text, at + 1, end)
        return found

    def _offsets(self) -> list[int]:
        if self._line_offsets is None:
            self._line_offsets = [0, *(match.end() for match in NEWLINE_RE.finditer(self.source))]
            self._line_start_set = set(self._line_offsets)
        return self._line_offsets

    # ----- where statements start: by CPython's parse
    def _parsed(self) -> ast.Module | None:
        if self._tree is False:
            try:
                self._tree = ast.parse(self.source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = None
        return self._tree  # type: ignore[return-value]

    def _place(self, owner: cst.CSTNode, statements: Any, nodes: list[ast.stmt]) -> bool:
        """Record the first line of each statement of a block, from CPython's statements of the same
        block; False when the two parsers disagree on them."""
        if id(owner) in self._placed:
            return True
        starts: dict[int, int] = {}
        first_nodes: dict[int, ast.stmt] = {}
        position = 0
        for statement in statements:
            if position >= len(nodes):
                return False
            first = nodes[position]
            line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
            leading = len(statement.leading_lines)
            decorators = getattr(statement, "decorators", ())
            if decorators:
                leading += len(decorators[0].leading_lines)
            starts[id(statement)] = line - leading
            first_nodes[id(statement)] = first
            # `a = 1; b = 2` is one libcst line and two CPython statements.
            position += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        if position != len(nodes):
            return False
        self._starts.update(starts)
        self._ast_of.update(first_nodes)
        self._placed.add(id(owner))
        return True

    def _generate(self, statement: cst.BaseStatement, line: int, indents: list[str]) -> Mapping[cst.CSTNode, Any] | None:
        line_offsets = self._offsets()
        if not 1 <= line <= len(line_offsets):
            return None
        module = self.module
        provider = PositionProvider()
        provider._computed = {}
        state = PositionProvidingCodegenState(
            default_indent=module.default_indent, default_newline=module.default_newline, provider=provider)
        state.line = line
        state.column = 0
        state.indent_tokens = list(indents)
        statement._codegen(state)
        offset = line_offsets[line - 1]
        text = "".join(state.tokens)
        if not self.source.startswith(text, offset):
            # The file's last statement without its newline: libcst drops it only after generating.
            last = not indents and statement is module.body[-1] and not module.has_trailing_newline \
                and not module.footer
            if not (last and state.tokens and self.source.startswith("".join(state.tokens[:-1]), offset)
                    and offset + len(text) - len(state.tokens[-1]) == len(self.source)):
                return None
        return provider._computed

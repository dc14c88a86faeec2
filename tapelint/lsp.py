"""The editor language server behind `tapelint server`: diagnostics, quick fixes and rule docs over LSP.

Only the `server` command imports this module, so `import tapelint` never imports pygls. The server runs
the same engine and reads the same `[tool.tapelint]` config as the command line; it never runs the probe.
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import io
import logging
import os
import re
import sys
import tempfile
import threading
import time
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument

from tapelint import __version__, registry
from tapelint.config import Config, find_config_file, load
from tapelint.diagnostic import Diagnostic, Severity, TextEdit
from tapelint.project import ProjectIndex
from tapelint.incremental import common_prefix as _common_prefix, lint_buffer
from tapelint.runner import attribute
from tapelint.errors import TapelintError
from tapelint.files import MAX_SOURCE_BYTES
from tapelint.pools import die_with_parent, kill_pool, resident_bytes
from tapelint.triggers import Trigger, occurs
from tapelint.fixes import fix_source
from tapelint.errors import InputError
from tapelint.notebooks import Notebook, fix_cells, is_python, lint_cells

logger = logging.getLogger("tapelint.lsp")

SOURCE = "tapelint"
FIX_ALL_KIND = "source.fixAll.tapelint"
FIX_ALL_TITLE = "tapelint: fix all safe"
# An edit is linted at once when no lint of the document is waiting or running: waiting would only delay
# its findings (typing slower than the lint, every lint ends before the next keystroke). An edit that
# comes while one is (typing faster than the lint) waits for a pause in typing of a quarter of what the
# last lint of the document took, within these bounds. A newer edit cancels a run still waiting, and
# drops (or kills) one already running.
DEBOUNCE_SECONDS = 0.3
MIN_DEBOUNCE_SECONDS = 0.02
# Documents that import a saved one are linted again after it, at this delay, behind any edited document.
DEPENDENT_DELAY_SECONDS = 0.1

# Notebook documents (LSP 3.17): Jupyter notebooks, their Python cells. The server lints a notebook as the
# command line lints the .ipynb (tapelint.notebooks) and publishes each cell's findings on the cell's URI.
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithNotebook(
        notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")])],
    save=True,
)
_PYTHON_CELLS = frozenset({"python", "python3", "ipython", "ipython3"})
_JSON_START = re.compile(r"\s*\{")

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# `# noqa: TL001, TL002` and the file-level `# tapelint: noqa: TL001`, as tapelint.suppressions reads them.
_NOQA = re.compile(r"#\s*(?:tapelint:\s*)?noqa:\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*)",
                   re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z0-9_\-]+")
_NOT_RULES = {
    registry.SYNTAX_ERROR[0]: "The buffer does not parse as Python, so tapelint reports this instead of "
                              "checking the file. Fix the syntax error and the other findings come back.",
    registry.INTERNAL_ERROR[0]: "A rule crashed on this file; its findings are missing and the other rules' "
                                "findings are still shown. Please report it.",
}


# ---------------------------------------------------------------------------------------------------------
# Positions. Inside tapelint they are libcst's (1-based lines, 0-based columns in code points); LSP wants
# 0-based lines and columns in the negotiated encoding (UTF-16 unless the client offers better).


def split_lines(source: str) -> list[str]:
    """The lines as libcst counts them (\\n, \\r\\n and \\r end a line), without their line breaks."""
    return _LINE_BREAK.split(source)


def _units(codec: Any, text: str) -> int:
    return int(codec.client_num_units(text))


def to_lsp_position(lines: Sequence[str], codec: Any, line: int, column: int) -> types.Position:
    """A libcst position as an LSP position."""
    index = line - 1
    if index >= len(lines):
        return types.Position(line=max(len(lines) - 1, 0), character=_units(codec, lines[-1]) if lines else 0)
    text = lines[max(index, 0)]
    return types.Position(line=max(index, 0), character=_units(codec, text[:column]))


def from_lsp_position(lines: Sequence[str], codec: Any, position: types.Position) -> tuple[int, int]:
    """An LSP position as (0-based line, column in code points), clamped into the document."""
    if not lines:
        return 0, 0
    line = min(max(position.line, 0), len(lines) - 1)
    text = lines[line]
    units = 0
    for index, char in enumerate(text):
        if units >= position.character:
            return line, index
        units += _units(codec, char)
    return line, len(text)


def to_lsp_range(lines: Sequence[str], codec: Any, line: int, column: int, end_line: int,
                 end_column: int) -> types.Range:
    return types.Range(start=to_lsp_position(lines, codec, line, column),
                       end=to_lsp_position(lines, codec, end_line, end_column))


def diagnostic_range(diagnostic: Diagnostic, lines: Sequence[str], codec: Any) -> types.Range:
    rng = to_lsp_range(lines, codec, diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)
    if rng.start == rng.end:
        # A point (a syntax error, an internal error) would be invisible in most editors: mark one character,
        # or the whole line when the point sits at its end.
        text = lines[rng.start.line] if rng.start.line < len(lines) else ""
        column = diagnostic.column
        if column < len(text):
            end = to_lsp_position(lines, codec, diagnostic.line, column + 1)
            return types.Range(start=rng.start, end=end)
        if text:
            return types.Range(start=types.Position(line=rng.start.line, character=0),
                               end=types.Position(line=rng.start.line, character=_units(codec, text)))
    return rng


def _before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) <= (b.line, b.character)


def ranges_touch(a: types.Range, b: types.Range) -> bool:
    return _before(a.start, b.end) and _before(b.start, a.end)


def whole_text_edit(old: str, new: str, codec: Any) -> types.TextEdit:
    """One edit that turns `old` into `new`, replacing only the lines between the common head and tail."""
    head = len(os.path.commonprefix([old, new]))
    while not _line_start(old, head):
        head -= 1
    tail = len(os.path.commonprefix([old[head:][::-1], new[head:][::-1]]))
    while tail and not _line_start(old, len(old) - tail):
        tail -= 1
    lines = split_lines(old)
    start = _offset_position(old, head, lines, codec)
    end = _offset_position(old, len(old) - tail, lines, codec)
    return types.TextEdit(range=types.Range(start=start, end=end), new_text=new[head:len(new) - tail])


def _line_start(text: str, index: int) -> bool:
    """Whether `index` starts a line (never between the two characters of a \\r\\n)."""
    if index <= 0:
        return True
    before = text[index - 1]
    return before == "\n" or (before == "\r" and (index >= len(text) or text[index] != "\n"))


def _offset_position(source: str, offset: int, lines: Sequence[str], codec: Any) -> types.Position:
    before = source[:offset]
    line = len(split_lines(before)) - 1
    column = len(split_lines(before)[-1])
    return to_lsp_position(lines, codec, line + 1, column)


# ---------------------------------------------------------------------------------------------------------
# Carrying findings over an edit that changes only the layout.
#
# Typing a comment, or pressing Enter at the end of a statement, changes no token of the program: every
# node of the tree is the same, only its position moves. The findings of the previous text are then those
# of the new text, moved, and the server publishes them at once instead of linting again. This holds when:
#   - the two texts have the same tokens (comments, blank lines and line breaks inside brackets aside), with
#     the same indentation and the same text between the tokens of a line: only what follows the last token
#     of a logical line (its trailing comment) and whole comment or blank lines between statements differ.
#     Such text lies outside every expression, so the code of no expression changes (messages quote
#     expressions, never whole statements);
#   - no changed comment says `noqa`, `tapelint` or `coding` (suppressions, the encoding cookie);
#   - every word whose mere presence in the text decides something (a rule's trigger words, the engine's
#     and the project index's words) is present in both texts or in neither;
#   - no finding or fix spans a changed stretch (it could quote the statement that holds it), every finding
#     and fix edit starts and ends on a token boundary, and no message cites a line at or after the first
#     line that moved;
#   - the settings and the prelude of imported definitions are the same, and the previous text parsed.
# Anything else is linted again in full.

_GUARDED_COMMENT = re.compile(r"noqa|tapelint|coding", re.IGNORECASE)
_CITED_LINE = re.compile(r"\bline (\d+)")
# Words whose presence in the text the engine and the project index test (besides the rules' triggers).
_TEXT_WORDS = ("tensorflow", "keras", "tf_keras", "TF_USE_LEGACY_KERAS", "from ", " import ", "GradientTape",
               "apply_gradients", "train_step", ".fit(")
# Near the engine's guards against pathological nesting (tapelint.guards), a file is always linted in full.
_GUARD_BRACKETS = 4000
_GUARD_OPERATORS = 15000
_GUARD_LINE = 900
_BRACKETS = re.compile(r"[\[\](){}]")


@dataclass(frozen=True)
class Layout:
    """The tokens of a text that make its program (no comments, blank lines or indentation tokens)."""

    kinds: tuple[tuple[int, str], ...]  # (token type, token text)
    starts: tuple[tuple[int, int], ...]  # (1-based line, column), as libcst counts them
    ends: tuple[tuple[int, int], ...]
    offsets: tuple[int, ...]  # where each token starts in the text
    end_offsets: tuple[int, ...]


_LAYOUT_SKIPS = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT})
# What may change between two tokens without changing the program: after the last token of a logical
# line, trailing whitespace and a comment; between statements, whole blank or comment lines.
_TRAILING = re.compile(r"[ \t\f]*(?:#[^\r\n]*)?")
_LINES = re.compile(r"(?:[ \t\f]*(?:#[^\r\n]*)?\n)*")


def layout_of(source: str) -> Layout | None:
    """The layout of a text, or None when it does not tokenize (or uses \\r line breaks, which `tokenize`
    does not count as libcst does)."""
    if "\r" in source:
        return None
    line_starts = [0]
    find = source.find
    at = find("\n")
    while at >= 0:
        line_starts.append(at + 1)
        at = find("\n", at + 1)
    kinds, starts, ends, offsets, end_offsets = [], [], [], [], []
    size = len(source)
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in _LAYOUT_SKIPS:
                continue
            (line, column), (end_line, end_column) = token.start, token.end
            kinds.append((token.type, token.string))
            starts.append(token.start)
            ends.append(token.end)
            offsets.append(line_starts[line - 1] + column if line <= len(line_starts) else size)
            end_offsets.append(line_starts[end_line - 1] + end_column if end_line <= len(line_starts) else size)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return Layout(tuple(kinds), tuple(starts), tuple(ends), tuple(offsets), tuple(end_offsets))


@dataclass(frozen=True)
class LayoutEdit:
    """How positions move from one text to another with the same program: the text between two tokens
    (`low`..`high`, old positions) changed; positions from `high` on move by `lines`, and on the line of
    `high` by `columns` too."""

    low: tuple[int, int]
    high: tuple[int, int]
    lines: int
    columns: int

    def move(self, line: int, column: int) -> tuple[int, int] | None:
        """Where an old position is in the new text; None inside the changed text."""
        position = (line, column)
        if position <= self.low:
            return position
        if position < self.high:
            return None
        return line + self.lines, column + (self.columns if line == self.high[0] else 0)

    def spans(self, start: tuple[int, int], end: tuple[int, int]) -> bool:
        return start < self.high and self.low < end

    @property
    def first_moved_line(self) -> int | None:
        return self.high[0] if self.lines else None


def layout_edit(old: Layout, old_source: str, new_source: str) -> tuple[LayoutEdit, Layout] | None:
    """When `new_source` differs from `old_source` (whose layout is `old`) only between two tokens, where
    that changes no token (see above): how positions move, and the new text's layout. Else None."""
    if "\r" in new_source:
        return None
    head = _common_prefix(old_source, new_source)
    limit = min(len(old_source), len(new_source)) - head
    tail = _common_prefix(old_source[::-1][:limit], new_source[::-1][:limit]) if limit else 0
    changed_end = len(old_source) - tail
    index = bisect.bisect_left(old.offsets, changed_end)
    if index >= len(old.offsets) or (index and old.end_offsets[index - 1] > head):
        return None  # the change touches a token
    low_offset = old.end_offsets[index - 1] if index else 0
    delta = len(new_source) - len(old_source)
    before = old_source[low_offset:old.offsets[index]]
    after = new_source[low_offset:old.offsets[index] + delta]
    if _GUARDED_COMMENT.search(before) or _GUARDED_COMMENT.search(after):
        return None
    kind = old.kinds[index][0]
    if kind == tokenize.NEWLINE:
        if not _TRAILING.fullmatch(after):
            return None
    elif index == 0 or old.kinds[index - 1][0] == tokenize.NEWLINE:
        # Whole lines between statements; the indentation of the next statement stays as it was.
        indent = after.rpartition("\n")[2]
        if indent != before.rpartition("\n")[2] or not _LINES.fullmatch(after[:len(after) - len(indent)]):
            return None
    else:
        return None
    lines = after.count("\n") - before.count("\n")
    columns = len(after.rpartition("\n")[2]) - len(before.rpartition("\n")[2]) if kind == tokenize.NEWLINE else 0
    low = old.ends[index - 1] if index else (1, 0)
    edit = LayoutEdit(low, old.starts[index], lines, columns)

    def shifted(positions: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        first_line = old.starts[index][0]
        return positions[:index] + tuple(
            (line + lines, column + (columns if line == first_line else 0)) for line, column in positions[index:])

    new = Layout(old.kinds, shifted(old.starts), shifted(old.ends), old.offsets[:index] + tuple(
        offset + delta for offset in old.offsets[index:]), old.end_offsets[:index] + tuple(
        offset + delta for offset in old.end_offsets[index:]))
    return edit, new


def _outside_comments(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` holds a character that is neither whitespace nor after a `#` of its line."""
    line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
    commented = "#" in text[line_start:start]
    for char in text[start:end]:
        if char in "\r\n":
            commented = False
        elif char == "#":
            commented = True
        elif not commented and not char.isspace():
            return True
    return False


def may_change_only_layout(old_source: str, new_source: str) -> bool:
    """A cheap test that `layout_edit` can only pass: the changed text, old and new, is whitespace or comment
    text (a `#` before it on its line). It spares tokenizing a large file on each keystroke of code."""
    head = _common_prefix(old_source, new_source)
    limit = min(len(old_source), len(new_source)) - head
    tail = _common_prefix(old_source[::-1][:limit], new_source[::-1][:limit]) if limit else 0
    return not (_outside_comments(old_source, head, len(old_source) - tail)
                or _outside_comments(new_source, head, len(new_source) - tail))


def _bracket_depth(source: str) -> int:
    depth = deepest = 0
    for match in _BRACKETS.finditer(source):
        depth += 1 if match.group() in "([{" else -1
        deepest = max(deepest, depth)
    return deepest


def text_signature(source: str, words: Sequence[Trigger]) -> tuple[bool, ...] | None:
    """Which of `words` occur in the text; None near the engine's guards against pathological nesting."""
    if ((source.count("(") + source.count("[") + source.count("{") >= _GUARD_BRACKETS
         and _bracket_depth(source) >= _GUARD_BRACKETS)
            or sum(source.count(op) for op in ("-", "+", "~", "not", "await", "lambda")) >= _GUARD_OPERATORS
            or any(len(line) >= _GUARD_LINE for line in source.split("\n"))):
        return None
    return tuple(occurs(word, source) for word in words)


def trigger_words(config: Config) -> tuple[Trigger, ...]:
    """Every word (or trigger pattern) whose presence in a file decides whether a rule runs, or how the
    engine reads the file."""
    words: set[Trigger] = set(_TEXT_WORDS)
    for rule in config.enabled_rules():
        for trigger in rule.triggers:
            words.update(trigger if isinstance(trigger, tuple) else (trigger,))
    return tuple(sorted(words, key=lambda word: word if isinstance(word, str) else word.pattern))


def carry_over(diagnostics: Sequence[Diagnostic], edit: LayoutEdit) -> tuple[Diagnostic, ...] | None:
    """The findings of the old text, moved to the new one; None when one of them may read otherwise there."""
    def cites_moved_line(text: str) -> bool:
        first = edit.first_moved_line
        return first is not None and any(int(match.group(1)) >= first for match in _CITED_LINE.finditer(text))

    out = []
    for diagnostic in diagnostics:
        start, end = (diagnostic.line, diagnostic.column), (diagnostic.end_line, diagnostic.end_column)
        new_start, new_end = edit.move(*start), edit.move(*end)
        if new_start is None or new_end is None or edit.spans(start, end) or cites_moved_line(diagnostic.message):
            return None
        fix = diagnostic.fix
        if fix is not None:
            edits = []
            for text_edit in fix.edits:
                edit_start, edit_end = (text_edit.line, text_edit.column), (text_edit.end_line, text_edit.end_column)
                moved_start, moved_end = edit.move(*edit_start), edit.move(*edit_end)
                if (moved_start is None or moved_end is None or edit.spans(edit_start, edit_end)
                        or cites_moved_line(fix.title)):
                    return None
                edits.append(dataclasses.replace(text_edit, line=moved_start[0], column=moved_start[1],
                                                 end_line=moved_end[0], end_column=moved_end[1]))
            fix = dataclasses.replace(fix, edits=tuple(edits))
        related = []
        for place in diagnostic.related:  # the places in this document move with it
            moved = (edit.move(place.line, place.column), edit.move(place.end_line, place.end_column))
            if place.path != diagnostic.path:
                related.append(place)
            elif moved[0] is None or moved[1] is None:
                return None
            else:
                related.append(dataclasses.replace(place, line=moved[0][0], column=moved[0][1], end_line=moved[1][0],
                                                   end_column=moved[1][1]))
        out.append(dataclasses.replace(diagnostic, line=new_start[0], column=new_start[1], end_line=new_end[0],
                                       end_column=new_end[1], fix=fix, related=tuple(related)))
    return tuple(sorted(out, key=Diagnostic.sort_key))


# ---------------------------------------------------------------------------------------------------------
# Rule documentation links.


def _cache_root() -> Path:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or tempfile.gettempdir()
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tapelint"


_DOC_URIS: dict[str, str | None] = {}


def rule_docs(code: str) -> str:
    """The markdown shown for a code: the rule's full docs, or a note for TL000/TL999 and unknown codes."""
    from tapelint.docs import explain

    key = code.strip()
    if key.upper() in _NOT_RULES:
        name = registry.SYNTAX_ERROR[1] if key.upper() == registry.SYNTAX_ERROR[0] else registry.INTERNAL_ERROR[1]
        return f"# {key.upper()} {name}\n\n{_NOT_RULES[key.upper()]}"
    try:
        return explain(key)
    except TapelintError:
        return f"`{key}` is not a tapelint rule (`tapelint rules` lists them)."


def rule_docs_uri(code: str) -> str | None:
    """A `file:` URI to the rule's docs, rendered from the installed rule into the user cache.

    The docs folder of the repository is not installed with the package, and no web site exists yet, so
    each server renders `<cache>/tapelint/<version>/rules/TL001.md` from the rule's docstring (refreshed
    when it differs) and links to it: the link works for any install and always matches the running rules.
    """
    rule = registry.rule_by_key(code)
    if rule is None:
        return None
    if rule.code in _DOC_URIS:
        return _DOC_URIS[rule.code]
    uri: str | None = None
    target = _cache_root() / __version__ / "rules" / f"{rule.code}.md"
    text = rule_docs(rule.code) + "\n"
    try:
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{rule.code}.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temp, target)
        uri = target.as_uri()
    except OSError as error:
        logger.warning("cannot write the docs of %s to %s: %s", rule.code, target, error)
    _DOC_URIS[rule.code] = uri
    return uri


# ---------------------------------------------------------------------------------------------------------
# The server.


@dataclass(frozen=True)
class LintRun:
    """The findings for one version of one document, and what they were computed from."""

    version: int | None
    source: str
    diagnostics: tuple[Diagnostic, ...]
    config: Config | None = None  # None: not linted (excluded, too large), or the lint failed
    prelude: Any = None  # the key of the prelude it was linted with (see `prelude_key`)
    imports: frozenset[str] = frozenset()  # the project modules whose definitions it was linted with


@dataclass(frozen=True)
class LintJob:
    """What a lint of one text needs, worked out in the server process (cheap: no libcst)."""

    name: str
    config: Config
    prelude: Any
    answer: tuple[Diagnostic, ...] | None = None  # decided without linting (excluded, too large)


def prelude_key(prelude: Any) -> Any:
    """What of a prelude decides the findings of the file linted with it (not the lines of its imports,
    which move with the file's own text)."""
    if prelude is None:
        return None
    return prelude.text, tuple((s.path, s.first, s.last, s.start) for s in prelude.segments)


def is_notebook_json(text: str) -> bool:
    """Whether a text is a notebook's JSON rather than Python (whose first cell may well start with `{`)."""
    return _JSON_START.match(text) is not None and '"nbformat"' in text


@dataclass(frozen=True)
class NotebookRun:
    """The findings for one state of a notebook document: its Python code cells, `(number among all cells,
    cell URI, source)`, and each cell's findings in cell coordinates, by cell URI."""

    cells: tuple[tuple[int, str, str], ...]
    diagnostics: dict[str, tuple[Diagnostic, ...]]


class _Handled:
    """Stands in for a message that was already answered with an error, so pygls skips it."""

    jsonrpc = "handled"


# A UTF-16 surrogate on its own: JSON can carry one ("\ud83d"), but it is no character, and no UTF-8 text
# (what the parser and every file hold) can contain it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD, the replacement character. Both are one code point
    and one UTF-16 unit, so every position the client sends about the text still means the same place."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


class TapelintProtocol(LanguageServerProtocol):
    """Answers a request whose params do not parse with InvalidParams instead of leaving the client waiting,
    and keeps lone surrogates out of everything the server holds (`without_lone_surrogates`)."""

    def structure_message(self, data: dict[str, Any]):  # type: ignore[no-untyped-def]
        # Called for each JSON object of a message, innermost first: each sees its own strings.
        if isinstance(data, dict):
            for key, value in data.items():
                if isinstance(value, str):
                    data[key] = without_lone_surrogates(value)
                elif isinstance(value, list):
                    data[key] = [without_lone_surrogates(item) if isinstance(item, str) else item for item in value]
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if isinstance(data, dict) and "id" in data and "method" in data:
                code = getattr(error, "code", types.ErrorCodes.InvalidParams)
                self._send_response(data["id"], None, types.ResponseError(
                    code=code, message=f"tapelint: cannot read the params of {data['method']!r}"))
                return _Handled()
            raise

    def handle_message(self, message):  # type: ignore[no-untyped-def]
        if isinstance(message, _Handled):
            return None
        return super().handle_message(message)


class LintWorker:
    """Worker processes for lints and fixes (spawned: forking a process with threads is unsafe), started on
    first use. One runs the lints. A lint whose result is no longer wanted (a newer version of the document
    came) is dropped if it has not started; if it has and still has a while to go, its process is killed
    and a spare process, started beforehand, takes over at once, so obsolete work never delays the lint of
    the newest text. If a worker dies otherwise, the call is retried once in this process."""

    # A stale lint is killed when it has more than this left to run (seconds), with and without a spare:
    # starting a process and importing the rules costs about half a second of one core.
    KILL_WITH_SPARE = 0.2
    KILL_WITHOUT_SPARE = 1.5
    # A worker that holds more than this after a lint is retired, and the next lint goes to a fresh one: the
    # parse of a deeply nested document can leave it holding gigabytes that the allocator keeps after the
    # lint (2.2 GB after 1,500 nested brackets, against 60-150 MB for ordinary files).
    RECYCLE_BYTES = 512 * 1024 * 1024

    def __init__(self) -> None:
        self._pool: Any = None
        self._spare: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def _start() -> Any:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # The worker ends with the server, however the server ends (an editor may kill it with -9).
        pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=die_with_parent, initargs=(os.getpid(),))
        # Start the process and import the engine and the rules now, not on the first real lint.
        pool.submit(lint_buffer, "", "<warm-up>", Config(), None)
        return pool

    def _executor(self) -> Any:
        with self._lock:
            if self._pool is None:
                self._pool, self._spare = self._spare or self._start(), None
            return self._pool

    def submit(self, function: Any, *args: Any) -> Any:
        """Run `function(*args)` in the worker: a concurrent.futures.Future."""
        pool = self._executor()
        try:
            return pool.submit(function, *args)
        except RuntimeError:  # shut down under us (killed as stale, or broken): start another
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            return self._executor().submit(function, *args)

    def run(self, function: Any, *args: Any) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        try:
            result = self.submit(function, *args).result()
        except (BrokenProcessPool, RuntimeError, OSError) as error:
            # RuntimeError: the pool was shut down under us; OSError: no more processes. Lint here instead.
            self.forget_broken(error)
            return function(*args)
        self.recycle_if_big()
        return result

    def recycle_if_big(self) -> None:
        """Retire the lint worker if it holds more than RECYCLE_BYTES now (between lints), and start its
        successor: the spare if there is one, otherwise a new one now, before the next lint waits for it."""
        with self._lock:
            pool = self._pool
            if pool is None or resident_bytes(pool) <= self.RECYCLE_BYTES:
                return
            self._pool, self._spare = self._spare, None
        pool.shutdown(wait=False)  # its process exits once the work already given to it is done
        try:
            self.warm()
        except OSError as error:  # no more processes for now: the next lint starts one, or runs here
            logger.warning("could not start a fresh lint worker (%s)", error)

    def forget_broken(self, error: BaseException) -> None:
        logger.warning("the lint worker failed (%r); linting in the server process", error)
        with self._lock:
            pool = self._pool
            if pool is not None and getattr(pool, "_broken", False):
                self._pool = None

    def warm(self) -> None:
        """Start the worker now, so the first lint does not pay for its start."""
        self._executor()

    def keep_spare(self) -> None:
        """Have a second worker ready, so a stale lint can be killed without waiting for a new process."""
        with self._lock:
            if self._spare is None and self._pool is not None:
                self._spare = self._start()

    def abandon(self, future: Any, remaining: float) -> None:
        """The result of `future` is no longer wanted; it has about `remaining` seconds left to run."""
        if future.cancel() or future.done():
            return
        with self._lock:
            limit = self.KILL_WITH_SPARE if self._spare is not None else self.KILL_WITHOUT_SPARE
            if remaining < limit:
                return  # cheaper to let it finish than to start a process; its result is dropped
            pool, self._pool, self._spare = self._pool, self._spare, None
        kill_pool(pool)
        self.keep_spare()

    def stop(self) -> None:
        """Kill the workers at once (one may be in the middle of a long parse), and free what their pools
        hold (named semaphores: see kill_pool)."""
        import gc

        with self._lock:
            pools, self._pool, self._spare = [self._pool, self._spare], None, None
        for pool in pools:
            kill_pool(pool, wait=5.0)
        pools.clear()
        gc.collect()


class TapelintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__, protocol_cls=TapelintProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC)
        self.pending: dict[str, asyncio.Task] = {}
        self.runs: dict[str, LintRun] = {}
        self._configs: dict[str, tuple[float, Config]] = {}
        self._config_errors: set[tuple[str, float]] = set()
        self._too_large: set[str] = set()
        # Modules of the workspace that open documents import, read lazily and again when they change.
        self.project = ProjectIndex()
        # Thread work of the server process (configs, preludes, fixes): one thread, so it never competes.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tapelint-lint")
        # The lint itself runs in a worker process: libcst's parser holds the GIL for the whole parse (seconds
        # on a big file), which would freeze this process's message loop, `exit` included.
        self.worker = LintWorker()
        self.loop: asyncio.AbstractEventLoop | None = None
        # Seconds the last lint of each document took (for the debounce and for killing stale lints).
        self.lint_seconds: dict[str, float] = {}
        # Lints of documents that import a saved file: run after the edited documents, dropped for them.
        self.background: set[str] = set()
        self.dependents_due: set[str] = set()
        self._layouts: dict[str, tuple[str, Layout | None]] = {}
        self._words: dict[tuple[str, ...], tuple[Trigger, ...]] = {}
        # Notebook documents (LSP 3.17): the last published run and the lint waiting, per notebook URI.
        self.notebook_runs: dict[str, NotebookRun] = {}
        self.notebook_pending: dict[str, asyncio.Task] = {}

    def report_server_error(self, error: Exception, source: Any) -> None:
        # A malformed message from the client is the client's problem: log it, do not pop up a dialog.
        logger.warning("ignored a message tapelint could not handle: %s", error)
        if isinstance(error, ValueError) and type(error).__name__ == "JSONDecodeError":
            # JSON-RPC 2.0: a body that is not JSON gets a Parse error with a null id.
            try:
                self.protocol._send_data({"jsonrpc": "2.0", "id": None, "error": {
                    "code": int(types.ErrorCodes.ParseError), "message": f"tapelint: the message is not JSON ({error})"}})
            except Exception:  # noqa: BLE001 - a client that went away must not take the server down
                logger.warning("could not answer the malformed message")

    # -- documents ---------------------------------------------------------------------------------------

    def open_document(self, uri: str) -> TextDocument | None:
        """The document if the client opened it (never read from disk behind the editor's back)."""
        if not isinstance(uri, str) or unquote(uri) not in self.workspace.text_documents:
            return None
        return self.workspace.get_text_document(uri)

    @staticmethod
    def document_path(uri: str) -> Path | None:
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None
        return Path(url2pathname(parsed.path))

    def is_lintable(self, uri: str) -> bool:
        """Python files and unsaved Python buffers; never notebook JSON, TOML or whatever else a client syncs."""
        document = self.open_document(uri)
        if document is None:
            return False
        path = self.document_path(uri)
        if path is None:
            return urlparse(uri).scheme == "untitled" and document.language_id == "python"
        if path.suffix in (".py", ".pyi"):
            return True
        # A notebook comes as notebook documents (cell by cell, see `notebook_cells`), as its JSON (linted by
        # the command line), or as one Python text named after it: jupyterlab-lsp joins the code cells, its
        # magics turned into `get_ipython()` calls, into `.virtual_documents/<name>.ipynb`.
        if path.suffix == ".ipynb" and is_notebook_json(document.source):
            return False
        return document.language_id == "python"

    def notify(self, send: Any, params: Any) -> None:
        """Send a notification from any thread: the protocol's writer belongs to the event loop."""
        loop = self.loop
        if loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            send(params)
        else:
            loop.call_soon_threadsafe(send, params)

    def config_for(self, uri: str) -> Config:
        """The `[tool.tapelint]` settings that the command line would use for this file."""
        path = self.document_path(uri)
        anchor = path if path is not None else (Path(self.workspace.root_path) if self.workspace.root_path else None)
        if anchor is None:
            return Config()
        found = find_config_file(anchor)
        if found is None:
            return Config()
        try:
            mtime = found.stat().st_mtime
        except OSError:
            return Config()
        key = str(found)
        cached = self._configs.get(key)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            config = load(found)
        except TapelintError as error:
            if (key, mtime) not in self._config_errors:
                self._config_errors.add((key, mtime))
                self.notify(self.window_show_message, types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"tapelint: {error}; using the default settings"))
            config = Config()
        self._configs[key] = (mtime, config)
        return config

    def prepare(self, uri: str, source: str) -> LintJob:
        """The settings and the prelude for linting `source` as the document `uri`, or the answer without
        a lint (an excluded file, a buffer over the size limit)."""
        path = self.document_path(uri)
        config = self.config_for(uri)
        name = str(path) if path is not None else uri
        if path is not None and config.root is not None and config.is_excluded(path):
            return LintJob(name, config, None, ())
        if len(source) > MAX_SOURCE_BYTES:
            # Parsing it would hold the server for minutes; say so once per document instead.
            if uri not in self._too_large:
                self._too_large.add(uri)
                self.notify(self.window_show_message, types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"tapelint: {name} is over the {MAX_SOURCE_BYTES // 2**20} MB limit for one file; not linted"))
            return LintJob(name, config, None, ())
        self._too_large.discard(uri)
        # What the document imports from its own project is analysed with it (tapelint.project).
        prelude = self.project.prelude(path, source) if path is not None and path.suffix == ".py" else None
        return LintJob(name, config, prelude)

    def finish(self, uri: str, version: int | None, source: str, job: LintJob, found: Sequence[Diagnostic]) -> LintRun:
        imports = frozenset(s.path for s in job.prelude.segments) if job.prelude is not None else frozenset()
        return LintRun(version, source, tuple(attribute(list(found), job.name, job.prelude, {})), job.config,
                       prelude_key(job.prelude), imports)

    def lint_failed(self, uri: str, error: BaseException) -> None:
        logger.error("linting %s failed: %r", uri, error)
        self.notify(self.window_log_message, types.LogMessageParams(
            type=types.MessageType.Error, message=f"tapelint: linting {uri} failed: {error!r}"))

    def lint_run(self, uri: str, version: int | None, source: str) -> LintRun:
        """Lint `source` now, waiting for the worker (code actions need the findings of the text as it is)."""
        try:
            job = self.prepare(uri, source)
            if job.answer is not None:
                return LintRun(version, source, job.answer)
            return self.finish(uri, version, source, job,
                               self.worker.run(lint_buffer, source, job.name, job.config, job.prelude))
        except Exception as error:  # noqa: BLE001 - a bug in the engine must not take the editor's server down
            self.lint_failed(uri, error)
            return LintRun(version, source, ())

    def lint_text(self, uri: str, source: str) -> tuple[Diagnostic, ...]:
        return self.lint_run(uri, None, source).diagnostics

    def current_run(self, uri: str, document: TextDocument) -> LintRun:
        """Findings for the document as it is now: the last published run, or a fresh lint."""
        source = document.source
        run = self.runs.get(uri)
        if run is not None and run.source == source:
            return run
        return self.lint_run(uri, document.version, source)

    # -- findings carried over a layout-only edit --------------------------------------------------------

    def layout(self, uri: str, source: str) -> Layout | None:
        cached = self._layouts.get(uri)
        if cached is not None and cached[0] == source:
            return cached[1]
        found = layout_of(source)
        self._layouts[uri] = (source, found)
        return found

    def words(self, config: Config) -> tuple[Trigger, ...]:
        key = config.enabled_codes()
        if key not in self._words:
            self._words[key] = trigger_words(config)
        return self._words[key]

    def carried_run(self, uri: str, document: TextDocument) -> LintRun | None:
        """The findings of the document's new text without a lint, when the edit since the last published
        run changed only its layout (see `layout_edit`); None when it must be linted."""
        run = self.runs.get(uri)
        if run is None or run.config is None:
            return None
        source = document.source
        if source == run.source:
            return dataclasses.replace(run, version=document.version)
        if len(source) > MAX_SOURCE_BYTES or any(d.code == registry.SYNTAX_ERROR[0] for d in run.diagnostics):
            return None
        try:
            if not may_change_only_layout(run.source, source):
                return None
            config = self.config_for(uri)
            if config != run.config:
                return None
            words = self.words(config)
            signature = text_signature(source, words)
            if signature is None or signature != text_signature(run.source, words):
                return None
            old = self.layout(uri, run.source)
            moved = layout_edit(old, run.source, source) if old is not None else None
            if moved is None:
                return None
            edit, new = moved
            diagnostics = carry_over(run.diagnostics, edit)
            if diagnostics is None:
                return None
            path = self.document_path(uri)
            if prelude_key(self.project.prelude(path, source) if path is not None and path.suffix == ".py"
                           else None) != run.prelude:
                return None
        except Exception:  # noqa: BLE001 - carrying over is an optimisation: lint instead
            logger.exception("carrying the findings of %s over failed", uri)
            return None
        self._layouts[uri] = (source, new)
        return dataclasses.replace(run, version=document.version, source=source, diagnostics=diagnostics)

    # -- diagnostics -------------------------------------------------------------------------------------

    def debounce(self, uri: str) -> float:
        """How long an edit of the document waits before its lint."""
        if uri not in self.pending:
            return 0.0
        took = self.lint_seconds.get(uri)
        return DEBOUNCE_SECONDS if took is None else min(DEBOUNCE_SECONDS, max(MIN_DEBOUNCE_SECONDS, took / 4))

    def changed(self, uri: str) -> None:
        """The document was edited: publish its carried-over findings at once, or lint it after a pause."""
        document = self.open_document(uri)
        run = self.carried_run(uri, document) if document is not None and self.is_lintable(uri) else None
        if run is None:
            self.schedule(uri, self.debounce(uri))
            return
        self.loop = asyncio.get_running_loop()
        stale = self.pending.pop(uri, None)
        if stale is not None:
            stale.cancel()
        self.publish(uri, run)

    def schedule(self, uri: str, delay: float, background: bool = False) -> None:
        """Lint the document after `delay` seconds; a newer request for the same document replaces this one.
        A background lint (a document that imports a saved one) gives way to any other."""
        self.loop = asyncio.get_running_loop()
        stale = self.pending.pop(uri, None)
        if stale is not None:
            stale.cancel()
        self.background.discard(uri)
        if not background:
            for other in list(self.background):
                task = self.pending.pop(other, None)
                if task is not None:
                    task.cancel()
                self.background.discard(other)
                self.dependents_due.add(other)
        if not self.is_lintable(uri):
            return
        task = asyncio.ensure_future(self._lint_and_publish(uri, delay))
        self.pending[uri] = task
        if background:
            self.background.add(uri)
        task.add_done_callback(partial(self._forget, uri))

    def _forget(self, uri: str, task: asyncio.Task) -> None:
        if self.pending.get(uri) is task:
            del self.pending[uri]
            self.background.discard(uri)
        if not task.cancelled() and task.exception() is not None:
            logger.error("publishing diagnostics for %s failed: %r", uri, task.exception())
        if not self.pending or all(u in self.background for u in self.pending):
            self._start_dependents()

    def _start_dependents(self) -> None:
        due, self.dependents_due = self.dependents_due, set()
        for uri in due:
            if uri not in self.pending and self.open_document(uri) is not None:
                self.schedule(uri, DEPENDENT_DELAY_SECONDS, background=True)

    def dependents(self, uri: str) -> set[str]:
        """Open documents linted with definitions from the file of `uri`."""
        path = self.document_path(uri)
        if path is None:
            return set()
        try:
            key = str(path.resolve())
        except OSError:
            return set()
        return {other for other, run in self.runs.items() if other != uri and key in run.imports}

    async def _lint_and_publish(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        document = self.open_document(uri)
        if document is None:
            return
        version, source = document.version, document.source
        loop = asyncio.get_running_loop()
        try:
            job = await loop.run_in_executor(self.executor, self.prepare, uri, source)
        except Exception as error:  # noqa: BLE001 - a bug must not take the editor's server down
            self.lint_failed(uri, error)
            return
        if job.answer is not None:
            run = LintRun(version, source, job.answer)
        else:
            run = await self._lint_in_worker(uri, version, source, job)
        document = self.open_document(uri)
        if document is None or document.source != source:
            return  # edited (or closed) while we linted: a newer run is on its way
        self.publish(uri, run)

    async def _lint_in_worker(self, uri: str, version: int | None, source: str, job: LintJob) -> LintRun:
        from concurrent.futures.process import BrokenProcessPool

        started = time.monotonic()
        expected = self.lint_seconds.get(uri, 1.0)
        future = self.worker.submit(lint_buffer, source, job.name, job.config, job.prelude)
        try:
            found = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self.worker.abandon(future, expected - (time.monotonic() - started))
            raise
        except (BrokenProcessPool, RuntimeError, OSError) as error:
            # The worker died under this lint (not killed as stale: that cancels the task first).
            self.worker.forget_broken(error)
            loop = asyncio.get_running_loop()
            try:
                found = await loop.run_in_executor(self.executor, lint_buffer, source, job.name, job.config,
                                                   job.prelude)
            except Exception as again:  # noqa: BLE001
                self.lint_failed(uri, again)
                return LintRun(version, source, ())
        except Exception as error:  # noqa: BLE001 - a bug in the engine must not take the editor's server down
            self.lint_failed(uri, error)
            return LintRun(version, source, ())
        took = time.monotonic() - started
        self.worker.recycle_if_big()
        self.lint_seconds[uri] = took
        if took > 2 * LintWorker.KILL_WITH_SPARE:
            self.worker.keep_spare()  # lints this long are worth killing when they go stale
        return self.finish(uri, version, source, job, found)

    def publish(self, uri: str, run: LintRun) -> None:
        self.runs[uri] = run
        lines = split_lines(run.source)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=run.version, diagnostics=[self.to_lsp(d, lines, uri) for d in run.diagnostics]))

    def to_lsp(self, diagnostic: Diagnostic, lines: Sequence[str], uri: str | None = None,
               cells: Mapping[int, tuple[str, Sequence[str]]] | None = None) -> types.Diagnostic:
        """`diagnostic` in LSP form, on `lines` (the document `uri`). `cells`, for a cell of an open notebook:
        each code cell's number (as findings count them) with its URI and lines, so that a cause in another
        cell is linked to that cell."""
        href = rule_docs_uri(diagnostic.code)
        message, related = diagnostic.message, None
        if diagnostic.related:
            capabilities = getattr(self.protocol, "client_capabilities", None)  # None before `initialize`
            document = capabilities.text_document if capabilities is not None else None
            publish = document.publish_diagnostics if document is not None else None
            # A place in a notebook cell the editor has no URI for, and all of them for a client that cannot
            # show related information, are read in the message, as the concise text has them.
            linked = (diagnostic.related if publish is not None and publish.related_information else ())
            linked = tuple(r for r in linked if r.cell is None or r.cell == diagnostic.cell or r.cell in (cells or {}))
            related = [self._related_information(diagnostic, r, lines, uri, cells) for r in linked] or None
            folded = tuple(r for r in diagnostic.related if r not in linked)
            if folded:
                from tapelint.reporters.related import related_suffix

                message += related_suffix(dataclasses.replace(diagnostic, related=folded))
        return types.Diagnostic(
            range=diagnostic_range(diagnostic, lines, self.workspace.position_codec),
            message=message,
            severity=_SEVERITY.get(diagnostic.severity, types.DiagnosticSeverity.Warning),
            code=diagnostic.code,
            code_description=types.CodeDescription(href=href) if href else None,
            source=SOURCE,
            related_information=related,
        )

    def _related_information(self, diagnostic: Diagnostic, r: Any, lines: Sequence[str], uri: str | None,
                             cells: Mapping[int, tuple[str, Sequence[str]]] | None = None,
                             ) -> types.DiagnosticRelatedInformation:
        """A related place as the editor opens it: in this document (`uri`), in another cell of its notebook
        (`cells`), or in another file of the project (its positions counted on the file as the workspace has it)."""
        if r.path == diagnostic.path and cells and r.cell is not None and r.cell != diagnostic.cell:
            target, lines = cells[r.cell]
        elif r.path == diagnostic.path:
            target = uri or Path(r.path).resolve().as_uri()
        else:
            target = Path(r.path).resolve().as_uri()
            try:
                lines = split_lines(self.workspace.get_text_document(target).source)
            except (OSError, ValueError):
                lines = []
        if lines:
            rng = to_lsp_range(lines, self.workspace.position_codec, r.line, r.column, r.end_line, r.end_column)
        else:  # a file that cannot be read now: its columns as code points
            rng = types.Range(start=types.Position(line=r.line - 1, character=r.column),
                              end=types.Position(line=r.end_line - 1, character=r.end_column))
        return types.DiagnosticRelatedInformation(location=types.Location(uri=target, range=rng), message=r.message)

    def forget(self, uri: str) -> None:
        stale = self.pending.pop(uri, None)
        if stale is not None:
            stale.cancel()
        self.runs.pop(uri, None)
        self._layouts.pop(uri, None)
        self.lint_seconds.pop(uri, None)
        self.dependents_due.discard(uri)
        self.background.discard(uri)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- code actions ------------------------------------------------------------------------------------

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        if isinstance(uri, str) and self.workspace.get_notebook_document(cell_uri=uri) is not None:
            return self.cell_code_actions(params)
        document = self.open_document(uri)
        if document is None or not self.is_lintable(uri):
            return None
        run = self.current_run(uri, document)
        lines = split_lines(run.source)
        codec = self.workspace.position_codec
        only = list(params.context.only or []) if params.context is not None else []

        def wanted(kind: str) -> bool:
            return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)

        actions: list[types.CodeAction] = []
        if wanted(types.CodeActionKind.QuickFix.value):
            actions.extend(self.quick_fixes(uri, run.diagnostics, lines, params.range))
        if wanted(FIX_ALL_KIND) and any(d.fix is not None and d.fix.safe for d in run.diagnostics):
            try:
                outcome = self.worker.run(fix_source, run.source, self._lint_name(uri), self.config_for(uri))
            except Exception as error:  # noqa: BLE001 - a bug in a fix: offer the others, not a traceback
                logger.warning("fix-all failed on %s: %s: %s", uri, type(error).__name__, error)
                outcome = None
            if outcome is not None and outcome.source != run.source:
                actions.append(types.CodeAction(
                    title=FIX_ALL_TITLE,
                    kind=FIX_ALL_KIND,
                    edit=types.WorkspaceEdit(changes={uri: [whole_text_edit(run.source, outcome.source, codec)]}),
                ))
        return actions

    def quick_fixes(self, uri: str, diagnostics: Sequence[Diagnostic], lines: Sequence[str],
                    rng: types.Range, cells: Mapping[int, tuple[str, Sequence[str]]] | None = None,
                    ) -> list[types.CodeAction]:
        """A quick fix for each finding of the document `uri` with a fix whose range touches `rng`."""
        codec = self.workspace.position_codec
        actions = []
        for diagnostic in diagnostics:
            fix = diagnostic.fix
            if fix is None:
                continue
            lsp_diagnostic = self.to_lsp(diagnostic, lines, uri, cells)
            if not ranges_touch(lsp_diagnostic.range, rng):
                continue
            title = f"{diagnostic.code}: {fix.title}"
            if not fix.safe:
                title += " (unsafe fix: may change behaviour)"
            actions.append(types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[lsp_diagnostic],
                is_preferred=fix.safe,
                edit=types.WorkspaceEdit(changes={uri: [self._edit(e, lines, codec) for e in fix.edits]}),
            ))
        return actions

    def _lint_name(self, uri: str) -> str:
        path = self.document_path(uri)
        return str(path) if path is not None else uri

    @staticmethod
    def _edit(edit: TextEdit, lines: Sequence[str], codec: Any) -> types.TextEdit:
        return types.TextEdit(range=to_lsp_range(lines, codec, edit.line, edit.column, edit.end_line,
                                                 edit.end_column), new_text=edit.text)

    # -- hover -------------------------------------------------------------------------------------------

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        document = self.open_document(params.text_document.uri)
        if document is None:
            return None
        lines = split_lines(document.source)
        codec = self.workspace.position_codec
        line, column = from_lsp_position(lines, codec, params.position)
        text = lines[line] if line < len(lines) else ""
        for match in _NOQA.finditer(text):
            if not match.start() <= column <= match.end():
                continue
            codes = [(m.group(), match.start("codes") + m.start(), match.start("codes") + m.end())
                     for m in _CODE.finditer(match.group("codes"))]
            under = [c for c in codes if c[1] <= column <= c[2]]
            shown = under or codes
            start, end = (under[0][1], under[0][2]) if under else (match.start(), match.end())
            value = "\n\n---\n\n".join(rule_docs(code) for code, _, _ in shown)
            return types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
                range=to_lsp_range(lines, codec, line + 1, start, line + 1, end),
            )
        return None

    # -- notebook documents ------------------------------------------------------------------------------

    def notebook_cells(self, uri: str) -> tuple[tuple[int, str, str], ...] | None:
        """The Python code cells of an open notebook, `(number among all cells, cell URI, source)`, numbered
        as the command line numbers them; None when the notebook is not open. A notebook whose metadata
        names another language has none."""
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return None
        metadata: dict[str, Any] = notebook.metadata if isinstance(notebook.metadata, dict) else {}
        if not is_python(Notebook("", {"metadata": metadata}, [])):
            return ()
        cells = []
        for number, cell in enumerate(notebook.cells, start=1):
            if cell.kind != types.NotebookCellKind.Code:
                continue
            document = self.open_document(cell.document)
            if document is None or (document.language_id or "python").lower() not in _PYTHON_CELLS:
                continue
            cells.append((number, cell.document, document.source))
        return tuple(cells)

    def lint_notebook_now(self, uri: str, cells: tuple[tuple[int, str, str], ...]) -> NotebookRun:
        """Lint the cells of the notebook `uri` as one notebook, waiting for the worker."""
        found: Sequence[Diagnostic] = ()
        try:
            path = self.document_path(uri)
            config = self.config_for(uri)
            name = str(path) if path is not None else uri
            if cells and not (path is not None and config.root is not None and config.is_excluded(path)):
                found = self.worker.run(lint_cells, [(number, source) for number, _, source in cells], name, config)
            self._too_large.discard(uri)
        except InputError as error:  # over the size limit: say so once, as for a file
            if uri not in self._too_large:
                self._too_large.add(uri)
                self.notify(self.window_show_message, types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"tapelint: {error}; not linted"))
        except Exception as error:  # noqa: BLE001 - a bug in the engine must not take the editor's server down
            self.lint_failed(uri, error)
        by_number = {number: cell_uri for number, cell_uri, _ in cells}
        per_cell: dict[str, list[Diagnostic]] = {}
        for diagnostic in found:
            cell_uri = by_number.get(diagnostic.cell) if diagnostic.cell is not None else None
            if cell_uri is not None:
                per_cell.setdefault(cell_uri, []).append(diagnostic)
        return NotebookRun(cells, {cell_uri: tuple(found) for cell_uri, found in per_cell.items()})

    def debounce_notebook(self, uri: str) -> float:
        if uri not in self.notebook_pending:
            return 0.0
        took = self.lint_seconds.get(uri)
        return DEBOUNCE_SECONDS if took is None else min(DEBOUNCE_SECONDS, max(MIN_DEBOUNCE_SECONDS, took / 4))

    def schedule_notebook(self, uri: str, delay: float) -> None:
        """Lint the notebook after `delay` seconds; a newer request replaces this one."""
        self.loop = asyncio.get_running_loop()
        stale = self.notebook_pending.pop(uri, None)
        if stale is not None:
            stale.cancel()
        task = asyncio.ensure_future(self._lint_notebook_and_publish(uri, delay))
        self.notebook_pending[uri] = task
        task.add_done_callback(partial(self._forget_notebook_task, uri))

    def _forget_notebook_task(self, uri: str, task: asyncio.Task) -> None:
        if self.notebook_pending.get(uri) is task:
            del self.notebook_pending[uri]
        if not task.cancelled() and task.exception() is not None:
            logger.error("publishing diagnostics for %s failed: %r", uri, task.exception())

    async def _lint_notebook_and_publish(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        cells = self.notebook_cells(uri)
        if cells is None:
            return
        started = time.monotonic()
        run = await asyncio.get_running_loop().run_in_executor(self.executor, self.lint_notebook_now, uri, cells)
        self.lint_seconds[uri] = time.monotonic() - started
        if self.notebook_cells(uri) != cells:
            return  # edited (or closed) while we linted: a newer lint is on its way
        self.publish_notebook(uri, run)

    def publish_notebook(self, uri: str, run: NotebookRun) -> None:
        """Each code cell's findings on its own URI, in cell coordinates; cells that left the notebook (or
        are no longer Python code) get theirs cleared."""
        previous = self.notebook_runs.get(uri)
        self.notebook_runs[uri] = run
        cells = self.cell_places(run)
        for number, cell_uri, _ in run.cells:
            lines = cells[number][1]
            document = self.open_document(cell_uri)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=cell_uri, version=document.version if document is not None else None,
                diagnostics=[self.to_lsp(d, lines, cell_uri, cells) for d in run.diagnostics.get(cell_uri, ())]))
        current = {cell_uri for _, cell_uri, _ in run.cells}
        for _, cell_uri, _ in previous.cells if previous is not None else ():
            if cell_uri not in current:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))

    @staticmethod
    def cell_places(run: NotebookRun) -> dict[int, tuple[str, Sequence[str]]]:
        """Each code cell of a notebook run: its number, with its URI and lines."""
        return {number: (cell_uri, split_lines(source)) for number, cell_uri, source in run.cells}

    def forget_notebook(self, uri: str, cell_uris: Sequence[str]) -> None:
        stale = self.notebook_pending.pop(uri, None)
        if stale is not None:
            stale.cancel()
        run = self.notebook_runs.pop(uri, None)
        self.lint_seconds.pop(uri, None)
        self._too_large.discard(uri)
        known = [cell_uri for _, cell_uri, _ in run.cells] if run is not None else []
        cleared = list(dict.fromkeys([*known, *cell_uris]))
        for cell_uri in cleared:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))

    def cell_code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """Quick fixes (and fix-all) for a cell of an open notebook: edits of that cell only."""
        uri = params.text_document.uri
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        cells = self.notebook_cells(notebook.uri) if notebook is not None else None
        if notebook is None or not cells:
            return None
        ours = [cell for cell in cells if unquote(cell[1]) == unquote(uri)]
        if not ours:
            return None
        number, cell_uri, source = ours[0]
        run = self.notebook_runs.get(notebook.uri)
        if run is None or run.cells != cells:
            run = self.lint_notebook_now(notebook.uri, cells)
        diagnostics = run.diagnostics.get(cell_uri, ())
        lines = split_lines(source)
        only = list(params.context.only or []) if params.context is not None else []

        def wanted(kind: str) -> bool:
            return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)

        actions: list[types.CodeAction] = []
        if wanted(types.CodeActionKind.QuickFix.value):
            actions.extend(self.quick_fixes(uri, diagnostics, lines, params.range, self.cell_places(run)))
        if wanted(FIX_ALL_KIND) and any(d.fix is not None and d.fix.safe for d in diagnostics):
            try:
                sources = [(cell_number, text) for cell_number, _, text in cells]
                fixed = self.worker.run(fix_cells, sources, self._lint_name(notebook.uri), self.config_for(notebook.uri))
            except Exception as error:  # noqa: BLE001 - a bug in a fix: offer the others, not a traceback
                logger.warning("fix-all failed on %s: %s: %s", uri, type(error).__name__, error)
                fixed = {}
            if number in fixed:
                # The fixes of this cell only: an editor asks each cell of a notebook for its own.
                edit = whole_text_edit(source, fixed[number], self.workspace.position_codec)
                actions.append(types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND,
                                                edit=types.WorkspaceEdit(changes={uri: [edit]})))
        return actions


def create_server() -> TapelintServer:
    server = TapelintServer()

    @server.feature(types.INITIALIZED)
    def initialized(ls: TapelintServer, params: types.InitializedParams) -> None:
        ls.worker.warm()
        # Import the rules here too (their trigger words decide whether an edit can skip the lint).
        ls.executor.submit(ls.words, Config())

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: TapelintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: TapelintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: TapelintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.endswith("pyproject.toml"):
            # The settings may have changed: re-lint everything that is open.
            for document in list(ls.workspace.text_documents.values()):
                ls.schedule(document.uri, 0)
            for notebook in list(ls.workspace.notebook_documents.values()):
                ls.schedule_notebook(notebook.uri, 0)
            return
        # The saved file is linted first; the open files that import it (their prelude reads it from disk)
        # follow in the background.
        ls.dependents_due |= ls.dependents(uri)
        ls.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: TapelintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def notebook_did_open(ls: TapelintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule_notebook(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def notebook_did_change(ls: TapelintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        # Cell text, cells added, removed or moved, metadata (the language may change): lint the whole again.
        uri = params.notebook_document.uri
        ls.schedule_notebook(uri, ls.debounce_notebook(uri))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    async def notebook_did_save(ls: TapelintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.schedule_notebook(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    async def notebook_did_close(ls: TapelintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.forget_notebook(params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    async def code_action(ls: TapelintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        # Fixing re-lints the document several times: keep the event loop free for other messages meanwhile.
        loop = ls.loop = asyncio.get_running_loop()
        return await loop.run_in_executor(ls.executor, ls.code_actions, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TapelintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    return server


_EXCEPTION_LINE = re.compile(r"([A-Za-z_]\w*\.)*[A-Z]\w*(Error|Exception|Warning|Group|Exit|Interrupt)\b(: .*)?$")


class OneLineFormatter(logging.Formatter):
    """Each log record as one line, `tapelint server: <message>`, with the error it reports but no traceback:
    pygls logs a message it could not read (a client's fault, not a bug to debug) with a whole traceback."""

    def format(self, record: logging.LogRecord) -> str:
        lines = [line for line in record.getMessage().splitlines() if line.strip()] or [""]
        text, error = lines[0], ""
        if record.exc_info and record.exc_info[1] is not None:
            error = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        elif any("Traceback (most recent call last)" in line for line in lines[1:]):
            # The innermost exception of the traceback (those of a group are drawn behind `| `).
            said = [match.group() for match in map(_EXCEPTION_LINE.match, (l.strip(" |+") for l in lines)) if match]
            error = said[-1] if said else lines[-1].strip(" |+")
        elif len(lines) > 1:
            text = " / ".join(line.strip() for line in lines)
        if error and error not in text:
            text = f"{text}: {error}"
        return "tapelint server: " + " ".join(text.split("\n"))


def serve() -> None:
    """Run the server over standard input and output until the client says exit."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter())
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    server = create_server()
    server.start_io()
    # `exit` ends the message loop; a lint still running in the worker thread (a big file) must not hold
    # the process until it finishes, as interpreter shutdown would: leave now, with the protocol's code
    # (0 after `shutdown`, 1 without).
    code = 0 if getattr(server.protocol, "_shutdown", False) else 1
    server.worker.stop()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)

"""Reparsing only what an edit touched: the editor server's parser.

A keystroke changes one top-level statement of a module (a function, a class, an assignment); the others
are the same text as before. libcst nodes are immutable, so the statements of the previous parse can be
reused as they are: only the statements around the change are parsed again (as a small module of their
own), and spliced between the unchanged ones into a new `cst.Module`. The result is the module a full
parse of the new text gives (tests compare them, `deep_equals` and `.code`, over many random edits).

Why the splice is exact. The text before the changed statements (`P`) is unchanged and ended, in the old
parse, just before a statement that starts a line at column 0, so a tokenizer reaches that point in the
same clean state (no open bracket, string or continuation; indentation 0). The changed text (`R`) runs
from there to the start of the first statement after the change (`S`: it and the line break before it
are unchanged, so it starts at column 0 too). When `R` parses on its own it ends in a clean state too,
and a statement starting at column 0 after a clean point starts a new top-level statement (a statement
never begins with `else`, `elif`, `except` or `finally`). A module is a sequence of statements, so the full parse is P's statements, R's, then S's.
What libcst decides for the whole file is checked separately, and anything uncertain is a full parse:
  - the default indentation (the first indented block of the file) and newline (the first line's);
  - where blank and comment lines go: `R` ends with the blank and comment lines before `S`, which the
    small module keeps as its footer and the full parse gives to S's first statement; that holds when
    none of them is indented (libcst trims an end-of-file footer at indented lines);
  - the header (lines before the first statement), the footer and the trailing newline, taken from the
    small module only when it starts at the top of the file or runs to its end.
A small module that does not parse is parsed again to the end of the text (an edit may open a bracket
that closes further on); when that fails too, the whole text cannot parse (see `IncrementalParser`).

The same argument splices a file's project prelude from blocks parsed once per process
(`tapelint.splicing.splice_prelude`).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence

import libcst as cst

from tapelint.config import Config
from tapelint.diagnostic import Diagnostic
from tapelint.prelude import Prelude
from tapelint.splicing import opens_block as _opens_block

Parse = Callable[[str], cst.Module]


def common_prefix(a: str, b: str) -> int:
    """The length of the longest equal head of `a` and `b` (the editor server uses it too)."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # by halves: each comparison is one memcmp
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    low, high = 0, min(len(a), len(b), limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle:len(a) - low] == b[len(b) - middle:len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass
class Parsed:
    """One parse: its text, its module, and what the splice needs, measured lazily (code lengths)."""

    text: str
    module: cst.Module
    # Per top-level statement: (length of its leading lines, length of the rest), None until measured.
    lengths: list[tuple[int, int] | None] = field(default_factory=list)
    header: int | None = None  # length of the module header's code
    footer: int | None = None
    first_block: int | None = -1  # index of the first statement with an indented block; -1: not looked at

    def __post_init__(self) -> None:
        if not self.lengths:
            self.lengths = [None] * len(self.module.body)

    def _code(self, node: cst.CSTNode) -> int:
        return len(self.module.code_for_node(node))

    def _lines(self, lines: Sequence[cst.CSTNode]) -> int:
        return sum(self._code(line) for line in lines)

    def length(self, index: int) -> tuple[int, int]:
        known = self.lengths[index]
        if known is None:
            statement = self.module.body[index]
            lead = self._lines(statement.leading_lines)
            known = self.lengths[index] = (lead, self._code(statement) - lead)
        return known

    def header_length(self) -> int:
        if self.header is None:
            self.header = self._lines(self.module.header)
        return self.header

    def footer_length(self) -> int:
        if self.footer is None:
            self.footer = self._lines(self.module.footer)
        return self.footer

    def block_index(self) -> int | None:
        if self.first_block == -1:
            self.first_block = next((k for k, s in enumerate(self.module.body) if _opens_block(s)), None)
        return self.first_block

    def region(self, start: int, end: int) -> tuple[int, int, int, int] | None:
        """The statements to parse again for a change of the old text's [start, end): (first statement,
        its offset, the first statement that starts after `end` (its line break before it unchanged) or
        len(body), that statement's offset or len(text)). Offsets are where a statement's own first line
        starts (after its leading blank and comment lines); the first statement's offset is 0 when the
        change reaches the header."""
        count = len(self.module.body)
        if count == 0:
            return None
        # Walk from the nearer end of the text, measuring statements on the way (lengths are kept).
        own: dict[int, int] = {}
        if start <= len(self.text) - end:
            offset = self.header_length()
            for index in range(count):
                lead, rest = self.length(index)
                own[index] = offset + lead
                offset += lead + rest
                if own[index] > end and index > 0:
                    break  # the first statement after the change (and the one holding its start) are known
        else:
            offset = len(self.text) - self.footer_length()
            for index in range(count - 1, -1, -1):
                lead, rest = self.length(index)
                offset -= lead + rest
                own[index] = offset + lead
                if own[index] < start:
                    break
        first = max((k for k, at in own.items() if at < start), default=None)
        if first is None:
            if 0 not in own:
                return None
            first, first_at = 0, 0  # the change reaches the header: parse from the top of the file
        else:
            first_at = own[first]
        after = next((k for k in range(first + 1, count) if k in own and own[k] > end), None)
        if after is None:
            if any(k not in own for k in range(first + 1, count)):
                return None  # cannot happen: the walk measured everything after `first`
            return first, first_at, count, len(self.text)
        return first, first_at, after, own[after]


class Unparsed(Exception):
    """The changed statements, parsed from `start` (an offset of the new text), do not parse."""

    def __init__(self, start: int, error: cst.ParserSyntaxError, to_end: bool) -> None:
        super().__init__(start)
        self.start = start
        self.error = error
        self.to_end = to_end  # the text parsed ran to the end of the whole text


def splice(old: Parsed, text: str, parse: Parse, to_end: bool = False) -> Parsed | None:
    """The parse of `text` built from `old` by parsing only the changed statements (with `to_end`, all of
    the text from the first of them on); None when that is not certain to equal a full parse. Raises
    `Unparsed` when the text parsed again does not parse on its own."""
    module = old.module
    head = common_prefix(old.text, text)
    tail = _common_suffix(old.text, text, min(len(old.text), len(text)) - head)
    found = old.region(head, len(old.text) - tail)
    if found is None:
        return None
    first, start, after, old_end = found
    if to_end:
        after = len(module.body)
    delta = len(text) - len(old.text)
    end = old_end + delta if after < len(module.body) else len(text)
    if end <= start or (after < len(module.body) and old_end <= len(old.text) - tail):
        return None
    try:
        small = parse(text[start:end])
    except cst.ParserSyntaxError as error:
        raise Unparsed(start, error, end == len(text)) from None
    except RecursionError:
        return None
    if not small.body or (start > 0 and small.header):
        return None
    if small.default_newline != module.default_newline:
        return None
    if start == 0 and "\n" not in text[:end] and "\r" not in text[:end]:
        return None
    # The default indentation is that of the file's first indented block.
    block = old.block_index()
    new_block = any(_opens_block(s) for s in small.body)
    if block is not None and block < first:
        if new_block and small.default_indent != module.default_indent:
            return None
    elif new_block:
        if small.default_indent != module.default_indent:
            return None
    elif block is not None and block < after:
        return None  # the first block was in the changed statements and is gone: it is now further on
    statements = list(small.body)
    if start > 0:
        statements[0] = statements[0].with_changes(leading_lines=module.body[first].leading_lines)
    header = small.header if start == 0 else module.header
    if after < len(module.body):
        if any(not isinstance(line, cst.EmptyLine) or line.whitespace.value for line in small.footer):
            return None
        following = module.body[after].with_changes(leading_lines=small.footer)
        body = (*module.body[:first], *statements, following, *module.body[after + 1:])
        spliced = module.with_changes(header=header, body=body)
    else:
        body = (*module.body[:first], *statements)
        spliced = module.with_changes(header=header, body=body, footer=small.footer,
                                      has_trailing_newline=small.has_trailing_newline)
    result = Parsed(text, spliced)
    # Carry the measured lengths over: unchanged statements keep theirs, the new ones are measured now.
    new_lengths: list[tuple[int, int] | None] = list(old.lengths[:first])
    for index, statement in enumerate(small.body):
        lead = None
        if index == 0 and start > 0:
            measured = old.lengths[first]
            lead = measured[0] if measured is not None else None
        code = len(small.code_for_node(statement))
        if index == 0 and start > 0:
            new_lengths.append((lead, code) if lead is not None else None)
        else:
            own_lead = sum(len(small.code_for_node(line)) for line in statement.leading_lines)
            new_lengths.append((own_lead, code - own_lead))
    if after < len(module.body):
        rest = old.lengths[after]
        footer = sum(len(small.code_for_node(line)) for line in small.footer)
        new_lengths.append((footer, rest[1]) if rest is not None else None)
        new_lengths.extend(old.lengths[after + 1:])
        result.footer = old.footer
    result.lengths = new_lengths
    result.header = old.header if start > 0 else None
    if block is not None and block < first:
        result.first_block = block
    return result


_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")


def cpython_error_has_a_line(text: str) -> bool:
    """Whether CPython's parser rejects `text` with a line number (then the engine reports CPython's error
    for a text libcst cannot parse, and libcst's own error is never read)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the engine's own compile says them, once
            compile(text, "<tapelint>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST, as the engine
    except SyntaxError as error:
        return bool(error.lineno)
    except (ValueError, RecursionError, MemoryError):
        return False
    return False


class IncrementalParser:
    """`parse(text)` gives `parse_module(text)`, built from the last parses where an edit allows it, and
    raises `cst.ParserSyntaxError` exactly when the full parse does.

    A text that does not parse is usually known as such from the changed statements on: the text before
    them (`P`, unchanged) ends at a clean point, so if the whole text parsed, a statement would start
    where the changed ones start (the text from there on does not begin with `else`, `elif`, `except` or
    `finally`), and the text from there on would parse alone. When it does not, neither does the whole.
    libcst's parser spends most of a failed parse on the text before the error (0.24-0.30 s on the
    benchmark's 2,000-line file, against 7-10 ms from the changed statement on). The error raised then
    is that of the text from the changed statements on, and only where CPython also rejects the text
    with a line number: the engine then reports CPython's error and never reads libcst's. Otherwise the
    full parse runs and its error is raised."""

    def __init__(self, parse: Parse | None = None, keep: int = 2) -> None:
        self._parse = parse or cst.parse_module
        self._keep = keep
        self._recent: list[Parsed] = []
        self.spliced = 0  # counters for tests and benchmarks
        self.full = 0
        self.failed_early = 0

    def parse(self, text: str) -> cst.Module:
        best = None
        best_shared = -1
        for parsed in self._recent:
            if parsed.text == text:
                self._remember(parsed)
                return parsed.module
            shared = common_prefix(parsed.text, text)
            shared += _common_suffix(parsed.text, text, min(len(parsed.text), len(text)) - shared)
            if shared > best_shared:
                best, best_shared = parsed, shared
        result = None
        if best is not None:
            try:
                result = splice(best, text, self._parse)
            except Unparsed as unparsed:
                if unparsed.to_end:
                    self._unparsable(text, unparsed)  # raises, or a full parse follows
                else:
                    result = self._rest(best, text)
            except (RecursionError, MemoryError):
                result = None
        if result is None:
            result = Parsed(text, self._parse(text))  # raises a syntax error exactly as a full parse does
            self.full += 1
        else:
            self.spliced += 1
        self._remember(result)
        return result.module

    def _rest(self, best: Parsed, text: str) -> Parsed | None:
        """The changed statements do not parse alone (an open bracket may close further on): parse from
        them to the end. Raises a syntax error when that proves that the whole text does not parse."""
        try:
            return splice(best, text, self._parse, to_end=True)
        except Unparsed as unparsed:
            self._unparsable(text, unparsed)
            return None
        except (RecursionError, MemoryError):
            return None

    def _unparsable(self, text: str, unparsed: Unparsed) -> None:
        """The text from `unparsed.start` to the end does not parse: raise a syntax error when the whole text
        cannot parse either, else return (for a full parse)."""
        if unparsed.start == 0:
            self.full += 1
            raise unparsed.error  # that was the full parse
        if not _CLAUSE.match(text, unparsed.start) and cpython_error_has_a_line(text):
            self.failed_early += 1
            raise unparsed.error
        return None

    def _remember(self, parsed: Parsed) -> None:
        self._recent = [parsed, *(p for p in self._recent if p is not parsed)][:self._keep]


# The editor server's worker process keeps the last parses of the documents it linted most recently.
MAX_DOCUMENTS = 4
_parsers: dict[str, IncrementalParser] = {}


def parser_for(name: str) -> IncrementalParser:
    """The incremental parser of one document (the least recently linted one is forgotten past a few)."""
    parser = _parsers.pop(name, None)
    if parser is None:
        from tapelint.analysis.parsing import parse_module

        parser = IncrementalParser(parse_module)
    _parsers[name] = parser
    while len(_parsers) > MAX_DOCUMENTS:
        del _parsers[next(iter(_parsers))]
    return parser


# The daemon's parses of the files its recent checks named, made in the daemon between checks and kept
# there: a fork inherits them, so the next check of such a file reparses only the statements changed
# since (what a commit after an edit asks). Keyed by the file's real path; empty in any other process.
MAX_AHEAD = 8
ahead: dict[str, IncrementalParser] = {}


def parse_ahead(path: str, text: str) -> bool:
    """In the daemon: parse `text`, the file at `path` (a real path), into its parser, reusing the last
    parse of it; False when it does not parse (or cannot be parsed safely), and its parser is dropped."""
    from tapelint.analysis.parsing import parse_module
    from tapelint.guards import parse_like_a_lint

    parser = ahead.pop(path, None) or IncrementalParser(parse_module, keep=1)
    if not parse_like_a_lint(parser.parse, text):
        return False
    ahead[path] = parser
    while len(ahead) > MAX_AHEAD:
        del ahead[next(iter(ahead))]
    return True


def parser_ahead(path: str) -> Parse | None:
    """The parse function for the file at `path` when the daemon parsed it before this fork:
    `parse_module`, from that parse where the text allows. None otherwise (every other process)."""
    if not ahead:
        return None
    import os

    parser = ahead.get(os.path.realpath(path))
    return parser.parse if parser is not None else None


def lint_buffer(source: str, name: str, config: Config, prelude: Prelude | None) -> list[Diagnostic]:
    """Lint one editor buffer as the command line lints the file (`runner.lint_document`), parsing only
    what changed since this process last linted the document."""
    from tapelint.engine import lint_source

    return lint_source(source, name, config, force=True, prelude=prelude, parse=parser_for(name).parse)

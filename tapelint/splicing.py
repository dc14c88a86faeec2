"""The project prelude spliced from statements parsed once per process, and what the editor's
incremental parser (tapelint.incremental) shares with it.

A training file that imports definitions from its own project is linted as `prelude.text + source`
(tapelint.engine), and the prelude is made of blocks of whole lines (one top-level statement of an imported
module each, then the alias lines: tapelint.project), the same blocks for every file that imports the same
names. `splice_prelude` parses each block once (as a module of its own), keeps it, and builds the combined
module from the blocks' statements followed by the source's own, instead of parsing the combined text.

Why that is the module a full parse of the combined text gives is the argument of tapelint.incremental's
docstring: every block is whole lines ending in a line break and parses alone, so the tokenizer is in a
clean state (no open bracket, string or continuation; indentation 0) where the next block or the source
starts, and a statement starting at column 0 after a clean point starts a new top-level statement. What
libcst decides for the whole text is checked, and anything uncertain is a full parse of the combined text:
  - the default newline: the combined text's first line break is the prelude's `\n`; every piece (and
    the source) must infer `\n` too, since a node keeps its line break only where it is not the default;
  - the default indentation is the first indented block's (libcst reads it from the first INDENT token):
    every piece that holds an indented block must infer the same (a node keeps its indentation only where
    it is not the default);
  - blank and comment lines: a piece's footer and the next piece's header become the leading lines of
    the next piece's first statement, which holds when none of them is indented (an indented comment
    after an indented block belongs to that block in the full parse);
  - the header is the first piece's, the footer and the trailing newline the source's (its last piece);
  - the encoding: every piece must infer utf-8 (libcst reads no coding line from a text; from bytes it
    would), and no piece starts with a byte-order mark.
The same block twice in one prelude is parsed again for its second place: a tree must not hold one node
object twice (metadata and the rules' maps are keyed by node). Tests compare the spliced module with the
full parse (`deep_equals`, `.code`, the module's attributes) on written projects and on every prelude of
keras/src/layers.
"""

from __future__ import annotations

from typing import Callable, Sequence

import libcst as cst

from tapelint.analysis.parsing import opens_block as opens_block  # tapelint.incremental's too
from tapelint.prelude import Prelude

Parse = Callable[[str], cst.Module]

# The blocks kept, in characters of their text, least recently used first out (a libcst tree takes ~70 bytes a
# character: ~70 MB at most; keras/src/layers' preludes hold 274k characters of distinct blocks).
MAX_PIECE_CHARS = 1_000_000
_pieces: dict[str, tuple[cst.Module, bool] | None] = {}
_piece_chars = 0


def _clean_lines(lines: Sequence[cst.CSTNode]) -> bool:
    return all(isinstance(line, cst.EmptyLine) and not line.whitespace.value for line in lines)


def _usable(module: cst.Module, text: str) -> tuple[cst.Module, bool] | None:
    """The piece's module and whether it holds an indented block, or None when it cannot be spliced."""
    if (not module.body or module.default_newline != "\n" or module.encoding != "utf-8"
            or text.startswith("\ufeff") or not _clean_lines(module.footer) or not _clean_lines(module.header)):
        return None
    return module, any(opens_block(s) for s in module.body)


def _parse_piece(text: str, parse: Parse) -> tuple[cst.Module, bool] | None:
    try:
        module = parse(text)
    except (cst.ParserSyntaxError, RecursionError, MemoryError):
        return None
    return _usable(module, text)


def _cached_piece(text: str, parse: Parse) -> tuple[cst.Module, bool] | None:
    global _piece_chars
    if text in _pieces:
        found = _pieces.pop(text)
        _pieces[text] = found  # most recently used last
        return found
    found = _parse_piece(text, parse)
    if len(text) <= MAX_PIECE_CHARS // 4:
        _pieces[text] = found
        _piece_chars += len(text)
        while _piece_chars > MAX_PIECE_CHARS:
            oldest = next(iter(_pieces))
            del _pieces[oldest]
            _piece_chars -= len(oldest)
    return found


def prelude_pieces(prelude: Prelude) -> list[str] | None:
    """The prelude's text cut into its blocks (one per segment, then the alias lines), or None when the
    segments do not tile it."""
    lines = prelude.text.split("\n")
    if lines[-1] != "" or len(lines) - 1 != prelude.lines:
        return None
    pieces: list[str] = []
    line = 1
    for segment in prelude.segments:
        if segment.first != line or segment.last < segment.first:
            return None
        pieces.append("".join(f"{text}\n" for text in lines[segment.first - 1:segment.last]))
        line = segment.last + 1
    if line <= prelude.lines:
        pieces.append("".join(f"{text}\n" for text in lines[line - 1:prelude.lines]))
    if "".join(pieces) != prelude.text:
        return None
    return pieces


def warm_pieces(prelude: Prelude, parse_piece: Parse) -> None:
    """Parse the prelude's blocks now, into this process's cache (before worker processes are forked
    from it, so that they share them instead of each parsing the same blocks again)."""
    for text in prelude_pieces(prelude) or ():
        _cached_piece(text, parse_piece)


def splice_prelude(prelude: Prelude, source: str, parse: Parse, parse_piece: Parse) -> cst.Module | None:
    """`cst.parse_module(prelude.text + source)` built from the prelude's blocks (parsed once per process
    with `parse_piece`) and the source parsed alone with `parse`; None when that is not certain to be
    exact (then parse the combined text). Raises nothing a full parse would not: a source that does not
    parse alone gives None."""
    texts = prelude_pieces(prelude)
    if not texts:
        return None
    try:
        own = _usable(parse(source), source)
    except (cst.ParserSyntaxError, RecursionError, MemoryError):
        return None
    if own is None:
        return None
    pieces: list[tuple[cst.Module, bool]] = []
    seen: set[str] = set()
    for text in texts:
        found = _cached_piece(text, parse_piece) if text not in seen else _parse_piece(text, parse_piece)
        if found is None:
            return None
        seen.add(text)
        pieces.append(found)
    pieces.append(own)
    indents = {module.default_indent for module, blocks in pieces if blocks}
    if len(indents) > 1:
        return None
    body: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = list(pieces[0][0].body)
    for (before, _), (module, _) in zip(pieces, pieces[1:]):
        statements = list(module.body)
        lead = (*before.footer, *module.header, *statements[0].leading_lines)
        if len(lead) != len(statements[0].leading_lines):
            statements[0] = statements[0].with_changes(leading_lines=lead)
        body.extend(statements)
    last = own[0]
    return cst.Module(body=body, header=pieces[0][0].header, footer=last.footer, encoding="utf-8",
                      default_indent=indents.pop() if indents else last.default_indent, default_newline="\n",
                      has_trailing_newline=last.has_trailing_newline)

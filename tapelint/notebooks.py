"""Jupyter notebooks: lint the code cells as one module, map findings back to cells, write fixes back.

Cells are numbered like Jupyter and VS Code count them on screen: 1-based among *all* cells, markdown and
raw cells included, so `cell 3` is the third cell from the top of the notebook.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import warnings
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from tapelint.config import Config
from tapelint.diagnostic import Diagnostic, Fix, TextEdit
from tapelint.edits import apply_edits, edits_overlap
from tapelint.engine import lint_source
from tapelint.errors import InputError
from tapelint.files import check_size
from tapelint.text import source_lines

MAX_PASSES = 10

# Cell magics whose body is still Python (the magic only times, captures or profiles it).
_PYTHON_BODY_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "memit"}
_ASSIGNED_MAGIC = re.compile(r"^[\w.,\s\[\]()*]+=\s*[!%]")
# json's own string scanner (the C one when there is one), strict: (text, index after the opening quote) ->
# (the string, index after the closing quote). The stubs leave it out of json.decoder.
scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")


def split_lines(text: str) -> list[str]:
    """A cell's lines with their line breaks kept, split where Python ends a line (`\\r\\n`, `\\r` or
    `\\n`) as for a .py file, so a line number means the same thing in a cell, in the module the cells
    are linted as, and in the edits written back."""
    return source_lines(text, keepends=True)


def _without_break(line: str) -> str:
    return line.rstrip("\r\n")  # one line of split_lines ends with at most one break


def _ends_a_line(text: str) -> bool:
    return text.endswith(("\n", "\r"))


# IPython's default shell aliases and line magics that its automagic runs without `%` (`ls ./data/`).
_AUTOMAGIC = frozenset({"ls", "ll", "lf", "lk", "lx", "ldir", "cat", "cp", "mv", "rm", "rmdir", "mkdir", "cd", "pwd",
                        "pip", "conda", "env", "load_ext", "reload_ext", "matplotlib", "tensorboard"})


def _python_statement(line: str) -> bool:
    try:
        compile(line, "<cell>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def _is_magic(stripped: str) -> bool:
    if not stripped or stripped.startswith("#"):
        return False
    if stripped[0] in "%!?":
        return True
    if stripped.split(None, 1)[0] in _AUTOMAGIC and not _python_statement(stripped):  # `ls ./data/train/`
        return True
    if _ASSIGNED_MAGIC.match(stripped):  # `files = !ls`, `t = %timeit -o f()`
        return True
    # `obj?`, `obj??`: help lines. A `?` never ends a valid Python statement.
    return stripped.endswith("?") and "#" not in stripped


def _placeholder(line: str, indent: str | None = None) -> str:
    """A harmless statement of the same length (when there is room) that keeps the block structure.
    `indent` replaces the line's own indentation (the continuation lines of a magic take the magic's)."""
    body = _without_break(line)
    newline = line[len(body):]
    own = body[: len(body) - len(body.lstrip())]
    width = len(body) - len(own)
    if indent is None:
        indent = own
    else:
        width = max(len(body) - len(indent), 0)
    if width >= 4:
        text = "pass" + ("#" * (width - 4))
    elif width == 3:
        text = "..."
    else:
        text = "0" * min(width, 1) + " " * max(width - 1, 0) if width else ""
    return indent + text + newline


def _flush_placeholder(line: str) -> str:
    body = _without_break(line)
    newline = line[len(body):]
    return ("pass" + "#" * max(len(body) - 4, 0) if body.strip() else "") + newline


def mask_magics(source: str) -> tuple[str, frozenset[int]]:
    """Replace IPython magics, shell escapes and help lines by placeholders; return the 1-based lines masked."""
    lines = split_lines(source)
    masked: set[int] = set()
    foreign: set[int] = set()  # the body of a cell magic that is not run as this kernel's Python
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split(None, 1)
        name = magic[0] if magic else ""
        masked.add(1)
        if name not in _PYTHON_BODY_CELL_MAGICS:  # %%bash, %%writefile, %%html...: the body is not Python
            foreign.update(range(2, len(lines) + 1))
            masked.update(foreign)
    # `!pip install x \` and `%cmd \` go on to the next line, whatever its indentation: the lines that
    # continue a magic belong to it and sit at its depth.
    continued: dict[int, str] = {}  # continuation line -> the indentation of the magic it continues
    continuation: str | None = None
    for number, line in enumerate(lines, start=1):
        if number in masked:
            continue
        stripped = line.strip()
        if continuation is not None or _is_magic(stripped):
            masked.add(number)
            if continuation is not None:
                continued[number] = continuation
            else:
                continuation = line[: len(line) - len(line.lstrip())]
            if not stripped.endswith("\\"):
                continuation = None
    if not masked:
        return source, frozenset()
    # A foreign body keeps no indentation: an indented shell script or the `def` of a `%%writefile` file
    # would otherwise leave placeholders at depths that do not parse.
    out = [_flush_placeholder(line) if number in foreign
           else _placeholder(line, continued.get(number)) if number in masked else line
           for number, line in enumerate(lines, start=1)]
    return "".join(out), frozenset(masked)


@dataclass
class CodeCell:
    number: int  # 1-based among all cells
    index: int  # position in the notebook's "cells" list
    source: str  # as in the notebook
    masked: str = ""
    masked_lines: frozenset[int] = frozenset()
    # IPython strips the first line's indentation from every line that starts with it before running a
    # cell; `shift` is that many characters, taken from the lines in `shifted` (1-based).
    shift: int = 0
    shifted: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        # A cell that is plain Python keeps every line: `% x` can continue an expression, `?` end a string.
        if _parses(self.source):
            self.masked, self.masked_lines = self.source, frozenset()
            return
        base = self.source
        lines = split_lines(self.source)
        indent = lines[0][: len(lines[0]) - len(lines[0].lstrip(" \t"))] if lines and lines[0].strip() else ""
        if indent:
            self.shift = len(indent)
            self.shifted = frozenset(n for n, line in enumerate(lines, start=1) if line.startswith(indent))
            base = "".join(line[self.shift:] if n in self.shifted else line for n, line in enumerate(lines, start=1))
        if _parses(base):
            self.masked, self.masked_lines = base, frozenset()
        else:
            self.masked, self.masked_lines = mask_magics(base)

    def with_source(self, source: str) -> "CodeCell":
        return CodeCell(self.number, self.index, source)


@dataclass
class Notebook:
    text: str  # the file as read
    data: dict
    cells: list[CodeCell]


def _source_text(value: object, name: str, number: int) -> str:
    """A code cell's `source`: a string or a list of strings (nbformat 4). Anything else (a number, a list
    holding one) is a malformed notebook: linting the cell as empty would pass it silently."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    raise InputError(f"{name}: not a valid notebook: the `source` of cell {number} is not a string or a list "
                     "of strings")


def parse_notebook(text: str, name: str) -> Notebook:
    """The code cells of a notebook (nbformat 4), or a one-line InputError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{name}: not a valid notebook: invalid JSON at line {error.lineno}, "
                         f"column {error.colno} ({error.msg})") from None
    except RecursionError:
        raise InputError(f"{name}: not a valid notebook: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise InputError(f"{name}: not a valid notebook: the top level is not a JSON object")
    if "cells" not in data:
        if "worksheets" in data:
            raise InputError(f"{name}: nbformat 3 notebooks are not supported; convert with "
                             "`jupyter nbconvert --to notebook --nbformat 4`")
        raise InputError(f"{name}: not a valid notebook: no `cells` list")
    cells = data["cells"]
    if not isinstance(cells, list):
        raise InputError(f"{name}: not a valid notebook: `cells` is not a list")
    code_cells = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise InputError(f"{name}: not a valid notebook: cell {index + 1} is not a JSON object")
        if cell.get("cell_type") == "code":
            code_cells.append(CodeCell(index + 1, index, _source_text(cell.get("source", ""), name, index + 1)))
    return Notebook(text, data, code_cells)


def is_python(notebook: Notebook) -> bool:
    metadata = notebook.data.get("metadata")
    if not isinstance(metadata, dict):
        return True
    info = metadata.get("language_info")
    language = info.get("name") if isinstance(info, dict) else None
    if language is None:
        kernel = metadata.get("kernelspec")
        language = kernel.get("language") if isinstance(kernel, dict) else None
    return not isinstance(language, str) or language.lower() in ("python", "python3", "ipython", "ipython3")


def _syntax_error(source: str) -> SyntaxError | ValueError | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes and the like are not ours to print
        try:
            ast.parse(source)
        except (SyntaxError, ValueError) as error:
            return error
        except (RecursionError, MemoryError):
            return SyntaxError("too deeply nested to parse")
    return None


def _parses(source: str) -> bool:
    return _syntax_error(source) is None


def _cell_syntax_error(found: Diagnostic, error: SyntaxError | ValueError, cell: CodeCell) -> Diagnostic:
    """TL000 for one cell, placed where Python's own parser points (libcst points one token later)."""
    if not isinstance(error, SyntaxError) or not error.lineno:
        return found.with_changes(cell=cell.number, fix=None)
    line, column = error.lineno, max((error.offset or 1) - 1, 0)
    message = f"Syntax error: {error.msg}; this cell was not checked"
    return found.with_changes(line=line, column=column, end_line=line, end_column=column, message=message,
                              cell=cell.number, fix=None)


@dataclass
class _Composed:
    source: str
    # composed line (1-based) -> (cell, line within the cell)
    where: list[tuple[CodeCell, int]]
    syntax_errors: list[Diagnostic]


def _compose(cells: list[CodeCell], name: str, config: Config) -> _Composed:
    """One module of all code cells that parse on their own (each cell is its own compile unit in Jupyter)."""
    parts: list[str] = []
    where: list[tuple[CodeCell, int]] = [(cells[0], 1)] if cells else []  # index 0 unused
    errors: list[Diagnostic] = []
    for cell in cells:
        if not cell.masked.strip():
            continue
        problem = _syntax_error(cell.masked)
        if problem is not None:
            found = lint_source(cell.masked, name, config, force=True, rules=())
            if found:
                errors.extend(_cell_syntax_error(d, problem, cell) for d in found)
                continue
        text = cell.masked if _ends_a_line(cell.masked) else cell.masked + "\n"
        parts.append(text)
        where.extend((cell, line) for line in range(1, len(split_lines(text)) + 1))
    return _Composed("".join(parts), where, errors)


def _locate(composed: _Composed, line: int, column: int) -> tuple[CodeCell, int, int] | None:
    """(cell, line in cell, column) for a composed position; the end just past a cell maps to its last line+1."""
    if 1 <= line < len(composed.where):
        cell, local = composed.where[line]
        return cell, local, column + (cell.shift if local in cell.shifted else 0)
    if line == len(composed.where) and column == 0 and len(composed.where) > 1:
        cell, local = composed.where[line - 1]
        return cell, local + 1, 0
    return None


def _map_edits(composed: _Composed, fix: Fix) -> tuple[CodeCell, tuple[TextEdit, ...]] | None:
    """The fix's edits in cell coordinates, or None when they leave one cell or touch a masked line."""
    target: CodeCell | None = None
    edits = []
    for edit in fix.edits:
        start = _locate(composed, edit.line, edit.column)
        end = _locate(composed, edit.end_line, edit.end_column)
        if start is None or end is None:
            return None
        cell, line, column = start
        end_cell, end_line, end_column = end
        if end_cell is not cell:
            # An end exclusive at column 0 of the next cell's first line is the end of this cell.
            if not (end_column == 0 and end_line == 1 and composed.where[edit.end_line - 1][0] is cell):
                return None
            end_line = composed.where[edit.end_line - 1][1] + 1
        if target is not None and cell is not target:
            return None
        target = cell
        last_touched = end_line - 1 if end_column == 0 and end_line > line else end_line
        if any(line <= masked <= last_touched for masked in cell.masked_lines):
            return None
        if cell.shift:
            return None  # the fix was written for the cell without its leading indentation
        edits.append(TextEdit(line, column, end_line, end_column, edit.text))
    if target is None:
        return None
    return target, tuple(edits)


def _map_diagnostic(composed: _Composed, diagnostic: Diagnostic) -> Diagnostic | None:
    start = _locate(composed, diagnostic.line, diagnostic.column)
    if start is None:
        return None
    cell, line, column = start
    end = _locate(composed, diagnostic.end_line, diagnostic.end_column)
    if end is not None and end[0] is cell:
        end_line, end_column = end[1], end[2]
    else:
        end_line, end_column = line, column
    fix = diagnostic.fix
    if fix is not None:
        mapped = _map_edits(composed, fix)
        fix = replace(fix, edits=mapped[1]) if mapped is not None and mapped[0] is cell else None
    related = []
    for item in diagnostic.related:
        if item.path != diagnostic.path:  # in another module of the project
            related.append(item)
            continue
        place = _locate(composed, item.line, item.column)
        if place is None:
            continue
        to = _locate(composed, item.end_line, item.end_column)
        ends = (to[1], to[2]) if to is not None and to[0] is place[0] else (place[1], place[2])
        related.append(replace(item, line=place[1], column=place[2], end_line=ends[0], end_column=ends[1],
                               cell=place[0].number))
    return diagnostic.with_changes(line=line, column=column, end_line=end_line, end_column=end_column,
                                   cell=cell.number, fix=fix, related=tuple(related))


def _cell_lines(composed: _Composed):  # type: ignore[no-untyped-def]
    """Composed line -> (cell number, line in the cell): the mapping the findings get, for messages that
    cite another line."""
    def cell_line(line: int) -> tuple[int, int] | None:
        found = _locate(composed, line, 0)
        return None if found is None else (found[0].number, found[1])

    return cell_line


def _lint_cells(cells: list[CodeCell], name: str, config: Config, force: bool
                ) -> tuple[_Composed, list[Diagnostic], list[Diagnostic]]:
    """(composed module, raw diagnostics in composed coordinates, diagnostics mapped to cells)."""
    composed = _compose(cells, name, config)
    raw = (lint_source(composed.source, name, config, force=force, cell_lines=_cell_lines(composed))
           if composed.source.strip() else [])
    mapped = [m for m in (_map_diagnostic(composed, d) for d in raw) if m is not None]
    result = sorted([*composed.syntax_errors, *mapped], key=Diagnostic.sort_key)
    return composed, raw, result


def lint_notebook_text(text: str, name: str, config: Config, *, force: bool = True) -> list[Diagnostic]:
    """Diagnostics for a notebook given as JSON text; `cell` is set on each."""
    notebook = parse_notebook(text, name)
    if not notebook.cells or not is_python(notebook):
        return []
    check_size(name, sum(len(cell.masked) for cell in notebook.cells))  # the code, without outputs
    if not force:
        # Like a .py file found in a folder: a notebook that no enabled rule can apply to is not parsed.
        from tapelint.rule import applicable_rules

        everything = "\n".join(cell.masked for cell in notebook.cells)
        if not applicable_rules(config.enabled_rules(), everything):
            return []
    return _lint_cells(notebook.cells, name, config, force)[2]


def lint_cells(sources: Sequence[tuple[int, str]], name: str, config: Config) -> list[Diagnostic]:
    """Diagnostics for a notebook given as its code cells, `(number among all cells, source)` in order (an
    editor's notebook document): the findings `lint_notebook_text` gives for the same notebook."""
    cells = [CodeCell(number, number - 1, source) for number, source in sources]
    if not cells:
        return []
    check_size(name, sum(len(cell.masked) for cell in cells))
    return _lint_cells(cells, name, config, True)[2]


# --- fixes -----------------------------------------------------------------------------------------------


@dataclass
class NotebookFixOutcome:
    source: str  # the notebook JSON text after the fixes
    applied: int
    remaining: list[Diagnostic]


def _apply_to_cell(cell: CodeCell, edits: list[TextEdit]) -> str:
    text = cell.source
    added_newline = not _ends_a_line(text)
    if added_newline:
        text += "\n"
    fixed = apply_edits(text, edits)
    if added_newline and fixed.endswith("\n"):
        fixed = fixed[:-1]
    return fixed


def _cell_parses(cell: CodeCell) -> bool:
    return _parses(cell.masked)


def fix_notebook_text(text: str, name: str, config: Config, *, unsafe: bool = False) -> NotebookFixOutcome:
    """Apply fixes cell by cell, pass by pass; only the `source` of changed cells is rewritten in the JSON."""
    notebook = parse_notebook(text, name)
    if not notebook.cells or not is_python(notebook):
        return NotebookFixOutcome(text, 0, [])
    cells, applied, mapped = _fix_cells(list(notebook.cells), name, config, unsafe)
    originals = {cell.number: cell.source for cell in notebook.cells}
    new_sources = {cell.index: cell.source for cell in cells if cell.source != originals[cell.number]}
    output = rewrite_sources(notebook, new_sources) if new_sources else text
    return NotebookFixOutcome(output, applied, mapped)


def fix_cells(sources: Sequence[tuple[int, str]], name: str, config: Config, *, unsafe: bool = False
              ) -> dict[int, str]:
    """The fixed source of each cell the fixes change (by cell number), for code cells given as `lint_cells`
    takes them: what `fix_notebook_text` writes into those cells of the same notebook."""
    cells = [CodeCell(number, number - 1, source) for number, source in sources]
    if not cells:
        return {}
    fixed = _fix_cells(cells, name, config, unsafe)[0]
    return {after.number: after.source for before, after in zip(cells, fixed) if after.source != before.source}


def _fix_cells(cells: list[CodeCell], name: str, config: Config, unsafe: bool
               ) -> tuple[list[CodeCell], int, list[Diagnostic]]:
    """(the cells after the fixes, fixes applied, the findings left in cell coordinates)."""
    cells = list(cells)
    applied = 0
    composed, raw, mapped = _lint_cells(cells, name, config, True)
    for _ in range(MAX_PASSES):
        per_cell: dict[int, list[TextEdit]] = {}
        counts: dict[int, int] = {}
        for diagnostic in raw:
            fix = diagnostic.fix
            if fix is None or not (fix.safe or unsafe):
                continue
            target = _map_edits(composed, fix)
            if target is None:
                continue
            cell, edits = target
            candidate = per_cell.get(cell.number, []) + list(edits)
            if edits_overlap(candidate):
                continue
            per_cell[cell.number] = candidate
            counts[cell.number] = counts.get(cell.number, 0) + 1
        changed = False
        for position, cell in enumerate(cells):
            cell_edits = per_cell.get(cell.number)
            if not cell_edits:
                continue
            updated = cell.with_source(_apply_to_cell(cell, cell_edits))
            if updated.source == cell.source or (_cell_parses(cell) and not _cell_parses(updated)):
                continue  # a fix must never leave a cell that no longer parses
            cells[position] = updated
            applied += counts[cell.number]
            changed = True
        if not changed:
            break
        composed, raw, mapped = _lint_cells(cells, name, config, True)
    return cells, applied, mapped


# --- writing back: only the changed "source" values, the rest of the file byte for byte -------------------


class _Scanner:
    """Finds where each cell's "source" value sits in the JSON text, so it can be replaced in place."""

    _WS = re.compile(r"[ \t\n\r]*")

    def __init__(self, text: str) -> None:
        self.text = text
        self.decoder = json.JSONDecoder()

    def skip(self, pos: int) -> int:
        return self._WS.match(self.text, pos).end()  # type: ignore[union-attr]

    def value_end(self, pos: int) -> int:
        return self.decoder.raw_decode(self.text, pos)[1]

    def object_members(self, pos: int):  # type: ignore[no-untyped-def]
        """Yield (key, value start, value end) for the object starting at pos (at '{')."""
        pos = self.skip(pos + 1)
        if self.text[pos] == "}":
            return
        while True:
            key, pos = scanstring(self.text, pos + 1)
            pos = self.skip(pos)
            pos = self.skip(pos + 1)  # ':'
            end = self.value_end(pos)
            yield key, pos, end
            pos = self.skip(end)
            if self.text[pos] == "}":
                return
            pos = self.skip(pos + 1)  # ','

    def source_spans(self) -> dict[int, tuple[int, int]]:
        spans: dict[int, tuple[int, int]] = {}
        for key, start, _end in self.object_members(self.skip(0)):
            if key != "cells":
                continue
            pos = self.skip(start + 1)
            index = 0
            while self.text[pos] != "]":
                for cell_key, value_start, value_end in self.object_members(pos):
                    if cell_key == "source":
                        spans[index] = (value_start, value_end)
                pos = self.skip(self.value_end(pos))
                if self.text[pos] == ",":
                    pos = self.skip(pos + 1)
                index += 1
        return spans


def _ensure_ascii(sample: str) -> bool:
    return sample.isascii() and "\\u" in sample


def _serialize_source(old: str, source: str) -> str:
    """The new source value laid out like the old one (list of lines or one string, same indentation)."""
    ascii_only = _ensure_ascii(old)
    if not old.startswith("["):
        return json.dumps(source, ensure_ascii=ascii_only)
    lines = split_lines(source)
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in lines]
    match = re.match(r"\[(\s*)", old)
    opening = match.group(1) if match else ""
    closing_match = re.search(r"(\s*)\]$", old)
    closing = closing_match.group(1) if closing_match else ""
    if not items:
        return "[]"
    if not opening:  # compact layout, `["a", "b"]` or `["a","b"]`
        separator = ", " if ", " in old or old == "[]" else ","
        return "[" + separator.join(items) + "]"
    return "[" + opening + ("," + opening).join(items) + closing + "]"


def rewrite_sources(notebook: Notebook, sources: dict[int, str]) -> str:
    """The notebook text with the `source` of the given cells (by list index) replaced, nothing else."""
    spans = _Scanner(notebook.text).source_spans()
    text = notebook.text
    for index in sorted(sources, reverse=True):
        if index not in spans:
            continue
        start, end = spans[index]
        text = text[:start] + _serialize_source(text[start:end], sources[index]) + text[end:]
    return text


def cell_sources(text: str) -> dict[int, str]:
    """Code cell number -> source, for diffs; {} when the text is not a notebook."""
    try:
        return {cell.number: cell.source for cell in parse_notebook(text, "<notebook>").cells}
    except InputError:
        return {}


def notebook_diff(name: str, before: str, after: str) -> str:
    """A unified diff per changed cell, headed `name:cell N` (cells numbered as in the findings)."""
    old, new = cell_sources(before), cell_sources(after)
    chunks = []
    for number in sorted(old):
        if number in new and old[number] != new[number]:
            a = split_lines(old[number] if _ends_a_line(old[number]) else old[number] + "\n")
            b = split_lines(new[number] if _ends_a_line(new[number]) else new[number] + "\n")
            chunks.append("".join(difflib.unified_diff(a, b, f"{name}:cell {number}", f"{name}:cell {number}")))
    return "".join(chunks)

"""Fixing files: applying fixes pass by pass (each pass re-lints) until stable, for one text, a notebook
or every file with a fixable finding, and writing the results back atomically."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import libcst as cst

from tapelint.atomic import ChangedMeanwhile, refuse_to_replace, write_atomic
from tapelint.config import Config
from tapelint.diagnostic import Diagnostic, TextEdit
from tapelint.edits import apply_edits, edits_overlap, selected_fixes, unified_diff
from tapelint.engine import lint_source
from tapelint.errors import InputError, TapelintError
from tapelint.files import NOTEBOOK_SUFFIX, decode, resolved, source_encoding

MAX_PASSES = 10


@dataclass
class FixOutcome:
    source: str
    applied: int
    remaining: list[Diagnostic]


def fix_source(source: str, path: str, config: Config, *, unsafe: bool = False, force: bool = True) -> FixOutcome:
    """Apply fixes pass by pass (each pass re-lints), until nothing fixable is left."""
    applied = 0
    current = source
    diagnostics = lint_source(current, path, config, force=force)
    for _ in range(MAX_PASSES):
        chosen = selected_fixes(diagnostics, unsafe)
        if not chosen:
            break
        edits: list[TextEdit] = []
        taken = 0
        for diagnostic in chosen:
            assert diagnostic.fix is not None
            candidate = edits + list(diagnostic.fix.edits)
            if edits_overlap(candidate):
                continue
            edits = candidate
            taken += 1
        updated = apply_edits(current, edits)
        if not _parses(updated):
            # Together these fixes broke the syntax: take the first one alone that leaves code that parses.
            updated, taken = current, 0
            for diagnostic in chosen:
                assert diagnostic.fix is not None
                attempt = apply_edits(updated, list(diagnostic.fix.edits))
                if attempt != updated and _parses(attempt):
                    updated, taken = attempt, taken + 1
                    break  # positions of the other fixes are stale now; the next pass re-lints
        if updated == current:
            break
        current = updated
        applied += taken
        diagnostics = lint_source(current, path, config, force=force)
    return FixOutcome(current, applied, diagnostics)


def _parses(source: str) -> bool:
    try:
        cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError):
        return False
    return True


# --- fixing files: what `tapelint check --fix` and `--diff` run ------------------------------------------


@dataclass
class FileFix:
    """The outcome of fixing one file (or standard input)."""

    name: str
    before: str
    after: str
    applied: int
    remaining: list[Diagnostic]
    notebook: bool = False
    bom: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        if not self.changed:
            return ""
        if self.notebook:
            from tapelint.notebooks import notebook_diff

            return notebook_diff(self.name, self.before, self.after)
        return unified_diff(self.name, self.before, self.after)


@dataclass
class FixRun:
    files: list[FileFix] = field(default_factory=list)
    stdin: FileFix | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)  # what remains, all files
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # files deliberately left unfixed, and why

    @property
    def applied(self) -> int:
        return sum(f.applied for f in self.changed_files)

    @property
    def changed_files(self) -> list[FileFix]:
        return [f for f in (*self.files, *([self.stdin] if self.stdin else [])) if f.changed]


def fix_text(text: str, name: str, config: Config, *, unsafe: bool = False) -> FileFix:
    """Fix one file's text; notebooks (by the `.ipynb` name) are fixed cell by cell inside their JSON."""
    if name.endswith(NOTEBOOK_SUFFIX):
        from tapelint.notebooks import fix_notebook_text

        outcome = fix_notebook_text(text, name, config, unsafe=unsafe)
        return FileFix(name, text, outcome.source, outcome.applied, outcome.remaining, notebook=True)
    result = fix_source(text, name, config, unsafe=unsafe)
    return FileFix(name, text, result.source, result.applied, result.remaining)


def _decode(data: bytes, name: str) -> tuple[str, str]:
    """The text of a file to fix and the encoding to write it back in: a notebook's JSON and a file with a
    UTF-8 BOM are UTF-8, anything else what a PEP 263 cookie says."""
    notebook = name.endswith(NOTEBOOK_SUFFIX)
    utf8 = notebook or data.startswith(b"\xef\xbb\xbf")
    return decode(data, name, python=not notebook), "utf-8" if utf8 else source_encoding(data, name)


def read_for_rewrite(path: Path, name: str) -> tuple[bytes, str, bool, str]:
    """The bytes, the text, whether it had a UTF-8 BOM, and the encoding to write it back in."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"{name}: cannot read ({error.strerror or error})") from None
    text, encoding = _decode(data, name)
    return data, text, data.startswith(b"\xef\xbb\xbf"), encoding


def fix_roots(paths: list[str], project_of: Callable[[Path], Path | None] | None = None) -> list[Path]:
    """The folders `--fix` may write in, with links followed: each folder named on the command line (for a
    file named, its folder) and the project that folder belongs to (where `project_of`, given a folder,
    finds its pyproject.toml)."""
    roots: list[Path] = []
    for name in paths:
        if name == "-":
            continue
        path = Path(name)
        folder = path if path.is_dir() else path.parent
        roots.append(resolved(folder))
        project = project_of(folder) if project_of is not None else None
        if project is not None:
            roots.append(resolved(project.parent))
    return roots


def _outside(real: Path, roots: list[Path] | None) -> bool:
    return roots is not None and not any(real.is_relative_to(root) for root in roots)


def fix_diagnostics(diagnostics: list[Diagnostic], config: Config, *, unsafe: bool, write: bool,
                    stdin: tuple[str, str] | None = None,
                    config_for: Callable[[Path], Config] | None = None,
                    roots: list[Path] | None = None) -> FixRun:
    """Fix the files that have an applicable fix among `diagnostics` (from a lint run) and, if given,
    the (text, name) read from standard input. Files without one are never opened for writing.
    With `write=False` nothing is written (for `--diff`).

    A file is read and written at its real path (links followed). With `roots` (see fix_roots), a file
    whose real path lies outside all of them, reached through a symbolic link, is left alone with a
    warning: a cloned repository's link must not make `--fix` rewrite a file elsewhere. A link that
    stays inside is fixed through it (the target is rewritten, the link stays a link): both are code
    the user asked to fix, and skipping would leave its findings unfixable from where they are shown."""
    run = FixRun()
    fixable_paths = sorted({d.path for d in selected_fixes(diagnostics, unsafe)})
    untouched = [d for d in diagnostics if d.path not in fixable_paths]
    run.diagnostics.extend(untouched)
    for name in fixable_paths:
        path = Path(name)
        # Resolved once: the file checked below is the file read and written, whatever a link says later.
        real = resolved(path)
        if _outside(real, roots):
            run.warnings.append(f"{name}: a link to {real}, outside the folders being fixed and their project; "
                                "not fixed")
            run.diagnostics.extend(d for d in diagnostics if d.path == name)
            continue
        try:
            data, text, bom, encoding = read_for_rewrite(real, name)
            outcome = fix_text(text, name, config_for(path) if config_for is not None else config, unsafe=unsafe)
        except TapelintError as error:
            run.errors.append(str(error))
            run.diagnostics.extend(d for d in diagnostics if d.path == name)
            continue
        outcome.bom = bom
        if write and outcome.changed:
            refusal = refuse_to_replace(real)
            if refusal is not None:
                run.errors.append(f"{name}: {refusal}")
                run.diagnostics.extend(d for d in diagnostics if d.path == name)
                continue
            try:
                write_atomic(real, ("\ufeff" if bom else "") + outcome.after, encoding, expected=data)
            except ChangedMeanwhile:
                run.errors.append(f"{name}: changed on disk while it was being fixed; left as it is "
                                  "(run --fix again)")
                run.diagnostics.extend(d for d in diagnostics if d.path == name)
                continue
            except UnicodeEncodeError:
                run.errors.append(f"{name}: the fixed text cannot be written in the file's encoding ({encoding}); "
                                  "left unchanged")
                run.diagnostics.extend(d for d in diagnostics if d.path == name)
                continue
            except OSError as error:
                run.errors.append(f"{name}: cannot write the fixed file ({error.strerror or error})")
                run.diagnostics.extend(d for d in diagnostics if d.path == name)
                continue
        run.files.append(outcome)
        run.diagnostics.extend(outcome.remaining)
    if stdin is not None:
        text, name = stdin
        run.stdin = fix_text(text, name, config, unsafe=unsafe)
        run.diagnostics.extend(run.stdin.remaining)
    run.diagnostics.sort(key=Diagnostic.sort_key)
    return run

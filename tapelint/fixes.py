"""Applying fixes to source text, re-linting until stable, and writing files atomically."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from tapelint.config import Config
from tapelint.diagnostic import Diagnostic, TextEdit
from tapelint.engine import lint_source
from tapelint.errors import InputError, TapelintError
from tapelint.files import NOTEBOOK_SUFFIX, decode, source_encoding
from tapelint.text import line_starts, source_lines

MAX_PASSES = 10


def apply_edits(source: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (libcst positions). Overlapping later edits are dropped."""
    starts = line_starts(source)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column if line - 1 < len(starts) else len(source)

    spans = sorted(((offset(e.line, e.column), offset(e.end_line, e.end_column), e.text) for e in edits),
                   key=lambda s: (s[0], s[1]))
    result: list[str] = []
    cursor = 0
    for start, end, text in spans:
        if start < cursor:
            continue  # overlaps an edit already taken; the next pass will redo it if still needed
        result.append(source[cursor:start])
        result.append(text)
        cursor = end
    result.append(source[cursor:])
    return "".join(result)


def selected_fixes(diagnostics: list[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    return [d for d in diagnostics if d.fix is not None and (d.fix.safe or unsafe)]


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


def edits_overlap(edits: list[TextEdit]) -> bool:
    spans = sorted(((e.line, e.column), (e.end_line, e.end_column)) for e in edits)
    return any(spans[i][1] > spans[i + 1][0] for i in range(len(spans) - 1))


TEMP_SUFFIX = ".tapelint-tmp"


def _temp_prefix(name: str, pid: int) -> str:
    return f".{name}.{pid}."


def remove_stale_temps(path: Path) -> None:
    """Remove the temporary files that a killed `--fix` (kill -9, power loss) left next to `path`.
    Each carries the writer's process id; only those of processes that no longer exist are removed, so a
    concurrent run's file in flight is never touched."""
    prefix = f".{path.name}."
    try:
        candidates = [entry for entry in os.scandir(path.parent)
                      if entry.name.startswith(prefix) and entry.name.endswith(TEMP_SUFFIX)]
    except OSError:
        return
    for entry in candidates:
        pid_text = entry.name[len(prefix):].split(".", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        try:
            os.unlink(entry.path)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, and belongs to someone else
    return True


def write_atomic(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Replace a file's content in one rename, keeping its permissions and, where we may, its owner;
    never a half-written file. The text is encoded before anything is created, so a text the encoding
    cannot hold writes nothing."""
    data = text.encode(encoding)
    if path.is_symlink():
        path = path.resolve()  # replace the file the link points to, not the link
    try:
        status: os.stat_result | None = path.stat()
        mode = stat.S_IMODE(status.st_mode)
    except OSError:
        status = None
        # A new file gets the mode any program would give it: 0666 less the umask (mkstemp's is 0600).
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    remove_stale_temps(path)
    folder = path.parent
    fd, temp = tempfile.mkstemp(prefix=_temp_prefix(path.name, os.getpid()), suffix=TEMP_SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        if status is not None and (status.st_uid, status.st_gid) != (os.geteuid(), os.getegid()):
            try:
                # As root, a fixed file must stay its owner's; as anyone else this only keeps the group.
                os.chown(temp, status.st_uid, status.st_gid)
            except OSError:
                pass
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def refuse_to_replace(path: Path) -> str | None:
    """Why `--fix` must leave this existing file alone, or None. A read-only file says "do not edit me"
    (root could write it anyway); a file with several hard links would be split from its twins by the
    atomic rename, and writing it in place could leave it half-written."""
    try:
        status = path.resolve().stat()
    except OSError:
        return None
    if not status.st_mode & 0o222:
        return "is read-only; not fixed (make it writable to fix it)"
    if status.st_nlink > 1:
        return (f"has {status.st_nlink} hard links, and an atomic rewrite would split them; not fixed "
                "(fix a copy, or break the links)")
    return None


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

    @property
    def applied(self) -> int:
        return sum(f.applied for f in self.changed_files)

    @property
    def changed_files(self) -> list[FileFix]:
        return [f for f in (*self.files, *([self.stdin] if self.stdin else [])) if f.changed]


def unified_diff(name: str, before: str, after: str) -> str:
    """A diff that `git apply` and `patch -p1` take as they are: `a/` and `b/` before a relative name."""
    def lines(text: str) -> list[str]:
        out = source_lines(text, keepends=True)
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    relative = not Path(name).is_absolute()
    old, new = (f"a/{name}", f"b/{name}") if relative else (name, name)
    return "".join(difflib.unified_diff(lines(before), lines(after), old, new))


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


def _read(path: Path) -> tuple[str, bool, str]:
    """The text, whether it had a UTF-8 BOM, and the encoding to write it back in."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    text, encoding = _decode(data, str(path))
    return text, data.startswith(b"\xef\xbb\xbf"), encoding


def fix_diagnostics(diagnostics: list[Diagnostic], config: Config, *, unsafe: bool, write: bool,
                    stdin: tuple[str, str] | None = None) -> FixRun:
    """Fix the files that have an applicable fix among `diagnostics` (from a lint run) and, if given,
    the (text, name) read from standard input. Files without one are never opened for writing.
    With `write=False` nothing is written (for `--diff`)."""
    run = FixRun()
    fixable_paths = sorted({d.path for d in selected_fixes(diagnostics, unsafe)})
    untouched = [d for d in diagnostics if d.path not in fixable_paths]
    run.diagnostics.extend(untouched)
    for name in fixable_paths:
        path = Path(name)
        try:
            text, bom, encoding = _read(path)
            outcome = fix_text(text, name, config, unsafe=unsafe)
        except TapelintError as error:
            run.errors.append(str(error))
            run.diagnostics.extend(d for d in diagnostics if d.path == name)
            continue
        outcome.bom = bom
        if write and outcome.changed:
            refusal = refuse_to_replace(path)
            if refusal is not None:
                run.errors.append(f"{name}: {refusal}")
                run.diagnostics.extend(d for d in diagnostics if d.path == name)
                continue
            try:
                write_atomic(path, ("\ufeff" if bom else "") + outcome.after, encoding)
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


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def run_fix_command(*, paths: list[str], config: Config, jobs: int | None, stdin_filename: str | None,
                    output_format: str, output_file: Path | None, unsafe: bool, diff: bool, exit_zero: bool,
                    quiet: bool) -> int:
    """`tapelint check --fix` / `--diff`: lint, fix what can be fixed, report what remains.

    Like ruff: with `-` the fixed source goes to stdout and the report to stderr; `--diff` prints diffs,
    writes nothing and exits 1 when something would change."""
    import sys

    from tapelint.api import emit_report, exit_code, lint
    from tapelint.reporters import REPORTERS

    stdin: tuple[str, str] | None = None
    if "-" in paths:
        name = stdin_filename or "<stdin>"
        text, stdin_encoding = _decode(sys.stdin.buffer.read(), name)
        stdin = (text, name)
    result = lint([p for p in paths if p != "-"], config, jobs, stdin_filename)
    run = fix_diagnostics(result.diagnostics, config, unsafe=unsafe, write=not diff, stdin=stdin)
    errors = sorted({*result.errors, *run.errors})
    for error in errors:
        print(f"tapelint: error: {error}", file=sys.stderr)
    files_checked = result.files_checked + (1 if stdin is not None else 0)
    changed = run.changed_files
    fixed = f"{_plural(run.applied, 'finding')} in {_plural(len(changed), 'file')}"
    if diff:
        emit_report("".join(f.diff() for f in changed), output_file)
        if not quiet:
            print(f"Would fix {fixed}." if changed else "No fixes available.", file=sys.stderr)
        if errors:
            return 2
        return 1 if changed and not exit_zero else 0
    stream = sys.stdout
    if run.stdin is not None:
        sys.stdout.flush()
        sys.stdout.buffer.write(run.stdin.after.encode(stdin_encoding, "replace"))
        sys.stdout.flush()
        stream = sys.stderr
    report = REPORTERS[output_format](run.diagnostics, files_checked, quiet=quiet)
    if changed and not quiet:
        if output_format == "text":
            head, _, last = report.rstrip("\n").rpartition("\n")
            report = (head + "\n" if head else "") + f"Fixed {fixed}.\n" + last + "\n"
        else:
            print(f"Fixed {fixed}.", file=sys.stderr)
    emit_report(report, output_file, stream)
    return exit_code(run.diagnostics, errors, exit_zero, config.fail_on)

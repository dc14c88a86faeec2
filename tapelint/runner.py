"""Lint many files: discovery, reading, one engine call per file, on all cores."""

from __future__ import annotations

import dataclasses
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tapelint.config import Config
from tapelint.diagnostic import Diagnostic
from tapelint.engine import lint_source
from tapelint.errors import TapelintError
from tapelint.files import SourceFile, discover, read_text
from tapelint.project import Prelude, ProjectIndex

# Below this many files a process pool costs more than it saves.
_PARALLEL_THRESHOLD = 16


@dataclass
class LintResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files_checked: int = 0
    errors: list[str] = field(default_factory=list)  # one line each: unreadable files and the like


def lint_file(source_file: SourceFile, config: Config, project: ProjectIndex | None = None,
              shown: dict[str, str] | None = None) -> tuple[list[Diagnostic], str | None]:
    """Diagnostics for one file, or the one-line error that stopped it from being read. With a project
    index, what the file imports from its own project is analysed with it (tapelint.project); findings
    that belong to another linted file are reported there (`shown` maps resolved paths to the paths
    as the user gave them), and findings in files that are not being linted are dropped."""
    try:
        if source_file.is_notebook:
            from tapelint.notebooks import lint_notebook

            return lint_notebook(source_file.path, config, force=source_file.explicit), None
        text = read_text(source_file.path)
    except TapelintError as error:
        return [], str(error)
    path = str(source_file.path)
    prelude = project.prelude(source_file.path, text) if project is not None else None
    found = lint_source(text, path, config, force=source_file.explicit, prelude=prelude)
    return attribute(found, path, prelude, shown or {}), None


def lint_document(source: str, name: str, config: Config, prelude: Prelude | None) -> list[Diagnostic]:
    """Lint one editor buffer (what the language server's worker process runs)."""
    return lint_source(source, name, config, force=True, prelude=prelude)


def attribute(found: list[Diagnostic], path: str, prelude: Prelude | None, shown: dict[str, str]) -> list[Diagnostic]:
    """Give each finding of a file linted with its prelude to the right file: its own findings stay,
    findings in another linted module go to that module (under the path the user gave, `shown`), and
    findings in a module that is not being linted are said at the import that brings it in."""
    if prelude is None:
        return found
    kept = []
    for diagnostic in found:
        if diagnostic.path == path:
            kept.append(diagnostic)
        elif diagnostic.path in shown:
            kept.append(dataclasses.replace(diagnostic, path=shown[diagnostic.path]))
        elif diagnostic.path in prelude.origin:
            line = prelude.origin[diagnostic.path]
            where = f"`{Path(diagnostic.path).name}`, line {diagnostic.line}"
            kept.append(dataclasses.replace(
                diagnostic, path=path, line=line, column=0, end_line=line, end_column=0, fix=None,
                message=f"{diagnostic.message} (in {where}, imported here)"))
    return kept


def _lint_batch(batch: list[SourceFile], config: Config, project: ProjectIndex | None = None,
                shown: dict[str, str] | None = None) -> list[tuple[list[Diagnostic], str | None]]:
    return [lint_file(f, config, project, shown) for f in batch]


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent, which stops them; otherwise each prints its own traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def lint_paths(paths: list[Path], config: Config, jobs: int | None = None) -> LintResult:
    """Lint files and folders. A path that does not exist or cannot be read is one line in the result's
    `errors` (the run exits 2), and every other file is still linted."""
    problems: list[str] = []
    files = discover(paths, config, problems)
    result = LintResult(files_checked=len(files), errors=problems)
    jobs = default_jobs() if jobs is None else max(1, jobs)
    shown = {str(f.path.resolve()): str(f.path) for f in files if not f.is_notebook}
    project = ProjectIndex([f.path for f in files])
    outcomes: list[tuple[list[Diagnostic], str | None]]
    if jobs > 1 and len(files) >= _PARALLEL_THRESHOLD:
        # Chunks of interleaved files keep both the big and the small ones spread over the workers.
        chunks = [files[i::jobs * 4] for i in range(jobs * 4)]
        chunks = [c for c in chunks if c]
        pool = ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_interrupts)
        try:
            per_chunk = list(pool.map(_lint_batch, chunks, [config] * len(chunks), [project] * len(chunks),
                                      [shown] * len(chunks)))
        except BaseException:
            # Ctrl-C (or any failure): stop the workers now instead of waiting for their chunks. Linting
            # writes nothing, so nothing is left half-done.
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                try:
                    process.kill()
                except (OSError, AttributeError):
                    pass
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        outcomes = [o for chunk in per_chunk for o in chunk]
    else:
        outcomes = [lint_file(f, config, project, shown) for f in files]
    seen: set[tuple] = set()
    for diagnostics, error in outcomes:
        for diagnostic in diagnostics:
            # A module imported by several linted files is analysed with each: report its findings once.
            key = (diagnostic.path, diagnostic.cell, diagnostic.line, diagnostic.column, diagnostic.code)
            if key not in seen:
                seen.add(key)
                result.diagnostics.append(diagnostic)
        if error:
            result.errors.append(error)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    result.errors.sort()
    return result

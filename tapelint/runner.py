"""Lint many files: discovery, reading, one engine call per file, on all cores."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tapelint.config import Config
from tapelint.diagnostic import Diagnostic
from tapelint.engine import lint_source
from tapelint.errors import TapelintError
from tapelint.files import SourceFile, discover, read_text

# Below this many files a process pool costs more than it saves.
_PARALLEL_THRESHOLD = 16


@dataclass
class LintResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files_checked: int = 0
    errors: list[str] = field(default_factory=list)  # one line each: unreadable files and the like


def lint_file(source_file: SourceFile, config: Config) -> tuple[list[Diagnostic], str | None]:
    """Diagnostics for one file, or the one-line error that stopped it from being read."""
    try:
        if source_file.is_notebook:
            from tapelint.notebooks import lint_notebook

            return lint_notebook(source_file.path, config, force=source_file.explicit), None
        text = read_text(source_file.path)
    except TapelintError as error:
        return [], str(error)
    return lint_source(text, str(source_file.path), config, force=source_file.explicit), None


def _lint_batch(batch: list[SourceFile], config: Config) -> list[tuple[list[Diagnostic], str | None]]:
    return [lint_file(f, config) for f in batch]


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def lint_paths(paths: list[Path], config: Config, jobs: int | None = None) -> LintResult:
    """Lint files and folders. Raises InputError for a path that does not exist."""
    files = discover(paths, config)
    result = LintResult(files_checked=len(files))
    jobs = default_jobs() if jobs is None else max(1, jobs)
    outcomes: list[tuple[list[Diagnostic], str | None]]
    if jobs > 1 and len(files) >= _PARALLEL_THRESHOLD:
        # Chunks of interleaved files keep both the big and the small ones spread over the workers.
        chunks = [files[i::jobs * 4] for i in range(jobs * 4)]
        chunks = [c for c in chunks if c]
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            per_chunk = list(pool.map(_lint_batch, chunks, [config] * len(chunks)))
        outcomes = [o for chunk in per_chunk for o in chunk]
    else:
        outcomes = [lint_file(f, config) for f in files]
    for diagnostics, error in outcomes:
        result.diagnostics.extend(diagnostics)
        if error:
            result.errors.append(error)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    result.errors.sort()
    return result

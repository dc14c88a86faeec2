"""Lint many files: discovery, reading, one engine call per file, on all cores."""

from __future__ import annotations

import dataclasses
import gc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from tapelint import registry
from tapelint.config import Config, ConfigFinder
from tapelint.diagnostic import Diagnostic
from tapelint.errors import TapelintError
from tapelint.files import (MAX_NOTEBOOK_BYTES, MAX_SOURCE_BYTES, SourceFile, decode, discover,
                            forget_resolved_folders, read_bytes, resolved)
from tapelint.pools import die_with_parent, kill_pool
from tapelint.prelude import Prelude
from tapelint.project import ProjectIndex, forget_import_tables
from tapelint.triggers import mentions_tensorflow

if TYPE_CHECKING:
    from tapelint.cache import Cache

# The engine (libcst and the rules) is imported only when a file is really linted: a run where every
# file is answered by the cache never loads it.

# Below this many files a process pool costs more than it saves.
_PARALLEL_THRESHOLD = 16


@dataclass
class LintResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files_checked: int = 0
    errors: list[str] = field(default_factory=list)  # one line each: unreadable files and the like
    cached: int = 0  # files answered by the cache


@dataclass
class Work:
    """One file to lint, read: its text, and the prelude of what it imports from its project."""

    source_file: SourceFile
    text: str
    config: Config
    prelude: Prelude | None = None
    key: str | None = None  # its cache key


def read_work(source_file: SourceFile, config: Config, project: ProjectIndex | None, cache: Cache | None) -> Work:
    """Read a file (a one-line InputError when it cannot be) and work out what its findings depend on."""
    path = source_file.path
    limit = MAX_NOTEBOOK_BYTES if source_file.is_notebook else MAX_SOURCE_BYTES
    data = read_bytes(path, limit)
    text = decode(data, str(path), python=not source_file.is_notebook)
    prelude = None
    if project is not None and not source_file.is_notebook:
        prelude = project.prelude(path, text)
    work = Work(source_file, text, config, prelude)
    if cache is not None and cache.worth_caching(data, _reaches_engine(work)):
        work.key = cache.key(config, path, source_file.explicit, data, prelude.text if prelude is not None else None,
                             prelude.digests if prelude is not None else None)
    return work


def _rests_on_other_modules(work: Work, found: list[Diagnostic]) -> bool:
    """Does a finding claim that something never happens, having read the project's other modules to be
    sure nothing there does it (tapelint.project.imported_names)? Such a result holds only while those
    modules stay as they are, which the cache key (this file, its prelude, the config) does not cover: the
    cache keeps what they import of this module with the findings, and answers only while it is the same."""
    if work.source_file.is_notebook or not found:
        return False
    absence = {rule.code for rule in registry.index() if rule.claims_absence}
    return any(d.code in absence for d in found)


def _reaches_engine(work: Work) -> bool:
    """Whether linting this file loads the engine (and may parse it): a notebook, a file named on the
    command line, or one that mentions TensorFlow. The rest cannot concern any rule."""
    return work.source_file.is_notebook or work.source_file.explicit or mentions_tensorflow(work.text)


def lint_work(work: Work) -> list[Diagnostic]:
    """The findings of one read file, before they are given to the files they belong to (`attribute`)."""
    path, config = str(work.source_file.path), work.config
    if work.source_file.is_notebook:
        from tapelint.notebooks import lint_notebook_text

        return lint_notebook_text(work.text, path, config, force=work.source_file.explicit)
    if not _reaches_engine(work):
        return []  # what the engine would answer, without loading it
    from tapelint.engine import lint_source
    from tapelint.incremental import parser_ahead

    # In a fork of the daemon, a file an earlier check named was parsed there since: reuse that parse.
    parse = parser_ahead(path)
    return lint_source(work.text, path, config, force=work.source_file.explicit, prelude=work.prelude,
                       parse=parse)


def lint_document(source: str, name: str, config: Config, prelude: Prelude | None) -> list[Diagnostic]:
    """Lint one editor buffer (what the language server's worker process runs)."""
    from tapelint.engine import lint_source

    return lint_source(source, name, config, force=True, prelude=prelude)


def attribute(found: list[Diagnostic], path: str, prelude: Prelude | None, shown: dict[str, str]) -> list[Diagnostic]:
    """Give each finding of a file linted with its prelude to the right file: its own findings stay,
    findings in another linted module go to that module (under the path the user gave, `shown`), and
    findings in a module that is not being linted are said at the import that brings it in."""
    if prelude is None:
        return found
    kept = []
    for diagnostic in found:
        if any(r.path != path for r in diagnostic.related):
            diagnostic = dataclasses.replace(diagnostic, related=tuple(
                r if r.path == path else dataclasses.replace(r, path=_shown_path(r.path, shown, path))
                for r in diagnostic.related))
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


def _shown_path(module: str, shown: dict[str, str], linted: str) -> str:
    """A module of the project as reports name it: as the user gave it when it is linted, else like the linted
    file's path (relative to the working directory when that one is relative and the module is under it)."""
    if module in shown:
        return shown[module]
    if Path(linted).is_absolute():
        return module
    try:
        return str(Path(module).relative_to(Path.cwd()))
    except ValueError:
        return module


def _lint_one(work: Work) -> tuple[list[Diagnostic], str | None]:
    """The findings of one file, or the one-line error that stopped it (a notebook that is not JSON)."""
    try:
        return lint_work(work), None
    except TapelintError as error:
        return [], str(error)


def _lint_batch(batch: list[Work]) -> list[tuple[list[Diagnostic], str | None]]:
    return [_lint_one(work) for work in batch]


class _ShownPaths(dict):
    """Resolved path -> the path as the user gave it, for the linted files; filled on first use, which
    only a finding in an imported module needs (resolving every path costs a warm run more than its cache)."""

    def __init__(self, files: list[SourceFile]) -> None:
        super().__init__()
        self._files: list[SourceFile] | None = files

    def _fill(self) -> None:
        if self._files is not None:
            self.update({str(resolved(f.path)): str(f.path) for f in self._files if not f.is_notebook})
            self._files = None

    def __contains__(self, key: object) -> bool:
        self._fill()
        return super().__contains__(key)

    def __getitem__(self, key: str) -> str:
        self._fill()
        return super().__getitem__(key)


def _start_worker(parent: int) -> None:
    """Workers leave Ctrl-C to the parent, which stops them (otherwise each prints its own traceback), and
    end with the parent, however it ends (tapelint.pools.die_with_parent)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def files_to_lint(paths: list[Path], config: Config, finder: ConfigFinder | None,
                  problems: list[str]) -> list[SourceFile]:
    """The files a run over `paths` lints (what `check --show-files` prints); a path that cannot be read
    is one line in `problems`. With a finder, each path is walked with the settings of its folder."""
    if finder is None:
        return discover(paths, config, problems)
    walked: dict[Path, SourceFile] = {}
    for path in paths:
        for discovered in discover([path], finder.for_path(path), problems):
            if discovered.path not in walked or discovered.explicit:
                walked[discovered.path] = discovered  # named on the command line wins, whatever the order
    return sorted(walked.values(), key=lambda f: str(f.path))


def lint_paths(paths: list[Path], config: Config, jobs: int | None = None,
               cache: Cache | None = None, finder: ConfigFinder | None = None,
               progress: Callable[[int, int], None] | None = None) -> LintResult:
    """Lint files and folders. A path that does not exist or cannot be read is one line in the result's
    `errors` (the run exits 2), and every other file is still linted. With a cache, files whose findings
    cannot have changed are answered from it (tapelint.cache), and the rest are stored in it.

    With a finder, each file is linted with its own settings (the nearest config, tapelint.config), and
    each path given is walked with the settings of the folder it is in; otherwise `config` is for all.
    `progress(done, total)` is called as files finish (files answered by the cache at once)."""
    problems: list[str] = []
    forget_resolved_folders()
    forget_import_tables()
    files = files_to_lint(paths, config, finder, problems)
    result = LintResult(files_checked=len(files), errors=problems)
    if progress is not None:
        progress(0, len(files))
    jobs = default_jobs() if jobs is None else max(1, jobs)
    shown = _ShownPaths(files)
    project = ProjectIndex(cache.summaries() if cache is not None else None)
    outcomes: list[tuple[Work, list[Diagnostic]]] = []
    pending: list[Work] = []
    for source_file in files:
        try:
            settings = finder.for_path(source_file.path) if finder is not None else config
            work = read_work(source_file, settings, project, cache)
        except TapelintError as error:
            result.errors.append(str(error))
            continue
        answered = cache.get(work.key, str(source_file.path), work.text) if cache is not None and work.key else None
        if answered is None:
            pending.append(work)
        else:
            outcomes.append((work, answered))
    result.cached = len(outcomes)
    done = len(files) - len(pending)  # answered by the cache, or unreadable
    if progress is not None:
        progress(done, len(files))

    def finished(count: int) -> None:
        nonlocal done
        done += count
        if progress is not None:
            progress(done, len(files))

    for work, (found, failure) in zip(pending, _lint_all(pending, jobs, finished)):
        if failure is not None:
            result.errors.append(failure)
            continue
        if cache is not None and work.key:
            cache.put(work.key, str(work.source_file.path), found, _rests_on_other_modules(work, found))
        outcomes.append((work, found))
    seen: set[tuple] = set()
    for work, found in outcomes:
        for diagnostic in attribute(found, str(work.source_file.path), work.prelude, shown):
            # A module imported by several linted files is analysed with each: report its findings once.
            key = (diagnostic.path, diagnostic.cell, diagnostic.line, diagnostic.column, diagnostic.code)
            if key not in seen:
                seen.add(key)
                result.diagnostics.append(diagnostic)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    result.errors.sort()
    return result


def _load_before_fork(pending: list[Work]) -> bool:
    """Import the engine, libcst and the rules the files need once, in this process, where the workers
    are forked from (they share the pages), instead of once in every worker (half a second of CPU each),
    and parse the blocks of the project preludes that more than one file will be linted with, which every
    worker would otherwise parse for itself. Only when some file will be parsed: a run over files that
    never mention TensorFlow loads none of it. True when objects were frozen for the fork (gc.freeze: the
    workers' collector then never walks, and so never copies, the shared trees); unfreeze after the pool."""
    import multiprocessing

    if multiprocessing.get_start_method(allow_none=False) != "fork":
        return False
    parsed = [work for work in pending if _reaches_engine(work)]
    if not parsed:
        return False
    from tapelint.engine import warm_prelude

    for config in {id(work.config): work.config for work in parsed}.values():
        config.enabled_rules()
    # A file has a prelude only when it trains (ProjectIndex.prelude), and then the engine splices it.
    preludes = [work.prelude for work in parsed if work.prelude is not None]
    uses: dict[tuple[str, int], int] = {}  # block -> how many files are linted with it
    for prelude in preludes:
        for segment in prelude.segments:
            uses[(segment.path, segment.start)] = uses.get((segment.path, segment.start), 0) + 1
    warmed: set[str] = set()
    for prelude in preludes:
        if prelude.text not in warmed and any(uses[(s.path, s.start)] > 1 for s in prelude.segments):
            warmed.add(prelude.text)
            warm_prelude(prelude)
    gc.freeze()
    return True


def _lint_all(pending: list[Work], jobs: int,
              finished: Callable[[int], None]) -> list[tuple[list[Diagnostic], str | None]]:
    """The outcome of each file (findings, or the one-line error that stopped it), in order: on all cores
    when there are enough files to pay for a pool. `finished(n)` is told each time n more files are done."""
    if jobs <= 1 or len(pending) < _PARALLEL_THRESHOLD:
        serial = []
        for work in pending:
            serial.append(_lint_one(work))
            finished(1)
        return serial
    frozen = _load_before_fork(pending)
    try:
        return _in_pool(pending, jobs, finished)
    finally:
        if frozen:
            gc.unfreeze()


def _in_pool(pending: list[Work], jobs: int,
             finished: Callable[[int], None]) -> list[tuple[list[Diagnostic], str | None]]:
    """`_lint_all` on a pool of `jobs` worker processes."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # Chunks of interleaved files keep both the big and the small ones spread over the workers.
    count = min(jobs * 4, len(pending))
    chunks = [pending[i::count] for i in range(count)]
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_start_worker, initargs=(os.getpid(),))
    try:
        futures = {pool.submit(_lint_batch, chunk): index for index, chunk in enumerate(chunks)}
        per_chunk: list[list[tuple[list[Diagnostic], str | None]]] = [[] for _ in chunks]
        for future in as_completed(futures):
            per_chunk[futures[future]] = future.result()
            finished(len(chunks[futures[future]]))
    except BaseException:
        # Ctrl-C (or any failure): stop the workers now instead of waiting for their chunks. Linting
        # writes nothing, so nothing is left half-done.
        kill_pool(pool)
        raise
    pool.shutdown()
    outcomes: list[tuple[list[Diagnostic], str | None]] = [([], None)] * len(pending)
    for index, chunk in enumerate(per_chunk):
        for position, outcome in enumerate(chunk):
            outcomes[index + position * count] = outcome
    return outcomes

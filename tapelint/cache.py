"""The result cache: a file whose findings cannot have changed is not parsed again.

Like ruff's `.ruff_cache`, findings are stored per file under a key that covers everything they depend on:

- the file's bytes, its resolved path, and whether it was named on the command line;
- what the file imports from its own project, as the prelude the engine analyses with it
  (tapelint.project), so editing `models.py` re-lints the `train.py` that imports it;
- the settings: tapelint's version and code (the size and modification time of every module of the
  package and of its rules, so an edited rule in a development checkout is never answered from the
  cache), and the resolved config (selection, options, excludes, the config file's folder).

Every part of a key that stands for a file is a hash of its bytes, never its size and modification time
(which `cp -p`, `rsync -t`, `tar x` or a coarse clock keep across an edit): a module's summary is kept
under the hash of the module's bytes (tapelint.project), and a result under the hash of the file and the
prelude built from those summaries.

Each entry is one small JSON file written atomically (a temporary file renamed into place, by
tapelint.atomic), so runs in parallel (pre-commit and an editor, two terminals) never read a half-written
entry; the worst a race costs is linting a file twice. Nothing read from the folder is trusted: only a
regular file is opened (never through a symbolic link, never a FIFO or a device), at most
`MAX_ENTRY_BYTES` of it is read, and what it decodes to must match the entry's schema field by field
(`findings_from_json`); anything else is a miss, and the entry is removed so the run writes it again. A
cache folder that cannot be created or written is not an error: the run lints without it.

A file whose findings cost less to work out than an entry costs to read (one the engine never parses:
no TensorFlow word, not named on the command line; or an empty one) is not cached at all (`worth_caching`).

This module imports neither libcst nor the rules: a run where every file hits never loads them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

try:  # CPython's own BLAKE2: importing hashlib loads OpenSSL, about 10 ms of every run's start-up
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import blake2b as _blake2b

from tapelint.config import Config
from tapelint.diagnostic import Confidence, Diagnostic, Fix, Related, Severity, TextEdit

CACHE_DIR_NAME = ".tapelint_cache"
# The most of an entry that is read (and written): far above what a 4 MB module's findings or summary take.
MAX_ENTRY_BYTES = 32 * 1024 * 1024
# Bumped when the layout or the entry format changes.
FORMAT = 2  # 2: findings carry their related places ("r")
_PACKAGE = Path(__file__).resolve().parent


def default_dir(config: Config) -> Path:
    """`cache-dir` from the config, else `.tapelint_cache` next to the pyproject.toml the settings came
    from, else in the current folder (as ruff puts `.ruff_cache` at the project root)."""
    if config.cache_dir is not None:
        return Path(config.cache_dir)
    return Path(config.root or ".") / CACHE_DIR_NAME


def _code_fingerprint() -> str:
    """tapelint's own code as it is on disk now: the size and modification time of every module of the
    package and of its rules (a few milliseconds of `stat`). The runtime probe's modules are left out: the
    static pass never runs them."""
    import importlib.util

    folders = [_PACKAGE]
    spec = importlib.util.find_spec("tapelint.rules")
    if spec is not None and spec.submodule_search_locations:
        folders.extend(Path(location) for location in spec.submodule_search_locations)
    digest = _digest()
    for folder in folders:
        for parent, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "probe"))
            for name in sorted(names):
                if name.endswith(".py"):
                    try:
                        stat = os.stat(os.path.join(parent, name))
                    except OSError:
                        continue
                    digest.update(f"{parent}/{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()


def settings_key(config: Config) -> str:
    """One key for everything but the file: version, code, and the resolved config."""
    from tapelint import __version__

    table = dataclasses.asdict(config)
    table.pop("source", None)  # where the settings were read from, for messages only
    table.pop("baseline", None)  # filters the report, not a file's findings
    text = json.dumps([FORMAT, __version__, _code_fingerprint(), table], sort_keys=True, default=repr)
    return _digest(text.encode()).hexdigest()


class Cache:
    """Findings per file under `folder` (one folder for a run, whatever config each file has)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.writable = True
        self._settings: dict[Config, str] = {}

    @classmethod
    def for_config(cls, config: Config) -> "Cache":
        return cls(default_dir(config))

    def key(self, config: Config, path: Path, explicit: bool, data: bytes, prelude: str | None,
            modules: dict[str, str] | None = None) -> str:
        """The key of a file's findings: the settings, the file's path and bytes, and the prelude it is linted
        with, with the hash of the bytes of each module the prelude was built from (`modules`, path -> hash:
        the whole module counts, its suppression comments too, not only the lines taken into the prelude)."""
        settings = self._settings.get(config)
        if settings is None:
            settings = self._settings[config] = settings_key(config)
        digest = _digest(settings.encode())
        digest.update(b"\0" + os.fsencode(os.path.abspath(path)) + b"\0" + (b"1" if explicit else b"0") + b"\0")
        digest.update(_digest(data).digest())
        if prelude is not None:
            digest.update(b"\0prelude\0" + prelude.encode("utf-8", "surrogatepass"))
        for module, module_digest in sorted((modules or {}).items()):
            digest.update(b"\0module\0" + module.encode("utf-8", "surrogatepass") + b"\0" + module_digest.encode())
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.folder / f"v{FORMAT}" / key[:2] / f"{key[2:]}.json"

    @staticmethod
    def worth_caching(data: bytes, reaches_engine: bool) -> bool:
        """Whether a file's findings are worth an entry: only when the engine would parse it (tapelint.runner
        decides that from its text). The answer for any other file costs a substring search, less than
        reading an entry, and an entry per file of a tree of empty or unrelated files costs a 4 KB block each
        (100,000 empty files made 400 MB of entries, and a warm run slower than `--no-cache`). An empty file
        holds no finding even when it is named on the command line."""
        return reaches_engine and len(data) > 0

    def get(self, key: str, path: str, text: str | None = None) -> list[Diagnostic] | None:
        """The findings stored under `key`, reported at `path` (the file's name as given this run); None on a
        miss. `text`, the file's text, bounds the lines its own findings may be on."""
        entry = self._entry(key)
        stored = read_entry(entry)
        if stored is None:
            return None
        found = findings_from_json(stored, path, text)
        if found is None:
            _discard(entry)  # not what this version writes: lint the file again, and write the entry afresh
            return None
        if "importers" in stored and stored["importers"] != _importers_entry(path):
            return None  # a claim of absence read the modules that import this one, and they changed
        return found

    def put(self, key: str, path: str, found: list[Diagnostic], rests_on_importers: bool = False) -> None:
        """Store the findings of `path`. With `rests_on_importers` (a finding claims that something never
        happens, having read what the project's other modules import of this one), the entry also keeps that
        answer, and holds only while it stays the same."""
        entry: dict = {"findings": [_to_json(d, path) for d in found]}
        if rests_on_importers:
            entry["importers"] = _importers_entry(path)
        self.write(self._entry(key), json.dumps(entry, separators=(",", ":")))

    def summaries(self) -> "Summaries":
        """A store for the project index's module summaries, in this cache's folder."""
        return Summaries(self)

    def write(self, entry: Path, data: str) -> None:
        """Write one entry atomically; a cache that cannot be written is left alone for the rest of the run."""
        if not self.writable or len(data) > MAX_ENTRY_BYTES:
            return  # an entry too big to be read back is not written
        try:
            if not self.folder.is_dir():
                _create(self.folder)
            entry.parent.mkdir(parents=True, exist_ok=True)
            # Only a miss writes: a run where every file hits never imports this (nor tempfile).
            from tapelint.atomic import write_atomic_private

            write_atomic_private(entry, data)
        except OSError:
            self.writable = False  # a read-only checkout, a full disk: lint on without the cache


def _importers_entry(path: str) -> list[str] | None:
    from tapelint.project import imported_names

    names = imported_names(path)
    return None if names is None else sorted(names)


class Summaries:
    """The project index's module summaries (tapelint.project.SummaryStore), kept in the cache folder, so a
    warm run does not parse again every module the training files import. JSON, never pickle: a cache
    folder that came with a repository must not be able to run code."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self.code: str | None = None  # how modules are summarised is tapelint's code too (worked out when asked)

    def _entry(self, key: str) -> Path:
        if self.code is None:
            self.code = _code_fingerprint()
        digest = _digest(f"{self.code}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()
        return self.cache.folder / f"v{FORMAT}" / "modules" / digest[:2] / f"{digest[2:]}.json"

    def get(self, key: str) -> dict | None:
        """The data stored under `key`, or None. The caller checks its fields (tapelint.project) and `drop`s
        the entry when they are not what it writes."""
        data = read_entry(self._entry(key))
        return data if isinstance(data, dict) else None

    def put(self, key: str, data: dict) -> None:
        self.cache.write(self._entry(key), json.dumps(data, separators=(",", ":")))

    def drop(self, key: str) -> None:
        _discard(self._entry(key))


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_entry(entry: Path) -> Any:
    """The JSON value of a cache entry, or None: when there is none, and when it is not to be trusted, which
    also removes it. Only a regular file is read: a symbolic link is not followed (O_NOFOLLOW: one to
    `/dev/zero` would never end), a FIFO is opened without waiting for a writer (O_NONBLOCK) and, like a
    device, never read (fstat), at most `MAX_ENTRY_BYTES` are read, and JSON nested past Python's recursion
    limit is a miss, not an error. The caller checks the values."""
    try:
        handle = os.open(entry, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError:
        _discard(entry)  # a symbolic link (ELOOP), or an entry that cannot be read
        return None
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_ENTRY_BYTES:
            data = None
        else:
            # One read: a short one (the file cut since the fstat) gives JSON that does not decode, a miss.
            data = os.read(handle, status.st_size + 1)
            if len(data) > status.st_size:
                data = None  # grown since the fstat: not an entry written whole by a rename
    except OSError:
        data = None
    finally:
        os.close(handle)
    if data is None:
        _discard(entry)
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError, MemoryError):  # not JSON, not UTF-8, or nested too deeply
        _discard(entry)
        return None


def _discard(entry: Path) -> None:
    """Remove an entry that cannot be used (a folder in its place is left: the write that follows fails, and
    the run goes on without the cache)."""
    try:
        os.unlink(entry)
    except OSError:
        pass


def _create(folder: Path) -> None:
    """The cache folder, marked so that git and backup tools leave it alone (as ruff marks its own)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in ((".gitignore", "# Created by tapelint automatically.\n*\n"),
                       ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                                        "# This file is a cache directory tag created by tapelint.\n")):
        marker = folder / name
        if not marker.exists():
            marker.write_text(text, encoding="utf-8")


def clean(folder: Path) -> bool:
    """Remove a cache folder (`tapelint clean`). Only a folder tapelint made (it holds tapelint's
    CACHEDIR.TAG) is removed; returns whether there was one."""
    import shutil

    tag = folder / "CACHEDIR.TAG"
    if not folder.is_dir():
        return False
    try:
        mine = "tapelint" in tag.read_text(encoding="utf-8")
    except OSError:
        mine = False
    if not mine:
        from tapelint.errors import InputError

        raise InputError(f"{folder} is not a tapelint cache (no tapelint CACHEDIR.TAG); not removed")
    shutil.rmtree(folder, ignore_errors=True)
    return True


# --- findings as JSON: the file's own path is left out, so a file renamed in the command line still hits


def _to_json(d: Diagnostic, path: str) -> dict[str, Any]:
    item: dict[str, Any] = {
        "l": [d.line, d.column, d.end_line, d.end_column], "c": d.code, "n": d.name, "m": d.message,
        "s": d.severity.value, "k": d.confidence.value,
    }
    if d.path != path:
        item["p"] = d.path
    if d.cell is not None:
        item["cell"] = d.cell
    if d.fix is not None:
        item["f"] = [d.fix.title, d.fix.safe,
                     [[e.line, e.column, e.end_line, e.end_column, e.text] for e in d.fix.edits]]
    if d.extra:
        item["x"] = [list(pair) for pair in d.extra]
    if d.related:
        # [line, column, end line, end column, message, cell or None, path when another file's]
        item["r"] = [[r.line, r.column, r.end_line, r.end_column, r.message, r.cell]
                     + ([r.path] if r.path != d.path else []) for r in d.related]
    return item


# What a stored finding may hold. Anything else is not an entry this version wrote: the entry is a miss.
_CODE = re.compile(r"TL[0-9]{3}")
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# C0 and C1 control characters and DEL: a message or a title is one line of plain text (an escape sequence
# from a tampered entry would reach the terminal).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# In a fix's replacement text (code): the same, less tab, line feed, carriage return and form feed.
_CODE_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_FIELDS = frozenset({"l", "c", "n", "m", "s", "k", "p", "cell", "f", "x", "r"})
MAX_RELATED = 100
_SEVERITIES = {s.value: s for s in Severity}
_CONFIDENCES = {c.value: c for c in Confidence}
MAX_FINDINGS = 100_000
MAX_LINE = 1 << 26  # no file within tapelint's size limits has more lines or longer lines than this
MAX_TEXT = 100_000  # characters of a message, a title, a path
MAX_EDITS = 10_000
MAX_EDIT_TEXT = 4 * 1024 * 1024


class _Invalid(Exception):
    pass


def findings_from_json(stored: Any, path: str, text: str | None = None) -> list[Diagnostic] | None:
    """The findings of a result entry, or None when it is not exactly what `put` writes: every field of the
    expected type, within its bounds, and nothing else. `text`, the file's text, bounds the lines of the
    file's own findings."""
    try:
        if not isinstance(stored, dict) or "findings" not in stored or not set(stored) <= {"findings", "importers"}:
            raise _Invalid
        items = stored["findings"]
        if not isinstance(items, list) or len(items) > MAX_FINDINGS:
            raise _Invalid
        importers = stored.get("importers")
        if importers is not None and not (isinstance(importers, list) and len(importers) <= MAX_FINDINGS
                                          and all(_is_text(name, 1000) for name in importers)):
            raise _Invalid
        lines = MAX_LINE
        if items and text is not None:
            # Python counts lines at LF, CR and CRLF: this bound is never below the file's last line.
            lines = text.count("\n") + text.count("\r") + 2
        return [_from_json(item, path, lines) for item in items]
    except _Invalid:
        return None


def _is_int(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _is_text(value: Any, limit: int = MAX_TEXT, control: re.Pattern[str] = _CONTROL) -> bool:
    return type(value) is str and len(value) <= limit and control.search(value) is None


def _from_json(item: Any, path: str, lines: int) -> Diagnostic:
    """One stored finding (raises `_Invalid` when any field is not as `_to_json` writes it)."""
    if type(item) is not dict or not item.keys() <= _FIELDS:
        raise _Invalid
    try:
        place, code, name, message, severity, confidence = (item["l"], item["c"], item["n"], item["m"], item["s"],
                                                            item["k"])
    except KeyError:
        raise _Invalid from None
    other = item.get("p", path)
    cell = item.get("cell")
    if not (type(other) is str and 0 < len(other) <= MAX_TEXT and "\0" not in other):
        raise _Invalid
    if cell is not None and not _is_int(cell, 0, MAX_LINE):
        raise _Invalid
    own_lines = lines if other == path and cell is None else MAX_LINE
    if not (type(place) is list and len(place) == 4):
        raise _Invalid
    line, column, end_line, end_column = place
    if not (type(line) is int and type(end_line) is int and type(column) is int and type(end_column) is int
            and 0 <= line <= end_line <= own_lines and 0 <= column <= MAX_LINE and 0 <= end_column <= MAX_LINE):
        raise _Invalid
    if not (type(code) is str and _CODE.fullmatch(code) and type(name) is str and len(name) <= 100
            and _NAME.fullmatch(name) and type(message) is str and 0 < len(message) <= MAX_TEXT
            and not _CONTROL.search(message) and type(severity) is str and severity in _SEVERITIES
            and type(confidence) is str and confidence in _CONFIDENCES):
        raise _Invalid
    fix = None
    if "f" in item:
        fix = _fix_from_json(item["f"], own_lines)
    extra: tuple[tuple[str, Any], ...] = ()
    if "x" in item:
        pairs = item["x"]
        if not (type(pairs) is list and len(pairs) <= 100):
            raise _Invalid
        for pair in pairs:
            if not (type(pair) is list and len(pair) == 2 and _is_text(pair[0], 1000)
                    and (pair[1] is None or type(pair[1]) in (bool, int, float) or _is_text(pair[1]))):
                raise _Invalid
        extra = tuple((key, value) for key, value in pairs)
    related = _related_from_json(item["r"], other, own_lines) if "r" in item else ()
    return Diagnostic(
        path=other, line=line, column=column, end_line=end_line, end_column=end_column,
        code=code, name=name, message=message, severity=_SEVERITIES[severity],
        confidence=_CONFIDENCES[confidence], fix=fix, cell=cell, extra=extra, related=related,
    )


def _related_from_json(stored: Any, path: str, own_lines: int) -> tuple[Related, ...]:
    if not (type(stored) is list and 0 < len(stored) <= MAX_RELATED):
        raise _Invalid
    out = []
    for place in stored:
        if not (type(place) is list and len(place) in (6, 7)):
            raise _Invalid
        line, column, end_line, end_column, message, cell = place[:6]
        other = place[6] if len(place) == 7 else path
        if not (type(other) is str and 0 < len(other) <= MAX_TEXT and "\0" not in other and not _CONTROL.search(other)
                and (len(place) == 6 or other != path)):
            raise _Invalid
        lines = own_lines if other == path and cell is None else MAX_LINE
        if not (_is_int(line, 0, lines) and _is_int(end_line, line, lines) and _is_int(column, 0, MAX_LINE)
                and _is_int(end_column, 0, MAX_LINE) and (cell is None or _is_int(cell, 0, MAX_LINE))
                and _is_text(message) and message):
            raise _Invalid
        out.append(Related(other, line, column, end_line, end_column, message, cell))
    return tuple(out)


def _fix_from_json(stored: Any, lines: int) -> Fix:
    if not (type(stored) is list and len(stored) == 3):
        raise _Invalid
    title, safe, edits = stored
    if not (_is_text(title) and type(safe) is bool and type(edits) is list and len(edits) <= MAX_EDITS):
        raise _Invalid
    out = []
    for edit in edits:
        if not (type(edit) is list and len(edit) == 5):
            raise _Invalid
        line, column, end_line, end_column, text = edit
        if not (_is_int(line, 0, lines) and _is_int(end_line, line, lines) and _is_int(column, 0, MAX_LINE)
                and _is_int(end_column, 0, MAX_LINE) and _is_text(text, MAX_EDIT_TEXT, _CODE_CONTROL)):
            raise _Invalid
        out.append(TextEdit(line, column, end_line, end_column, text))
    return Fix(title, tuple(out), safe)


def _digest(data: bytes = b""):  # type: ignore[no-untyped-def]
    return _blake2b(data, digest_size=32)

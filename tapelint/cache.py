"""The result cache: a file whose findings cannot have changed is not parsed again.

Like ruff's `.ruff_cache`, findings are stored per file under a key that covers everything they depend on:

- the file's bytes, its resolved path, and whether it was named on the command line;
- what the file imports from its own project, as the prelude the engine analyses with it
  (tapelint.project), so editing `models.py` re-lints the `train.py` that imports it;
- the settings: tapelint's version and code (the size and modification time of every module of the
  package and of its rules, so an edited rule in a development checkout is never answered from the
  cache), and the resolved config (selection, options, excludes, the config file's folder).

Each entry is one small JSON file written atomically (a temporary file renamed into place, by
tapelint.atomic), so runs in parallel (pre-commit and an editor, two terminals) never read a half-written
entry; the worst a race costs is linting a file twice. An entry that cannot be read, or that does not
decode, is a miss. A cache folder that cannot be created or written is not an error: the run lints
without it.

This module imports neither libcst nor the rules: a run where every file hits never loads them.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

try:  # CPython's own BLAKE2: importing hashlib loads OpenSSL, about 10 ms of every run's start-up
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import blake2b as _blake2b

from tapelint.config import Config
from tapelint.diagnostic import Confidence, Diagnostic, Fix, Severity, TextEdit

CACHE_DIR_NAME = ".tapelint_cache"
# Bumped when the layout or the entry format changes.
FORMAT = 1
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

    def key(self, config: Config, path: Path, explicit: bool, data: bytes, prelude: str | None) -> str:
        settings = self._settings.get(config)
        if settings is None:
            settings = self._settings[config] = settings_key(config)
        digest = _digest(settings.encode())
        digest.update(b"\0" + os.fsencode(os.path.abspath(path)) + b"\0" + (b"1" if explicit else b"0") + b"\0")
        digest.update(_digest(data).digest())
        if prelude is not None:
            digest.update(b"\0prelude\0" + prelude.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.folder / f"v{FORMAT}" / key[:2] / f"{key[2:]}.json"

    def get(self, key: str, path: str) -> list[Diagnostic] | None:
        """The findings stored under `key`, reported at `path` (the file's name as given this run)."""
        try:
            with open(self._entry(key), "rb") as handle:
                stored = json.loads(handle.read())
            found = [_from_json(item, path) for item in stored["findings"]]
            if "importers" in stored and stored["importers"] != _importers_entry(path):
                return None  # a claim of absence read the modules that import this one, and they changed
        except (OSError, ValueError, KeyError, TypeError):
            return None
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
        if not self.writable:
            return
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
        self.code = _code_fingerprint()  # how modules are summarised is tapelint's code too

    def _entry(self, key: str) -> Path:
        digest = _digest(f"{self.code}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()
        return self.cache.folder / f"v{FORMAT}" / "modules" / digest[:2] / f"{digest[2:]}.json"

    def get(self, key: str) -> dict | None:
        try:
            with open(self._entry(key), "rb") as handle:
                data = json.loads(handle.read())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, data: dict) -> None:
        self.cache.write(self._entry(key), json.dumps(data, separators=(",", ":")))


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
    return item


def _from_json(item: dict[str, Any], path: str) -> Diagnostic:
    line, column, end_line, end_column = item["l"]
    fix = None
    if "f" in item:
        title, safe, edits = item["f"]
        fix = Fix(title, tuple(TextEdit(*edit) for edit in edits), safe)
    return Diagnostic(
        path=item.get("p", path), line=line, column=column, end_line=end_line, end_column=end_column,
        code=item["c"], name=item["n"], message=item["m"], severity=Severity(item["s"]),
        confidence=Confidence(item["k"]), fix=fix, cell=item.get("cell"),
        extra=tuple(tuple(pair) for pair in item.get("x", ())),
    )


def _digest(data: bytes = b""):  # type: ignore[no-untyped-def]
    return _blake2b(data, digest_size=32)

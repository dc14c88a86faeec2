"""The project index: which module is which file, and what each module defines.

A training script rarely holds everything: the model comes from `models.py`, the optimizer from
`optim.py`, the loss from `losses.py`. When tapelint lints `train.py` it puts, before the file's own
code, the definitions that `train.py` imports from modules of the same project (and what those
definitions need), so every rule sees them as if they were written there. Findings that land in that
prelude belong to the module they came from and are reported there, at its own lines.

The index is read lazily with `ast` (cheap, no libcst): only the modules a linted file imports are
read, each once per process, and the prelude is bounded in size. The framework's own modules
(`FRAMEWORK_PACKAGES`) are never part of a prelude.
"""

from __future__ import annotations

import ast
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

try:  # CPython's own BLAKE2, as tapelint.cache (hashlib loads OpenSSL, about 10 ms of start-up)
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import blake2b as _blake2b

from tapelint.errors import TapelintError
from tapelint.files import MAX_SOURCE_BYTES, decode, read_bytes, resolved, walk
from tapelint.prelude import Prelude, Segment
from tapelint.text import source_lines
from tapelint.triggers import TF_WORDS, trains

# Bounds that keep a prelude cheap on large packages: a module bigger than this is not inlined, and a
# prelude stops growing past this many lines or modules.
MAX_MODULE_LINES = 4000
MAX_PRELUDE_LINES = 3000
MAX_MODULES = 12
MAX_DEPTH = 3
MAX_IMPORTED_NAMES = 40
# The framework's own packages. Their modules are never spliced into a prelude: rules know the framework by
# its API (`names.canonical` reads `keras.src.models.Sequential` as `keras.Sequential`), so its
# implementation adds nothing they use, and linting Keras' or TensorFlow's own tests would otherwise
# analyse the 1,800-line `Layer` class again inside every test that imports a model class.
FRAMEWORK_PACKAGES = frozenset(TF_WORDS)

@dataclass
class ModuleSummary:
    path: Path
    name: str
    lines: list[str]
    # top-level statements: (first line, last line, names bound, names read)
    statements: list[tuple[int, int, set[str], set[str]]] = field(default_factory=list)
    # `from X import a as b` at top level: local name -> (absolute module, imported name)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)
    # `import X as y` at top level: local name -> absolute module
    modules: dict[str, str] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    digest: str = ""  # the hash of the bytes it was summarised from

    def to_json(self) -> dict:
        """What the store keeps: what `ast` found. The lines are the module's own, read again with its bytes."""
        return {"statements": [[first, last, sorted(bound), sorted(read)] for first, last, bound, read in self.statements],
                "imported": {k: list(v) for k, v in self.imported.items()}, "modules": self.modules,
                "star_imports": self.star_imports}

    @classmethod
    def from_json(cls, data: object, path: Path, name: str, lines: list[str]) -> "ModuleSummary":
        """The summary `to_json` stored for the module at `path`, whose text is `lines`; a ValueError when the
        data is not exactly what `to_json` writes (a tampered or foreign entry is read as a miss)."""
        if not (type(data) is dict and data.keys() == {"statements", "imported", "modules", "star_imports"}):
            raise ValueError("not a module summary")
        statements, imported, modules, star = data["statements"], data["imported"], data["modules"], data["star_imports"]
        if not (type(statements) is list and type(imported) is dict and type(modules) is dict and type(star) is list):
            raise ValueError("not a module summary")
        summary = cls(path, name, lines)
        for statement in statements:
            if not (type(statement) is list and len(statement) == 4):
                raise ValueError("not a statement")
            first, last, bound, read = statement
            if not (type(first) is int and type(last) is int and 1 <= first <= last <= len(lines)
                    and _are_names(bound) and _are_names(read)):
                raise ValueError("not a statement")
            summary.statements.append((first, last, set(bound), set(read)))
        for local, target in imported.items():
            if not (_is_name(local) and type(target) is list and len(target) == 2 and _is_name(target[0])
                    and _is_name(target[1])):
                raise ValueError("not an import")
            summary.imported[local] = (target[0], target[1])
        for local, module in modules.items():
            if not (_is_name(local) and _is_name(module)):
                raise ValueError("not an import")
            summary.modules[local] = module
        if not _are_names(star):
            raise ValueError("not an import")
        summary.star_imports = list(star)
        return summary


def _is_name(value: object) -> bool:
    """A name or a dotted module name as `ast` gives them (no module of tapelint's bounds has a longer one)."""
    return type(value) is str and 0 < len(value) <= 1000


def _are_names(values: object) -> bool:
    return type(values) is list and len(values) <= 100_000 and all(_is_name(v) for v in values)


class SummaryStore(Protocol):
    """Where summaries outlive the process (the result cache's `Summaries` is one): `get(key)` /
    `put(key, data)` with JSON-able data, keyed by the module's resolved path, the hash of its bytes and its
    root; `drop(key)` removes an entry whose data is not what was put."""

    def get(self, key: str) -> dict | None: ...

    def put(self, key: str, data: dict) -> None: ...

    def drop(self, key: str) -> None: ...


def package_root(path: Path) -> Path:
    """The folder that module names are relative to: above the outermost package (`__init__.py`)."""
    folder = resolved(path).parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder


def module_name(path: Path, root: Path) -> str | None:
    try:
        relative = resolved(path).relative_to(root)
    except ValueError:
        return None
    parts = list(relative.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if parts else None


class ProjectIndex:
    """Modules of the projects that hold the linted files, found on disk by name when imported."""

    def __init__(self, store: SummaryStore | None = None) -> None:
        self.store = store
        # (resolved path, root) -> (hash of the bytes it was summarised from, summary)
        self._summaries: dict[tuple[str, str], tuple[str, ModuleSummary | None]] = {}
        self._listings: dict[tuple[str, int], frozenset[str]] = {}

    # --- finding modules
    def find(self, name: str, root: Path) -> Path | None:
        base = root.joinpath(*name.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            try:
                if candidate.is_file():
                    return candidate
            except OSError:
                return None
        return None

    def top_level_names(self, root: Path) -> frozenset[str]:
        """What the first part of an absolute import can name in `root` (see `find`): its `.py` files'
        stems and its folders. Read again when the folder changes (the editor server lives long)."""
        try:
            changed = os.stat(root).st_mtime_ns  # an entry made, removed or renamed changes it
        except OSError:
            return frozenset()
        key = (str(root), changed)
        names = self._listings.get(key)
        if names is None:
            found: set[str] = set()
            try:
                with os.scandir(root) as entries:
                    for entry in entries:
                        if entry.name.endswith(".py"):
                            found.add(entry.name[:-3])
                        else:
                            try:
                                if entry.is_dir():
                                    found.add(entry.name)
                            except OSError:
                                continue
            except OSError:
                pass
            names = frozenset(found)
            # A folder changed in the last two seconds may change again within its clock's tick, which
            # leaves the time as it was: such a listing is not kept (as git does with racy index entries).
            if time.time_ns() - changed > 2_000_000_000:
                self._listings[key] = names
        return names

    def may_import_locally(self, path: Path, root: Path, source: str) -> bool:
        """False only when no `from ... import` of `source` can name a module of its project: a script
        outside any package whose text holds none of the names its folder could import. Cheaper than
        parsing the file for its imports, which most training scripts outside a package do not need."""
        if resolved(path).parent != root or not source.isascii():
            # In a package, `from . import x` names no module in its text; and Python folds identifiers
            # written with other characters (NFKC) into names that the text does not hold.
            return True
        return any(name in source for name in self.top_level_names(root))

    def summary(self, path: Path, root: Path) -> ModuleSummary | None:
        """The module's summary, kept under the hash of the module's bytes, never its size and modification
        time: an edit that keeps both (`cp -p`, `rsync -t`, `tar x`, a coarse clock) is read again all the same,
        in this process (the editor server lives long) and in the store. Reading and hashing a module costs
        microseconds; parsing it, milliseconds."""
        try:
            data = read_bytes(path, MAX_SOURCE_BYTES)  # a regular file only, and no further than the limit
        except TapelintError:
            return None
        digest = _blake2b(data, digest_size=32).hexdigest()
        place = (str(resolved(path)), str(root))
        known = self._summaries.get(place)
        if known is not None and known[0] == digest:
            return known[1]
        self._summaries[place] = (digest, None)  # an import cycle reads it as absent
        result = self._summary_of(path, root, data, f"{place[0]}:{digest}:{place[1]}")
        if result is not None:
            result.digest = digest
        self._summaries[place] = (digest, result)
        return result

    def _summary_of(self, path: Path, root: Path, data: bytes, stored_key: str) -> ModuleSummary | None:
        try:
            text = decode(data, str(path))
        except TapelintError:
            return None
        lines = source_lines(text)
        if len(lines) > MAX_MODULE_LINES:
            return None
        name = module_name(path, root) or path.stem
        stored = self.store.get(stored_key) if self.store is not None else None
        if stored is not None and self.store is not None:
            if stored.keys() == {"summary"}:
                if stored["summary"] is None:
                    return None
                try:
                    return ModuleSummary.from_json(stored["summary"], path, name, lines)
                except ValueError:
                    pass
            self.store.drop(stored_key)  # not what this version writes: summarise again, and store afresh
        result = _summarise(path, root, text, lines)
        if self.store is not None:
            self.store.put(stored_key, {"summary": result.to_json() if result is not None else None})
        return result

    # --- the prelude
    def _imports(self, source: str, own: str, is_package: bool) -> list[tuple[str, str | None, str, int]] | None:
        """`_from_imports`, through the store: a warm run does not parse every training file again only to
        read its imports (the store hashes the key, which holds the whole text)."""
        if self.store is None:
            return _from_imports(source, own, is_package)
        key = f"imports:{own}:{int(is_package)}:{source}"
        stored = self.store.get(key)
        if stored is not None:
            kept = _imports_from_json(stored)
            if kept is not False:
                return kept
            self.store.drop(key)
        found = _from_imports(source, own, is_package)
        self.store.put(key, {"imports": found})
        return found

    def prelude(self, path: Path, source: str) -> Prelude | None:
        """The definitions `source` (the file at `path`) imports from its own project, or None."""
        if "from " not in source or " import " not in source or not trains(source):
            return None  # the cheap tests first: `from ... import` is how a project shares code
        root = package_root(path)
        if not self.may_import_locally(path, root, source):
            return None
        own = module_name(path, root) or path.stem
        wanted = self._imports(source, own, path.name == "__init__.py")
        if not wanted or len(wanted) > MAX_IMPORTED_NAMES or path.name == "__init__.py":
            return None  # a package's facade re-exporting its API, not a training script
        builder = _Builder(self, root)
        for module, name, local, line in wanted:
            builder.line = line
            builder.want(module, name, local, depth=0)
        return builder.build()


def _imports_from_json(stored: dict) -> list[tuple[str, str | None, str, int]] | None | Literal[False]:
    """The imports `_imports` stored, or False when the data is not exactly what it writes."""
    if stored.keys() != {"imports"}:
        return False
    found = stored["imports"]
    if found is None:
        return None
    if type(found) is not list:
        return False
    out: list[tuple[str, str | None, str, int]] = []
    for item in found:
        if not (type(item) is list and len(item) == 4):
            return False
        module, name, local, line = item
        if not (_is_name(module) and (name is None or _is_name(name)) and _is_name(local)
                and type(line) is int and line >= 1):
            return False
        out.append((module, name, local, line))
    return out


def _from_imports(source: str, own: str, is_package: bool) -> list[tuple[str, str | None, str, int]] | None:
    """The module's top-level `from ... import` names: (module, name or None for '*', local name, line);
    None when the text does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    wanted: list[tuple[str, str | None, str, int]] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, own, is_package)
            if module is None:
                continue
            for alias in node.names:
                wanted.append((module, None if alias.name == "*" else alias.name, alias.asname or alias.name,
                               node.lineno))
    return wanted


def _absolute(module: str | None, level: int, own: str, is_package: bool) -> str | None:
    if level == 0:
        return module
    parts = own.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        if level - 1 > len(parts):
            return None
        parts = parts[: len(parts) - (level - 1)]
    if module:
        parts.append(module)
    return ".".join(parts) if parts else None


def _summarise(path: Path, root: Path, text: str, lines: list[str]) -> ModuleSummary | None:
    """What `ast` finds in the module at `path`, whose text is `text` and lines `lines`; None when it does not
    parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    name = module_name(path, root) or path.stem
    summary = ModuleSummary(path, name, lines)
    for node in tree.body:
        first = min([node.lineno, *[d.lineno for d in getattr(node, "decorator_list", [])]])
        last = node.end_lineno or node.lineno
        bound: set[str] = set()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                bound |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                bound.add(local)
                summary.modules[local] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, name, path.name == "__init__.py")
            for alias in node.names:
                if alias.name == "*":
                    if module:
                        summary.star_imports.append(module)
                    continue
                local = alias.asname or alias.name
                bound.add(local)
                if module:
                    summary.imported[local] = (module, alias.name)
        # Every name read (the base of `x.y`, stored to or not, is a read of `x` too).
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        summary.statements.append((first, last, bound, read))
    return summary


class _Builder:
    def __init__(self, index: ProjectIndex, root: Path) -> None:
        self.index = index
        self.root = root
        # module path -> set of statement indices to include
        self.chosen: dict[str, set[int]] = {}
        self.order: list[ModuleSummary] = []  # dependencies first
        self.aliases: list[str] = []
        self.total = 0
        self.line = 0  # the line of the import being followed
        self.origin: dict[str, int] = {}
        self.modules: dict[str, ModuleSummary | None] = {}

    def _module(self, name: str) -> ModuleSummary | None:
        """The module `name`'s summary, read once per prelude (each read hashes the file's bytes)."""
        if name in self.modules:
            return self.modules[name]
        path = self.index.find(name, self.root)
        summary = None if path is None else self.index.summary(path, self.root)
        self.modules[name] = summary
        return summary

    def want(self, module: str, name: str | None, local: str, depth: int) -> None:
        if depth > MAX_DEPTH or self.total > MAX_PRELUDE_LINES or module.partition(".")[0] in FRAMEWORK_PACKAGES:
            return
        summary = self._module(module)
        if summary is None:
            return
        names = {name} if name is not None else {n for _, _, bound, _ in summary.statements for n in bound}
        self._include(summary, names, depth)
        if name is not None and local != name and name in {n for _, _, b, _ in summary.statements for n in b}:
            self.aliases.append(f"{local} = {name}")

    def _include(self, summary: ModuleSummary, names: set[str], depth: int) -> None:
        key = str(summary.path)
        self.origin.setdefault(key, self.line)
        if key not in self.chosen:
            if len(self.chosen) >= MAX_MODULES:
                return
            self.chosen[key] = set()
        chosen = self.chosen[key]
        # A worklist in a fixed order (never a set's pop: its order changes with the hash seed, and with it
        # which modules make the size bounds, the prelude's text, its findings and its cache key).
        pending = sorted(names, reverse=True)
        seen: set[str] = set()
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            if current in summary.imported:
                # Re-exported or used from another module of the project: include it from there first.
                module, original = summary.imported[current]
                self.want(module, original, current, depth + 1)
            for index, (first, last, bound, read) in enumerate(summary.statements):
                if current in bound and index not in chosen:
                    chosen.add(index)
                    self.total += last - first + 1
                    pending.extend(sorted(read - seen, reverse=True))
        for module in summary.star_imports:
            self.want(module, None, "*", depth + 1)
        if summary not in self.order:
            self.order.append(summary)

    def build(self) -> Prelude | None:
        parts: list[str] = []
        segments: list[Segment] = []
        line = 1
        for summary in self.order:
            chosen = sorted(self.chosen.get(str(summary.path), ()))
            text = "\n".join(summary.lines)
            for index in chosen:
                first, last, _, _ = summary.statements[index]
                block = summary.lines[first - 1:last]
                if not block:
                    continue
                segments.append(Segment(str(summary.path), line, line + len(block) - 1, first, text))
                parts.extend(block)
                line += len(block)
        if not segments:
            return None
        parts.extend(self.aliases)
        line += len(self.aliases)
        digests = {str(summary.path): summary.digest for summary in self.order if str(summary.path) in self.chosen}
        return Prelude("\n".join(parts) + "\n", line - 1, segments, dict(self.origin), digests)


# ----------------------------------------------------------------------------- who imports a module
# Bounds on the search for a module's importers: past them the answer is "unknown" (None), never "nobody".
MAX_IMPORTER_FILES = 3000
MAX_IMPORTER_FOLDERS = 3000
# Folders that hold no module of the project itself.
_NOT_PROJECT = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages", "build", "dist"})


def imported_names(path: str) -> frozenset[str] | None:
    """The names of the module at `path` that other modules of its project import: `from m import a` gives
    `a`; `import m`, `from pkg import m` and `from m import *` give `*` (anything of it may be used there).
    Empty when no other module does, or when nothing can import the file (a notebook, standard input, a path
    that is no `.py` file); None when the project is too large to read whole within the bounds.

    Asked lazily, only by rules about to claim that an object of the module is never used. The project's
    import statements are read once per process (and again after `IMPORT_TABLE_SECONDS`, for the long-lived
    daemon and editor server); a question parses, with `ast`, only the modules whose imports mention it."""
    file = Path(path)
    try:
        if file.suffix != ".py" or not file.is_file():
            return frozenset()
    except OSError:
        return frozenset()
    me = resolved(file)
    root = package_root(file)
    own = module_name(file, root)
    if own is None:
        return frozenset()
    table = _import_table(root)
    if table is None:
        return None
    stem = own.rsplit(".", 1)[-1]
    found: set[str] = set()
    for candidate, imports in table:
        if candidate == me or stem not in imports:
            continue
        found |= _imports_of(imports, own, module_name(candidate, root) or candidate.stem,
                             candidate.name == "__init__.py")
        if "*" in found:
            break
    return frozenset(found)


IMPORT_TABLE_SECONDS = 10.0
_import_tables: dict[str, tuple[float, list[tuple[Path, str]] | None]] = {}


def forget_import_tables() -> None:
    """Read the projects' imports afresh from the next question on (each `lint_paths` run starts so)."""
    _import_tables.clear()


def _import_table(root: Path) -> list[tuple[Path, str]] | None:
    """Each `.py` file under `root` with the text of its import statements (None past the bounds)."""
    key = str(root)
    now = time.monotonic()
    kept = _import_tables.get(key)
    if kept is not None and now - kept[0] < IMPORT_TABLE_SECONDS:
        return kept[1]
    table: list[tuple[Path, str]] | None = []
    files = folders = 0
    for folder, subfolders, names in walk(root):
        folders += 1
        if folders > MAX_IMPORTER_FOLDERS:
            table = None
            break
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in _NOT_PROJECT
                               and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg")))
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            files += 1
            if files > MAX_IMPORTER_FILES:
                table = None
                break
            candidate = Path(folder, name)
            try:
                text = read_bytes(candidate).decode("utf-8", errors="replace")
            except TapelintError:
                continue
            if "import" in text:
                assert table is not None
                table.append((resolved(candidate), _import_statements(text)))
        if table is None:
            break
    _import_tables[key] = (now, table)
    return table


def _import_statements(text: str) -> str:
    """The module's `import` and `from ... import` statements (wherever they are, parenthesised lists
    included), dedented one per line: what `_imports_of` parses instead of the whole module."""
    out: list[str] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        stripped = lines[index].split("#", 1)[0].strip()
        index += 1
        if not (stripped.startswith("import ") or stripped.startswith("from ")):
            continue
        statement = stripped
        while (statement.count("(") > statement.count(")") or statement.endswith("\\")) and index < len(lines):
            statement = statement.rstrip("\\") + " " + lines[index].split("#", 1)[0].strip()
            index += 1
        out.extend(part.strip() for part in statement.split(";") if part.strip())
    return "\n".join(out)


def _imports_of(statements: str, own: str, importer: str, is_package: bool) -> set[str]:
    """What the import statements `statements` (one per line) of the module `importer` import of `own`.
    A line that does not parse (a statement cut by the extraction) is skipped."""
    nodes: list[ast.stmt] = []
    for line in statements.splitlines():
        try:
            nodes.extend(ast.parse(line).body)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    tree = ast.Module(body=nodes, type_ignores=[])
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(alias.name == own or alias.name.startswith(own + ".") for alias in node.names):
                found.add("*")
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, importer, is_package)
            if base is None:
                continue
            if base == own:
                found.update(alias.name for alias in node.names)
            elif any(f"{base}.{alias.name}" == own for alias in node.names):
                found.add("*")  # `from pkg import module`
    return found

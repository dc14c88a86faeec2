"""Finding the files to lint, following their paths' links, and reading them as text."""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Protocol

from tapelint.errors import InputError

PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"


@dataclass(frozen=True)
class SourceFile:
    path: Path
    explicit: bool  # named on the command line (always parsed, never prefiltered away)

    @property
    def is_notebook(self) -> bool:
        return self.path.suffix == NOTEBOOK_SUFFIX


# Folder (absolute, as written) -> the folder with its links followed. A run resolves thousands of files in
# a few hundred folders; following every link of every file's path again was 0.8 s of a warm run over the
# installed tensorflow. Cleared by forget_resolved_folders() at the start of each run.
_REAL_FOLDERS: dict[str, Path] = {}
_MAX_REAL_FOLDERS = 20_000


def resolved(path: Path) -> Path:
    """`path` made absolute with links followed, or merely absolute where a link loops (`Path.resolve`,
    with each folder's links followed once per run; a name that is itself a link is followed each time)."""
    try:
        absolute = os.path.abspath(path)
        folder, name = os.path.split(absolute)
        if not name or ".." in Path(path).parts or os.path.islink(absolute):
            return path.resolve()
        real = _REAL_FOLDERS.get(folder)
        if real is None:
            if len(_REAL_FOLDERS) >= _MAX_REAL_FOLDERS:
                _REAL_FOLDERS.clear()
            real = _REAL_FOLDERS[folder] = Path(folder).resolve()
        return real / name
    except (RuntimeError, OSError):  # a symlink loop: RuntimeError before Python 3.13, OSError after
        return Path(os.path.abspath(path))


def forget_resolved_folders() -> None:
    """Follow folders' links afresh (a new run: links may have changed since the last one)."""
    _REAL_FOLDERS.clear()


class Selection(Protocol):
    """What `discover` asks of the settings (a tapelint.config.Config), named here so that this module,
    which the config imports `resolved` from, does not import the config back."""

    @property
    def force_exclude(self) -> bool: ...

    @property
    def include_notebooks(self) -> bool: ...

    @property
    def respect_gitignore(self) -> bool: ...

    def is_excluded(self, path: Path, walk_root: Path | None = None) -> bool: ...

    def excluded_name(self, name: str, relative: str) -> bool: ...

    def relative_path(self, path: Path) -> str: ...


def discover(paths: list[Path], config: Selection, errors: list[str] | None = None) -> list[SourceFile]:
    """Expand folders into the Python files (and notebooks) below them, in a stable order.

    A path that does not exist, a folder that cannot be read, or a named path that is not a regular file
    (a FIFO, a socket, a device) is one line in `errors`, and the other paths are still linted, as ruff
    does. Without an `errors` list, the first such problem raises InputError. Files found by walking a
    folder that are not regular files are skipped: opening a FIFO would hang the run."""

    def problem(message: str) -> None:
        if errors is None:
            raise InputError(message)
        errors.append(message)

    found: dict[Path, SourceFile] = {}
    for path in paths:
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            problem(f"{path}: no such file or directory")
            continue
        except OSError as error:  # a symlink loop, a name too long
            problem(f"{path}: cannot read ({error.strerror or error})")
            continue
        if not stat.S_ISDIR(mode):
            if not stat.S_ISREG(mode):
                problem(f"{path}: not a regular file")
                continue
            if config.force_exclude and config.is_excluded(path):
                continue
            found.setdefault(path, SourceFile(path, explicit=True))
            continue
        if not os.access(path, os.R_OK | os.X_OK):
            problem(f"{path}: cannot read the folder (permission denied)")
            continue

        def unreadable(error: OSError) -> None:
            problem(f"{error.filename}: cannot read the folder ({error.strerror or error})")

        walked: list[Path] = []
        base = config.relative_path(path)
        base = "" if base == "." else base
        for folder, subfolders, filenames in walk(path, onerror=unreadable):
            folder_path = Path(folder)
            # Relative to the config's folder, built from the walk instead of resolving every entry again;
            # the walk does not enter linked folders, so these are the entries' own paths.
            below = os.path.relpath(folder, path)
            here = base if below == "." else posixpath.join(base, Path(below).as_posix())
            subfolders[:] = sorted(
                d for d in subfolders
                if not d.startswith(".") and not config.excluded_name(d, posixpath.join(here, d))
            )
            for filename in sorted(filenames):
                wanted = filename.endswith(PYTHON_SUFFIXES) or (
                    config.include_notebooks and filename.endswith(NOTEBOOK_SUFFIX)
                )
                if wanted and not config.excluded_name(filename, posixpath.join(here, filename)):
                    file_path = folder_path / filename
                    if _regular(file_path):
                        walked.append(file_path)
        ignored = git_ignored(path, walked) if config.respect_gitignore else set()
        for file_path in walked:
            if file_path not in ignored:
                found.setdefault(file_path, SourceFile(file_path, explicit=False))
    return sorted(found.values(), key=lambda f: str(f.path))


def walk(top: str | Path, onerror: Callable[[OSError], None] | None = None,
         ) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top)`, top-down and without following linked folders, but with a stack instead of
    recursion: os.walk recurses in Python 3.11, and a folder chain a thousand deep (paths still under
    PATH_MAX) raised RecursionError and lost the findings of every file. The caller may prune the
    subfolders list in place, as with os.walk; the kept ones are walked in that order."""
    pending: list[str] = [os.fspath(top)]
    while pending:
        folder = pending.pop()
        subfolders: list[str] = []
        filenames: list[str] = []
        linked: set[str] = set()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        is_folder = entry.is_dir()
                        if is_folder and entry.is_symlink():
                            linked.add(entry.name)
                    except OSError:
                        is_folder = False
                    (subfolders if is_folder else filenames).append(entry.name)
        except OSError as error:
            if onerror is not None:
                onerror(error)
            continue
        yield folder, subfolders, filenames
        pending.extend(os.path.join(folder, name) for name in reversed(subfolders) if name not in linked)


def git_ignored(folder: Path, files: list[Path]) -> set[Path]:
    """Which of `files` (found by walking `folder`) git ignores: its `.gitignore` files, `.git/info/exclude`
    and the user's global excludes, as git itself reads them. Nothing when the folder is not in a git work
    tree or git is not installed, and nothing when the folder itself is ignored: the user named it
    (`tapelint .venv/lib/python3.11/site-packages/keras`)."""
    import subprocess

    if not files:
        return set()
    try:
        named = subprocess.run(["git", "-C", str(folder), "check-ignore", "-q", "."], capture_output=True,
                               timeout=60, stdin=subprocess.DEVNULL)
        if named.returncode != 1:
            return set()  # 0: the folder itself is ignored; 128: not a work tree (or no git)
        base = os.path.abspath(folder)
        names = {os.path.relpath(os.path.abspath(f), base): f for f in files}
        run = subprocess.run(["git", "-C", base, "check-ignore", "--stdin", "-z"],
                             input="\0".join(names).encode("utf-8", "surrogateescape") + b"\0",
                             capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return set()
    if run.returncode not in (0, 1):
        return set()
    ignored = run.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {names[name] for name in ignored if name in names}


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def source_encoding(data: bytes, name: str = "<source>") -> str:
    """The encoding CPython would read these bytes with: a UTF-8 BOM, else a PEP 263 coding cookie on
    line 1 or 2, else UTF-8. An unknown or contradictory cookie is a one-line InputError, as it is a
    SyntaxError for Python."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        if str(error).startswith("invalid or missing encoding declaration"):
            return "utf-8"  # no cookie, and line 1 or 2 is not UTF-8: `decode` says where
        problem = ("its coding cookie names another encoding than its UTF-8 BOM"
                   if data.startswith(b"\xef\xbb\xbf") else str(error))
        raise InputError(f"{name}: {problem}; Python cannot read this file either") from None
    return "utf-8" if encoding in ("utf-8", "utf-8-sig") else encoding


def decode(data: bytes, name: str, *, python: bool = True) -> str:
    """Bytes to text as Python would read them (UTF-8, BOM allowed, or the encoding a PEP 263 cookie
    names), or a one-line InputError. `python=False` (notebook JSON) is always UTF-8."""
    encoding = source_encoding(data, name) if python else "utf-8"
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        what = "UTF-8" if encoding == "utf-8" else f"{encoding}, the encoding its coding cookie declares,"
        raise InputError(
            f"{name}: not valid {what} (byte 0x{data[error.start]:02x} at offset {error.start}); "
            "tapelint reads Python files as Python does: UTF-8 unless a PEP 263 coding cookie says otherwise"
        ) from None


# Hand-written Python stays far below these; past them a file is generated code or data, and parsing it
# would take minutes and gigabytes (a 50 MB file passed 8 GB). A notebook's JSON may carry images.
MAX_SOURCE_BYTES = 4 * 1024 * 1024
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024


def check_size(name: str, size: int, limit: int = MAX_SOURCE_BYTES) -> None:
    if size > limit:
        raise InputError(f"{name}: {size / 2**20:.1f} MB is over tapelint's {limit // 2**20} MB limit for one file; "
                         "not checked (generated code or data? exclude it in [tool.tapelint])")


# Kernel and device file systems: their "regular" files (/proc/kmsg) may block on read or never end.
_SPECIAL_FOLDERS = ("/proc", "/sys", "/dev")


def _special(real: str) -> bool:
    return any(real == folder or real.startswith(folder + "/") for folder in _SPECIAL_FOLDERS)


def read_bytes(path: Path, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of the regular file at `path`, or a one-line InputError. Whether it is regular is asked
    of the file opened (after its links are followed), not of its name: a `*.py` link to a FIFO, a device
    or a kernel file (/proc/kmsg is "regular" but blocks) would hang the run. Opened without blocking, and
    read no further than `limit` allows (a file whose size the system does not know)."""
    if os.name == "posix" and _special(str(resolved(path))):
        raise InputError(f"{path}: not a regular file (a kernel or device file, under /proc, /sys or /dev)")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(f"{path}: is a directory")
        if not stat.S_ISREG(mode):
            raise InputError(f"{path}: not a regular file")
        check_size(str(path), os.fstat(fd).st_size, limit)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                check_size(str(path), total, limit)
        return b"".join(chunks)
    except BlockingIOError:
        raise InputError(f"{path}: not a regular file (reading it would block)") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    finally:
        os.close(fd)


def read_text(path: Path) -> str:
    return decode(read_bytes(path), str(path))

"""Writing a user's file without ever leaving it half-written: one rename, permissions and owner kept,
stale temporaries of killed runs swept, and the files that must not be replaced refused. tapelint's own
files (the result cache's entries) are written by the same rename, without what only a user's file needs."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


TEMP_SUFFIX = ".tapelint-tmp"


class ChangedMeanwhile(Exception):
    """The file no longer holds the bytes its new content was computed from (another program saved it,
    or removed it, in the meantime); it was left as it is."""


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


def write_atomic(path: Path, text: str, encoding: str = "utf-8", *, expected: bytes | None = None) -> None:
    """Replace a file's content in one rename, keeping its permissions and, where we may, its owner;
    never a half-written file. The text is encoded before anything is created, so a text the encoding
    cannot hold writes nothing. With `expected` (the bytes the new text was computed from), the file is
    read again right before the rename and left alone, raising ChangedMeanwhile, unless it still holds
    exactly those bytes: an edit another program saved meanwhile is never overwritten."""
    data = text.encode(encoding)
    if path.is_symlink():
        path = path.resolve()  # replace the file the link points to, not the link
    status: os.stat_result | None
    try:
        status = path.stat()
        mode = stat.S_IMODE(status.st_mode)
    except OSError:
        status = None
        # A new file gets the mode any program would give it: 0666 less the umask (mkstemp's is 0600).
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    remove_stale_temps(path)
    _replace(path, data, mode, status, durable=True, expected=expected)


def write_atomic_private(path: Path, text: str) -> None:
    """Write one of tapelint's own files (an entry of the result cache) in one rename, so a concurrent
    reader never sees it half-written. Unlike `write_atomic`: it is created readable by its owner only
    (mkstemp's 0600), not flushed to disk first (one lost in a power cut is only a cache miss), and no
    stale temporaries are swept (a cache folder holds thousands of entries)."""
    _replace(path, text.encode("utf-8"), None, None, durable=False)


def _replace(path: Path, data: bytes, mode: int | None, status: os.stat_result | None, *, durable: bool,
             expected: bytes | None = None) -> None:
    """Write `data` to a temporary file next to `path` (named for `remove_stale_temps`), give it `mode` and
    the owner in `status` where given, check that `path` still holds `expected` where given, and rename
    the temporary over `path`; on any failure, remove it."""
    fd, temp = tempfile.mkstemp(prefix=_temp_prefix(path.name, os.getpid()), suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        if status is not None and (status.st_uid, status.st_gid) != (os.geteuid(), os.getegid()):
            try:
                # As root, a fixed file must stay its owner's; as anyone else this only keeps the group.
                os.chown(temp, status.st_uid, status.st_gid)
            except OSError:
                pass
        if expected is not None:
            # The last thing before the rename, to keep the window in which an edit could still be lost
            # as short as we can (POSIX has no compare-and-rename): the content, not the mtime, which a
            # save within the same clock tick or a restored timestamp would leave equal.
            _check_unchanged(path, expected)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _check_unchanged(path: Path, expected: bytes) -> None:
    try:
        with open(path, "rb") as handle:
            # One byte more than expected is enough to tell a longer file apart.
            now = handle.read(len(expected) + 1)
    except OSError:
        raise ChangedMeanwhile(str(path)) from None  # removed or replaced by something unreadable
    if now != expected:
        raise ChangedMeanwhile(str(path))


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

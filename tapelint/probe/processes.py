"""The processes a probed script starts, and the probe's own: find every one of them whatever session or group it
moved to, stop them all, notice when the process that started us is gone, and clear temporary folders whose
owner died. Linux reads /proc and uses prctl; elsewhere only process groups are stopped. Imports no TensorFlow."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
FOLDER_PREFIX = "tapelint-probe-"
LOCK_NAME = "owner.lock"
# A folder younger than this is never swept: its owner may be between creating the lock file and locking it.
SWEEP_MIN_AGE_S = 30.0


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Linux: orphaned descendants (a `setsid` daemon whose parent exited) are re-parented to this process instead
    of init, so that they can still be found and stopped. False elsewhere."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(signum: int) -> bool:
    """Linux: the kernel sends `signum` to this process when the thread that started it exits (kill -9 included)."""
    return _prctl(PR_SET_PDEATHSIG, int(signum))


@dataclass(frozen=True)
class Proc:
    pid: int
    parent: int
    group: int
    state: str
    started: int  # clock ticks after boot: with the pid, names one process (pids are reused)


def _read_stat(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return Proc(pid, int(fields[1]), int(fields[2]), fields[0].decode("ascii", "replace"), int(fields[19]))
    except (OSError, IndexError, ValueError):
        return None


def table() -> dict[int, Proc]:
    """Every process, from /proc (empty where there is none)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    found = {}
    for entry in entries:
        if entry.isdigit():
            proc = _read_stat(int(entry))
            if proc is not None:
                found[proc.pid] = proc
    return found


def exited(pid: int) -> bool:
    """Whether `pid` has exited (or is exiting: a zombie), as far as /proc tells; False where there is no /proc."""
    if not os.path.isdir("/proc/self"):
        return False
    proc = _read_stat(pid)
    return proc is None or proc.state in ("Z", "X")


def start_time(pid: int) -> int | None:
    proc = _read_stat(pid)
    return proc.started if proc is not None else None


def tree(roots: Iterable[int], processes: dict[int, Proc]) -> list[int]:
    """The living roots and every living descendant of them (iterative: a fork chain can be deep)."""
    children: dict[int, list[int]] = {}
    for proc in processes.values():
        children.setdefault(proc.parent, []).append(proc.pid)
    out: list[int] = []
    seen: set[int] = set()
    todo = [pid for pid in roots if pid in processes]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        if processes[pid].state not in ("Z", "X"):
            out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _signal(pid: int, signum: int) -> bool:
    try:
        os.kill(pid, signum)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _reap(pids: Iterable[int]) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)  # the ones that are (or were re-parented to) our children
        except (ChildProcessError, OSError):
            pass


def stop_all(roots: Callable[[dict[int, Proc]], Iterable[int]], rounds: int = 20) -> list[Proc]:
    """Kill every process under `roots(table)`, whatever session or group it is in. The tree is frozen first
    (SIGSTOP), and read again until no new process appears, so that nothing forks while it is being stopped;
    then each is killed. Repeated while new ones show up (a killed daemon's children are re-parented to the
    nearest subreaper). Returns the processes killed."""
    killed: dict[tuple[int, int], Proc] = {}
    refused: set[tuple[int, int]] = set()  # could not be signalled (gone meanwhile, or not ours): asked once
    for _ in range(rounds):
        frozen: dict[int, Proc] = {}
        for _ in range(1000):  # a fork bomb outruns any number of reads; stop trying at some point
            processes = table()
            new = [pid for pid in tree(roots(processes), processes)
                   if pid not in frozen and (pid, processes[pid].started) not in killed
                   and (pid, processes[pid].started) not in refused]
            if not new:
                break
            for pid in new:
                if _signal(pid, signal.SIGSTOP):
                    frozen[pid] = processes[pid]
                else:
                    refused.add((pid, processes[pid].started))
        if not frozen:
            break
        for pid, proc in frozen.items():
            if _signal(pid, signal.SIGKILL):
                killed[(pid, proc.started)] = proc
        _reap(frozen)
        time.sleep(0.01)  # let the kernel re-parent the children of the killed ones
    _reap(pid for pid, _ in killed)
    return list(killed.values())


def children_of(pid: int, processes: dict[int, Proc]) -> list[int]:
    return [proc.pid for proc in processes.values() if proc.parent == pid]


# ---------------------------------------------------------------------------------------------------------------
# The probe's temporary folder: locked by its owner for as long as it lives


class ProbeFolder:
    """A `tapelint-probe-*` folder under the temporary directory, holding an exclusive lock on `owner.lock` for
    as long as the run that made it lives: a later run that can take the lock knows the owner is dead (however it
    died, pid reuse or not) and removes the folder."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
        self._lock: int | None = None
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock, and no sweeping either
            return
        fd = os.open(self.path / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, f"{os.getpid()} {start_time(os.getpid()) or ''}\n".encode())
        except OSError:
            os.close(fd)
            return
        self._lock = fd

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def sweep_stale_folders(where: str | None = None, min_age_s: float = SWEEP_MIN_AGE_S) -> int:
    """Remove the `tapelint-probe-*` folders of runs that died without cleaning up (kill -9, the OOM killer):
    those whose lock nobody holds. Returns how many were removed."""
    try:
        import fcntl
    except ImportError:
        return 0
    folder = where or tempfile.gettempdir()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    removed = 0
    uid = os.getuid()
    for entry in entries:
        if not entry.name.startswith(FOLDER_PREFIX):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != uid:
                continue
            fd = os.open(os.path.join(entry.path, LOCK_NAME), os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue  # no lock file: not ours to judge
        try:
            if time.time() - os.fstat(fd).st_mtime < min_age_s:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its owner is alive
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
        finally:
            os.close(fd)
    return removed

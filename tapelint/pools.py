"""Worker processes that never outlive the process they work for, and stopping a pool of them at once,
for the command line's run (tapelint.runner) and the editor server's lint worker (tapelint.lsp)."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

# How often a worker looks whether the process it works for is still there (seconds).
PARENT_CHECK_SECONDS = 0.5


def die_with_parent(parent: int) -> None:
    """Run at the start of a worker process (a pool's initializer), with the pid of the process that made
    it: the worker ends when that process does, however it ends (kill -9 included), instead of living on
    idle under PID 1. On Linux the kernel sends it SIGTERM then (the parent-death signal); everywhere, and
    as a second line, a thread looks every half second whether its parent changed, and ends it if so."""
    if os.getppid() != parent:
        os._exit(1)  # the parent was gone before the worker started
    if sys.platform.startswith("linux"):
        _set_parent_death_signal()
        if os.getppid() != parent:  # it died between the two looks: the signal was never armed
            os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="tapelint-parent-watch", daemon=True).start()


def _set_parent_death_signal() -> None:
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # no prctl here: the watching thread does it alone


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_SECONDS)
        if os.getppid() != parent:
            os._exit(1)


def resident_bytes(pool: ProcessPoolExecutor | None) -> int:
    """The memory the pool's worker processes hold now (resident set, summed); 0 where the system does not
    say (it is read from /proc, on Linux)."""
    total = 0
    for pid in list(getattr(pool, "_processes", None) or {}):
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                total += int(handle.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            pass
    return total


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") and "SC_PAGE_SIZE" in os.sysconf_names else 4096


def kill_pool(pool: ProcessPoolExecutor | None, wait: float = 0.0) -> None:
    """Kill the pool's worker processes now, instead of waiting for the work they are doing (one may be in
    the middle of a long parse), and shut the pool down; nothing when `pool` is None. With `wait`, wait up
    to that many seconds for the pool's own thread to see its workers end and close its queues: the
    semaphores of the queues of a spawned pool are named, and are unlinked only when the queues are freed
    (otherwise multiprocessing's resource tracker does it at exit, with a "leaked semaphore" warning)."""
    if pool is None:
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.kill()
        except (OSError, AttributeError):
            pass
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    if wait > 0 and manager is not None:
        manager.join(wait)

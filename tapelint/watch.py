"""`check --watch`: lint, then lint again each time a file under the paths changes, until Ctrl-C.

Changes are found by polling (standard library only): every `interval` seconds the Python files,
notebooks and config files under the paths are listed and their (mtime, size, inode) compared with the
last listing. Each pass is a whole `check` run through the result cache, so only the files that changed
(and those whose findings depend on them) are parsed again."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Callable, Optional

from tapelint.config import DEFAULT_EXCLUDE
from tapelint.errors import EXIT_INTERRUPTED

WATCHED_SUFFIXES = (".py", ".pyi", ".ipynb")
WATCHED_NAMES = ("pyproject.toml", "tapelint.toml", ".gitignore")

Signature = tuple[int, int, int]


@dataclass
class Control:
    """How the loop runs: the polling interval, and for tests, a hook told after each pass (with what the
    pass returned) and a number of passes after which the loop returns."""

    interval: float = 0.5
    after_pass: Optional[Callable[[object], None]] = None
    max_passes: Optional[int] = None
    passes: int = field(default=0, init=False)


def _watched(name: str) -> bool:
    return name.endswith(WATCHED_SUFFIXES) or name in WATCHED_NAMES


def scan(paths: list[Path]) -> dict[str, Signature]:
    """(mtime, size, inode) of every watched file under `paths`, skipping the folders a walk never enters
    (`.git`, `.venv`, the caches: tapelint's own cache changes on every pass)."""
    found: dict[str, Signature] = {}

    def add(name: str) -> None:
        try:
            info = os.stat(name)
        except OSError:
            return  # gone between the listing and the stat: the next scan says so
        found[name] = (info.st_mtime_ns, info.st_size, info.st_ino)

    for path in paths:
        top = str(path)
        if not os.path.isdir(top):
            add(top)
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDE)
            for name in files:
                if _watched(name):
                    add(os.path.join(folder, name))
    return found


def changed(before: dict[str, Signature], after: dict[str, Signature]) -> list[str]:
    """The files added, removed or changed between two scans, sorted."""
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def _stamp() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def watch(run: Callable[[], tuple[int, object]], paths: list[Path], out: IO[str],
          control: Control | None = None) -> int:
    """Run `run` (one whole check; it returns the number of findings and what the test hook is given), then
    again after each change under `paths`, saying when as ruff does. Returns 130 on Ctrl-C (the loop's
    only ordinary end), or 0 when `control.max_passes` passes have run."""
    control = control or Control()
    try:
        print(f"[{_stamp()}] Starting linter in watch mode...", file=out, flush=True)
        while True:
            before = scan(paths)
            count, outcome = run()
            control.passes += 1
            noun = "finding" if count == 1 else "findings"
            print(f"[{_stamp()}] Found {count} {noun}. Watching for file changes.", file=out, flush=True)
            if control.after_pass is not None:
                control.after_pass(outcome)
            if control.max_passes is not None and control.passes >= control.max_passes:
                return 0
            while True:
                time.sleep(control.interval)
                now = scan(paths)
                if changed(before, now):
                    break
            # Editors save in several steps (write a temporary file, rename it): let them finish.
            time.sleep(min(control.interval, 0.2))
            print(f"[{_stamp()}] File change detected...", file=out, flush=True)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED

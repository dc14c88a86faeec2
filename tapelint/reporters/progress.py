"""The progress line of a long run on a terminal: `tapelint: 412/1911 files`, redrawn in place on
standard error and wiped at the end, so that nothing of it stays in the scrollback or in the report."""

from __future__ import annotations

import threading
import time
from typing import IO

# A run shorter than this shows nothing: a line that flashes for a moment is noise.
DELAY = 1.0
# Redraw at most this often; a pool reports a chunk of files at a time, a serial run every file.
INTERVAL = 0.1


class ProgressLine:
    """A `progress(done, total)` callback for the runner (tapelint.runner.lint_paths). Nothing is drawn
    before `delay` seconds have passed; a timer draws the first line then even if no file has finished
    since (one large file can take seconds). Call `close()` when the run ends, also on errors."""

    def __init__(self, stream: IO[str], delay: float = DELAY, interval: float = INTERVAL) -> None:
        self.stream = stream
        self.interval = interval
        self.done = 0
        self.total: int | None = None
        self._width = 0  # of the line on screen, to wipe it
        self._drawn_at = 0.0
        self._start = time.monotonic() + delay
        self._lock = threading.Lock()
        self._closed = False
        self._timer = threading.Timer(delay, self._on_time)
        self._timer.daemon = True
        self._timer.start()

    def __call__(self, done: int, total: int) -> None:
        with self._lock:
            self.done, self.total = done, total
            now = time.monotonic()
            if self._closed or now < self._start or (now - self._drawn_at < self.interval and done < total):
                return
            self._draw(now)

    def _on_time(self) -> None:
        with self._lock:
            if not self._closed and self.total is not None:
                self._draw(time.monotonic())

    def _draw(self, now: float) -> None:
        text = f"tapelint: {self.done}/{self.total} files"
        self._write("\r" + text + " " * max(self._width - len(text), 0) + "\r")
        self._width = len(text)
        self._drawn_at = now

    def close(self) -> None:
        """Stop the timer and wipe the line, leaving the cursor at the start of an empty line."""
        self._timer.cancel()
        with self._lock:
            self._closed = True
            if self._width:
                self._write("\r" + " " * self._width + "\r")
                self._width = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal must not end the run
            pass

    def __enter__(self) -> "ProgressLine":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def progress_line(stream: IO[str], quiet: bool) -> ProgressLine | None:
    """A progress line on `stream` when it is a terminal and the run is not `--quiet`; None otherwise."""
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):
        interactive = False
    return ProgressLine(stream) if interactive and not quiet else None

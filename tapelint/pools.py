"""Stopping a pool of worker processes at once, for the command line's run (tapelint.runner) and the editor
server's lint worker (tapelint.lsp)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


def kill_pool(pool: ProcessPoolExecutor | None) -> None:
    """Kill the pool's worker processes now, instead of waiting for the work they are doing (one may be in
    the middle of a long parse), and shut the pool down without waiting; nothing when `pool` is None."""
    if pool is None:
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.kill()
        except (OSError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)

"""No process of tapelint outlives the one it works for: pool workers of a parallel run killed with -9,
the editor server's lint worker when the server is killed or exits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def children(pid: int) -> set[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
            return {int(part) for part in handle.read().split()}
    except OSError:
        return set()


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a PID 1 that does not reap counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.slow
def test_kill_9_of_a_parallel_run_ends_its_pool_workers(tmp_path: Path):
    tree = tmp_path / "tree"
    tree.mkdir()
    source = "import tensorflow as tf\n" + "".join(f"opt{i} = tf.keras.optimizers.Adam(lr=0.01)\n" for i in range(300))
    for index in range(30):
        (tree / f"f{index}.py").write_text(source, encoding="utf-8")
    run = subprocess.Popen([sys.executable, "-m", "tapelint", "--daemon", "off", "--no-cache", "-j", "2", str(tree)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        assert wait_until(lambda: len(children(run.pid)) == 2, 60), "the run did not start its two workers"
        workers = children(run.pid)
        run.send_signal(signal.SIGKILL)
        run.wait()
        assert wait_until(lambda: not any(alive(pid) for pid in workers), 5), \
            f"pool workers {sorted(p for p in workers if alive(p))} outlived their parent by 5 s"
    finally:
        if run.poll() is None:
            run.kill()
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)

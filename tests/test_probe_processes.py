"""No process of a probed script is left behind, whatever happens to tapelint (issue 27), tested without
TensorFlow: the tree of a setsid daemon and its child is stopped, the probe's child dies with tapelint (kill -9
included) and takes what the script started with it, and a temporary folder whose owner died is swept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tapelint.probe import processes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, uses prctl")

ROOT = Path(__file__).resolve().parents[1]


def _alive(marker: str) -> list[int]:
    found = []
    for proc in processes.table().values():
        if proc.state in ("Z", "X") or proc.pid == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(proc.pid)
    return found


def _wait_for(condition, seconds: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def _python(code: str, marker: str, **kw) -> subprocess.Popen:  # type: ignore[no-untyped-def]
    kw.setdefault("env", {**os.environ, "PYTHONPATH": str(ROOT)})
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), marker], **kw)


# Forks a setsid daemon whose own child outlives it (the daemon's parent, then the daemon, exit), as
# tests/probe/scripts do to the probe; everything carries the marker in its command line.
DAEMON_WITH_CHILD = """
import os, subprocess, sys, time
marker = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
        time.sleep(600)
    os._exit(0)
"""


def test_a_setsid_daemon_and_its_child_are_stopped_after_their_parents_exited(tmp_path: Path):
    marker = f"tl-daemon-{tmp_path}"
    code = """
    from tapelint.probe import processes
    import os, subprocess, sys, time
    assert processes.become_subreaper()
    me = os.getpid()
    script = subprocess.Popen([sys.executable, "-c", DAEMON, sys.argv[1]])
    script.wait()
    time.sleep(1.0)  # the daemon and its child are running, re-parented to us
    killed = processes.stop_all(lambda table: processes.children_of(me, table))
    print(len(killed), flush=True)
    """.replace("DAEMON", repr(DAEMON_WITH_CHILD))
    helper = _python(code, marker, stdout=subprocess.PIPE, text=True)
    out, _ = helper.communicate(timeout=60)
    assert out.strip() == "2"  # the daemon (re-parented to us) and its child (found in its tree)
    assert _wait_for(lambda: not _alive(marker), 5), "a process of the script outlived the stop"


CHILD = """
import os, subprocess, sys, time
from tapelint.probe.child import _guard_parent
marker, parent, folder = sys.argv[1], int(sys.argv[2]), sys.argv[3]
_guard_parent(parent, folder)()
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
exec(DAEMON)
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("how", ["kill -9", "exit"])
def test_the_probe_s_child_dies_with_tapelint_and_takes_the_script_s_processes_along(tmp_path: Path, how: str):
    marker = f"tl-orphan-{tmp_path}"
    folder = tmp_path / "tapelint-probe-abc"
    folder.mkdir()
    (folder / "report.json").write_text("{}", encoding="utf-8")
    # A stand-in for tapelint: starts the child as the runner does (its own session, a thread reading its
    # output: under kill -9 the thread that started the child may die before the rest of the process), then dies.
    code = f"""
    import os, subprocess, sys, threading, time
    child = subprocess.Popen([sys.executable, "-c", {CHILD.replace("DAEMON", repr(DAEMON_WITH_CHILD))!r},
                              sys.argv[1], str(os.getpid()), {str(folder)!r}],
                             start_new_session=True, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    threading.Thread(target=child.stdout.read, daemon=True).start()
    time.sleep(0.5)
    print(child.pid, flush=True)
    if {how!r} == "kill -9":
        os.kill(os.getpid(), 9)
    os._exit(0)
    """
    tapelint = _python(code, marker, stdout=subprocess.PIPE, text=True)
    out, _ = tapelint.communicate(timeout=60)
    child = int(out.strip())
    assert tapelint.returncode == (-signal.SIGKILL if how == "kill -9" else 0)
    assert _wait_for(lambda: not _alive(marker), 10), "a process of the script outlived tapelint"
    assert not Path(f"/proc/{child}").exists() or processes.table().get(child, None) is None \
        or processes.table()[child].state in ("Z", "X")
    assert not folder.exists()


def _probe_folder_owner(tmp_path: Path, then: str) -> tuple[subprocess.Popen, Path]:
    code = f"""
    import os, sys, time
    from tapelint.probe.processes import ProbeFolder
    folder = ProbeFolder()
    print(folder.path, flush=True)
    {then}
    """
    owner = _python(code, "owner", stdout=subprocess.PIPE, text=True,
                    env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)})
    assert owner.stdout is not None
    return owner, Path(owner.stdout.readline().strip())


def test_a_temporary_folder_is_swept_once_its_owner_is_dead_and_only_then(tmp_path: Path):
    dead, dead_folder = _probe_folder_owner(tmp_path, "os.kill(os.getpid(), 9)")
    dead.wait(timeout=30)
    living, living_folder = _probe_folder_owner(tmp_path, "time.sleep(600)")
    try:
        assert dead_folder.is_dir() and living_folder.is_dir() and dead_folder.parent == tmp_path
        assert processes.sweep_stale_folders(str(tmp_path)) == 0  # both too young: a new owner may not hold its lock yet
        assert processes.sweep_stale_folders(str(tmp_path), min_age_s=0) == 1
        assert not dead_folder.exists() and living_folder.is_dir()
    finally:
        living.kill()
        living.wait()
    assert processes.sweep_stale_folders(str(tmp_path), min_age_s=0) == 1
    assert not living_folder.exists()
    (tmp_path / "tapelint-probe-nolock").mkdir()  # not made by a ProbeFolder: not ours to judge
    assert processes.sweep_stale_folders(str(tmp_path), min_age_s=0) == 0


def test_the_child_dies_with_tapelint_even_inside_a_long_native_call_before_the_script_runs(tmp_path: Path):
    # Importing TensorFlow holds the interpreter in native code for seconds, where neither a signal handler nor
    # the watchdog thread can run: the child must die all the same when tapelint is killed then.
    marker = f"tl-import-{tmp_path}"
    child_code = ("import itertools, sys\nfrom tapelint.probe.child import _guard_parent\n"
                  "_guard_parent(int(sys.argv[2]), sys.argv[3])\nprint('ready', flush=True)\n"
                  "sum(itertools.repeat(1, 10 ** 12))\n")
    code = f"""
    import os, subprocess, sys
    child = subprocess.Popen([sys.executable, "-c", {child_code!r}, sys.argv[1], str(os.getpid()), "/nonexistent"],
                             start_new_session=True, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    print(child.pid, flush=True)
    os.kill(os.getpid(), 9)
    """
    tapelint = _python(code, marker, stdout=subprocess.PIPE, text=True)
    out, _ = tapelint.communicate(timeout=60)
    assert out.strip().isdigit()
    assert _wait_for(lambda: not _alive(marker), 5), "the child outlived tapelint"


def test_sigterm_to_a_process_the_script_forked_ends_that_process_only(tmp_path: Path):
    # multiprocessing's Pool.terminate() sends SIGTERM to its forked workers, which inherit the child's handler:
    # it must not take that for tapelint's death (and stop the whole probe, temporary folder included).
    folder = tmp_path / "tapelint-probe-abc"
    folder.mkdir()
    code = ("import os, sys, time\nfrom tapelint.probe.child import _guard_parent\n"
            "_guard_parent(int(sys.argv[2]), sys.argv[3])()\npid = os.fork()\n"
            "if pid == 0:\n    print('ready', flush=True)\n    time.sleep(600)\n    os._exit(0)\nprint(pid, flush=True)\n"
            "os.waitpid(pid, 0)\nprint('worker ended', flush=True)\ntime.sleep(600)\n")
    child = subprocess.Popen(
        [sys.executable, "-c", code, f"tl-fork-{tmp_path}", str(os.getpid()), str(folder)],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert child.stdout is not None
        # Both lines come before the SIGTERM: one that reaches a fork before Python has set it up is lost.
        lines = {child.stdout.readline().strip(), child.stdout.readline().strip()}
        worker = int(next(line for line in lines if line.isdigit()))
        os.kill(worker, signal.SIGTERM)
        assert child.stdout.readline().strip() == "worker ended"
        time.sleep(0.3)
        assert child.poll() is None and folder.is_dir()
    finally:
        child.kill()
        child.wait()

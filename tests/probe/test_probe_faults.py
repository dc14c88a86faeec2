"""The probe under hostile scripts: each case gives a clear report and exit code, and leaves no process
behind (every process whose command line names the script is looked for afterwards)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow

from tapelint.probe import run_probe  # noqa: E402

LOOP = """
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
x = np.ones((8, 3), "float32")
y = np.ones((8, 1), "float32")
"""


def _left_running(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def probe(tmp_path: Path, body: str, **options):
    script = tmp_path / "hostile_script.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    options.setdefault("timeout", 60)
    started = time.monotonic()
    result = run_probe(script, **options)
    elapsed = time.monotonic() - started
    time.sleep(0.3)
    assert _left_running(str(tmp_path)) == [], "a process of the script outlived the probe"
    return result, result.render(), elapsed


def test_a_script_that_hangs_is_killed_at_the_timeout(tmp_path: Path):
    result, text, elapsed = probe(tmp_path, "import time\ntime.sleep(1000)\n", timeout=20)
    assert result.status == "timeout" and result.exit_code_for() == 1
    assert elapsed < 40
    assert "timed out" in text


def test_a_busy_loop_is_killed_at_the_timeout(tmp_path: Path):
    result, _, elapsed = probe(tmp_path, "while True:\n    pass\n", timeout=20)
    assert result.status == "timeout" and elapsed < 40


def test_sys_exit_is_reported_with_its_code(tmp_path: Path):
    result, text, _ = probe(tmp_path, "import sys\nprint('bye')\nsys.exit(3)\n")
    assert result.status == "exited" and result.exit_code == 3
    assert "sys.exit(3)" in text and "bye" in text


def test_os_exit_says_how_the_script_ended_and_shows_its_output(tmp_path: Path):
    result, text, _ = probe(tmp_path, "import os\nprint('leaving hard', flush=True)\nos._exit(0)\n")
    assert result.status == "crashed" and result.exit_code_for() == 1
    assert "exited with status 0 without returning to the probe (os._exit?)" in text
    assert "leaving hard" in text
    assert "running" not in text.splitlines()[0]


def test_a_segfault_names_the_signal(tmp_path: Path):
    result, text, _ = probe(tmp_path, "import ctypes\nprint('about to crash', flush=True)\nctypes.string_at(0)\n")
    assert result.status == "crashed"
    assert "killed by SIGSEGV (a crash in native code)" in text and "about to crash" in text


def test_an_error_on_import_is_the_script_s_own_error(tmp_path: Path):
    result, text, _ = probe(tmp_path, "import no_such_module_anywhere\n")
    assert result.status == "raised"
    assert "ModuleNotFoundError" in text or "No module named" in text


def test_exceeding_the_memory_limit_says_so(tmp_path: Path):
    body = "import numpy as np\nblocks = []\nwhile True:\n    blocks.append(np.ones((1024, 1024, 16)))\n"
    result, text, _ = probe(tmp_path, body, memory_limit_mb=1500)
    assert result.exit_code_for() == 1
    assert "exceeded the memory limit of 1500 MB" in text


@pytest.mark.parametrize("megabytes", [256])
def test_a_limit_too_low_to_import_tensorflow_says_so(tmp_path: Path, megabytes: int):
    # 256 MB, the lowest limit accepted: TensorFlow's libraries cannot be mapped.
    result, text, _ = probe(tmp_path, LOOP, memory_limit_mb=megabytes)
    assert result.exit_code_for() == 1
    assert f"the script exceeded the memory limit of {megabytes} MB" in text


def test_a_setsid_daemon_the_script_forks_is_stopped_with_its_child_and_reported(tmp_path: Path):
    # The daemon's own child used to survive under PID 1 (issue 27; reliability/04).
    body = f"""
    import subprocess, sys, time
    daemon = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', " \\
             "sys.argv[1]]); time.sleep(600)"
    subprocess.Popen([sys.executable, "-c", daemon, {str(tmp_path)!r}], start_new_session=True)
    time.sleep(2)
    """
    result, text, _ = probe(tmp_path, body)
    assert "stopped 2 processes the script left running outside its process group" in text


def test_100_mb_of_output_keeps_a_short_tail(tmp_path: Path):
    body = "import sys\nline = 'x' * 999 + '\\n'\nfor _ in range(100_000):\n    sys.stdout.write(line)\nraise SystemExit(5)\n"
    result, text, _ = probe(tmp_path, body)
    assert result.status == "exited"
    tail = [line for line in text.splitlines() if line.startswith("    xxx")]
    assert 0 < len(tail) <= 8 and all(len(line) < 400 for line in tail)
    assert "(999 characters)" in text


def test_a_script_that_reads_stdin_does_not_wait_for_input(tmp_path: Path):
    result, text, elapsed = probe(tmp_path, "import sys\ndata = sys.stdin.read()\nprint(len(data))\n", timeout=60)
    assert result.status == "ended" and elapsed < 50
    assert "never called `tape.gradient`" in text


def test_a_script_without_a_gradient_tape_says_no_training_step(tmp_path: Path):
    result, text, _ = probe(tmp_path, LOOP + "print(model(x).shape)\n")
    assert not result.ok and result.exit_code_for() == 1
    assert "no training step" in text


def test_a_script_that_catches_the_probe_s_stop_is_still_stopped(tmp_path: Path):
    body = LOOP + """
while True:
    try:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    except BaseException:
        pass
"""
    result, text, elapsed = probe(tmp_path, body, timeout=120)
    assert result.ok and result.steps >= 1
    assert elapsed < 90
    if result.notes:
        assert "caught the stop" in text


def _tapelint_probe(script: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tapelint", "probe", str(script), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for(condition, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        time.sleep(0.2)
    return condition()


# A double-forked setsid daemon (re-parented once its parent exits), then the script waits.
DAEMON_THEN_WAIT = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", {marker!r}])
    os._exit(0)
print("started", flush=True)
time.sleep(1000)
"""


def test_sigterm_to_tapelint_stops_the_script_and_its_setsid_daemon(tmp_path: Path):
    # The daemon survived SIGTERM to tapelint (issue 27; reliability/05).
    script = tmp_path / "hostile_script.py"
    script.write_text(DAEMON_THEN_WAIT.format(marker=str(tmp_path)), encoding="utf-8")
    process = _tapelint_probe(script, "--timeout", "300")
    # tapelint, its child and the daemon all name the folder
    assert _wait_for(lambda: len(_left_running(str(tmp_path))) >= 3, 120)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    assert process.returncode in (143, -signal.SIGTERM)
    assert _wait_for(lambda: _left_running(str(tmp_path)) == [], 3), "a process of the script outlived tapelint"


def test_kill_9_of_tapelint_stops_the_script_its_processes_and_clears_the_temporary_folder(tmp_path: Path):
    # The script ran on under PID 1 past --timeout, and the tapelint-probe-* folder stayed (issue 27;
    # reliability/06).
    script = tmp_path / "hostile_script.py"
    script.write_text(f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; "
                      f"time.sleep(600)', {str(tmp_path)!r}])\n" + DAEMON_THEN_WAIT.format(marker=str(tmp_path)),
                      encoding="utf-8")
    process = _tapelint_probe(script, "--timeout", "300")
    assert _wait_for(lambda: len(_left_running(str(tmp_path))) >= 4, 120)
    folders = [folder for folder in Path(tempfile.gettempdir()).glob("tapelint-probe-*")
               if (folder / "owner.lock").is_file() and
               (folder / "owner.lock").read_text().split()[:1] == [str(process.pid)]]
    assert len(folders) == 1
    process.kill()
    process.wait(timeout=30)
    assert _wait_for(lambda: _left_running(str(tmp_path)) == [], 5), "a process of the script outlived tapelint"
    assert not folders[0].exists()


def test_os_exit_right_after_a_real_step_is_reported_with_that_step(tmp_path: Path):
    body = LOOP + """
import os
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
os._exit(0)
"""
    result, text, _ = probe(tmp_path, body)
    assert result.status == "crashed" and result.steps == 1 and result.device
    assert "exited with status 0 without returning to the probe (os._exit?) after 1 step" in text

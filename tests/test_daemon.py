"""The daemon: a plain check runs in a fork of a warm process and gives exactly what it gives without it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tapelint import daemon

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not daemon.supported(), reason="the daemon is POSIX only")]

TRAIN = textwrap.dedent("""
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(lr=1e-3)


    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
""")


def _env(runtime: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TAPELINT_NO_DAEMON", "PYTHONDONTWRITEBYTECODE")}
    env["XDG_RUNTIME_DIR"] = str(runtime)
    env.update(extra)
    return env


def _tapelint(runtime: Path, *args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tapelint", *args], cwd=cwd, env=_env(runtime, **extra),
                          capture_output=True, text=True, timeout=120)


def _served(runtime: Path, cwd: Path) -> int:
    done = _tapelint(runtime, "daemon", "status", cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return int(done.stdout.split(", ")[1].split()[0])


@pytest.fixture
def running(tmp_path: Path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    started = _tapelint(runtime, "daemon", "start", "--idle-timeout", "120", cwd=tmp_path)
    assert started.returncode == 0 and "started" in started.stdout, started.stdout + started.stderr
    yield runtime
    stopped = _tapelint(runtime, "daemon", "stop", cwd=tmp_path)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout


def test_a_check_through_the_daemon_prints_and_exits_as_one_without_it(running: Path, tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.tapelint]\nignore = ['TL201']\n")
    (project / "train.py").write_text(TRAIN)
    for args in (["--no-cache", "train.py"], ["train.py"], ["--format", "json", "--no-cache", "train.py"],
                 ["--select", "TL1", "--no-cache", "train.py"], ["--no-cache", "missing.py"]):
        before = _served(running, tmp_path)
        through = _tapelint(running, *args, cwd=project)
        assert _served(running, tmp_path) == before + 1, args  # the daemon ran it
        alone = _tapelint(running, *args, cwd=project, TAPELINT_NO_DAEMON="1")
        assert (through.returncode, through.stdout, through.stderr) == (alone.returncode, alone.stdout, alone.stderr), args
    findings = _tapelint(running, "--no-cache", "train.py", cwd=project)
    assert findings.returncode == 1 and "TL501" in findings.stdout and "TL201" not in findings.stdout
    before = _served(running, tmp_path)
    alone = _tapelint(running, "--daemon", "off", "--no-cache", "train.py", cwd=project)
    assert _served(running, tmp_path) == before and alone.stdout == findings.stdout  # --daemon off: not sent


def test_fix_through_the_daemon_writes_the_same_file(running: Path, tmp_path: Path):
    for name, extra in (("through", {}), ("alone", {"TAPELINT_NO_DAEMON": "1"})):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "train.py").write_text(TRAIN)
        done = _tapelint(running, "--fix", "--no-cache", "train.py", cwd=folder, **extra)
        assert done.returncode in (0, 1), done.stderr
    fixed = (tmp_path / "through" / "train.py").read_text()
    assert fixed == (tmp_path / "alone" / "train.py").read_text() and fixed != TRAIN


def test_standard_input_reaches_the_fork(running: Path, tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "tapelint", "--no-cache", "--stdin-filename", "t.py", "-"],
                          input=TRAIN, cwd=tmp_path, env=_env(running), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "t.py:" in done.stdout and "TL501" in done.stdout


def test_a_daemon_of_other_code_steps_aside_and_the_command_runs_here(running: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(running))
    monkeypatch.delenv("TAPELINT_NO_DAEMON", raising=False)
    assert daemon.status() is not None
    monkeypatch.setattr(daemon, "code_stamp", lambda: "tapelint was upgraded")
    assert daemon.run_in_daemon(["--no-cache", str(tmp_path / "x.py")]) is None  # nothing printed: run here
    deadline = time.monotonic() + 10
    while daemon.status() is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert daemon.status() is None  # it exited, so the next `start` loads the new code
    monkeypatch.undo()
    _tapelint(running, "daemon", "start", cwd=tmp_path)  # for the fixture's stop


def test_without_a_daemon_a_stale_socket_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    os.mkdir(daemon.socket_dir(), 0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(daemon.socket_path())
    stale.close()  # the file stays, nobody listens
    (tmp_path / "train.py").write_text(TRAIN)
    done = _tapelint(runtime, "--no-cache", "train.py", cwd=tmp_path)
    assert done.returncode == 1 and "TL501" in done.stdout and done.stderr == ""
    assert _tapelint(runtime, "daemon", "status", cwd=tmp_path).returncode == 1


def test_a_directory_others_can_enter_is_never_used(tmp_path: Path):
    runtime = tmp_path / "run"
    (runtime / "tapelint").mkdir(parents=True)
    os.chmod(runtime / "tapelint", 0o777)
    done = _tapelint(runtime, "daemon", "start", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "not a private directory" in done.stderr and "Traceback" not in done.stderr


def test_ctrl_c_stops_the_fork(running: Path, tmp_path: Path):
    import signal

    folder = tmp_path / "many"
    folder.mkdir()
    for index in range(400):
        (folder / f"train_{index}.py").write_text(TRAIN.replace("Dense(10", f"Dense({index + 1}"))
    before = _served(running, tmp_path)
    client = subprocess.Popen([sys.executable, "-m", "tapelint", "--no-cache", "-j", "1", str(folder)], cwd=tmp_path,
                              env=_env(running), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _served(running, tmp_path) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the fork is linting
    assert client.poll() is None, "the run ended before it could be interrupted"
    client.send_signal(signal.SIGINT)
    _, err = client.communicate(timeout=20)
    assert client.returncode == 130
    assert err.strip() == "tapelint: interrupted"


def test_a_fork_that_cannot_start_the_command_says_so_in_one_line(running: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    # The client's folder is gone by the time the fork would enter it (a request made by hand).
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(running))
    path = daemon.socket_path()
    read_end, write_end = os.pipe()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        request = daemon.run_request(["x.py"], os.fsencode(tmp_path / "gone"))
        socket.send_fds(sock, [daemon.pack(request)], [write_end, write_end, write_end])
        os.close(write_end)
        answers = daemon.Reader(sock)
        started, done = answers.read(), answers.read()
    said = os.read(read_end, 4096).decode()
    os.close(read_end)
    assert started is not None and started[0] == b"pid" and done == [b"exit", b"2"]
    assert said.count("\n") == 1 and said.startswith("tapelint: error: the daemon could not run the check")


def _wait_for_daemon(runtime: Path, cwd: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while _tapelint(runtime, "daemon", "status", cwd=cwd).returncode != 0:
        assert time.monotonic() < deadline, "no daemon answered"
        time.sleep(0.2)


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_auto_mode_starts_a_daemon_that_serves_the_next_check(tmp_path: Path, how: str):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    (tmp_path / "train.py").write_text(TRAIN)
    auto = {"TAPELINT_DAEMON": "auto"} if how == "environment" else {}
    flag = ["--daemon", "auto"] if how == "flag" else []
    try:
        plain = _tapelint(runtime, "--no-cache", "train.py", cwd=tmp_path)
        assert plain.returncode == 1 and _tapelint(runtime, "daemon", "status", cwd=tmp_path).returncode == 1
        first = _tapelint(runtime, *flag, "--no-cache", "train.py", cwd=tmp_path, **auto)
        assert first.returncode == 1 and "TL501" in first.stdout  # ran itself, as usual
        _wait_for_daemon(runtime, tmp_path)
        assert _served(runtime, tmp_path) == 0
        second = _tapelint(runtime, *flag, "--no-cache", "train.py", cwd=tmp_path, **auto)
        assert (second.returncode, second.stdout) == (first.returncode, first.stdout)
        assert _served(runtime, tmp_path) == 1
    finally:
        _tapelint(runtime, "daemon", "stop", cwd=tmp_path)


def test_two_daemons_started_at_once_leave_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    os.mkdir(daemon.socket_dir(), 0o700)
    command = [sys.executable, "-m", "tapelint.daemon_server", daemon.socket_path(), "120"]
    both = [subprocess.Popen(command, env=_env(runtime), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for _ in range(2)]
    try:
        _wait_for_daemon(runtime, tmp_path)
        answer = daemon.status()
        assert answer is not None
        serving = [p for p in both if p.pid == answer["pid"]]
        other = [p for p in both if p.pid != answer["pid"]]
        assert len(serving) == 1 and other[0].wait(timeout=30) == 0  # it gave way, quietly
    finally:
        daemon.stop()
        for process in both:
            process.wait(timeout=30)


def test_an_idle_daemon_exits_and_removes_its_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    started = _tapelint(runtime, "daemon", "start", "--idle-timeout", "1", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    deadline = time.monotonic() + 30
    while os.path.exists(daemon.socket_path()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(daemon.socket_path())
    assert _tapelint(runtime, "daemon", "status", cwd=tmp_path).returncode == 1


def test_a_terminated_daemon_removes_its_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import signal

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    assert _tapelint(runtime, "daemon", "start", cwd=tmp_path).returncode == 0
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    answer = daemon.status()
    assert answer is not None
    os.kill(int(answer["pid"]), signal.SIGTERM)
    deadline = time.monotonic() + 30
    while os.path.exists(daemon.socket_path()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(daemon.socket_path()) and daemon.status() is None


def test_without_unix_sockets_there_is_never_a_daemon(monkeypatch: pytest.MonkeyPatch):
    # Windows: no AF_UNIX descriptor passing. `start` says why in one line; the rest finds none.
    monkeypatch.setattr(daemon, "supported", lambda: False)
    with pytest.raises(daemon.DaemonError, match="POSIX"):
        daemon.start()
    assert daemon.status() is None and daemon.stop() is None
    assert daemon.run_in_daemon(["x.py"]) is None


def _wait_for_spare(seconds: float = 60, other_than: int = 0) -> int:
    deadline = time.monotonic() + seconds
    while True:
        answer = daemon.status()
        assert answer is not None
        if answer["spare"] and answer["spare"] != other_than:
            return int(answer["spare"])
        assert time.monotonic() < deadline, "no spare got ready"
        time.sleep(0.1)


def _alone_then_a_spare(running: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A check of train.py without the daemon, then the pid of the daemon's spare once one is ready."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(running))
    (tmp_path / "train.py").write_text(TRAIN)
    alone = _tapelint(running, "--no-cache", "train.py", cwd=tmp_path, TAPELINT_NO_DAEMON="1")
    return alone, _wait_for_spare()


def test_a_warmed_up_fork_runs_the_next_check_as_one_without_it(running: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch):
    alone, spare = _alone_then_a_spare(running, tmp_path, monkeypatch)
    warmed = _tapelint(running, "--no-cache", "train.py", cwd=tmp_path)
    assert (warmed.returncode, warmed.stdout, warmed.stderr) == (alone.returncode, alone.stdout, alone.stderr)
    assert "TL501" in warmed.stdout
    answer = daemon.status()
    assert answer is not None and (answer["served"], answer["warm"]) == (1, 1)
    assert "1 checks served (1 by a warmed-up fork)" in _tapelint(running, "daemon", "status", cwd=tmp_path).stdout
    # It ran that one check and exited; once the check is over, another spare waits for the next.
    assert _wait_for_spare(other_than=spare) != spare
    with pytest.raises(ProcessLookupError):
        for _ in range(100):
            os.kill(spare, 0)
            time.sleep(0.05)


def test_a_spare_that_died_is_passed_over_and_replaced(running: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    import signal

    alone, spare = _alone_then_a_spare(running, tmp_path, monkeypatch)
    os.kill(spare, signal.SIGKILL)
    checked = _tapelint(running, "--no-cache", "train.py", cwd=tmp_path)
    assert (checked.returncode, checked.stdout) == (alone.returncode, alone.stdout)
    answer = daemon.status()
    assert answer is not None and (answer["served"], answer["warm"]) == (1, 0)  # a fork of its own ran it
    assert _wait_for_spare(other_than=spare) != spare


def test_a_daemon_started_from_a_folder_that_shadows_tapelint_still_starts(tmp_path: Path):
    # `python -m` puts the working folder first on sys.path: the daemon starts in the root folder, so a
    # `tapelint` folder where the user happens to be (a checkout of tapelint) is not what it imports.
    script = Path(sys.executable).parent / "tapelint"
    if not script.exists():
        pytest.skip("no console script next to this interpreter")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    shadow = tmp_path / "elsewhere"
    (shadow / "tapelint").mkdir(parents=True)
    (shadow / "tapelint" / "__init__.py").write_text("raise ImportError('the wrong tapelint')\n")
    env = _env(runtime)
    try:
        started = subprocess.run([str(script), "daemon", "start", "--idle-timeout", "60"], cwd=shadow, env=env,
                                 capture_output=True, text=True, timeout=120)
        assert started.returncode == 0 and "started" in started.stdout, started.stdout + started.stderr
    finally:
        subprocess.run([str(script), "daemon", "stop"], cwd=tmp_path, env=env, capture_output=True, timeout=60)


def test_after_a_check_the_daemon_holds_a_parse_of_the_file_and_an_edit_gives_what_it_gives_alone(
        running: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Between checks the daemon parses the files a check named; its next fork reparses only what an edit
    # changed. The output is the same as a run without the daemon, edit after edit, broken or not.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(running))
    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    first = _tapelint(running, "--no-cache", "train.py", cwd=tmp_path)
    assert first.returncode == 1
    deadline = time.monotonic() + 60
    while (daemon.status() or {}).get("parsed") != 1 or not (daemon.status() or {}).get("spare"):
        assert time.monotonic() < deadline, "the daemon did not parse the file ahead"
        time.sleep(0.1)
    for edited in (TRAIN.replace("lr=1e-3", "lr=3e-4"), TRAIN.replace("return loss", "return loss +"),
                   TRAIN + "\nmodel.compile(loss='mse')\n"):
        path.write_text(edited)
        alone = _tapelint(running, "--no-cache", "train.py", cwd=tmp_path, TAPELINT_NO_DAEMON="1")
        through = _tapelint(running, "--no-cache", "train.py", cwd=tmp_path)
        assert (through.returncode, through.stdout, through.stderr) == (alone.returncode, alone.stdout, alone.stderr)


def test_a_client_that_connects_and_sends_nothing_holds_up_no_other_check(running: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "train.py").write_text(TRAIN)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(running))
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    halfway = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        silent.connect(daemon.socket_path())
        halfway.connect(daemon.socket_path())
        halfway.sendall(b"500\nrun\0")  # the start of a request whose rest never comes
        time.sleep(0.2)
        before = _served(running, tmp_path)
        started = time.monotonic()
        through = _tapelint(running, "--no-cache", "train.py", cwd=tmp_path)
        took = time.monotonic() - started
        assert through.returncode == 1 and "TL501" in through.stdout, through.stdout + through.stderr
        assert _served(running, tmp_path) == before + 1, "the check ran in the daemon"
        assert took < 5, f"the check waited {took:.1f} s behind the silent clients"
    finally:
        silent.close()
        halfway.close()

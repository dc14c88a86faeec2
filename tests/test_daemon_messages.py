"""The daemon's messages: what a client sends arrives whole, whatever the stream does to it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import pytest

from tapelint import daemon

pytestmark = pytest.mark.skipif(not daemon.supported(), reason="the daemon is POSIX only")


def test_a_message_arrives_whole_even_in_pieces():
    fields = [b"run", b"", "caf\u00e9".encode(), b"x" * 300_000, b"KEY=value=with=equals"]
    left, right = socket.socketpair()
    with left, right:
        data = daemon.pack(fields) + daemon.pack([b"next"])

        def trickle() -> None:  # a stream may deliver a long message in any number of pieces
            for start in range(0, len(data), 7001):
                left.sendall(data[start:start + 7001])

        writer = threading.Thread(target=trickle)
        writer.start()
        reader = daemon.Reader(right)
        assert reader.read() == fields
        assert reader.read() == [b"next"]
        writer.join()
        left.close()
        assert reader.read() is None  # the other end closed


def test_garbage_and_nul_bytes_are_refused():
    with pytest.raises(ValueError):
        daemon.pack([b"a\0b"])
    for junk in (b'{"op": "run"}\n', b"12345678901234567890123\n", b"%d\n" % (daemon.MAX_MESSAGE + 1)):
        left, right = socket.socketpair()
        with left, right:
            left.sendall(junk)
            left.close()
            assert daemon.Reader(right).read() is None


def test_a_run_request_carries_the_command_as_the_fork_needs_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TAPELINT_TEST_VALUE", "a=b")
    monkeypatch.setattr(os, "environb", {b"TAPELINT_TEST_VALUE": b"a=b", b"RAW": b"\xff\xfe"})
    request = daemon.run_request(["--select", "TL101", "tr\u00e4in.py"], b"/some/where")
    assert request[:4] == [b"run", os.fsencode(daemon.code_stamp()), b"/some/where", b"%d" % _umask()]
    count = int(request[10])
    assert [os.fsdecode(part) for part in request[11:11 + count]] == ["--select", "TL101", "tr\u00e4in.py"]
    assert sorted(request[11 + count:]) == [b"RAW=\xff\xfe", b"TAPELINT_TEST_VALUE=a=b"]  # bytes, as they are


def _umask() -> int:
    value = os.umask(0)
    os.umask(value)
    return value


def test_the_client_imports_neither_json_nor_socket():
    # Those two cost 20-30 ms of a 0.15 s check; the client sends its request without them.
    code = ("import sys; from tapelint import launch, daemon; "
            "launch.quick_check_arguments(['--no-cache', '--format', 'json', 'train.py']); "
            "print(sorted({'json', 'socket', 'tapelint.config', 'typing'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_files_a_check_names_are_the_ones_the_daemon_parses_ahead(tmp_path):
    from tapelint.daemon_server import NAMED_AT_MOST, _named_files

    (tmp_path / "train.py").write_text("x = 1\n")
    (tmp_path / "model.py").write_text("y = 2\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "nb.ipynb").write_text("{}")
    cwd = os.fsencode(tmp_path)

    def named(*argv: str) -> list[str]:
        return _named_files(daemon.run_request(list(argv), cwd))

    real = str((tmp_path / "train.py").resolve())
    assert named("--no-cache", "train.py", "missing.py", "pkg", "nb.ipynb") == [real]
    assert named("check", "--select", "TL1", "./train.py", "model.py") == [real, str((tmp_path / "model.py").resolve())]
    assert named("rules") == [] and named("--help") == [] and named("-") == []
    assert named(*["train.py"] * (NAMED_AT_MOST + 1)) == []  # a large batch is its own fork's work


def test_when_no_fork_can_be_made_there_is_no_spare(monkeypatch: pytest.MonkeyPatch):
    from tapelint import daemon_server

    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    assert daemon_server._Spare.start(None) is None  # type: ignore[arg-type]  # checks get forks of their own

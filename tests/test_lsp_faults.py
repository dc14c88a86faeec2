"""The editor server under bad traffic, over real stdio: it answers what the protocol says to answer,
stays up, and leaves promptly on `exit` even while a long lint is running."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest

pytest.importorskip("pygls")
pytestmark = pytest.mark.slow


class Wire:
    """A JSON-RPC client over the server's stdin/stdout, framed with Content-Length headers."""

    def __init__(self, stderr=subprocess.DEVNULL) -> None:  # type: ignore[no-untyped-def]
        self.process = subprocess.Popen([sys.executable, "-m", "tapelint", "server"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=stderr)
        self.buffer = b""

    def send_raw(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_raw(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def receive(self, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        while True:
            header_end = self.buffer.find(b"\r\n\r\n")
            if header_end >= 0:
                length = int(self.buffer[:header_end].split(b"Content-Length: ")[1].split(b"\r\n")[0])
                start = header_end + 4
                if len(self.buffer) >= start + length:
                    body, self.buffer = self.buffer[start:start + length], self.buffer[start + length:]
                    return json.loads(body)
            left = deadline - time.monotonic()
            assert left > 0, "no message from the server in time"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, "the server closed its output"
                self.buffer += chunk

    def response(self, msg_id, timeout: float = 60) -> dict:
        while True:
            message = self.receive(timeout)
            if "method" not in message and message.get("id") == msg_id:
                return message

    def initialize(self) -> None:
        self.send({"id": 1, "method": "initialize", "params": {"capabilities": {}, "processId": None,
                                                                 "rootUri": None}})
        self.response(1)
        self.send({"method": "initialized", "params": {}})

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@pytest.fixture
def wire():
    client = Wire()
    yield client
    client.close()


def test_a_body_that_is_not_json_gets_a_parse_error_and_the_server_stays_up(wire: Wire):
    wire.send_raw(b'{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {')
    error = wire.receive()
    assert error["id"] is None and error["error"]["code"] == -32700
    wire.initialize()  # still answering
    wire.send({"id": 2, "method": "tapelint/no-such-method", "params": {}})
    assert wire.response(2)["error"]["code"] == -32601


def test_exit_during_a_long_lint_ends_the_process_promptly(wire: Wire, tmp_path):
    wire.initialize()
    loop = (
        "    with tf.GradientTape() as tape:\n"
        "        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
    )
    text = ("import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
            "optimizer = tf.keras.optimizers.SGD(0.1)\n"
            + "".join(f"def step_{i}(x, y):\n{loop}" for i in range(3000)))
    uri = (tmp_path / "big_train.py").as_uri()
    wire.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}}})
    time.sleep(2.0)  # the lint of 15,000 lines is under way
    started = time.monotonic()
    wire.send({"id": 3, "method": "shutdown", "params": None})
    wire.send({"method": "exit", "params": None})
    wire.process.wait(timeout=30)
    assert time.monotonic() - started < 10
    assert wire.process.returncode == 0


def _rss_kb(pid: int) -> int:
    for line in open(f"/proc/{pid}/status", encoding="utf-8"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _wait_for(wire: Wire, method: str, accept=lambda params: True, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        message = wire.receive(max(deadline - time.monotonic(), 0.1))
        if message.get("method") == method and accept(message.get("params") or {}):
            return message["params"]


BUGGY = ("import tensorflow as tf\n"
         "optimizer = tf.keras.optimizers.Adam(lr=0.01)\n")


def test_changes_to_unopened_documents_and_out_of_range_positions_get_answers_not_crashes(wire: Wire, tmp_path):
    wire.initialize()
    ghost = (tmp_path / "never_opened.py").as_uri()
    wire.send({"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": ghost, "version": 2}, "contentChanges": [{"text": "x = 1\n"}]}})
    uri = (tmp_path / "train.py").as_uri()
    wire.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": BUGGY}}})
    published = _wait_for(wire, "textDocument/publishDiagnostics", lambda p: p.get("uri") == uri)
    assert [d["code"] for d in published["diagnostics"]] == ["TL501"]
    far = {"line": 10_000, "character": 500}
    wire.send({"id": 5, "method": "textDocument/hover", "params": {"textDocument": {"uri": uri}, "position": far}})
    assert "error" not in wire.response(5)
    wire.send({"id": 6, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": uri}, "range": {"start": far, "end": far}, "context": {"diagnostics": []}}})
    assert "error" not in wire.response(6)
    wire.send({"id": 7, "method": "textDocument/hover", "params": {"textDocument": {"uri": ghost},
                                                                   "position": {"line": 0, "character": 0}}})
    assert "error" not in wire.response(7)
    assert wire.process.poll() is None


def test_a_buffer_over_the_size_limit_is_declined_with_a_message(wire: Wire, tmp_path):
    wire.initialize()
    uri = (tmp_path / "generated.py").as_uri()
    text = "import tensorflow as tf\n" + "x = 1\n" * 1_800_000  # about 10 MB
    wire.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}}})
    shown = _wait_for(wire, "window/showMessage")
    assert "over the 4 MB limit" in shown["message"]
    small = (tmp_path / "train.py").as_uri()
    wire.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": small, "languageId": "python", "version": 1, "text": BUGGY}}})
    published = _wait_for(wire, "textDocument/publishDiagnostics", lambda p: p.get("uri") == small)
    assert [d["code"] for d in published["diagnostics"]] == ["TL501"]


def test_200_rapid_edits_end_with_the_latest_text_and_flat_memory(wire: Wire, tmp_path):
    wire.initialize()
    uri = (tmp_path / "train.py").as_uri()
    wire.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": BUGGY}}})
    _wait_for(wire, "textDocument/publishDiagnostics", lambda p: p.get("uri") == uri)
    before = _rss_kb(wire.process.pid)
    for version in range(2, 202):
        text = BUGGY + "".join(f"step_{i} = {i}\n" for i in range(version))
        wire.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}})
    last = _wait_for(wire, "textDocument/publishDiagnostics",
                     lambda p: p.get("uri") == uri and p.get("version") == 201)
    assert [d["code"] for d in last["diagnostics"]] == ["TL501"]
    assert _rss_kb(wire.process.pid) - before < 50_000  # KB: the server does not keep every version


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children", encoding="ascii") as handle:
                kids = {int(part) for part in handle.read().split()}
        except OSError:
            kids = set()
        found |= kids
        todo += kids
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie of a PID 1 that never reaps
    except OSError:
        return False


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_running(pid) for pid in pids):
        time.sleep(0.05)
    return {pid for pid in pids if _running(pid)}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_server_leaves_no_process_behind_whether_it_exits_or_is_killed(tmp_path):
    """Its lint workers (and multiprocessing's resource tracker) end with it, and a clean exit says nothing
    about leaked semaphores."""
    for ending in ("exit", "kill -9"):
        log = tmp_path / f"stderr-{ending[:4]}.txt"
        with open(log, "wb") as stderr:
            wire = Wire(stderr=stderr)
        try:
            wire.initialize()
            uri = (tmp_path / "train.py").as_uri()
            wire.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": BUGGY}}})
            _wait_for(wire, "textDocument/publishDiagnostics", lambda p: p.get("uri") == uri)
            helpers = _descendants(wire.process.pid)
            assert helpers, "the lint ran in a worker process"
            if ending == "exit":
                wire.send({"id": 9, "method": "shutdown", "params": None})
                wire.response(9)
                wire.send({"method": "exit", "params": None})
                assert wire.process.wait(timeout=20) == 0
            else:
                wire.process.kill()
                wire.process.wait()
            left = _gone_within(helpers, 5)
            assert not left, f"after {ending}, processes of the server outlived it by 5 s: {sorted(left)}"
            if ending == "exit":
                assert "leaked semaphore" not in log.read_text(encoding="utf-8", errors="replace")
        finally:
            wire.close()


def test_a_lone_surrogate_sent_in_an_edit_is_read_as_a_replacement_character(wire: Wire, tmp_path):
    """JSON can carry a lone UTF-16 surrogate, which no UTF-8 text can hold: the document keeps U+FFFD in its
    place (same position), is linted, and fix-all answers with an edit, not an internal error."""
    wire.initialize()
    uri = (tmp_path / "train.py").as_uri()
    wire.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": BUGGY}}})
    _wait_for(wire, "textDocument/publishDiagnostics", lambda p: p.get("uri") == uri)
    end_of_first_line = {"line": 0, "character": 23}
    wire.send({"method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": {"start": end_of_first_line, "end": end_of_first_line},
                                   "text": "  # \ud83d"}]}})
    published = _wait_for(wire, "textDocument/publishDiagnostics",
                          lambda p: p.get("uri") == uri and p.get("version") == 2)
    assert [d["code"] for d in published["diagnostics"]] == ["TL501"]
    origin = {"line": 0, "character": 0}
    wire.send({"id": 8, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": uri}, "range": {"start": origin, "end": origin},
        "context": {"diagnostics": [], "only": ["source.fixAll.tapelint"]}}})
    answer = wire.response(8)
    assert "error" not in answer, answer
    (action,) = answer["result"]
    (edit,) = action["edit"]["changes"][uri]
    assert "learning_rate" in edit["newText"] and "\ud83d" not in edit["newText"]


def test_a_worker_left_holding_much_memory_by_a_deep_document_is_replaced(monkeypatch):
    """The parse of deeply nested code can leave the worker holding gigabytes after the lint (2.2 GB after
    1,500 nested brackets); such a worker is retired at once and a fresh one lints what comes next."""
    from tapelint.config import Config
    from tapelint.incremental import lint_buffer
    from tapelint.lsp import LintWorker
    from tapelint.pools import resident_bytes

    # Ten lines of 190 nested brackets (under the 200 that makes a text too complex to analyse) leave about
    # 360 MB; ordinary files 60-150 MB.
    limit = 250 * 1024 * 1024
    monkeypatch.setattr(LintWorker, "RECYCLE_BYTES", limit)
    worker = LintWorker()
    try:
        worker.run(lint_buffer, "x = 1\n", "warm.py", Config(), None)
        (first,) = worker._pool._processes
        deep = BUGGY + ("x = " + "[" * 190 + "]" * 190 + "\n") * 10
        assert [d.code for d in worker.run(lint_buffer, deep, "deep.py", Config(), None)] == ["TL501"]
        assert resident_bytes(worker._pool) < limit
        assert _gone_within({first}, 10) == set(), "the worker that linted the deep document still runs"
        assert [d.code for d in worker.run(lint_buffer, BUGGY, "next.py", Config(), None)] == ["TL501"]
    finally:
        worker.stop()

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

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "tapelint", "server"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
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

"""Editor keystroke latency: the real `tapelint server` over stdio, on a generated training file.

    python benchmarks/editor_keystroke.py                       # 2,000 lines, every scenario
    python benchmarks/editor_keystroke.py --lines 4400 --edits 8 --scenario code

The benchmark opens a generated training script of about `--lines` lines, then sends `didChange` edits one
keystroke at a time and measures, for each, the time from sending the notification to receiving the
`publishDiagnostics` for that document version (debounce included). Scenarios, all inside a function body:

  code      typing a statement character by character (most intermediate texts do not parse)
  comment   typing a trailing comment at the end of a statement line
  newline   pressing Enter at the end of a line (a blank line), then typing its indentation

The references are a bare `libcst.parse_module` of the same text and a full in-process lint of it
(`tapelint.lint_source`), measured in the same run, so the ratios hold on a shared, noisy machine. The
`code` scenario mixes texts that parse with texts that do not (`log.` before the name is typed): their
medians are also given apart.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = '''"""Training script generated for the editor benchmark: data helpers, small models and custom loops."""
import argparse
import logging
import math

import numpy as np
import tensorflow as tf

log = logging.getLogger("train")
rng = np.random.default_rng(0)
features = rng.normal(size=(256, 16)).astype("float32")
labels = rng.integers(0, 10, size=256)
dataset = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(256).batch(32)
'''

HELPERS = '''

def parse_flags_{i}(argv=None):
    parser = argparse.ArgumentParser(description="experiment {i}")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--log-every", type=int, default=10)
    return parser.parse_args(argv)


def warmup_cosine_{i}(step, total, warmup=100, peak=1e-3):
    """Learning rate at `step`: linear warm-up, then a cosine decay to zero."""
    if step < warmup:
        return peak * step / max(warmup, 1)
    progress = (step - warmup) / max(total - warmup, 1)
    return 0.5 * peak * (1.0 + math.cos(math.pi * min(progress, 1.0)))


def augment_{i}(batch, noise=0.05, seed=None):
    local = np.random.default_rng(seed)
    jitter = local.normal(scale=noise, size=batch.shape).astype(batch.dtype)
    flipped = batch[:, ::-1] if local.random() < 0.5 else batch
    return flipped + jitter


def summarize_{i}(history):
    lines = []
    for epoch, record in enumerate(history):
        parts = [f"{{key}}={{value:.4f}}" for key, value in sorted(record.items())]
        lines.append(f"epoch {{epoch}}: " + ", ".join(parts))
    best = min(history, key=lambda record: record.get("loss", float("inf"))) if history else {{}}
    lines.append(f"best: {{best}}")
    return "\\n".join(lines)
'''

MODEL = '''

class Block{i}(tf.keras.Model):
    """Residual block {i}."""

    def __init__(self, units=16):
        super().__init__()
        self.dense_a = tf.keras.layers.Dense(units, activation="relu")
        self.dense_b = tf.keras.layers.Dense(units)
        self.norm = tf.keras.layers.BatchNormalization()
        self.drop = tf.keras.layers.Dropout(0.1)

    def call(self, x, training=False):
        h = self.dense_a(x)
        h = self.drop(h, training=training)
        h = self.dense_b(h)
        return self.norm(h + x, training=training)


def make_model_{i}():
    inputs = tf.keras.Input(shape=(16,))
    h = Block{i}(16)(inputs)
    outputs = tf.keras.layers.Dense(10{activation})(h)
    return tf.keras.Model(inputs, outputs)


model_{i} = make_model_{i}()
optimizer_{i} = tf.keras.optimizers.Adam(learning_rate=1e-3)
loss_fn_{i} = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
metric_{i} = tf.keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step_{i}(x, y):
    with tf.GradientTape() as tape:
        logits = model_{i}(x, training=True)
        loss = loss_fn_{i}(y, logits)
    grads = tape.gradient(loss, model_{i}.trainable_variables)
    {clip}optimizer_{i}.apply_gradients(zip(grads, model_{i}.trainable_variables))
    metric_{i}.update_state(y, logits)
    return loss


def evaluate_{i}(batches):
    total = 0.0
    count = 0
    for x, y in batches:
        logits = model_{i}(x, training=False)
        total += float(loss_fn_{i}(y, logits))
        count += 1
    return total / max(count, 1)


def run_{i}(argv=None):
    flags = parse_flags_{i}(argv)
    history = []
    for epoch in range(flags.epochs):
        metric_{i}.reset_state()
        for x, y in dataset:
            loss = train_step_{i}(augment_{i}(x.numpy()), y)
        history.append({{"loss": float(loss), "val": evaluate_{i}(dataset)}})
        log.info("epoch %d: %s", epoch, float(metric_{i}.result()))
    print(summarize_{i}(history))
'''


def training_file(lines: int) -> str:
    """A realistic training script of about `lines` lines: helpers and a model with its loop per section,
    with a softmax-with-logits bug in one section of three and unused clipping in another."""
    parts = [HEADER]
    total = HEADER.count("\n")
    index = 0
    while total < lines:
        activation = ', activation="softmax"' if index % 3 == 1 else ""
        clip = "clipped, _ = tf.clip_by_global_norm(grads, 5.0)\n    " if index % 3 == 2 else ""
        for part in (HELPERS.format(i=index), MODEL.format(i=index, activation=activation, clip=clip)):
            parts.append(part)
            total += part.count("\n")
        index += 1
    return "".join(parts)


class Server:
    """`python -m tapelint server` over stdio, framed with Content-Length headers."""

    def __init__(self, cwd: Path) -> None:
        env = {**os.environ, "XDG_CACHE_HOME": str(cwd / ".cache")}
        self.process = subprocess.Popen([sys.executable, "-m", "tapelint", "server"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env)
        self.buffer = b""
        self.next_id = 1

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self, deadline: float) -> dict:
        assert self.process.stdout is not None
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end >= 0:
                length = int(self.buffer[:end].split(b"Content-Length: ")[1].split(b"\r\n")[0])
                if len(self.buffer) >= end + 4 + length:
                    body = self.buffer[end + 4:end + 4 + length]
                    self.buffer = self.buffer[end + 4 + length:]
                    return json.loads(body)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from the server in time")
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise RuntimeError("the server closed its output")
                self.buffer += chunk

    def request(self, method: str, params: dict, timeout: float = 60) -> dict:
        msg_id = self.next_id
        self.next_id += 1
        self.send({"id": msg_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(deadline)
            if message.get("id") == msg_id and "method" not in message:
                return message

    def diagnostics_for(self, uri: str, version: int, timeout: float) -> list[dict]:
        """Wait for the diagnostics the server publishes for this version of the document."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(deadline)
            if message.get("method") != "textDocument/publishDiagnostics":
                continue
            params = message["params"]
            if params["uri"] == uri and params.get("version") == version:
                return params["diagnostics"]

    def close(self) -> None:
        try:
            self.request("shutdown", {}, timeout=10)
            self.send({"method": "exit"})
            self.process.wait(timeout=10)
        except (TimeoutError, RuntimeError, subprocess.TimeoutExpired, BrokenPipeError):
            self.process.kill()
            self.process.wait()


def keystrokes(text: str, scenario: str, count: int) -> list[tuple[int, int, int, int, str]]:
    """LSP edits (start line, start column, end line, end column, new text), one keystroke each, in the
    middle of the file, inside a function body."""
    lines = text.split("\n")
    middle = len(lines) // 2
    # The `count = 0` line of an evaluate function past the middle: a statement line inside a body.
    target = next(i for i in range(middle, len(lines)) if lines[i] == "    count = 0")
    end = len(lines[target])
    if scenario == "comment":
        typed = "  # count the batches seen so far, for the mean below"
        return [(target, end + k, target, end + k, char) for k, char in enumerate(typed[:count])]
    if scenario == "newline":
        edits: list[tuple[int, int, int, int, str]] = []
        line = target
        while len(edits) < count:
            edits.append((line, end, line, end, "\n"))
            line += 1
            for column in range(4):
                if len(edits) < count:
                    edits.append((line, column, line, column, " "))
            end = 4
        return edits
    statement = 'log.debug("evaluating %d batches", len(batches))'
    edits = [(target, end, target, end, "\n    ")]
    for k, char in enumerate(statement):
        edits.append((target + 1, 4 + k, target + 1, 4 + k, char))
    return edits[:count]


def parses(text: str) -> bool:
    try:
        compile(text, "<keystroke>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError:
        return False
    return True


def edited_texts(text: str, scenario: str, count: int) -> list[str]:
    """The text after each keystroke."""
    texts = []
    for line, column, end_line, end_column, new_text in keystrokes(text, scenario, count):
        lines = text.split("\n")
        start = sum(len(row) + 1 for row in lines[:line]) + column
        end = sum(len(row) + 1 for row in lines[:end_line]) + end_column
        text = text[:start] + new_text + text[end:]
        texts.append(text)
    return texts


def lint_seconds(text: str, repeat: int) -> float:
    from tapelint import lint_source

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        lint_source(text, "train.py")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(text: str, scenario: str, count: int, timeout: float) -> tuple[float, list[float], int]:
    with tempfile.TemporaryDirectory(prefix="tapelint-keystroke-") as folder:
        workspace = Path(folder)
        path = workspace / "train.py"
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        server = Server(workspace)
        try:
            server.request("initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}})
            server.send({"method": "initialized", "params": {}})
            start = time.monotonic()
            server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": text}}})
            found = server.diagnostics_for(uri, 1, timeout)
            opened = time.monotonic() - start
            latencies = []
            version = 1
            for line, column, end_line, end_column, new_text in keystrokes(text, scenario, count):
                version += 1
                start = time.monotonic()
                server.send({"method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": {"start": {"line": line, "character": column},
                                                  "end": {"line": end_line, "character": end_column}},
                                        "text": new_text}]}})
                server.diagnostics_for(uri, version, timeout)
                latencies.append(time.monotonic() - start)
        finally:
            server.close()
    return opened, latencies, len(found)


def bare_parse_seconds(text: str, repeat: int) -> float:
    import libcst

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        libcst.parse_module(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=20, help="keystrokes per scenario")
    parser.add_argument("--scenario", choices=("code", "comment", "newline", "all"), default="all")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for one publish")
    args = parser.parse_args()

    text = training_file(args.lines)
    scenarios = ("code", "comment", "newline") if args.scenario == "all" else (args.scenario,)
    parse = bare_parse_seconds(text, 3)
    lint = lint_seconds(text, 3)
    print(f"file               {text.count(chr(10))} lines, {len(text)} characters")
    print(f"bare libcst parse  {parse * 1000:8.0f} ms (median of 3)")
    print(f"full lint          {lint * 1000:8.0f} ms (in-process lint_source, median of 3)")
    for scenario in scenarios:
        opened, latencies, found = measure(text, scenario, args.edits, args.timeout)
        median, p90 = statistics.median(latencies), percentile(latencies, 0.9)
        print(f"{scenario:<8} open {opened * 1000:6.0f} ms ({found} diagnostics); {len(latencies)} keystrokes: "
              f"median {median * 1000:6.0f} ms, p90 {p90 * 1000:6.0f} ms, max {max(latencies) * 1000:6.0f} ms; "
              f"median / bare parse {median / parse:5.2f}, / full lint {median / lint:5.2f}")
        kinds = [parses(edited) for edited in edited_texts(text, scenario, args.edits)]
        if scenario == "code" and all(kind in kinds for kind in (True, False)):
            for kind, label in ((True, "parse"), (False, "do not parse")):
                chosen = [latency for latency, k in zip(latencies, kinds) if k == kind]
                print(f"{'':<8} {len(chosen)} texts {label}: median {statistics.median(chosen) * 1000:6.0f} ms")
    parse_after = bare_parse_seconds(text, 3)
    print(f"bare libcst parse  {parse_after * 1000:8.0f} ms again after the runs (noise check)")


if __name__ == "__main__":
    main()

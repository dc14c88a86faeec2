"""The editor server carries findings over an edit that changes only layout instead of linting again: what
it carries must be exactly what a full lint of the new text gives, and it must refuse every edit where that
is not certain."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pygls", reason="the language server needs the `lsp` extra (pygls)")

from tapelint.config import Config  # noqa: E402
from tapelint.engine import lint_source  # noqa: E402
from tapelint.lsp import (carry_over, layout_edit, layout_of, may_change_only_layout, text_signature,  # noqa: E402
                          trigger_words)

SOURCE = '''"""A small training script with three findings."""
import tensorflow as tf

features = tf.random.normal((64, 8))
labels = tf.random.uniform((64,), maxval=4, dtype=tf.int32)
dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(16)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(16, activation="relu"),  # hidden
    tf.keras.layers.Dense(4, activation="softmax"),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)
accuracy = tf.keras.metrics.SparseCategoricalAccuracy()


def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    clipped, _ = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y, logits)
    return loss


for epoch in range(3):
    for x, y in dataset:
        loss = train_step(x, y)
    print(epoch, float(loss), float(accuracy.result()))
'''


def full_lint(text: str) -> tuple:
    return tuple(lint_source(text, "train.py", Config(preview=True)))


@pytest.fixture(scope="module")
def base() -> tuple:
    found = full_lint(SOURCE)
    assert {d.code for d in found} == {"TL101", "TL008", "TL601"}, "the script keeps its three findings"
    return found


def carried(old: str, new: str, found: tuple) -> tuple | None:
    """The server's answer for `new` without a lint, or None when it would lint."""
    layout = layout_of(old)
    assert layout is not None
    words = trigger_words(Config(preview=True))
    if text_signature(old, words) != text_signature(new, words):
        return None
    moved = layout_edit(layout, old, new)
    if moved is None:
        return None
    assert may_change_only_layout(old, new), "the server's cheap test never turns away a layout-only edit"
    edit, new_layout = moved
    assert new_layout == layout_of(new), "the layout derived from the edit is the one the new text has"
    return carry_over(found, edit)


def replace_line(text: str, number: int, line: str) -> str:
    lines = text.split("\n")
    lines[number - 1] = line
    return "\n".join(lines)


def insert_line(text: str, number: int, line: str) -> str:
    lines = text.split("\n")
    lines.insert(number - 1, line)
    return "\n".join(lines)


def test_typing_a_trailing_comment_keeps_exactly_the_findings_of_a_full_lint(base):
    line = SOURCE.split("\n")[21]  # the line of the TL008 finding
    text, found = SOURCE, base
    for typed in ("  ", "  #", "  # clip", "  # clip before applying"):
        new = replace_line(SOURCE, 22, line + typed)
        answer = carried(text, new, found)
        assert answer is not None, f"typing {typed!r} after a statement needs no lint"
        assert answer == full_lint(new)
        text, found = new, answer


def test_blank_and_comment_lines_after_the_cited_line_move_the_findings_below_them(base):
    new = insert_line(insert_line(SOURCE, 30, ""), 30, "        # log every epoch")
    answer = carried(SOURCE, new, base)
    assert answer is not None
    assert answer == full_lint(new)


def test_a_line_inserted_above_a_line_that_a_message_cites_is_linted_again(base):
    # TL601 says "in the epoch loop at line 28": a blank line above it changes that message.
    new = insert_line(SOURCE, 17, "")
    assert carried(SOURCE, new, base) is None
    assert any("line 29" in d.message for d in full_lint(new))


@pytest.mark.parametrize("edit", [
    lambda s: s.replace("clipped, _ =", "clipped, _  ="),  # whitespace inside a statement
    lambda s: s.replace("grads, 1.0)", "grads, 1.5)"),  # a value
    lambda s: s.replace('"softmax"', '"relu"'),  # a string
    lambda s: s.replace('"relu"),  # hidden', '"relu"),  # hidden layer'),  # a comment inside brackets
    lambda s: s.replace("    accuracy.update_state(y, logits)\n", "    accuracy.update_state(y, logits)  # noqa: TL601\n"),
    lambda s: s.replace("    return loss\n", "     return loss\n"),  # indentation
    lambda s: s.replace("    return loss\n", "    return loss \\\n"),  # a line continued
    lambda s: s.replace("import tensorflow as tf\n", "import tensorflow as tf\n# from models import Net\n"),
])
def test_edits_that_can_change_a_finding_are_linted_again(base, edit):
    new = edit(SOURCE)
    assert new != SOURCE
    assert carried(SOURCE, new, base) is None


def test_random_layout_edits_carry_only_what_a_full_lint_gives(base):
    # Seeded edits anywhere in the file, of the kinds typing makes; some can be carried, some cannot.
    rng = random.Random(10)
    lines = SOURCE.split("\n")
    outcomes = {"carried": 0, "linted": 0}
    for _ in range(24):
        number = rng.randrange(1, len(lines) + 1)
        kind = rng.choice(["trailing", "blank", "indented blank", "comment line", "space inside", "enter"])
        line = lines[number - 1]
        if kind == "trailing":
            new = replace_line(SOURCE, number, line + "  # note")
        elif kind == "blank":
            new = insert_line(SOURCE, number, "")
        elif kind == "indented blank":
            new = insert_line(SOURCE, number, "    ")
        elif kind == "comment line":
            new = insert_line(SOURCE, number, "    # remark")
        elif kind == "space inside":
            column = rng.randrange(len(line) + 1)
            new = replace_line(SOURCE, number, line[:column] + " " + line[column:])
        else:
            new = replace_line(SOURCE, number, line + "\n")
        answer = carried(SOURCE, new, base)
        if answer is None:
            outcomes["linted"] += 1
            continue
        outcomes["carried"] += 1
        assert answer == full_lint(new), f"{kind} at line {number}"
    assert outcomes["carried"] >= 8 and outcomes["linted"] >= 3, outcomes


@pytest.mark.parametrize("old, new", [
    ("x = 1\n", "x = 12\n"),
    ("x = 1\n", "x = 1\ny\n"),
    ("x = 1  # a\n", "x = 1 + 2  # a\n"),
    ("f(a)\n", "f(a, b)\n"),
])
def test_typing_code_is_linted_without_tokenizing_the_file(old, new):
    # Code typed on a line (not after a `#` of that line) cannot be a layout-only edit: the server lints it
    # without first tokenizing the old and new texts.
    assert not may_change_only_layout(old, new)


def test_whitespace_and_comment_typing_passes_the_cheap_test():
    assert may_change_only_layout("x = 1\n", "x = 1  # note\n")
    assert may_change_only_layout("x = 1  # no\n", "x = 1  # note\n")
    assert may_change_only_layout("x = 1\ny = 2\n", "x = 1\n\n    # why\ny = 2\n")


def test_an_edit_is_linted_at_once_unless_a_lint_of_the_document_is_under_way():
    from tapelint.lsp import DEBOUNCE_SECONDS, MIN_DEBOUNCE_SECONDS, TapelintServer

    server = TapelintServer()
    uri = "file:///work/train.py"
    server.lint_seconds[uri] = 4.0
    assert server.debounce(uri) == 0, "nothing to wait for: typed slower than the lint"
    server.pending[uri] = object()  # a lint waiting or running
    assert server.debounce(uri) == DEBOUNCE_SECONDS, "typed faster than a slow lint: wait for a real pause"
    server.lint_seconds[uri] = 0.2
    assert server.debounce(uri) == 0.05, "a quarter of the last lint"
    server.lint_seconds[uri] = 0.01
    assert server.debounce(uri) == MIN_DEBOUNCE_SECONDS
    del server.lint_seconds[uri]
    assert server.debounce(uri) == DEBOUNCE_SECONDS

"""The editor server's incremental parser: a module spliced from the previous parse and the reparsed
statements around an edit must be exactly the module a full parse of the new text gives, and a text that
does not parse must raise libcst's own error for it."""

from __future__ import annotations

import random
from pathlib import Path

import libcst as cst
import pytest

from tapelint.config import Config
from tapelint.engine import lint_source
from tapelint.incremental import IncrementalParser, cpython_error_has_a_line, lint_buffer, parser_for

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.py"))

TRAINING = '''"""Train a small classifier."""
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(4, activation="softmax"),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)


def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    clipped, _ = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def evaluate(batches):
    total = 0.0
    count = 0
    for x, y in batches:
        total += float(loss_fn(y, model(x, training=False)))
        count += 1
    return total / max(count, 1)
'''


def full_parse(text: str) -> cst.Module | str:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return str(error)


def incremental_parse(parser: IncrementalParser, text: str) -> cst.Module | str:
    try:
        return parser.parse(text)
    except cst.ParserSyntaxError as error:
        return str(error)


def assert_same(parser: IncrementalParser, text: str) -> bool:
    """The parser's answer for `text` is the full parse's; True when the text parses."""
    expected, got = full_parse(text), incremental_parse(parser, text)
    if isinstance(expected, str):
        assert isinstance(got, str), "a text that does not parse raises a syntax error"
        if not cpython_error_has_a_line(text):
            assert got == expected, "where the engine reads libcst's error, it is the full parse's"
        return False
    assert isinstance(got, cst.Module), f"the full parse succeeds, the incremental one says {got}"
    assert got.code == text
    assert got.deep_equals(expected)
    for name in ("default_indent", "default_newline", "has_trailing_newline", "encoding"):
        assert getattr(got, name) == getattr(expected, name), name
    return True


def type_text(parser: IncrementalParser, text: str, offset: int, typed: str) -> str:
    for count in range(1, len(typed) + 1):
        assert_same(parser, text[:offset] + typed[:count] + text[offset:])
    return text[:offset] + typed + text[offset:]


def line_offsets(text: str) -> list[int]:
    offsets = [0]
    for index, char in enumerate(text):
        if char == "\n":
            offsets.append(index + 1)
    return offsets


def test_typing_a_statement_in_a_function_body_reparses_only_that_function() -> None:
    parser = IncrementalParser()
    parser.parse(TRAINING)
    offset = TRAINING.index("    count = 0\n") + len("    count = 0")
    type_text(parser, TRAINING, offset, '\n    print("evaluating", len(batches))')
    # Every keystroke whose text parses was spliced, none was parsed in full (only the first text was).
    assert parser.full == 1
    assert parser.spliced >= 10


@pytest.mark.parametrize("where, typed", [
    ("start of a statement line", "x"),
    ("start of a statement line", "y = 1\n"),
    ("start of a statement line", "    "),
    ("start of a statement line", "# note\n"),
    ("end of the file", "\nprint(evaluate([]))\n"),
    ("end of the file", "    # trailing, indented\n"),
    ("start of the file", "# -*- coding: utf-8 -*-\n"),
    ("start of the file", "import os\n"),
    ("after a function", "    more = 1\n"),
    ("after a function", "  # indented comment\n"),
    ("after a function", "else:\n    pass\n"),
    ("inside a with block", "        extra = loss * 2\n"),
])
def test_edits_at_statement_boundaries_give_the_full_parse(where: str, typed: str) -> None:
    anchors = {
        "start of a statement line": TRAINING.index("optimizer = "),
        "end of the file": len(TRAINING),
        "start of the file": 0,
        "after a function": TRAINING.index("    return loss\n") + len("    return loss\n"),
        "inside a with block": TRAINING.index("        loss = loss_fn"),
    }
    parser = IncrementalParser()
    parser.parse(TRAINING)
    type_text(parser, TRAINING, anchors[where], typed)


def test_the_default_indentation_comes_from_the_first_indented_block() -> None:
    # The first block sets libcst's default indent; changing it changes how every block is recorded.
    parser = IncrementalParser()
    parser.parse(TRAINING)
    first_block = TRAINING.index("    with tf.GradientTape()")
    two_spaces = TRAINING[:first_block] + TRAINING[first_block + 2:]
    assert_same(parser, two_spaces)
    source = "x = 1\n\n\ndef f():\n  return 1\n\n\ndef g():\n    return 2\n"
    parser = IncrementalParser()
    parser.parse(source)
    # Removing the only two-space block makes g's four spaces the default.
    assert_same(parser, source.replace("def f():\n  return 1\n", "f = 1\n"))
    assert_same(parser, source.replace("x = 1\n", "def h():\n        return 0\n"))


def test_windows_line_endings_and_tabs_give_the_full_parse() -> None:
    crlf = TRAINING.replace("\n", "\r\n")
    parser = IncrementalParser()
    parser.parse(crlf)
    offset = crlf.index("    count = 0\r\n") + len("    count = 0\r\n")
    type_text(parser, crlf, offset, "    seen = []\r\n")
    type_text(parser, crlf, offset, "    mixed = 1\n")
    tabs = TRAINING.replace("    ", "\t")
    parser = IncrementalParser()
    parser.parse(tabs)
    offset = tabs.index("\tcount = 0\n") + len("\tcount = 0\n")
    type_text(parser, tabs, offset, "\tseen = []\n")


def test_a_text_that_does_not_parse_is_known_from_the_changed_statement_on() -> None:
    parser = IncrementalParser()
    parser.parse(TRAINING)
    offset = TRAINING.index("    count = 0\n")
    name = "incremental_broken_train.py"
    lint_buffer(TRAINING, name, Config(), None)
    for typed in ("    log.\n", "    total = (\n", '    print("evaluating\n', "    for\n"):
        broken = TRAINING[:offset] + typed + TRAINING[offset:]
        before = parser.failed_early
        with pytest.raises(cst.ParserSyntaxError):
            parser.parse(broken)
        with pytest.raises(cst.ParserSyntaxError):
            cst.parse_module(broken)
        assert parser.failed_early == before + 1, "the full parse was not needed to know"
        # The editor shows exactly the command line's finding for the text (CPython's message and place).
        assert lint_buffer(broken, name, Config(), None) == lint_source(broken, name, Config())
    # The next text that parses is still spliced from the last one that did.
    before = parser.spliced
    assert_same(parser, TRAINING[:offset] + "    total = ()\n" + TRAINING[offset:])
    assert parser.spliced == before + 1


def random_edit(text: str, rng: random.Random) -> str:
    pieces = ["x", "(", ")", ":", "\n", "    ", "# c", "'", '"', "\\", " ", "\n\n", "def f():\n    pass\n",
              "if x:\n", "else:\n", "    y = 1\n", "\t", "@d\n", "[", "]", ",", "=", "\n    # k\n", "'''",
              "lambda: 0", "\n  ", "class C:\n    z = 2\n", "\r\n"]
    if not text:
        return rng.choice(pieces)
    offset = rng.randrange(len(text) + 1)
    if rng.random() < 0.4:
        offset = text.rfind("\n", 0, offset) + 1  # often at the start of a line
    end = offset + rng.choice([0, 0, 0, 1, 2, 7, 30, 120])
    return text[:offset] + (rng.choice(pieces) if rng.random() < 0.7 else "") + text[end:]


def realistic_edit(text: str, rng: random.Random) -> str:
    """What a person does: retype part of a line, add or delete a line, indent or dedent one."""
    starts = line_offsets(text)
    line = rng.randrange(len(starts))
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    row = text[start:end]
    indent = row[:len(row) - len(row.lstrip(" "))]
    choice = rng.random()
    if choice < 0.25:
        return text[:start] + text[end:]  # delete the line
    if choice < 0.45:
        return text[:end] + indent + rng.choice(["value = compute(1, 2)", "pass", "print(x)", "return None",
                                                 "# a note", "if ready:", "for i in range(3):"]) + "\n" + text[end:]
    if choice < 0.6:
        return text[:start] + "    " + text[start:]  # indent
    if choice < 0.7:
        return text[:start] + row[min(4, len(indent)):] + text[end:]  # dedent
    cut = start + rng.randrange(len(row) + 1)
    return text[:cut] + rng.choice(["", "a", "_1", ".numpy()", ")", "(", " + 1", ", y"]) + text[
        cut + rng.choice([0, 1, 3]):]


@pytest.mark.slow  # seconds: the fast tier stays under a minute; CI runs it
@pytest.mark.parametrize("seed", range(2))
def test_random_edits_of_corpus_files_give_the_full_parse(seed: int) -> None:
    rng = random.Random(seed)
    files = rng.sample(CORPUS, 6)
    parsed = spliced = 0
    for path in files:
        original = path.read_text(encoding="utf-8")
        parser = IncrementalParser()
        parser.parse(original)
        text = last_good = original
        for _ in range(40):
            new = (realistic_edit if rng.random() < 0.7 else random_edit)(text, rng)
            if assert_same(parser, new):
                parsed += 1
                text = last_good = new
            else:
                # Keep editing a broken text now and then (the parser answers from older parses).
                text = new if rng.random() < 0.2 else last_good
        spliced += parser.spliced
    # Enough texts parse, and most of them by a splice, for the comparison to mean something.
    assert parsed >= 60 and spliced >= parsed // 2, (parsed, spliced)


def test_the_editor_lint_of_each_keystroke_is_the_command_line_lint() -> None:
    name = "incremental_check_train.py"
    assert lint_buffer(TRAINING, name, Config(), None) == lint_source(TRAINING, name, Config())
    offset = TRAINING.index("    clipped, _ =")
    text = TRAINING
    for typed in ("    g", "rads = [g * 0.5 for g in grads]\n", "    optimizer.apply_gradients(zip(grads, model.t"):
        for count in range(1, len(typed) + 1, 3):
            edited = text[:offset] + typed[:count] + text[offset:]
            assert lint_buffer(edited, name, Config(), None) == lint_source(edited, name, Config())
        text = text[:offset] + typed + text[offset:]
        offset += len(typed)
    assert parser_for(name).spliced > 0


@pytest.mark.parametrize("statement", [
    "else:\n    x = (\n",  # `else` may continue the `for` loop before it
    "(x): int = 1\n",  # CPython accepts it, libcst does not: the engine reads libcst's error
])
def test_a_failure_that_the_changed_statements_cannot_prove_gets_the_full_parse_error(statement: str) -> None:
    source = "for item in items:\n    pass\nelapsed = 1\nprint(elapsed)\n"
    parser = IncrementalParser()
    parser.parse(source)
    broken = source.replace("elapsed = 1\n", statement)
    with pytest.raises(cst.ParserSyntaxError) as raised:
        parser.parse(broken)
    with pytest.raises(cst.ParserSyntaxError) as expected:
        cst.parse_module(broken)
    assert str(raised.value) == str(expected.value)
    assert parser.failed_early == 0


@pytest.fixture
def parsed_ahead():
    from tapelint import incremental

    incremental.ahead.clear()
    yield incremental
    incremental.ahead.clear()


def _check(path: Path) -> list:
    from tapelint.runner import lint_paths

    return [d.to_json() if hasattr(d, "to_json") else d for d in lint_paths([path], Config(), jobs=1).diagnostics]


@pytest.mark.parametrize("edit", [
    ("Adam(1e-3)", "Adam(3e-4)"),  # a changed argument: one statement reparsed
    ("    return loss\n", "    return loss\n\n\ndef extra():\n    return 1\n"),  # a function added
    ("    grads = tape.gradient(loss, model.trainable_variables)\n", "    grads = tape.gradient(loss, \n"),  # broken
])
def test_a_check_of_a_file_the_daemon_parsed_ahead_reuses_that_parse_and_finds_the_same(
        parsed_ahead, tmp_path: Path, edit: tuple[str, str]) -> None:
    # What the daemon does between checks (tapelint.daemon_server._parse_ahead), then a check after an edit.
    path = tmp_path / "train.py"
    assert edit[0] in TRAINING
    path.write_text(TRAINING)
    assert parsed_ahead.parse_ahead(str(path.resolve()), TRAINING)
    parser = parsed_ahead.ahead[str(path.resolve())]
    path.write_text(TRAINING.replace(edit[0], edit[1], 1))
    with_parse = _check(path)
    assert parser.spliced + parser.failed_early + parser.full == 2  # the check's parse went through it
    parsed_ahead.ahead.clear()
    assert with_parse == _check(path)  # what a check without the daemon's parse finds
    assert with_parse  # the training loop has findings (the softmax model with from_logits=True)


def test_a_file_that_cannot_be_parsed_is_not_kept(parsed_ahead, tmp_path: Path) -> None:
    path = str(tmp_path / "broken.py")
    assert not parsed_ahead.parse_ahead(path, "def f(:\n")
    assert not parsed_ahead.parse_ahead(path, "x = " + "(" * 6000 + ")" * 6000 + "\n")  # refused, not parsed
    assert parsed_ahead.ahead == {} and parsed_ahead.parser_ahead(path) is None

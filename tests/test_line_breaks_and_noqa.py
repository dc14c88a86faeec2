"""Fixes land where libcst says, whatever line breaks the file holds (issue: --fix corrupted files with a
lone carriage return, and TL900's fix deleted code after a form feed)."""

from __future__ import annotations

from tapelint.config import Config, parse
from tapelint.fixes import fix_source
from tapelint.text import line_starts, source_lines


def test_python_line_breaks_only():
    text = "a\r\nb\rc\nd\x0ce\x85f\u2028g"
    assert source_lines(text) == ["a", "b", "c", "d\x0ce\x85f\u2028g"]
    assert line_starts("a\r\nb\rc\n") == [0, 3, 5, 7]
    assert source_lines("x\n", keepends=True) == ["x\n"]


def test_fix_after_a_lone_carriage_return_edits_only_its_own_bytes():
    source = ("import tensorflow as tf\n# a comment with a stray carriage return\r# in it\n"
              "opt = tf.keras.optimizers.Adam(lr=0.01)\n")
    outcome = fix_source(source, "x.py", Config())
    assert outcome.source == source.replace("Adam(lr=", "Adam(learning_rate=")
    again = fix_source(outcome.source, "x.py", Config())
    assert again.source == outcome.source and again.applied == 0


def test_fix_in_a_file_with_only_carriage_returns():
    source = "import tensorflow as tf\ropt = tf.keras.optimizers.Adam(lr=0.01)\rprint(opt)\r"
    outcome = fix_source(source, "x.py", Config())
    assert outcome.source == source.replace("lr=", "learning_rate=")


def test_unused_noqa_fix_after_a_form_feed_keeps_the_code():
    source = "import tensorflow as tf\n\x0c\nrows = [1, 2, 3]\nx = 1  # noqa: TL001\nz = 2\nprint(x, z)\n"
    # preview: a noqa naming a rule that does not run is not reported, and TL001 may be in preview
    config = parse({"extend-select": ["TL900"], "preview": True}, "test", None)
    outcome = fix_source(source, "x.py", config)
    assert outcome.source == source.replace("x = 1  # noqa: TL001", "x = 1")


def test_noqa_with_a_colon_and_no_code_suppresses_nothing_and_a_spaced_colon_names_codes():
    from tapelint.engine import lint_source

    base = "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.01)"
    assert [d.code for d in lint_source(base + "  # noqa:\n", "x.py", Config())] == ["TL501"]
    assert lint_source(base + "  # noqa : TL501\n", "x.py", Config()) == []
    assert [d.code for d in lint_source(base + "  # noqa : TL201\n", "x.py", Config())] == ["TL501"]
    assert lint_source(base + "  # noqa\n", "x.py", Config()) == []


def test_the_watch_fix_uses_the_file_s_own_line_ending():
    from tapelint.config import Config
    from tapelint.fixes import fix_source

    source = ("import tensorflow as tf\n"
              "x = tf.constant([[1.0, 2.0]])\n"
              "with tf.GradientTape() as tape:\n"
              "    y = tf.reduce_sum(x * x)\n"
              "grads = tape.gradient(y, x)\n")
    for ending in ("\r\n", "\r"):
        fixed = fix_source(source.replace("\n", ending), "t.py", Config()).source
        assert f"    tape.watch(x){ending}    y = tf.reduce_sum(x * x){ending}" in fixed
        assert fixed.count(ending) == source.count("\n") + 1
        if ending == "\r":
            assert "\n" not in fixed

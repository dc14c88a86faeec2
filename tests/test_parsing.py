"""The engine's parse (tapelint.analysis.parsing) builds libcst's tree without re-validating each node."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import libcst as cst
import pytest

from tapelint.analysis import parsing
from tapelint.analysis.parsing import parse_module

ROOT = Path(__file__).resolve().parent.parent


def _sources() -> list[str]:
    files = sorted((ROOT / "tests" / "corpus").rglob("*.py"))[:40] + sorted((ROOT / "tapelint").glob("*.py"))
    return [path.read_text(encoding="utf-8") for path in files]


@pytest.fixture
def stand_ins(monkeypatch):
    """The stand-in constructors from the first parse on, whatever this process parsed before."""
    monkeypatch.setattr(parsing, "_FAST_FOR", 0)
    monkeypatch.setattr(parsing, "_fast", None)


@pytest.mark.slow  # seconds: the fast tier stays under a minute; CI runs it
@pytest.mark.parametrize("constructors", ["libcst's", "stand-ins"])
def test_the_tree_is_the_one_libcst_parses(constructors, monkeypatch):
    if constructors == "stand-ins":
        monkeypatch.setattr(parsing, "_FAST_FOR", 0)
        monkeypatch.setattr(parsing, "_fast", None)
    else:
        monkeypatch.setattr(parsing, "_FAST_FOR", 10**12)
        monkeypatch.setattr(parsing, "_FAST_AFTER", 10**12)
        monkeypatch.setattr(parsing, "_fast", None)
    sources = _sources()
    assert len(sources) > 20
    for source in sources:
        ours = parse_module(source)
        assert ours.deep_equals(cst.parse_module(source))
        assert ours.code == source
    assert (parsing._fast is not None) == (constructors == "stand-ins")


def test_a_training_loop_parses_to_the_same_tree_with_the_stand_in_constructors(stand_ins):
    parse_module("pass\n")
    original, fast = parsing._fast[cst.Name]
    built = []

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(self)
        fast(self, *args, **kwargs)

    parsing._fast[cst.Name] = (original, counted)
    try:
        for path in sorted((ROOT / "examples").glob("*.py")):
            source = path.read_text(encoding="utf-8")
            ours = parse_module(source)
            assert ours.deep_equals(cst.parse_module(source)), path.name
            assert ours.code == source
    finally:
        parsing._fast[cst.Name] = (original, fast)
    assert len(built) > 500  # the parser built its names through the stand-in


def test_the_stand_ins_cover_the_nodes_the_parser_builds_most(stand_ins):
    # A class left out falls back to libcst's constructor silently: this keeps the saving from vanishing
    # with a libcst upgrade unnoticed.
    parse_module("x = f(a, b=1)\n")
    for name in parsing._COMMON_NODES:
        assert getattr(cst, name) in parsing._fast, name
    # They are the classes most nodes of real training code belong to.
    counts: dict[type, int] = {}
    for path in sorted((ROOT / "examples").glob("*.py")):
        pending: list[cst.CSTNode] = [cst.parse_module(path.read_text(encoding="utf-8"))]
        while pending:
            node = pending.pop()
            counts[type(node)] = counts.get(type(node), 0) + 1
            pending.extend(node.children)
    covered = sum(count for cls, count in counts.items() if cls in parsing._fast)
    assert covered > 0.9 * sum(counts.values())


def test_a_stand_in_constructor_builds_what_libcsts_builds(stand_ins):
    parse_module("pass\n")
    original, fast = parsing._fast[cst.Call]
    by_hand = cst.Call(func=cst.Name("f"), args=[cst.Arg(cst.Integer("1"))])
    one = cst.Call.__new__(cst.Call)
    fast(one, cst.Name("f"), [cst.Arg(cst.Integer("1"))])
    two = cst.Call.__new__(cst.Call)
    fast(two, func=cst.Name("f"), args=[cst.Arg(cst.Integer("1"))])
    assert one.deep_equals(by_hand) and two.deep_equals(by_hand)
    # A default made per node (whitespace) is made again for each node, not shared between them.
    assert one.whitespace_after_func is not two.whitespace_after_func
    with pytest.raises(TypeError):
        fast(cst.Call.__new__(cst.Call))  # `func` is required, as in libcst's constructor


def _libcsts_constructors_are_back() -> None:
    for cls, (original, _) in parsing._fast.items():
        assert cls.__dict__["__init__"] is original, cls.__name__
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cst.Name("x").value = "y"


def test_nodes_built_after_the_parse_are_validated_again(stand_ins):
    parse_module("x = (1 + 2)\n")
    _libcsts_constructors_are_back()


def test_validation_comes_back_when_the_parse_fails(stand_ins):
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n")
    _libcsts_constructors_are_back()


def test_a_short_run_never_builds_the_stand_ins(monkeypatch):
    # Building them costs more than one short file's parse saves (pre-commit on one file); a long text, or
    # a run that has parsed many short ones, builds them once.
    monkeypatch.setattr(parsing, "_fast", None)
    monkeypatch.setattr(parsing, "_parsed", 0)
    parse_module("import tensorflow as tf\n" * 100)
    assert parsing._fast is None
    parse_module("x = 1\n" * (parsing._FAST_FOR // 6 + 1))
    assert parsing._fast is not None
    monkeypatch.setattr(parsing, "_fast", None)
    monkeypatch.setattr(parsing, "_parsed", 0)
    short = "y = 2\n" * (parsing._FAST_FOR // 12)  # half the length that pays alone
    while parsing._parsed + len(short) < parsing._FAST_AFTER:
        parse_module(short)
        assert parsing._fast is None
    parse_module(short)
    assert parsing._fast is not None


def test_the_node_classes_read_by_exact_type_have_no_subclasses():
    # The analyses test these classes with `type(node) is ...` (a failed isinstance against a libcst class
    # goes through ABCMeta); that equals isinstance only while libcst (pinned) gives them no subclasses.
    import libcst as cst

    for cls in (cst.Name, cst.Attribute, cst.Call, cst.Arg, cst.Lambda, cst.Tuple, cst.List, cst.CompFor,
                cst.SimpleString, cst.BinaryOperation, cst.Power, cst.Integer, cst.FunctionDef, cst.ClassDef,
                cst.For, cst.While, cst.If, cst.Try, cst.Return, cst.Raise, cst.Break, cst.Continue, cst.With,
                cst.Float, cst.Imaginary, cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis, cst.Set,
                cst.Dict, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.Subscript, cst.Global, cst.Nonlocal,
                cst.SimpleStatementLine, cst.Param, cst.StarredElement, cst.Add, cst.Import, cst.ImportFrom):
        assert cls.__subclasses__() == [], cls


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="POSIX fork")
def test_a_fork_made_during_another_threads_parse_gets_libcsts_constructors_back(stand_ins):
    # The daemon forks its workers; a fork taken while another thread was inside a parse must not keep the
    # stand-ins and the validation switched off for the rest of the child's life.
    import multiprocessing

    parse_module("pass\n")
    saved = parsing._parsing
    with parsing._lock:  # as a parse in another thread leaves things while it runs
        parsing._parsing += 1
        parsing._switch(True)
    try:
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_report_constructors, args=(queue,))
        child.start()
        child.join(timeout=60)
        assert queue.get(timeout=5) == (True, True, 0)
    finally:
        with parsing._lock:
            parsing._parsing = saved
            parsing._switch(False)
    _libcsts_constructors_are_back()


def _report_constructors(queue) -> None:  # type: ignore[no-untyped-def]
    restored = all(cls.__dict__["__init__"] is original for cls, (original, _) in parsing._fast.items())
    try:
        cst.Name("")
        validated = False
    except cst.CSTValidationError:
        validated = True
    parse_module("x = 1\n")  # the lock is free in the child
    queue.put((restored, validated, parsing._parsing))


_PIECES = (
    "# header\n"
    "import tensorflow as tf\n"
    "@tf.function\n"
    "\n"
    "# between the decorator and the def\n"
    "def step(x):\n"
    "  doc = '''\n"
    "x = 1  # a line at column 0 inside a string\n"
    "'''\n"
    "  return x\n"
    "  # an indented comment after the block\n"
    "if x:\n"
    "    y = 1\n"
    "else:\n"
    "    y = 2\n"
    "z = 1 + \\\n"
    "3\n"
    "w = (\n"
    "1)\n"
    "class A:\n"
    "\tdef f(self): pass\n"
    "\n"
    "# trailing comment\n"
)


@pytest.mark.parametrize("chars", [1, 20, 60, 10_000])
def test_a_long_text_parsed_in_pieces_is_the_module_a_whole_parse_gives(chars: int, monkeypatch):
    # libcst's parser holds ~4 KB a token until it ends (a million lines of `x`: 8 GB); tapelint parses a
    # long text in pieces. Every place a piece may end is tried here (pieces of one character upwards).
    from tapelint.analysis import parsing

    monkeypatch.setattr(parsing, "PIECE_CHARS", chars)
    monkeypatch.setattr(parsing, "_PIECES_FOR", 1)
    for text in (_PIECES, _PIECES.replace("\tdef f(self): pass", "  def f(self): pass"),
                 _PIECES.replace("\n", "\r\n"), "x\n" * 50, "x = 1\n" * 20 + "y = (\n"):
        try:
            whole = cst.parse_module(text)
        except cst.ParserSyntaxError:
            with pytest.raises(cst.ParserSyntaxError):
                parsing.parse_in_pieces(text)
            continue
        pieces = parsing.parse_in_pieces(text)
        assert pieces.deep_equals(whole) and pieces.code == text
        for name in ("default_indent", "default_newline", "has_trailing_newline", "encoding"):
            assert getattr(pieces, name) == getattr(whole, name), name
        for name in ("header", "footer"):
            ours, theirs = getattr(pieces, name), getattr(whole, name)
            assert len(ours) == len(theirs) and all(a.deep_equals(b) for a, b in zip(ours, theirs)), name

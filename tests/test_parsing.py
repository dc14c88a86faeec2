"""The engine's parse (tapelint.analysis.parsing) builds libcst's tree without re-validating each node."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from tapelint.analysis.parsing import parse_module

ROOT = Path(__file__).resolve().parent.parent


def _sources() -> list[str]:
    files = sorted((ROOT / "tests" / "corpus").rglob("*.py"))[:40] + sorted((ROOT / "tapelint").glob("*.py"))
    return [path.read_text(encoding="utf-8") for path in files]


@pytest.mark.slow  # seconds: the fast tier stays under a minute; CI runs it
def test_the_tree_is_the_one_libcst_parses():
    sources = _sources()
    assert len(sources) > 20
    for source in sources:
        ours = parse_module(source)
        assert ours.deep_equals(cst.parse_module(source))
        assert ours.code == source


def test_nodes_built_after_the_parse_are_validated_again():
    parse_module("x = (1 + 2)\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_validation_comes_back_when_the_parse_fails():
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


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

"""Positions computed statement by statement (tapelint.analysis.positions) are libcst's PositionProvider's."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tapelint.analysis.facts import Facts
from tapelint.analysis.positions import LazyPositions

_SOURCE = (
    "import tensorflow as tf\n"
    "x = tf.constant(1)\n"
    "x = tf.constant(1)\n"
    "\n"
    "def f():\n"
    "    return x\n"
    "\n"
    "def g():\n"
    "    '''\n"
    "def g():\n"
    "    return x\n"
    "'''\n"
    "    return x\n"
    "class A:\n"
    "    def call(self):\n"
    "        return x\n"
)


def _lazy(module: cst.Module, source: str) -> LazyPositions:
    facts = Facts(module, source)
    return LazyPositions(module, source, lambda node: facts.top_statement.get(id(node)))


def test_every_node_is_placed_as_libcst_places_it_with_repeated_statements():
    module = cst.parse_module(_SOURCE)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    for node, position in expected.items():
        assert _lazy(module, _SOURCE).get(node) == position, type(node).__name__


def test_a_statement_whose_text_occurs_once_is_placed_without_another_parse():
    module = cst.parse_module(_SOURCE)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lazy = _lazy(module, _SOURCE)
    returned = module.body[5].body.body[0].body.body[0]  # type: ignore[attr-defined]
    assert lazy.get(returned) == expected[returned]
    assert lazy.get(returned).start.line == 16
    assert lazy._tree is False and lazy._full is None  # no CPython parse, no whole-file pass


def test_statements_with_the_same_text_are_told_apart():
    module = cst.parse_module(_SOURCE)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lazy = _lazy(module, _SOURCE)
    second = module.body[2]
    assert lazy.get(second) == expected[second]
    assert lazy.get(second).start.line == 3
    # `return x` of `g` also occurs at the start of a line inside the docstring above it.
    returned = module.body[4].body.body[1]  # type: ignore[attr-defined]
    assert lazy.get(returned).start.line == 13

"""The read-only traversal (tapelint.analysis.walk) and the facts collector reach every node that can hold code.

The traversal skips fields whose declared type can only hold text, a flag, a sentinel or formatting
(`Name.value`, `Arg.comma`, `Arg.star`); these tests compare it with a walk that reads every field."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import libcst as cst

from tapelint.analysis import walk
from tapelint.analysis.facts import Facts
from tapelint.analysis.parsing import parse_module

ROOT = Path(__file__).resolve().parent.parent
_FORMATTING_FIELDS = ("lpar", "rpar", "header", "footer", "leading_lines", "lines_after_decorators",
                      "trailing_whitespace")


def _sources() -> list[str]:
    files = sorted((ROOT / "tests" / "corpus").rglob("*.py"))[:25] + sorted((ROOT / "examples").rglob("*.py"))
    return [path.read_text(encoding="utf-8") for path in files]


def _every_field_walk(root: cst.CSTNode) -> list[int]:
    """Every node a traversal should enter, found by reading every field of every node."""
    found: list[int] = []
    stack = [root]
    while stack:
        node = stack.pop()
        found.append(id(node))
        for field in dataclasses.fields(node):
            if field.name.startswith("whitespace") or field.name in _FORMATTING_FIELDS:
                continue
            value = getattr(node, field.name)
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, cst.CSTNode) and walk.wanted(type(item)):
                    stack.append(item)
    return found


def test_the_traversal_enters_the_nodes_a_walk_of_every_field_enters():
    sources = _sources()
    assert len(sources) > 20
    for source in sources:
        module = parse_module(source)
        reached = [id(node) for node in walk.iter_nodes(module)]
        assert sorted(reached) == sorted(_every_field_walk(module))
        # Calls, names and arguments are among them (a pruned field that held code would lose them).
        assert any(type(node) is cst.Arg for node in walk.iter_nodes(module))


def test_fields_that_cannot_hold_code_are_not_read():
    assert "comma" not in walk.reversed_field_names(cst.Arg)
    assert "star" not in walk.reversed_field_names(cst.Arg)
    assert walk.reversed_field_names(cst.Name) == ()
    assert walk.reversed_field_names(cst.Attribute) == ("attr", "value")
    # A field that may hold an expression is read, even when it is often empty.
    assert "keyword" in walk.reversed_field_names(cst.Arg)
    assert "default" in walk.reversed_field_names(cst.Param)


def test_each_node_knows_its_top_level_statement():
    source = ROOT.joinpath("examples").glob("*.py").__next__().read_text(encoding="utf-8")
    module = parse_module(source)
    facts = Facts(module, source)
    assert facts.top_statement[id(module)] == -1
    entered = 0
    for index, statement in enumerate(module.body):
        assert facts.top_statement[id(statement)] == index
        for node in walk.iter_nodes(statement):
            # (The collector does not enter an import's names: those nodes have no entry.)
            if id(node) in facts.top_statement:
                assert facts.top_statement[id(node)] == index
                entered += 1
    assert entered == len(facts.top_statement) - 1
    assert entered > 0.9 * len(_every_field_walk(module))


def test_each_call_knows_its_method_and_receiver():
    source = (
        "import tensorflow as tf\n"
        "opt = tf.keras.optimizers.Adam()\n"
        "class Trainer:\n"
        "    def step(self, grads, model):\n"
        "        self.opt.apply_gradients(zip(grads, model.trainable_variables))\n"
        "        build()().assign(1)\n"
        "        model.layers[0].get_weights()\n"
        "        return tf.reduce_mean(grads)\n"
    )
    facts = Facts(parse_module(source), source)
    seen = {site.func or cst.Module([]).code_for_node(site.node.func): (site.method, site.receiver)
            for site in facts.calls}
    assert seen == {
        "tf.keras.optimizers.Adam": ("Adam", "tf.keras.optimizers"),
        "self.opt.apply_gradients": ("apply_gradients", "self.opt"),
        "zip": (None, None),
        "build()().assign": ("assign", None),  # the object is a call's result, no name chain
        "build()": (None, None),
        "build": (None, None),
        "model.layers[0].get_weights": ("get_weights", None),
        "tf.reduce_mean": ("reduce_mean", "tf"),
    }

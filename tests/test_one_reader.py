"""Each question about code has one home, checked in the source itself: a module that answers it a
second time fails here, with the line to move.

- "Which assignment does this read see?" is answered by the value model (`analysis/values.py`, on the
  index `analysis/facts.py` keeps): nothing else calls `Facts.binding_before`.
- "Which layers does this Sequential model have?" is answered by `analysis/models.py`: nothing else
  names the Sequential classes, matches an `.add(...)` method call, or asks for `x.add` calls by name.
- "Which calls evaluate a loss or metric, which one, on which `(y_true, y_pred)`?" is answered by
  `analysis/evaluations.py`: nothing else defines a reader of loss calls or names the TensorFlow
  cross-entropy ops, and the views (heads, losses) hand on its answer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst

from tapelint.analysis import evaluations as evaluations_module
from tapelint.analysis import heads, keras, losses, predictions
from tapelint.analysis.facts import Facts
from tapelint.analysis.models import sequential_stack, stack_layers
from tapelint.analysis.values import last_assignment, reaching_assignments

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "tapelint").rglob("*.py"), *(ROOT / "rules").glob("*.py")])
BINDING_HOMES = {"tapelint/analysis/values.py", "tapelint/analysis/facts.py"}
MODEL_HOMES = {"tapelint/analysis/models.py", "tapelint/analysis/vocabulary.py"}
SEQUENTIAL_NAMES = {"keras.Sequential", "keras.models.Sequential"}


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _offences(predicate, homes: set[str]) -> list[str]:  # type: ignore[no-untyped-def]
    found = []
    for path in SOURCES:
        name = _relative(path)
        if name in homes:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if predicate(node):
                found.append(f"{name}:{node.lineno}")  # type: ignore[attr-defined]
    return found


def _follows_a_binding(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "binding_before"


def _reads_a_sequential(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and node.value in SEQUENTIAL_NAMES:
        return True  # a list of the Sequential classes
    if isinstance(node, ast.Compare) and any(
            isinstance(part, ast.Constant) and part.value == "add" for part in (node.left, *node.comparators)):
        return True  # `site.method == "add"`
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "method_calls", "calls_to"):
        for arg in node.args:
            if isinstance(arg, ast.Constant) and arg.value == "add":
                return True  # `facts.method_calls(name, "add")`
            if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[-1], ast.Constant) \
                    and str(arg.values[-1].value).endswith(".add"):
                return True  # `facts.calls_to(f"{name}.add")`
    return False


EVALUATION_HOMES = {"tapelint/analysis/evaluations.py"}
# The names the three former readers of loss calls went by (keras.loss_calls/metric_calls/loss_object,
# predictions.evaluations, heads.loss_call/loss_of): a function of that name elsewhere is a second reader.
EVALUATION_READERS = {"loss_calls", "metric_calls", "loss_object", "loss_call", "loss_of", "evaluations",
                      "_keras_object", "_loss_from_call", "_metric_from_call"}
TF_LOSS_OPS = {"tensorflow.nn.softmax_cross_entropy_with_logits", "tensorflow.nn.softmax_cross_entropy_with_logits_v2",
               "tensorflow.nn.sparse_softmax_cross_entropy_with_logits",
               "tensorflow.nn.sigmoid_cross_entropy_with_logits", "tensorflow.nn.weighted_cross_entropy_with_logits"}


def _reads_loss_calls(node: ast.AST) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in EVALUATION_READERS:
        return True  # a function that answers the question again
    return isinstance(node, ast.Constant) and node.value in TF_LOSS_OPS  # a table of the ops it reads


def test_only_the_evaluations_module_reads_loss_and_metric_calls():
    assert _offences(_reads_loss_calls, EVALUATION_HOMES) == [], (
        "ask tapelint.analysis.evaluations (evaluations, loss_of, Evaluation, Loss, LossKind)")


def test_the_views_of_loss_calls_hand_on_the_one_answer():
    # heads and losses use the same function and the same records; the old readers are gone.
    assert heads.loss_of is evaluations_module.loss_of and losses.loss_of is evaluations_module.loss_of
    assert heads.evaluations is evaluations_module.evaluations is losses.evaluations
    assert heads.Loss is evaluations_module.Loss and heads.LossKind is evaluations_module.LossKind
    assert losses.FedLoss.__dataclass_fields__["spec"].type == "Loss"
    for module, gone in ((keras, ("loss_calls", "metric_calls", "loss_object", "LossSpec", "LossCall")),
                         (predictions, ("evaluations", "Evaluation", "_keras_object")),
                         (heads, ("loss_call",))):
        assert [name for name in gone if hasattr(module, name)] == [], module.__name__


def test_rules_take_loss_calls_from_the_one_reader():
    offences = []
    for path in sorted((ROOT / "rules").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tapelint.analysis."):
                names = {alias.name for alias in node.names}
                wanted = names & {"evaluations", "Evaluation", "loss_of", "Loss", "LossKind"}
                if wanted and node.module != "tapelint.analysis.evaluations":
                    offences.append(f"{_relative(path)}:{node.lineno} {sorted(wanted)} from {node.module}")
    assert offences == []


def test_the_loss_reader_check_catches_what_it_forbids():
    tree = ast.parse('def loss_calls(facts): pass\nOPS = {"tensorflow.nn.sigmoid_cross_entropy_with_logits"}\n'
                     'def loss_value(facts): pass')
    assert sum(_reads_loss_calls(n) for n in ast.walk(tree)) == 2


def test_only_the_value_model_turns_a_read_into_the_assignment_it_sees():
    assert _offences(_follows_a_binding, BINDING_HOMES) == [], (
        "ask tapelint.analysis.values (values_of, reaching_assignments, last_assignment, latest_assignment)")


def test_only_the_model_reader_reads_a_sequentials_layers():
    assert _offences(_reads_a_sequential, MODEL_HOMES) == [], (
        "ask tapelint.analysis.models (sequential_stack, stack_layers, KerasModel)")


def test_the_checks_above_catch_what_they_forbid():
    tree = ast.parse('facts.binding_before(name, scope, order)\nif site.method == "add": pass\n'
                     'facts.calls_to(f"{name}.add")\nKINDS = {"keras.models.Sequential"}')
    nodes = list(ast.walk(tree))
    assert any(_follows_a_binding(n) for n in nodes)
    assert sum(_reads_a_sequential(n) for n in nodes) == 3


def _facts(code: str) -> Facts:
    return Facts(cst.parse_module(code))


def _sequential_site(facts: Facts, nth: int = 0):  # type: ignore[no-untyped-def]
    return [s for s in facts.calls if (s.qualified or "").endswith("Sequential")][nth]


def test_every_spelling_of_a_sequential_reads_as_the_same_stack():
    spellings = [
        """
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
""",
        """
import tensorflow as tf
model = tf.keras.Sequential()
model.add(tf.keras.layers.Dense(8, activation="relu"))
model.add(tf.keras.layers.Dense(1))
""",
        """
from tensorflow import keras
layers = [keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)]
model = keras.models.Sequential(layers)
""",
        """
import tensorflow as tf
class Trainer:
    def __init__(self):
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu")])
        self.add_head()

    def add_head(self):
        self.model.add(tf.keras.layers.Dense(1))
""",
        """
import tensorflow as tf
def add_head(net):
    net.add(tf.keras.layers.Dense(1))

hidden = tf.keras.layers.Dense(8, activation="relu")
model = tf.keras.Sequential([hidden])
add_head(model)
""",
    ]
    for code in spellings:
        facts = _facts(code)
        layers = stack_layers(facts, _sequential_site(facts).node)
        assert layers is not None and [layer[0] if layer else None for layer in layers] == ["Dense", "Dense"], code


def test_what_cannot_be_read_is_unknown_not_missing():
    facts = _facts("""
import tensorflow as tf
a = tf.keras.Sequential([tf.keras.layers.Dense(4)])
b = tf.keras.Sequential([tf.keras.layers.Dense(2)])
either = a if flag else b
either.add(tf.keras.layers.Softmax())
c = tf.keras.Sequential([*blocks, tf.keras.layers.Dense(1)])
d = tf.keras.Sequential(make_layers())
""")
    first, second, starred, opaque = (_sequential_site(facts, i).node for i in range(4))
    # The `.add` may reach either model: each gets an unknown last entry, not a Softmax.
    assert [e is None for e in sequential_stack(facts, first) or ()] == [False, True]
    assert [e is None for e in sequential_stack(facts, second) or ()] == [False, True]
    assert [e is None for e in sequential_stack(facts, starred) or ()] == [True, False]
    assert sequential_stack(facts, opaque) is None


def test_a_read_after_a_conditional_rebinding_has_no_single_assignment():
    facts = _facts("""
x = 1
if flag:
    x = 2
y = x
z = 3
w = z
""")
    reads = {b.target: b for b in facts.bindings}
    y, w = reads["y"], reads["w"]
    assert [b.value.value for b in reaching_assignments(facts, "x", y.scope, y.order)] == ["2", "1"]  # type: ignore[union-attr]
    assert last_assignment(facts, "x", y.scope, y.order) is None
    only = last_assignment(facts, "z", w.scope, w.order)
    assert only is not None and only.value.value == "3"  # type: ignore[union-attr]


def test_a_layer_added_under_a_condition_may_be_missing():
    facts = _facts("""
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(8)])
model.add(tf.keras.layers.Dense(4))
if wide:
    model.add(tf.keras.layers.Dense(16))
for units in sizes:
    model.add(tf.keras.layers.Dense(units))
try:
    model.add(tf.keras.layers.Dense(2))
except Exception:
    pass
""")
    stack = sequential_stack(facts, _sequential_site(facts).node) or ()
    assert [e.conditional for e in stack if e is not None] == [False, False, True, True, True]
    # Its class is still known (a Dropout there or not), but no layer is known to be at that place.
    assert [layer[0] if layer else None for layer in stack_layers(facts, _sequential_site(facts).node) or ()] \
        == ["Dense", "Dense", None, None, None]

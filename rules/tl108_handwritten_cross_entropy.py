from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Scope, arg_value
from tapelint.analysis.keras import Output, OutputInfo
from tapelint.analysis.names import dotted
from tapelint.analysis.outputs import origins, prediction_kind, strip_guards
from tapelint.analysis.purpose import only_in_unit_tests, reach, scope_at
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid

LOG_FUNCTIONS = frozenset({"tensorflow.math.log", "tensorflow.log", "keras.ops.log", "keras.backend.log"})
MULTIPLY_FUNCTIONS = frozenset({"tensorflow.multiply", "tensorflow.math.multiply", "keras.ops.multiply"})


class HandwrittenCrossEntropy(Rule):
    """
    ## What it does
    Reports a cross-entropy written by hand, `y * log(p)` (inside `-reduce_sum`/`-reduce_mean` or not,
    with or without an epsilon `log(p + 1e-10)`, a clip `log(clip_by_value(p, 1e-10, 1.0))`, or the
    binary form `(1 - y) * log(1 - p)`), where `p` is a softmax or sigmoid output: a `tf.nn.softmax`,
    a Keras layer with `activation="softmax"`/`"sigmoid"`, or a model whose last layer ends in one.

    ## Why is this bad?
    Once the softmax saturates, `p` is exactly 0 for some class in float32: `log(0)` is `-inf` and the
    loss and every gradient become NaN. The usual patch, an epsilon or a clip, turns NaN into exactly
    zero gradient instead (a clip passes no gradient), so training stops: "the gradients are zero except
    on the first iteration". The built-in losses compute the same quantity from the logits with the
    log-sum-exp trick, which never saturates.

    ## Example
    ```python
    probs = tf.nn.softmax(tf.matmul(x, W) + b)
    loss = -tf.reduce_sum(y * tf.math.log(probs + 1e-10))
    ```

    ## Use instead
    ```python
    logits = tf.matmul(x, W) + b
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    ```

    ## Known problems
    Entropy terms (`p * log(p)`, common as an RL exploration bonus) are not cross-entropies and are not
    reported. A probability coming from another module is not recognised.

    Only a cross-entropy that takes part in training is reported: its value must reach the target of a
    `tape.gradient` (or an optimizer's `minimize`, `compile(loss=...)`, `add_loss`), followed through names,
    containers and the functions of the file (`analysis/purpose.py`). One that is only printed, logged,
    plotted, written to a summary or a file, or fed to a metric is not reported: a NaN there spoils a
    number on the screen, not the weights. Nor is one whose value goes where it cannot be followed (a
    method of an object of unknown type, a call made only for its effect); one returned by a function
    nothing in the file calls is judged as a loss (its callers are in other files). Code that runs only in
    unit tests (methods of a `TestCase`, and functions only they call) is not reported either: a test that
    fits two samples is no long training run.

    ## Options
    None.

    ## Fix safety
    No fix: the activation has to be removed from the prediction as well.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/52175 ("the grads ... are always zero except for the first time")
    - https://github.com/tensorflow/models/issues/181 (NaN fixed by switching to softmax_cross_entropy_with_logits)
    - https://github.com/aymericdamien/TensorFlow-Examples/issues/383
    - https://www.tensorflow.org/api_docs/python/tf/nn/softmax_cross_entropy_with_logits
    """

    code = "TL108"
    name = "handwritten-cross-entropy"
    message = "Hand-written cross-entropy on {what} ({source}): saturation gives `log(0)` (NaN), or zero gradient with an epsilon or clip; use `{use}` on the logits"
    severity = Severity.WARNING
    triggers = (("log", "softmax"), ("log", "sigmoid"))
    probe = "Confirmed when the probed steps show NaN (TL803) or exactly-zero (TL802) gradients."

    def __init__(self, context) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context)
        self.products: list[tuple[cst.CSTNode, int, list[cst.BaseExpression]]] = []

    def check(self) -> None:
        facts = self.facts
        for order, node in facts.binary_operations:
            if isinstance(node.operator, cst.Multiply):
                self.products.append((node, order, [node.left, node.right]))
        for site in facts.calls:
            if site.qualified in MULTIPLY_FUNCTIONS:
                x, y = arg_value(site.node, 0, "x"), arg_value(site.node, 1, "y")
                if x is not None and y is not None:
                    self.products.append((site.node, site.order, [x, y]))
        seen: set[int] = set()
        for product, order, factors in self.products:
            for index, factor in enumerate(factors):
                found = self._log_of_probabilities(factor)
                if found is None:
                    continue
                info, prob_expr, log_scope, log_order = found
                other = factors[1 - index]
                if self._same_probabilities(other, prob_expr, info, log_scope, log_order):
                    continue  # entropy, not a cross-entropy
                key = id(info.node) if info.node is not None else id(product)
                if key in seen:
                    break
                if not reach(facts, product, None, order).judged_as_training:
                    break  # computed for a metric, a log or a plot (or where it goes cannot be told)
                if only_in_unit_tests(facts, scope_at(facts, order)):
                    break  # a unit test: NaN or a stalled gradient is a matter of long training
                seen.add(key)
                activation = info.activation or "softmax"
                use = ("tf.nn.sigmoid_cross_entropy_with_logits" if activation == "sigmoid"
                       else "tf.nn.softmax_cross_entropy_with_logits")
                self.report(product, what=f"{activation} probabilities", source=info.description or "the model", use=use)
                break

    def _log_of_probabilities(self, expr: cst.BaseExpression) -> tuple[OutputInfo, cst.BaseExpression, Scope, int] | None:
        facts = self.facts
        while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            expr = expr.expression
        if isinstance(expr, cst.Name):
            # `log_p = tf.math.log(p)` ... `y * log_p`: every assignment that reaches the read.
            use = self._uses().get(id(expr))
            if use is None:
                return None
            found = origins(facts, expr, use.scope, use.order, through_params=False)
            if not found:
                return None
            results = [self._log_call(origin.expr) for origin in found]
            if any(r is None for r in results) or any(r[0].kind is not Output.PROBABILITIES for r in results):  # type: ignore[index]
                return None
            return results[0]
        return self._log_call(expr)

    def _log_call(self, expr: cst.BaseExpression) -> tuple[OutputInfo, cst.BaseExpression, Scope, int] | None:
        facts = self.facts
        if not isinstance(expr, cst.Call) or facts.resolve(expr.func) not in LOG_FUNCTIONS:
            return None
        site = facts.call_site(expr)
        if site is None:
            return None
        inner = strip_guards(facts, arg_value(expr, 0, "x"), site.scope, site.order)
        if inner is None:
            return None
        info = prediction_kind(facts, inner, site.scope, site.order)
        if info.kind is not Output.PROBABILITIES:
            return None
        return info, inner, site.scope, site.order

    def _uses(self) -> dict:
        return self.facts.cached("name_use_by_node", lambda: {id(u.node): u for u in self.facts.name_uses})

    def _same_probabilities(self, other: cst.BaseExpression, prob: cst.BaseExpression, info: OutputInfo,
                            scope: Scope, order: int) -> bool:
        other = strip_guards(self.facts, other, scope, order) or other
        if dotted(other) is not None and dotted(other) == dotted(prob):
            return True  # the same name read at the same point: the same tensor
        return prediction_kind(self.facts, other, scope, order).kind is Output.PROBABILITIES

    VALID = [
        Valid(
            """
import tensorflow as tf

W = tf.Variable(tf.random.normal((784, 10)))
b = tf.Variable(tf.zeros((10,)))

def train_step(x, y, optimizer):
    with tf.GradientTape() as tape:
        logits = tf.matmul(x, W) + b
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    grads = tape.gradient(loss, [W, b])
    optimizer.apply_gradients(zip(grads, [W, b]))
""",
            "the built-in cross-entropy on logits",
        ),
        Valid(
            """
import tensorflow as tf

policy = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(4)])

with tf.GradientTape() as tape:
    probs = tf.nn.softmax(policy(tf.zeros((8, 6))))
    entropy = -tf.reduce_sum(probs * tf.math.log(probs + 1e-8), axis=-1)
    loss = -0.01 * tf.reduce_mean(entropy)
""",
            "near miss: an entropy bonus `p * log(p)` is not a cross-entropy",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
val_xent = tf.keras.metrics.Mean()

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

def validate(x, y_onehot):
    probs = tf.nn.softmax(model(x, training=False))
    val_xent.update_state(-tf.reduce_sum(y_onehot * tf.math.log(probs + 1e-9), axis=-1))
    print("validation cross-entropy", val_xent.result())

for epoch in range(5):
    train_step(tf.zeros((32, 20)), tf.zeros((32,), tf.int32))
    validate(tf.zeros((8, 20)), tf.one_hot(tf.zeros((8,), tf.int32), 10))
""",
            "near miss: a hand-written cross-entropy that only feeds a metric and a print never reaches the update",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

W = tf.Variable(tf.zeros([784, 10]))
b = tf.Variable(tf.zeros([10]))
optimizer = tf.keras.optimizers.SGD(learning_rate=0.5)

def train_step(x, y):
    with tf.GradientTape() as tape:
        pred = tf.nn.softmax(tf.matmul(x, W) + b)
        loss = -tf.reduce_sum(y * tf.math.log(pred + 1e-10))
    grads = tape.gradient(loss, [W, b])
    optimizer.apply_gradients(zip(grads, [W, b]))
""",
            line=11, column=31,
            message_contains="softmax probabilities (`tf.nn.softmax`)",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1, activation="sigmoid")])
optimizer = tf.keras.optimizers.Adam(1e-3)

def bce(y_true, y_pred):
    y_pred = tf.clip_by_value(y_pred, 1e-7, 1 - 1e-7)
    return -tf.reduce_mean(y_true * tf.math.log(y_pred) + (1 - y_true) * tf.math.log(1 - y_pred))

with tf.GradientTape() as tape:
    loss = bce(tf.ones((4, 1)), model(tf.zeros((4, 3)), training=True))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            message_contains="`tf.nn.sigmoid_cross_entropy_with_logits`",
        ),
    ]

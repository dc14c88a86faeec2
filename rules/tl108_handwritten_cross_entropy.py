from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Scope, arg_value
from tapelint.analysis.keras import Output, OutputInfo, model_reader
from tapelint.analysis.names import dotted
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid

LOG_FUNCTIONS = frozenset({"tensorflow.math.log", "tensorflow.log", "keras.ops.log", "keras.backend.log"})
MULTIPLY_FUNCTIONS = frozenset({"tensorflow.multiply", "tensorflow.math.multiply", "keras.ops.multiply"})
CLIP_FUNCTIONS = frozenset({"tensorflow.clip_by_value", "keras.ops.clip", "keras.backend.clip"})
MAX_FUNCTIONS = frozenset({"tensorflow.maximum", "tensorflow.math.maximum", "keras.ops.maximum"})


def _constant(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return _constant(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _constant(expr.left) and _constant(expr.right)
    name = dotted(expr)
    # `EPSILON`, `eps`, `self.eps`, `1e-7` style names are small constants in practice.
    return name is not None and name.rsplit(".", 1)[-1].lower().lstrip("_") in (
        "eps", "epsilon", "tiny", "delta", "small")


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
        self.products: list[tuple[cst.CSTNode, list[cst.BaseExpression]]] = []

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Multiply):
            self.products.append((node, [node.left, node.right]))

    def check(self) -> None:
        facts = self.facts
        for site in facts.calls:
            if site.qualified in MULTIPLY_FUNCTIONS:
                x, y = arg_value(site.node, 0, "x"), arg_value(site.node, 1, "y")
                if x is not None and y is not None:
                    self.products.append((site.node, [x, y]))
        seen: set[int] = set()
        for node, factors in self.products:
            for index, factor in enumerate(factors):
                found = self._log_of_probabilities(factor)
                if found is None:
                    continue
                info, prob_expr, scope, order = found
                other = factors[1 - index]
                if self._same_probabilities(other, prob_expr, info, scope, order):
                    continue  # entropy, not a cross-entropy
                key = id(info.node) if info.node is not None else id(node)
                if key in seen:
                    break
                seen.add(key)
                activation = info.activation or "softmax"
                use = ("tf.nn.sigmoid_cross_entropy_with_logits" if activation == "sigmoid"
                       else "tf.nn.softmax_cross_entropy_with_logits")
                self.report(node, what=f"{activation} probabilities", source=info.description or "the model", use=use)
                break

    def _log_of_probabilities(self, expr: cst.BaseExpression) -> tuple[OutputInfo, cst.BaseExpression, Scope, int] | None:
        facts = self.facts
        while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            expr = expr.expression
        if isinstance(expr, cst.Name):
            # `log_p = tf.math.log(p)` ... `y * log_p`
            use = self._uses().get(id(expr))
            if use is not None:
                binding = facts.binding_before(expr.value, use.scope, use.order)
                if binding is not None and binding.index is None and not binding.augmented and isinstance(
                        binding.value, cst.Call):
                    expr = binding.value
        if not isinstance(expr, cst.Call) or facts.resolve(expr.func) not in LOG_FUNCTIONS:
            return None
        site = facts.call_site(expr)
        if site is None:
            return None
        inner = self._strip(arg_value(expr, 0, "x"))
        if inner is None:
            return None
        info = self._kind(inner, site.scope, site.order)
        if info.kind is not Output.PROBABILITIES:
            return None
        return info, inner, site.scope, site.order

    def _kind(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> OutputInfo:
        """`value_kind`, also through clipped rebindings and parameters of loss helpers."""
        facts = self.facts
        reader = model_reader(facts)
        expr = self._strip(expr)
        if expr is None or depth > 6:
            return OutputInfo(Output.UNKNOWN)
        if isinstance(expr, cst.Name):
            binding = facts.binding_before(expr.value, scope, order)
            if binding is None:
                return self._param_kind(expr.value, scope, depth)
            if binding.value is not None and binding.index is None and not binding.augmented:
                stripped = self._strip(binding.value)
                if stripped is not binding.value:
                    return self._kind(stripped, binding.scope, binding.order, depth + 1)
        return reader.value_kind(expr, scope, order)

    def _param_kind(self, name: str, scope: Scope, depth: int) -> OutputInfo:
        facts = self.facts
        func = facts.param_scope(name, scope)
        if func is None or func.is_module:
            return OutputInfo(Output.UNKNOWN)
        kinds: list[OutputInfo] = []
        for site in facts.call_sites_of_scope(func):
            kinds.append(self._kind(facts.argument_for_param(site.node, func, name), site.scope, site.order,
                                    depth + 1))
        # `model.compile(loss=my_loss)`: Keras calls it with (y_true, y_pred=model output).
        params = [p for p in func.params if p not in ("self", "cls")]
        if len(params) >= 2 and params[1] == name and func.class_name is None:
            reader = model_reader(facts)
            for site in facts.calls:
                if site.method == "compile" and dotted(arg_value(site.node, 1, "loss")) == func.simple_name:
                    receiver = site.node.func.value if isinstance(site.node.func, cst.Attribute) else None
                    model = reader.model_of(receiver, site.scope, site.order)
                    kinds.append(model.output if model is not None else OutputInfo(Output.UNKNOWN))
        if kinds and all(k.kind is kinds[0].kind for k in kinds):
            return kinds[0]
        return OutputInfo(Output.UNKNOWN)

    def _uses(self) -> dict:  # type: ignore[type-arg]
        return self.facts.cached("name_use_by_node", lambda: {id(u.node): u for u in self.facts.name_uses})

    def _strip(self, expr: cst.BaseExpression | None, depth: int = 0) -> cst.BaseExpression | None:
        """`p + eps`, `clip(p, lo, hi)`, `maximum(p, eps)`, `1 - p` -> `p`."""
        if expr is None or depth > 5:
            return expr
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Add):
                if _constant(expr.right):
                    return self._strip(expr.left, depth + 1)
                if _constant(expr.left):
                    return self._strip(expr.right, depth + 1)
            if isinstance(expr.operator, cst.Subtract) and _constant(expr.left):
                return self._strip(expr.right, depth + 1)
            return expr
        if isinstance(expr, cst.Call):
            qualified = self.facts.resolve(expr.func)
            if qualified in CLIP_FUNCTIONS:
                return self._strip(arg_value(expr, 0), depth + 1)
            if qualified in MAX_FUNCTIONS:
                a, b = arg_value(expr, 0), arg_value(expr, 1)
                if b is not None and _constant(b):
                    return self._strip(a, depth + 1)
                if a is not None and _constant(a):
                    return self._strip(b, depth + 1)
        return expr

    def _same_probabilities(self, other: cst.BaseExpression, prob: cst.BaseExpression, info: OutputInfo,
                            scope: Scope, order: int) -> bool:
        other = self._strip(other) or other
        if dotted(other) is not None and dotted(other) == dotted(prob):
            return True
        return self._kind(other, scope, order).kind is Output.PROBABILITIES

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

def bce(y_true, y_pred):
    y_pred = tf.clip_by_value(y_pred, 1e-7, 1 - 1e-7)
    return -tf.reduce_mean(y_true * tf.math.log(y_pred) + (1 - y_true) * tf.math.log(1 - y_pred))

with tf.GradientTape() as tape:
    loss = bce(tf.ones((4, 1)), model(tf.zeros((4, 3)), training=True))
""",
            message_contains="`tf.nn.sigmoid_cross_entropy_with_logits`",
        ),
    ]

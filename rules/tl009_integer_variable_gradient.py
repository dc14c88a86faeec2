from __future__ import annotations

from tapelint.analysis.dataflow import render
from tapelint.analysis.gradients import gradient_calls
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl009_dtypes import integer_variables, variable_holder


class IntegerVariableGradient(Rule):
    """
    ## What it does
    Reports `tape.gradient(loss, sources)` when one of the sources is a `tf.Variable` (or
    `keras.Variable`) of an integer or bool dtype: created with `dtype=tf.int32`, `"int64"`, `tf.bool`, or
    with no `dtype` from an initial value TensorFlow stores as integers: a Python int (`tf.Variable(3)`,
    `tf.Variable([1, 2])` are int32), `True`/`False`, `np.arange(5)` or `np.random.randint(...)` (int64),
    `tf.range(3)`, `tf.constant(3)`.

    ## Why is this bad?
    TensorFlow defines no gradient for integer tensors, so the tape returns `None` for such a variable,
    silently: `tf.Variable(3)` looks like a weight initialised to 3 but is an int32 counter. Measured on
    TF 2.21 / Keras 3.15: when every source is an integer variable, `apply_gradients` raises
    `ValueError: No gradients provided for any variable.`; when it sits next to float weights, Keras
    only warns `Gradients do not exist for variables [...] when minimizing the loss` and the integer
    variable keeps its initial value for the whole run (`tests/corpus/intvar_*.py`).

    ## Example
    ```python
    slope = tf.Variable(3)  # int32
    intercept = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        pred = tf.cast(slope, tf.float32) * x + intercept
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, [slope, intercept])  # [None, <tensor>]
    ```

    ## Use instead
    ```python
    slope = tf.Variable(3.0)  # or tf.Variable(3, dtype=tf.float32)
    ```

    ## Known problems
    Only variables whose dtype the code proves are judged: one made from a function's result, a
    parameter or arithmetic is not. Integer weights inside a model (`add_weight(dtype="int32")`) are
    not followed through `model.trainable_variables`. A variable created with `trainable=False` is
    left to TL007, which reports it whatever its dtype.

    ## Options
    None.

    ## Fix safety
    No fix: the variable may be read as an integer elsewhere (an index, a counter); whether it should
    become a float is the author's decision.

    ## References
    - https://www.tensorflow.org/guide/autodiff (cases where `gradient` returns None: gradients through
      an integer)
    - https://github.com/tensorflow/tensorflow/issues/27378 ("Your variables are of integer types
      (because you initialize them with integers)")
    - https://github.com/keras-team/keras/issues/20058 ("No gradients provided for any variable." when
      a variable uses an integer data type)
    - https://github.com/tensorflow/tensorflow/issues/73631 (unable to take the gradient of an integer
      variable)
    """

    code = "TL009"
    name = "integer-variable-gradient"
    message = "`{variable}` is {article} `{dtype}` variable ({why}): `{tape}` returns None for it, so it never trains"
    severity = Severity.ERROR
    confidence = Confidence.HIGH
    triggers = (("Variable", "GradientTape"),)
    probe = "Confirmed when the gradient with respect to the variable is None."

    def check(self) -> None:
        facts = self.facts
        for grad in gradient_calls(facts):
            if grad.sources is None:
                continue
            site = grad.site
            found = []
            for creation, dtype in integer_variables(facts, grad.sources, site.scope, site.order):
                if dtype.trainable is False:
                    continue  # TL007 reports a non-trainable source
                holder = variable_holder(facts, creation) or render(creation)
                where = self.location(creation)
                created = f"created at {where}" if where is not None else "created"
                if dtype.explicit:
                    why = f"{created} with `dtype={render(dtype.because)}`"
                else:
                    why = f"{created} from `{render(dtype.because)}`, with no `dtype`"
                found.append((holder, dtype.dtype, why))
            if not found:
                continue
            call = f"{grad.tape.name or 'tape'}.{grad.method}"
            holders = list(dict.fromkeys(holder for holder, _, _ in found))  # each named once, in source order
            dtypes = {dtype for _, dtype, _ in found}
            if len(holders) == 1 and len(dtypes) == 1:
                # One variable (maybe created in two places: a class that defines `__init__` twice).
                name = found[0][1]
                why = "; ".join(why for _, _, why in found)
                self.report(site.node, variable=holders[0], article=_article(name), dtype=name, why=why, tape=call)
                continue
            if len(holders) == 1:
                whys = "; ".join(f"`{dtype}`, {why}" for _, dtype, why in found)
                self.report(site.node, f"`{holders[0]}` is an integer variable ({whys}): `{call}` returns None for "
                                       "it, so it never trains")
                continue
            names = ", ".join(f"`{holder}`" for holder in holders[:-1]) + f" and `{holders[-1]}`"
            whys = "; ".join(f"`{holder}`: `{dtype}`, {why}" for holder, dtype, why in found)
            self.report(site.node, f"{names} are integer variables ({whys}): `{call}` returns None for them, "
                                   "so they never train")

    VALID = [
        Valid(
            """
import tensorflow as tf

slope = tf.Variable(3.0)
intercept = tf.Variable(0.0)
optimizer = tf.keras.optimizers.SGD(0.05)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(slope * x + intercept - y))
    grads = tape.gradient(loss, [slope, intercept])
    optimizer.apply_gradients(zip(grads, [slope, intercept]))
""",
            "near miss: `3.0` makes a float32 variable",
        ),
        Valid(
            """
import tensorflow as tf

slope = tf.Variable(3, dtype=tf.float32)
optimizer = tf.keras.optimizers.SGD(0.05)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(slope * x - y))
    grads = tape.gradient(loss, [slope])
    optimizer.apply_gradients(zip(grads, [slope]))
""",
            "near miss: an integer literal with an explicit float dtype",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
step = tf.Variable(0)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    step.assign_add(1)
    return loss
""",
            "near miss: an int32 step counter that is never differentiated",
        ),
        Valid(
            """
import tensorflow as tf

scale = tf.Variable(make_initial_scale())
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(scale * x)
grads = tape.gradient(loss, [scale])
""",
            "the initial value comes from a function whose dtype we cannot see: silent",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

slope = tf.Variable(3)
intercept = tf.Variable(0.0)
optimizer = tf.keras.optimizers.SGD(0.05)
for x, y in batches:
    with tf.GradientTape() as tape:
        pred = tf.cast(slope, tf.float32) * x + intercept
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, [slope, intercept])
    optimizer.apply_gradients(zip(grads, [slope, intercept]))
""",
            line=11,
            message_contains="`slope` is an `int32` variable (created at line 4 from `3`, with no `dtype`)",
        ),
        Invalid(
            """
import numpy as np
import tensorflow as tf

offsets = tf.Variable(np.arange(4))
optimizer = tf.keras.optimizers.Adam(0.1)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x + tf.cast(offsets, tf.float32) - y))
    grads = tape.gradient(loss, [offsets])
    optimizer.apply_gradients(zip(grads, [offsets]))
    return loss
""",
            line=12,
            message_contains="`int64`",
        ),
        Invalid(
            """
import tensorflow as tf

class Thresholds:
    def __init__(self):
        self.cutoffs = tf.Variable([1, 2, 3], dtype=tf.int32, name="cutoffs")
        self.optimizer = tf.keras.optimizers.SGD(0.1)

    def update(self, scores, targets):
        with tf.GradientTape() as tape:
            soft = tf.sigmoid(scores[:, None] - tf.cast(self.cutoffs, tf.float32))
            loss = tf.reduce_mean(tf.square(tf.reduce_sum(soft, axis=1) - targets))
        grads = tape.gradient(loss, [self.cutoffs])
        self.optimizer.apply_gradients(zip(grads, [self.cutoffs]))
""",
            line=13,
            message_contains="`self.cutoffs` is an `int32` variable (created at line 6 with `dtype=tf.int32`)",
        ),
        Invalid(
            """
import tensorflow as tf

class Thresholds:
    def __init__(self):
        self.cutoffs = tf.Variable([1, 2, 3], dtype=tf.int32)

    def __init__(self):
        self.cutoffs = tf.Variable([1, 2, 3], dtype=tf.int32)

    def update(self, scores, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(scores - tf.cast(self.cutoffs, tf.float32)))
        return tape.gradient(loss, [self.cutoffs])
""",
            line=14,
            message_contains="`self.cutoffs` is an `int32` variable (created at line 6 with `dtype=tf.int32`; "
                             "created at line 9 with `dtype=tf.int32`)",
        ),
    ]


def _article(dtype: str) -> str:
    return "an" if dtype[:1] in "iu" else "a"

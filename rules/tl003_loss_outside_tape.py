from __future__ import annotations

from tapelint.analysis.dataflow import names_in, render
from tapelint.analysis.facts import CallSite, Facts
from tapelint.analysis.gradients import GradientCall, gradient_calls, weights_owner
from tapelint.analysis.loss_flow import (
    calls_loss_or_metric_member,
    forward_pass_before_tape,
    loss_computed_outside,
    precomputed_minimize_loss,
    weights_combined_outside_call,
)
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid

# Methods of a model that compute a loss or a metric from predictions: not a forward pass.
NOT_FORWARD = frozenset({"compute_loss", "compiled_loss", "loss", "compiled_metrics", "compute_metrics", "losses",
                         "watch", "add_loss"})


class LossOutsideTape(Rule):
    """
    ## What it does
    Reports a loss handed to `tape.gradient` that is computed, in whole or in its last steps, outside
    that tape's `with` block: after the block ends (`total = loss + reg` below the block, a negation,
    a helper function called after the block), before it starts, or written into the `gradient` call
    itself. Also reports a forward pass `model(x)` that runs before the tape when the gradient is taken
    with respect to that model's weights and the model is not called inside the tape, and a Keras
    optimizer's `minimize` handed a loss computed beforehand: `minimize(lambda: loss, var_list)` where
    `loss` already is a tensor, or `minimize(loss, var_list)` without `tape=`. In a file with a tape, also
    reports a Keras layer that combines its variables in `build` or `__init__`
    (`self.kernel = self.w_mu + self.w_sigma * eps`) and uses the result in `call`.

    ## Why is this bad?
    A `GradientTape` only records the operations that run while its `with` block is open. Whatever
    is computed after the block (or before it) is invisible to it, so the target is disconnected from
    the variables and `tape.gradient` returns `None` for each of them. `apply_gradients` then fails
    with "No gradients provided for any variable", or silently skips the variables. `minimize(loss_fn)`
    opens its own tape around the call of `loss_fn`; a callable that only returns a finished tensor
    records nothing.

    ## Example
    ```python
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
    loss = loss_fn(y, logits)  # not recorded
    grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Known problems
    The tape must be opened with `with tf.GradientTape() as name` in the same function as the
    `gradient` call. A tape returned by a helper, or a persistent tape entered a second time with
    `with tape:`, is not followed. Taking an element of a container after the block (`outputs[0]`) is
    not reported, because a Python tuple index is not an op.

    ## Options
    None.

    ## Fix safety
    No fix: moving statements into the block changes the code's structure.

    ## References
    - https://www.tensorflow.org/guide/autodiff#cases_where_gradient_returns_none
    - https://github.com/tensorflow/tensorflow/issues/45604 (negation outside the tape)
    - https://github.com/tensorflow/tensorflow/issues/37141 (minus sign outside the tape)
    - https://github.com/tensorflow/tensorflow/issues/27660 (target computed outside the context)
    - https://github.com/tensorflow/tensorflow/issues/42167 (`minimize(lambda: cost)`; maintainer: compute inside the lambda)
    - https://github.com/tensorflow/tensorflow/issues/51622 (`minimize` of a tensor: "`tape` is required")
    - https://github.com/tensorflow/tensorflow/issues/32729 (noisy layer: weights combined in `build`)
    """

    code = "TL003"
    name = "loss-outside-tape"
    message = "`{loss}` is computed {where} the `with {tape}` block, so the tape never recorded it and `{tape}.{method}` returns None"
    severity = Severity.ERROR
    triggers = ("GradientTape", "minimize")
    probe = "Confirmed when `tape.gradient` returns None for every variable of the step."

    def check(self) -> None:
        facts = self.facts
        for grad in gradient_calls(facts):
            if grad.target is None:
                continue
            if not self._target_outside(facts, grad):
                self._forward_pass_outside(facts, grad)
        for site in facts.calls:
            if site.method == "minimize":
                self._minimize_precomputed(facts, site)
        if facts.uses_gradient_tape:
            self._weights_combined_in_build(facts)

    def _weights_combined_in_build(self, facts: Facts) -> None:
        """`self.kernel = self.w_mu + self.w_sigma * eps` in a layer's `build`/`__init__`, read in `call`:
        computed once, before any tape, so the variables it reads get no gradient."""
        for combined in weights_combined_outside_call(facts):
            target, used = combined.binding.target, combined.variable
            self.report(
                combined.binding.target_node,
                f"`{target}` is computed from `{used}` in `{combined.method}`, once and outside any "
                f"tape; `call` reuses that fixed tensor, so the tape never sees `{used}` and its gradient "
                "is None: compute it in `call`",
            )

    def _minimize_precomputed(self, facts: Facts, site: CallSite) -> None:
        """`opt.minimize(lambda: loss, var_list)` (or `opt.minimize(loss, var_list)`) with `loss` a
        tensor computed earlier: a Keras optimizer opens its own tape around the callable only."""
        found = precomputed_minimize_loss(facts, site)
        if found is None:
            return
        func = render(site.node.func)
        if found.form == "tensor":
            self.report(
                found.node,
                f"`{found.name}` is a tensor computed before `{func}` runs, and no `tape=` is "
                "given: the optimizer can only record a loss it computes itself, so it gets no gradient",
            )
        else:
            self.report(
                found.node,
                f"`{found.name}` is computed before `{func}` opens its tape; the callable only returns "
                "the finished tensor, so the tape records no op and no gradient reaches the variables",
            )

    def _target_outside(self, facts: Facts, grad: GradientCall) -> bool:
        outside = loss_computed_outside(facts, grad)
        if outside is None:
            return False
        self.report(outside.node, loss=outside.name, where=outside.where, tape=grad.tape.name or "tape",
                    method=grad.method)
        return True

    def _forward_pass_outside(self, facts: Facts, grad: GradientCall) -> None:
        """`preds = model(x)` before the tape, gradient taken w.r.t. `model.trainable_variables`."""
        owner = weights_owner(grad.sources)
        if owner is None or grad.tape.name is None:
            return
        tape = grad.tape
        # The model is used inside the tape block in any way: assume the forward pass is there.
        for call in facts.calls_within(tape.order, tape.end_order):
            if self._may_run_model(facts, call, owner):
                return
        forward = forward_pass_before_tape(facts, grad, owner)
        if forward is not None:
            self.report(
                forward.node,
                f"The forward pass `{render(forward.node)}` runs before the `with {tape.name}` block, so the "
                f"tape never saw `{owner}`'s weights being used and `{tape.name}.{grad.method}` returns None",
                confidence=Confidence.INFERRED,
            )

    @staticmethod
    def _may_run_model(facts: Facts, call: CallSite, owner: str) -> bool:
        """Could this call (inside the tape) run `owner`'s forward pass?"""
        func = call.func or ""
        if any(owner in names_in(arg.value) for arg in call.node.args):
            return True
        if func in facts.functions:
            return True  # a helper of this module: it may call the model
        if func.startswith("self.") and owner != "self":
            return True
        if func == owner or func.startswith(owner + "."):
            attr = func[len(owner) + 1:].split(".")[0] if func != owner else ""
            if attr in NOT_FORWARD:
                return False
            if owner == "self" and attr and calls_loss_or_metric_member(facts, call, f"self.{attr}"):
                return False
            return True
        return False

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
        loss += sum(model.losses)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    mean_loss = tf.reduce_mean(loss)
    return mean_loss
""",
            "the whole loss inside the block; arithmetic on it after the gradient call is fine",
        ),
        Valid(
            """
import tensorflow as tf

x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x * x
dy_dx = tape.gradient(y, x)
scaled = dy_dx * 2.0
""",
            "the gradient of a value recorded inside the block",
        ),
        Valid(
            """
import tensorflow as tf

def loss_of(model, x, y):
    return tf.reduce_mean(tf.square(model(x, training=True) - y))

def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = loss_of(model, x, y)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: the forward pass is in a helper called inside the block",
        ),
        Valid(
            """
import tensorflow as tf

probs = tf.Variable([1.0, 2.0, 3.0])
objective = lambda: -tf.reduce_mean(tf.math.log(probs))
tf.keras.optimizers.Adam(0.5).minimize(objective, var_list=[probs])
""",
            "the callable computes the loss itself, under the tape `minimize` opens",
        ),
        Valid(
            """
import tensorflow as tf

class NoisyDense(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.w_mu = self.add_weight(shape=(input_shape[-1], 4))
        self.w_sigma = self.add_weight(shape=(input_shape[-1], 4))
        self.scale = tf.sqrt(tf.cast(input_shape[-1], tf.float32))

    def call(self, x):
        kernel = self.w_mu + self.w_sigma * tf.random.normal(tf.shape(self.w_mu))
        return tf.matmul(x, kernel) / self.scale

layer = NoisyDense()
opt = tf.keras.optimizers.Adam()
x = tf.ones((2, 3))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(layer(x))
grads = tape.gradient(loss, layer.trainable_variables)
opt.apply_gradients(zip(grads, layer.trainable_variables))
""",
            "the noisy kernel is combined in `call`, under the tape; `build` only computes a constant",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
gen_opt = tf.keras.optimizers.Adam(1e-4)

def train_generator(noise):
    with tf.GradientTape() as gen_tape:
        fake = generator(noise, training=True)
        gen_loss = tf.reduce_mean(critic(fake, training=True))
    gen_loss = -gen_loss
    grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
    gen_opt.apply_gradients(zip(grads, generator.trainable_variables))
""",
            line=12,
            column=5,
            message_contains="`gen_loss` is computed after the `with gen_tape` block",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()

def compute_loss(labels, logits):
    return tf.reduce_mean(loss_object(labels, logits))

def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
    loss = compute_loss(labels, logits) + 1e-4 * tf.add_n([tf.nn.l2_loss(w) for w in model.trainable_variables])
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=14,
            message_contains="after",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)

for x, y in [(tf.zeros((4, 3)), tf.zeros((4, 1)))]:
    predictions = model(x, training=True)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(predictions - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=8,
            column=19,
            message_contains="The forward pass `model(x, training=True)` runs before",
        ),
        Invalid(
            """
import tensorflow as tf

probs = tf.Variable([1.0, 2.0, 3.0])
cost = -tf.reduce_mean(tf.math.log(probs))
objective = lambda: cost
tf.keras.optimizers.Adam(0.5).minimize(objective, var_list=[probs])
""",
            line=7,
            column=40,
            message_contains="`cost` is computed before",
        ),
        Invalid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal([1]))
b = tf.Variable(tf.random.normal([1]))
optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
error = tf.reduce_mean(tf.square(tf.constant([1.0, 2.0]) - (w * tf.constant([1.0, 2.0]) + b)))
optimizer.minimize(error, var_list=[w, b])
""",
            line=8,
            message_contains="no `tape=` is given",
        ),
        Invalid(
            """
import tensorflow as tf

class NoisyDense(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.w_mu = self.add_weight(shape=(input_shape[-1], 4))
        self.w_sigma = self.add_weight(shape=(input_shape[-1], 4))
        self.kernel = self.w_mu + self.w_sigma * tf.random.normal((input_shape[-1], 4))

    def call(self, x):
        return tf.matmul(x, self.kernel)

layer = NoisyDense()
opt = tf.keras.optimizers.Adam()
x = tf.ones((2, 3))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(layer(x))
grads = tape.gradient(loss, layer.trainable_variables)
opt.apply_gradients(zip(grads, layer.trainable_variables))
""",
            line=8,
            column=9,
            message_contains="`self.kernel` is computed from `self.w_mu` in `build`",
        ),
    ]

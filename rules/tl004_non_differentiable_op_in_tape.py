from __future__ import annotations

import libcst as cst

from tapelint.analysis.dataflow import State, flow_of_binding, gradient_flow, names_in, render
from tapelint.analysis.gradients import gradient_calls, is_inside, other_models, watched_names
from tapelint.analysis.loss_flow import loss_assignment
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


class NonDifferentiableOpInTape(Rule):
    """
    ## What it does
    Follows the loss handed to `tape.gradient` back to the model calls and variables it comes from
    (through assignments, lists, and the helper functions and methods of the same file) and reports
    the op that cuts every one of those paths: `.numpy()`, NumPy functions, Python `float()`/`int()`,
    `model.predict()`, `tf.argmax`/`argmin`, `tf.round`, `tf.cast` to an integer or bool dtype,
    comparisons used as values, `tf.stop_gradient`, `tf.numpy_function`, and an index computed from the
    model's output (`labels[order]`). When the gradient is taken for the weights of given models
    (`generator.trainable_variables`), another model on the path (the critic) passes its input's
    gradient but does not count as a source. The message names the op and the value it cuts.

    ## Why is this bad?
    The tape only records differentiable TensorFlow ops. A value that left TensorFlow (NumPy, Python
    numbers, `predict`, which returns NumPy) or went through an op without a gradient (an index, a
    rounded or integer value, a comparison) is a constant to the tape. When the loss depends on the
    weights only through such an op, `tape.gradient` returns `None` for every variable and
    `apply_gradients` fails with "No gradients provided for any variable".

    ## Example
    ```python
    with tf.GradientTape() as tape:
        probs = model(x, training=True)
        predicted = tf.cast(tf.argmax(probs, axis=-1), tf.float32)
        loss = tf.reduce_mean(tf.square(y - predicted))
    grads = tape.gradient(loss, model.trainable_variables)  # all None
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)  # a differentiable loss on the logits
    grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Known problems
    A cut on one path is fine when another path still carries the gradient (`x + tf.stop_gradient(q - x)`,
    a DQN target, a mask built from a comparison), so only cuts on every path are reported. A callable
    the analysis cannot see into (a model, a function from another module) is assumed to be
    differentiable, which hides cuts behind it.

    ## Options
    None.

    ## Fix safety
    No fix: the differentiable replacement depends on what the op was meant to compute.

    ## References
    - https://www.tensorflow.org/guide/autodiff#cases_where_gradient_returns_none
    - https://github.com/tensorflow/tensorflow/issues/50111 (`.numpy()` inside the loss)
    - https://github.com/tensorflow/tensorflow/issues/31919 (`.numpy()` in a GAN tape)
    - https://github.com/tensorflow/tensorflow/issues/30190 (`float(loss)` collected in a list)
    - https://github.com/tensorflow/tensorflow/issues/20630 (`model.predict` inside the tape)
    - https://github.com/tensorflow/tensorflow/issues/15278 (`ArgMax` has no gradient)
    - https://github.com/tensorflow/tensorflow/issues/47083 (`tf.cast` to an integer type)
    """

    code = "TL004"
    name = "non-differentiable-op-in-tape"
    message = "{op} cuts the gradient of `{value}`: the loss `{loss}` reaches the weights only through it, so `tape.{method}` returns None"
    severity = Severity.ERROR
    triggers = ("GradientTape",)
    probe = "Confirmed when `tape.gradient` returns None for every variable of the step."

    def check(self) -> None:
        facts = self.facts
        reported: set[int] = set()
        for grad in gradient_calls(facts):
            target = grad.target
            if target is None:
                continue
            site = grad.site
            connected = frozenset(names_in(grad.sources) | watched_names(facts, grad.tape, site.order))
            others = other_models(facts, grad)
            if isinstance(target, cst.Name):
                binding = loss_assignment(facts, grad)
                if binding is None or not is_inside(grad.tape, binding):
                    continue  # computed outside the tape: TL003
                flow = flow_of_binding(facts, binding, connected, others)
            elif grad.tape.encloses(site.order):
                flow = gradient_flow(facts, target, site.scope, site.order, connected, others)
            else:
                continue
            if flow.state != State.CUT or flow.node is None or id(flow.node) in reported:
                continue
            reported.add(id(flow.node))
            self.report(flow.node, op=flow.op, value=render(flow.value) or "?", loss=render(target),
                        method=grad.method)

    VALID = [
        Valid(
            """
import tensorflow as tf
import tensorflow.experimental.numpy as tnp

class Model:
    \"\"\"A plain Python model (the tf.numpy guide): its `predict` is differentiable tnp code.\"\"\"

    def __init__(self):
        self.weights = [tf.Variable(tnp.zeros((4, 2))), tf.Variable(tnp.zeros((2,)))]

    def predict(self, inputs):
        return tnp.tanh(tnp.dot(inputs, self.weights[0]) + self.weights[1])

model = Model()
with tf.GradientTape() as tape:
    loss = tnp.sum(tnp.square(model.predict(tnp.ones((3, 4))) - 1.0))
grads = tape.gradient(loss, model.weights)
""",
            "near miss: `predict` of a plain class of this file is not Keras' `Model.predict`",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()
accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
        predicted = tf.argmax(logits, axis=-1)
        hits = tf.cast(tf.equal(predicted, y), tf.float32)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y, logits)
    return loss, tf.reduce_mean(hits)
""",
            "argmax and a comparison inside the tape, but only for the accuracy, not the loss",
        ),
        Valid(
            """
import tensorflow as tf

online = tf.keras.Sequential([tf.keras.layers.Dense(4)])
target_net = tf.keras.Sequential([tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.Adam(1e-3)

def train_step(states, actions, rewards, next_states, done, gamma=0.99):
    with tf.GradientTape() as tape:
        best = tf.argmax(online(next_states), axis=1)
        next_q = tf.gather(target_net(next_states), best, batch_dims=1)
        target = tf.stop_gradient(rewards + gamma * next_q * (1.0 - done))
        q = tf.reduce_sum(online(states) * tf.one_hot(actions, 4), axis=1)
        loss = tf.reduce_mean(tf.square(target - q))
    grads = tape.gradient(loss, online.trainable_variables)
    optimizer.apply_gradients(zip(grads, online.trainable_variables))
""",
            "double DQN: argmax and stop_gradient on the target path, the gradient flows through q",
        ),
        Valid(
            """
import tensorflow as tf

def quantize(encoder, codebook, x):
    with tf.GradientTape() as tape:
        z = encoder(x)
        q = tf.round(z * codebook)
        z_q = z + tf.stop_gradient(q - z)
        loss = tf.reduce_mean(tf.square(z_q - x))
    return tape.gradient(loss, encoder.trainable_variables)
""",
            "straight-through estimator: the cut path is bypassed",
        ),
        Valid(
            """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(4)])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
bce = tf.keras.losses.BinaryCrossentropy()
gen_opt = tf.keras.optimizers.SGD(1e-3)

def generator_step(z):
    with tf.GradientTape() as tape:
        fake = generator(z)
        decision = critic(tf.reshape(tf.reduce_mean(fake, axis=0), (1, 4)))
        loss = bce(tf.ones((1, 1)), decision)
    grads = tape.gradient(loss, generator.trainable_variables)
    gen_opt.apply_gradients(zip(grads, generator.trainable_variables))
""",
            "the critic is called on the generator's output through TF ops only: the gradient reaches the generator",
        ),
        Valid(
            """
import tensorflow as tf

encoder = tf.keras.Sequential([tf.keras.layers.Dense(8)])
head = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model = tf.keras.Sequential([encoder, head])
opt = tf.keras.optimizers.Adam()

def step(x, y):
    with tf.GradientTape() as tape:
        feats = encoder(x).numpy()
        loss = tf.reduce_mean(tf.square(head(feats) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
""",
            "`head` is part of `model`: its weights still get a gradient after the cut",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="softmax")])
optimizer = tf.keras.optimizers.SGD(0.1)

def train_step(x, y):
    with tf.GradientTape() as tape:
        probs = model(x, training=True)
        predicted = tf.cast(tf.argmax(probs, axis=-1), tf.float32)
        loss = tf.reduce_mean(tf.square(y - predicted))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=10,
            column=29,
            message_contains="`tf.argmax` cuts the gradient of `probs`",
        ),
        Invalid(
            """
import numpy as np
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
gen_opt = tf.keras.optimizers.Adam(1e-4)

def generator_loss(fake_scores):
    return -np.mean(fake_scores)

def train_generator(noise):
    with tf.GradientTape() as tape:
        fake = generator(noise, training=True)
        scores = critic(fake, training=True).numpy()
        loss = generator_loss(scores)
    grads = tape.gradient(loss, generator.trainable_variables)
    gen_opt.apply_gradients(zip(grads, generator.trainable_variables))
""",
            line=15,
            message_contains="`.numpy()`",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()

for x, y in [(tf.zeros((2, 3)), tf.zeros((2, 1)))]:
    with tf.GradientTape() as tape:
        losses = []
        for i in range(2):
            pred = model.predict(x[i:i + 1])
            losses.append(tf.reduce_mean((pred - y[i]) ** 2))
        loss = tf.add_n(losses)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=11,
            message_contains="`model.predict()`",
        ),
        Invalid(
            """
import numpy as np
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(4)])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
bce = tf.keras.losses.BinaryCrossentropy()
gen_opt = tf.keras.optimizers.SGD(1e-3)

def summary_stats(values):
    return np.array([np.mean(values), np.std(values), np.min(values), np.max(values)])

def generator_step(z):
    with tf.GradientTape() as tape:
        fake = generator(z)
        decision = critic(summary_stats(fake.numpy()).reshape((1, 4)))
        loss = bce(tf.ones((1, 1)), decision)
    grads = tape.gradient(loss, generator.trainable_variables)
    gen_opt.apply_gradients(zip(grads, generator.trainable_variables))
""",
            line=16,
            message_contains="`.numpy()` cuts the gradient of `fake`",
        ),
        Invalid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal((5, 1)))
opt = tf.keras.optimizers.Adam(0.01)
discounts = 1.0 / tf.math.log(tf.range(2.0, 18.0))

def rank_loss(scores, relevance):
    order = tf.argsort(-scores[:, 0])
    return -tf.reduce_sum(tf.cast(relevance, tf.float32)[:16] * discounts) + tf.reduce_sum(relevance[order] * discounts)

def step(feats, relevance):
    with tf.GradientTape() as tape:
        scores = tf.matmul(feats, w)
        loss = rank_loss(scores, relevance)
    grads = tape.gradient(loss, [w])
    opt.apply_gradients(zip(grads, [w]))
""",
            line=9,
            message_contains="`tf.argsort` cuts the gradient of `-scores[:, 0]`",
        ),
    ]

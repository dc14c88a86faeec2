from __future__ import annotations

import libcst as cst

from tapelint.analysis.blocks import blocks
from tapelint.analysis.dataflow import names_in
from tapelint.analysis.facts import arg_value
from tapelint.analysis.optimizers import optimizer_creations
from tapelint.analysis.run_counts import creation_count, tape_repeats
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


def _stateless(call: cst.Call) -> bool:
    momentum = arg_value(call, 1, "momentum")
    return momentum is None or (isinstance(momentum, (cst.Integer, cst.Float)) and float(momentum.value) == 0.0)


class OptimizerCreatedInLoop(Rule):
    """
    ## What it does
    Reports an optimizer constructed where it runs on every training step: inside the loop that runs
    the steps (the loop that opens the tape or calls `apply_gradients`), inside the step function
    (a `tf.function`, a function named like a step, or one called from a loop, that opens the tape),
    or inside the tape block itself.

    ## Why is this bad?
    An optimizer keeps state between steps: Adam's moment estimates, momentum, the step counter that
    drives bias correction and learning-rate schedules. A fresh optimizer on every step starts from
    zero each time, so Adam degenerates into a sign-SGD with a bias-corrected first step and schedules
    never advance. Inside a `tf.function` it fails outright: "tf.function-decorated function tried to
    create variables on non-first call".

    ## Example
    ```python
    for x, y in dataset:
        optimizer = tf.keras.optimizers.Adam(1e-3)
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    ## Use instead
    ```python
    optimizer = tf.keras.optimizers.Adam(1e-3)
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    ## Known problems
    An optimizer created once per epoch or once per run of a hyper-parameter sweep (in an outer loop
    around the step loop) is not reported: a sweep is correct, and a reset per epoch cannot be told
    apart from it. Lazy creation guarded by `if optimizer is None:` is not reported, and neither is a
    plain `SGD` without momentum outside `tf.function` (it has no state to lose).

    ## Options
    None.

    ## Fix safety
    No fix: where the optimizer belongs depends on the program's structure.

    ## References
    - https://www.tensorflow.org/guide/function#creating_tfvariables
    - https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch
    - https://github.com/tensorflow/tensorflow/issues/27120 (a new optimizer on every training step)
    - https://github.com/tensorflow/tensorflow/issues/34983
    - https://github.com/ageron/handson-ml2/issues/440
    """

    code = "TL202"
    name = "optimizer-created-in-loop"
    message = "`{cls}` is created {where}: a new optimizer on every step loses its state (moments, step count), and inside `tf.function` it fails on the second call"
    severity = Severity.ERROR
    triggers = ("GradientTape", "apply_gradients", "minimize")
    probe = ""

    def check(self) -> None:
        facts = self.facts
        spans = blocks(facts)
        for creation in optimizer_creations(facts):
            site = creation.site
            count = creation_count(facts, site)
            if count.kind != "per-step" or count.step is None or count.step.kind == "call":
                continue  # once, per call, or per trace (TensorFlow raises on the first call: TL403's finding)
            if count.step.kind == "tape" and not tape_repeats(facts, site.scope, site.order):
                continue  # a tape that runs once (a script's single step): the optimizer is made once too
            if creation.cls == "SGD" and not site.scope.is_tf_function and _stateless(site.node):
                continue  # plain SGD keeps no state between steps: re-creating it is only slow, in eager mode
            holder = creation.holder.target if creation.holder is not None else None
            if holder is not None and any(holder in names_in(g.test) for g in spans.guards(site.order)):
                continue  # `if opt is None: opt = Adam()`: created once
            self.report(site.node, cls=creation.cls, where=count.step.label)

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
    opt = tf.keras.optimizers.Adam(1e-3)
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
""",
            "inside a tf.function the first call raises instead (TL403 variable-created-in-tf-function reports it)",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)

for epoch in range(3):
    for x, y in [(tf.zeros((2, 4)), tf.zeros((2,)))]:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "the TF guide's loop: the optimizer is created once",
        ),
        Valid(
            """
import tensorflow as tf

def build():
    return tf.keras.Sequential([tf.keras.layers.Dense(1)])

results = {}
for lr in [1e-2, 1e-3, 1e-4]:
    model = build()
    optimizer = tf.keras.optimizers.SGD(lr)
    for step in range(100):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(tf.ones((4, 3)), training=True) - 1.0))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    results[lr] = float(loss)
""",
            "near miss: a learning-rate sweep creates one optimizer per run, outside the step loop",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

for x, y in [(tf.zeros((2, 4)), tf.zeros((2,)))]:
    optimizer = tf.keras.optimizers.Adam(1e-3)
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=8,
            column=17,
            message_contains="`Adam` is created inside the training loop",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def train_step(x, y):
    opt = tf.keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for x, y in batches:
    train_step(x, y)
""",
            line=8,
            message_contains="in the step function `train_step`",
        ),
    ]

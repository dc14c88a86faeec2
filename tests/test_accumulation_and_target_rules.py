"""TL011 and TL012 on realistic loops: the bug is reported, the correct near miss is not."""

from __future__ import annotations

import textwrap

from tapelint.config import Config
from tapelint.engine import lint_source


def _codes(source: str, code: str) -> list[int]:
    found = lint_source(textwrap.dedent(source), "train.py", Config(preview=True), force=True)  # the rules, preview or not
    return [d.line for d in found if d.code == code]


ACCUMULATING = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)
sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]

@tf.function
def accumulate(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    for total, g in zip(sums, grads):
        total.assign_add(g)

def apply_sums():
    optimizer.apply_gradients(zip(sums, model.trainable_variables))
RESET

for step, (x, y) in enumerate(dataset):
    accumulate(x, y)
    if step % 4 == 3:
        apply_sums()
"""


def test_variables_summed_in_a_step_function_and_never_zeroed_are_reported():
    assert _codes(ACCUMULATING.replace("RESET\n", ""), "TL011") == [17]


def test_variables_zeroed_in_the_apply_function_are_not_reported():
    reset = "    for total in sums:\n        total.assign(tf.zeros_like(total))\n"
    assert _codes(ACCUMULATING.replace("RESET\n", reset), "TL011") == []


def test_a_list_created_at_each_window_is_not_reported():
    assert _codes("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD(0.01)
        for window in windows:
            accum = None
            for x, y in window:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                accum = grads if accum is None else [a + g for a, g in zip(accum, grads)]
            optimizer.apply_gradients(zip(accum, model.trainable_variables))
    """, "TL011") == []


CRITIC = """
import tensorflow as tf

critic = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="tanh"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
mse = tf.keras.losses.MeanSquaredError()

def update(states, rewards, next_states, dones, gamma=0.99):
    with tf.GradientTape() as tape:
        returns = rewards + gamma * NEXT * (1.0 - dones)
        loss = mse(returns, critic(states, training=True))
    grads = tape.gradient(loss, critic.trainable_variables)
    optimizer.apply_gradients(zip(grads, critic.trainable_variables))
"""


def test_a_critic_regressed_onto_its_own_bootstrapped_return_is_reported():
    assert _codes(CRITIC.replace("NEXT", "critic(next_states, training=True)"), "TL012") == [11]


def test_a_critic_regressed_onto_a_stopped_return_is_not_reported():
    assert _codes(CRITIC.replace("NEXT", "tf.stop_gradient(critic(next_states))"), "TL012") == []


def test_a_consistency_loss_between_two_views_is_not_reported():
    assert _codes("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        optimizer = tf.keras.optimizers.Adam(1e-3)

        def step(x_weak, x_strong):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x_weak, training=True) - model(x_strong, training=True)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """, "TL012") == []

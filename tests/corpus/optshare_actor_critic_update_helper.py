# expect: TL204
"""An advantage actor-critic whose update helper applies one module-level `RMSprop` to whichever network
it is given (one optimizer shared by two models; the Keras 3 error of
https://github.com/lovedlim/tensorflow/issues/40, where one `opt` is applied to a second model).

Observed on TF 2.21 (CPU): the critic's update builds the optimizer; the actor's update raises
`ValueError: Unknown variable: <Variable path=sequential/dense/kernel ...>. This optimizer can only be
called for the variables it was originally built with.`"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(3)
states = rng.normal(size=(64, 4)).astype("float32")
actions = rng.integers(0, 2, size=64)
returns = rng.normal(size=(64, 1)).astype("float32")

actor = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(32, activation="relu"),
                             tf.keras.layers.Dense(2, activation="softmax")])
critic = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(32, activation="relu"),
                              tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.RMSprop(7e-4)


def update(model, tape, loss):
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


for episode in range(5):
    with tf.GradientTape() as critic_tape, tf.GradientTape() as actor_tape:
        values = critic(states, training=True)
        advantage = returns - values
        critic_loss = tf.reduce_mean(tf.square(advantage))
        probs = actor(states, training=True)
        chosen = tf.gather(probs, actions, batch_dims=1)
        actor_loss = -tf.reduce_mean(tf.math.log(chosen + 1e-8) * tf.stop_gradient(advantage[:, 0]))
    update(critic, critic_tape, critic_loss)
    update(actor, actor_tape, actor_loss)
    print(episode, float(critic_loss), float(actor_loss))

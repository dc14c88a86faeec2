# expect: TL008
"""An actor-critic update that clips each gradient with a comprehension, but applies the list it
clipped from (the pattern behind "gradient clipping has no effect" questions on custom TF2 loops; see
tensorflow/tensorflow#28707 for the TF2 clipping recipe).

Observed on TF 2.21 (CPU): the clipped tensors have norm <= 0.5, but the largest applied per-variable
norm is 22.7, 22.5, 22.4 over three updates."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
states = rng.normal(size=(32, 8)).astype("float32")
returns = (rng.normal(size=(32, 1)) * 20.0).astype("float32")

critic = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="tanh"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.RMSprop(1e-3)

for update in range(3):
    with tf.GradientTape() as tape:
        values = critic(states, training=True)
        critic_loss = tf.reduce_mean(tf.square(returns - values))
    grads = tape.gradient(critic_loss, critic.trainable_variables)
    clipped = [tf.clip_by_norm(g, 0.5) for g in grads]
    optimizer.apply_gradients(zip(grads, critic.trainable_variables))
    print(update, float(critic_loss), "largest applied norm", max(float(tf.norm(g)) for g in grads))

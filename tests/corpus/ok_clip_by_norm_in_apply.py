# expect: none
"""The corrected actor-critic update of clip_by_norm_list_dropped.py: each gradient is clipped inside the
apply call (tensorflow/tensorflow#28707).

Observed on TF 2.21 (CPU): the largest applied per-variable norm is 0.5 at every update (22.7 unclipped)."""
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
    optimizer.apply_gradients(zip([tf.clip_by_norm(g, 0.5) for g in grads], critic.trainable_variables))
    print(update, float(critic_loss), "largest applied norm", max(float(tf.norm(tf.clip_by_norm(g, 0.5))) for g in grads))

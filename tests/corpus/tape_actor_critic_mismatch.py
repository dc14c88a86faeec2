# expect: TL006
"""Advantage actor-critic whose actor gradients are applied to the critic's variables."""
import numpy as np
import tensorflow as tf

NUM_ACTIONS = 2

actor = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", input_shape=(4,)),
    tf.keras.layers.Dense(NUM_ACTIONS),
])
critic = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", input_shape=(4,)),
    tf.keras.layers.Dense(1),
])
actor_optimizer = tf.keras.optimizers.Adam(1e-3)
critic_optimizer = tf.keras.optimizers.Adam(5e-3)


def train_step(states, actions, returns):
    with tf.GradientTape() as actor_tape, tf.GradientTape() as critic_tape:
        logits = actor(states, training=True)
        values = tf.squeeze(critic(states, training=True), axis=-1)
        advantage = returns - values
        log_probs = tf.nn.log_softmax(logits)
        taken = tf.reduce_sum(log_probs * tf.one_hot(actions, NUM_ACTIONS), axis=-1)
        actor_loss = -tf.reduce_mean(taken * tf.stop_gradient(advantage))
        critic_loss = tf.reduce_mean(tf.square(advantage))
    actor_grads = actor_tape.gradient(actor_loss, actor.trainable_variables)
    critic_grads = critic_tape.gradient(critic_loss, critic.trainable_variables)
    actor_optimizer.apply_gradients(zip(actor_grads, critic.trainable_variables))
    critic_optimizer.apply_gradients(zip(critic_grads, critic.trainable_variables))
    return actor_loss, critic_loss


states = np.random.randn(64, 4).astype("float32")
actions = np.random.randint(0, NUM_ACTIONS, size=(64,))
returns = np.random.randn(64).astype("float32")
print(train_step(states, actions, returns))

# expect: none
"""Double DQN update: argmax picks actions, stop_gradient on the target, gradient through Q(s, a)."""
import numpy as np
import tensorflow as tf

NUM_ACTIONS = 4
GAMMA = 0.99


def build_q_network():
    return tf.keras.Sequential([
        tf.keras.layers.Dense(128, activation="relu", input_shape=(8,)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(NUM_ACTIONS),
    ])


online = build_q_network()
target = build_q_network()
target.set_weights(online.get_weights())
optimizer = tf.keras.optimizers.Adam(learning_rate=2.5e-4, clipnorm=10.0)
huber = tf.keras.losses.Huber()


@tf.function
def update(states, actions, rewards, next_states, dones):
    next_actions = tf.argmax(online(next_states), axis=1)
    next_q = tf.gather(target(next_states), next_actions, batch_dims=1)
    targets = rewards + GAMMA * (1.0 - dones) * next_q
    with tf.GradientTape() as tape:
        q_values = online(states, training=True)
        mask = tf.one_hot(actions, NUM_ACTIONS)
        q_taken = tf.reduce_sum(q_values * mask, axis=1)
        loss = huber(tf.stop_gradient(targets), q_taken)
    grads = tape.gradient(loss, online.trainable_variables)
    optimizer.apply_gradients(zip(grads, online.trainable_variables))
    return loss


def greedy_action(state):
    q = online(state[None, :])
    return int(tf.argmax(q[0]).numpy())


batch = [np.random.randn(32, 8).astype("float32"), np.random.randint(0, 4, 32),
         np.random.randn(32).astype("float32"), np.random.randn(32, 8).astype("float32"),
         np.zeros(32, dtype="float32")]
for step in range(100):
    update(*batch)
    if step % 10 == 0:
        target.set_weights(online.get_weights())

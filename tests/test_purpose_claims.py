"""What a value is for decides whether a rule's training claim holds (tapelint/analysis/purpose.py).

A value that never reaches the update is not a training bug: a hand-written cross-entropy that is only
printed, a batch fetched afresh only to be plotted. And gradients applied to a structural twin of the network
they were computed for (A3C's worker and global networks) are the algorithm. Each false-positive kind has
variants written in other spellings that must stay silent, and a buggy twin that must still be reported.
"""

from __future__ import annotations

import pytest

from tapelint.config import parse
from tapelint.engine import lint_source


def findings(code: str, source: str) -> list[tuple[int, str]]:
    """(line, message) of each finding of the rule `code` on `source`."""
    config = parse({"select": [code, "TL999"], "preview": True}, "test", None)
    found = lint_source(source, "train.py", config)
    assert not [d for d in found if d.code in ("TL000", "TL999")], found
    return [(d.line, d.message) for d in found if d.code == code]


# ----------------------------------------------------------------------------- TL108: only for logs

# A test-set cross-entropy written by hand and printed once per epoch; the loss differentiated is the built-in one.
XENT_PRINTED = """\
import matplotlib.pyplot as plt
import tensorflow as tf

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_train, x_test = x_train.reshape(-1, 784) / 255.0, x_test.reshape(-1, 784) / 255.0
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(5000).batch(128)

W = tf.Variable(tf.random.normal([784, 10], stddev=0.01))
b = tf.Variable(tf.zeros([10]))
optimizer = tf.keras.optimizers.SGD(0.1)
val_xent = tf.keras.metrics.Mean(name="val_xent")
writer = tf.summary.create_file_writer("logs")
history = []

def logits_of(x):
    return tf.matmul(tf.cast(x, tf.float32), W) + b

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits_of(x)))
    grads = tape.gradient(loss, [W, b])
    optimizer.apply_gradients(zip(grads, [W, b]))
    return loss

for epoch in range(5):
    for x, y in train_ds:
        train_step(x, y)
    probs = tf.nn.softmax(logits_of(x_test))
    onehot = tf.one_hot(y_test, 10)
    xent = -tf.reduce_mean(tf.reduce_sum(onehot * tf.math.log(probs + 1e-9), axis=1))
    print(f"epoch {epoch}: test cross-entropy {xent.numpy():.4f}")
"""

# A hand-written cross-entropy in a helper whose only caller feeds a `keras.metrics.Mean`.
XENT_IN_A_METRIC = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10, activation="softmax")])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
val_xent = tf.keras.metrics.Mean(name="val_xent")
train_ds = tf.data.Dataset.from_tensor_slices((tf.zeros((256, 20)), tf.zeros((256,), tf.int32))).batch(32)
val_ds = tf.data.Dataset.from_tensor_slices((tf.zeros((64, 20)), tf.zeros((64, 10)))).batch(32)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

def handwritten_xent(labels, probs):
    return -tf.reduce_sum(labels * tf.math.log(tf.clip_by_value(probs, 1e-9, 1.0)), axis=-1)

for epoch in range(10):
    for x, y in train_ds:
        train_step(x, y)
    val_xent.reset_state()
    for x, y in val_ds:
        val_xent.update_state(handwritten_xent(y, model(x, training=False)))
    print(epoch, val_xent.result())
"""

# A diagnostic cross-entropy of the policy written to TensorBoard after the update.
XENT_IN_A_SUMMARY = """\
import tensorflow as tf

policy = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(4, activation="softmax")])
optimizer = tf.keras.optimizers.Adam(3e-4)
writer = tf.summary.create_file_writer("runs/pg")

def update(states, actions, returns, step):
    with tf.GradientTape() as tape:
        probs = policy(states, training=True)
        chosen = tf.gather(probs, actions, batch_dims=1)
        loss = -tf.reduce_mean(tf.math.log(chosen + 1e-8) * returns)
    grads = tape.gradient(loss, policy.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))
    target = tf.one_hot(actions, 4)
    divergence = -tf.reduce_mean(tf.reduce_sum(target * tf.math.log(probs + 1e-8), axis=-1))
    with writer.as_default():
        tf.summary.scalar("policy/action_xent", divergence, step=step)
    return loss

for step in range(1000):
    update(tf.zeros((16, 8)), tf.zeros((16,), tf.int32), tf.ones((16,)), step)
"""

# A validation cross-entropy collected in a list and plotted with matplotlib.
XENT_PLOTTED = """\
import matplotlib.pyplot as plt
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(5)])
optimizer = tf.keras.optimizers.Adam(1e-3)
features = tf.random.normal((1024, 16))
labels = tf.random.uniform((1024,), 0, 5, tf.int32)
train_ds = tf.data.Dataset.from_tensor_slices((features[:896], labels[:896])).shuffle(896).batch(32)
val_x, val_y = features[896:], tf.one_hot(labels[896:], 5)
curve = []

for epoch in range(30):
    for x, y in train_ds:
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    val_probs = tf.nn.softmax(model(val_x, training=False))
    val_ce = tf.reduce_mean(tf.reduce_sum(-val_y * tf.math.log(tf.clip_by_value(val_probs, 1e-9, 1.0)), axis=1))
    curve.append(float(val_ce))

plt.plot(range(1, 31), curve)
plt.ylabel("validation cross-entropy")
plt.savefig("val_ce.png")
"""

# The buggy twin: the same hand-written cross-entropy is the loss the tape differentiates (and it is printed too).
XENT_IS_THE_LOSS = """\
import numpy as np
import tensorflow as tf

num_classes, num_features = 10, 784
(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
x_train = np.array(x_train, np.float32).reshape([-1, num_features]) / 255.0
train_data = tf.data.Dataset.from_tensor_slices((x_train, y_train)).repeat().shuffle(5000).batch(256).prefetch(1)
W = tf.Variable(tf.ones([num_features, num_classes]), name="weight")
b = tf.Variable(tf.zeros([num_classes]), name="bias")
optimizer = tf.optimizers.SGD(0.01)


def logistic_regression(x):
    return tf.nn.softmax(tf.matmul(x, W) + b)


def cross_entropy(y_pred, y_true):
    y_true = tf.one_hot(y_true, depth=num_classes)
    y_pred = tf.clip_by_value(y_pred, 1e-9, 1.0)
    return tf.reduce_mean(-tf.reduce_sum(y_true * tf.math.log(y_pred)))


def run_optimization(x, y):
    with tf.GradientTape() as g:
        pred = logistic_regression(x)
        loss = cross_entropy(pred, y)
    gradients = g.gradient(loss, [W, b])
    optimizer.apply_gradients(zip(gradients, [W, b]))


for step, (batch_x, batch_y) in enumerate(train_data.take(1000), 1):
    run_optimization(batch_x, batch_y)
    if step % 50 == 0:
        print("step: %i, loss: %f" % (step, cross_entropy(logistic_regression(batch_x), batch_y)))
"""

# TL603: a fixed test batch fetched in every pass of a one-step-per-epoch loop, to plot reconstructions.
PREVIEW_PLOTTED = """\
import matplotlib.pyplot as plt
import tensorflow as tf

(x_train, _), (x_test, _) = tf.keras.datasets.mnist.load_data()
train_ds = tf.data.Dataset.from_tensor_slices(x_train[..., None] / 255.0).shuffle(60000).batch(64).repeat()
test_ds = tf.data.Dataset.from_tensor_slices(x_test[..., None] / 255.0).batch(16)
autoencoder = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(32, activation="relu"),
                                   tf.keras.layers.Dense(784, activation="sigmoid"), tf.keras.layers.Reshape((28, 28, 1))])
optimizer = tf.keras.optimizers.Adam(1e-3)
batches = iter(train_ds)

@tf.function
def train_step(images):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(autoencoder(images, training=True) - images))
    grads = tape.gradient(loss, autoencoder.trainable_variables)
    optimizer.apply_gradients(zip(grads, autoencoder.trainable_variables))
    return loss

for epoch in range(20):
    loss = train_step(next(batches))
    samples = next(iter(test_ds))
    reconstructions = autoencoder(samples, training=False)
    fig, axes = plt.subplots(2, 8)
    for i in range(8):
        axes[0, i].imshow(samples[i, ..., 0], cmap="gray")
        axes[1, i].imshow(reconstructions[i, ..., 0], cmap="gray")
    plt.savefig(f"epoch_{epoch}.png")
"""

# A validation batch fetched each step to print a few predictions next to their labels.
PREVIEW_PRINTED = """\
import tensorflow as tf

train_ds = tf.data.Dataset.from_tensor_slices((tf.random.normal((4096, 20)), tf.random.uniform((4096,), 0, 3, tf.int32))).shuffle(4096).batch(32).repeat()
val_ds = tf.data.Dataset.from_tensor_slices((tf.random.normal((512, 20)), tf.random.uniform((512,), 0, 3, tf.int32))).batch(8)
model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(3)])
optimizer = tf.keras.optimizers.SGD(0.05)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_iter = iter(train_ds)

for step in range(2000):
    x, y = next(train_iter)
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    preview_x, preview_y = next(iter(val_ds))
    predicted = tf.argmax(model(preview_x, training=False), axis=-1)
    print(step, float(loss), predicted.numpy(), preview_y.numpy())
"""

# A helper fetches the first test batch each step; it only feeds a metric and a summary.
PREVIEW_MEASURED = """\
import tensorflow as tf

train_ds = tf.data.Dataset.from_tensor_slices((tf.random.normal((4096, 20)), tf.random.uniform((4096, 1)))).shuffle(4096).batch(32).repeat()
test_ds = tf.data.Dataset.from_tensor_slices((tf.random.normal((512, 20)), tf.random.uniform((512, 1)))).batch(64)
model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
test_mae = tf.keras.metrics.MeanAbsoluteError()
writer = tf.summary.create_file_writer("logs/run1")
train_iter = iter(train_ds)

def fixed_test_batch():
    return next(iter(test_ds))

step = 0
while step < 5000:
    x, y = next(train_iter)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    tx, ty = fixed_test_batch()
    test_mae.update_state(ty, model(tx, training=False))
    with writer.as_default():
        tf.summary.scalar("test_mae", test_mae.result(), step=step)
    step += 1
"""

# The buggy twin: the batch fetched afresh each step is the one trained on (and plotted).
TRAIN_BATCH_RECREATED = """\
import matplotlib.pyplot as plt
import tensorflow as tf

(x_train, _), _ = tf.keras.datasets.mnist.load_data()
train_ds = tf.data.Dataset.from_tensor_slices(x_train[..., None] / 255.0).shuffle(60000).batch(64)
autoencoder = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(32, activation="relu"),
                                   tf.keras.layers.Dense(784, activation="sigmoid"), tf.keras.layers.Reshape((28, 28, 1))])
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(images):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(autoencoder(images, training=True) - images))
    grads = tape.gradient(loss, autoencoder.trainable_variables)
    optimizer.apply_gradients(zip(grads, autoencoder.trainable_variables))
    return loss


for step in range(2000):
    images = next(iter(train_ds))
    loss = train_step(images)
    if step % 500 == 0:
        plt.imshow(autoencoder(images[:1], training=False)[0, ..., 0], cmap="gray")
        plt.savefig(f"step_{step}.png")
"""

# TL006: A3C as in the TensorFlow blog: the worker's `ActorCriticModel` gradients update the global `ActorCriticModel`.
A3C_SAME_CLASS = """\
import threading
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers


class ActorCriticModel(keras.Model):
    def __init__(self, state_size, action_size):
        super().__init__()
        self.dense1 = layers.Dense(100, activation="relu")
        self.policy_logits = layers.Dense(action_size)
        self.dense2 = layers.Dense(100, activation="relu")
        self.values = layers.Dense(1)

    def call(self, inputs):
        x = self.dense1(inputs)
        v1 = self.dense2(inputs)
        return self.policy_logits(x), self.values(v1)


class MasterAgent:
    def __init__(self, state_size, action_size):
        self.state_size = state_size
        self.action_size = action_size
        self.opt = tf.keras.optimizers.Adam(1e-3)
        self.global_model = ActorCriticModel(state_size, action_size)
        self.global_model(tf.zeros((1, state_size)))

    def train(self):
        workers = [Worker(self.state_size, self.action_size, self.global_model, self.opt) for _ in range(4)]
        for worker in workers:
            worker.start()


class Worker(threading.Thread):
    def __init__(self, state_size, action_size, global_model, opt):
        super().__init__()
        self.global_model = global_model
        self.local_model = ActorCriticModel(state_size, action_size)
        self.opt = opt

    def compute_loss(self, states, actions, returns):
        logits, values = self.local_model(states)
        advantage = returns - values
        value_loss = advantage ** 2
        policy = tf.nn.softmax(logits)
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)
        return tf.reduce_mean(0.5 * value_loss + ce * tf.stop_gradient(advantage))

    def run(self):
        states, actions, returns = np.zeros((5, 4), "float32"), np.zeros((5,), "int32"), np.zeros((5, 1), "float32")
        with tf.GradientTape() as tape:
            total_loss = self.compute_loss(states, actions, returns)
        grads = tape.gradient(total_loss, self.local_model.trainable_weights)
        self.opt.apply_gradients(zip(grads, self.global_model.trainable_weights))
        self.local_model.set_weights(self.global_model.get_weights())


MasterAgent(4, 2).train()
"""

# A3C with the global actor handed to each worker; both networks come from `Actor.create_model`.
A3C_SAME_BUILDER_METHOD = """\
from threading import Thread

import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Dense, Input


class Actor:
    def __init__(self, state_dim, action_dim):
        self.state_dim = state_dim
        self.action_dim = action_dim
        self.model = self.create_model()

    def create_model(self):
        return tf.keras.Sequential([Input((self.state_dim,)), Dense(32, activation="relu"),
                                    Dense(self.action_dim, activation="softmax")])


class Agent:
    def __init__(self, state_dim, action_dim):
        self.global_actor = Actor(state_dim, action_dim)
        self.global_opt = tf.keras.optimizers.Adam(5e-4)
        self.workers = [WorkerAgent(self.global_actor, self.global_opt, state_dim, action_dim) for _ in range(4)]


class WorkerAgent(Thread):
    def __init__(self, global_actor, global_opt, state_dim, action_dim):
        Thread.__init__(self)
        self.global_actor = global_actor
        self.global_opt = global_opt
        self.actor = Actor(state_dim, action_dim)

    def update(self, states, actions, advantages):
        with tf.GradientTape() as tape:
            probs = self.actor.model(states, training=True)
            chosen = tf.reduce_sum(probs * tf.one_hot(actions, probs.shape[-1]), axis=1)
            loss = -tf.reduce_mean(tf.math.log(chosen + 1e-8) * advantages)
        grads = tape.gradient(loss, self.actor.model.trainable_variables)
        self.global_opt.apply_gradients(zip(grads, self.global_actor.model.trainable_variables))
        self.actor.model.set_weights(self.global_actor.model.get_weights())


Agent(4, 2)
"""

# A3C with both networks made by one builder function called with the same arguments.
A3C_SAME_BUILDER_FUNCTION = """\
import tensorflow as tf


def build_network(n_inputs, n_actions):
    inputs = tf.keras.Input((n_inputs,))
    hidden = tf.keras.layers.Dense(64, activation="relu")(inputs)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(n_actions)(hidden))


global_net = build_network(8, 4)
optimizer = tf.keras.optimizers.RMSprop(1e-3)


def worker(episodes):
    local_net = build_network(8, 4)
    for _ in range(episodes):
        local_net.set_weights(global_net.get_weights())
        states = tf.random.normal((16, 8))
        returns = tf.random.normal((16,))
        with tf.GradientTape() as tape:
            values = tf.reduce_max(local_net(states, training=True), axis=-1)
            loss = tf.reduce_mean(tf.square(returns - values))
        grads = tape.gradient(loss, local_net.trainable_variables)
        optimizer.apply_gradients(zip(grads, global_net.trainable_variables))


worker(100)
"""

# One builder function; the master and the workers pass the sizes under other names (read from the environment).
A3C_BUILDER_OTHER_SPELLING = """\
import threading

import gym
import tensorflow as tf


def build_model(state_size, action_size):
    inputs = tf.keras.Input((state_size,))
    hidden = tf.keras.layers.Dense(100, activation="relu")(inputs)
    return tf.keras.Model(inputs, [tf.keras.layers.Dense(action_size)(hidden), tf.keras.layers.Dense(1)(hidden)])


class MasterAgent:
    def __init__(self, env_name):
        env = gym.make(env_name)
        self.state_size = env.observation_space.shape[0]
        self.action_size = env.action_space.n
        self.opt = tf.keras.optimizers.Adam(1e-3, epsilon=1e-3)
        self.global_model = build_model(self.state_size, self.action_size)

    def train(self):
        workers = [Worker(self.state_size, self.action_size, self.global_model, self.opt) for _ in range(8)]
        for worker in workers:
            worker.start()


class Worker(threading.Thread):
    def __init__(self, state_size, action_size, global_model, opt):
        super().__init__()
        self.global_model = global_model
        self.local_model = build_model(state_size, action_size)
        self.opt = opt

    def run(self):
        states = tf.zeros((5, 4))
        with tf.GradientTape() as tape:
            logits, values = self.local_model(states)
            loss = tf.reduce_mean(tf.square(values)) - tf.reduce_mean(tf.nn.log_softmax(logits))
        grads = tape.gradient(loss, self.local_model.trainable_weights)
        self.opt.apply_gradients(zip(grads, self.global_model.trainable_weights))
        self.local_model.set_weights(self.global_model.get_weights())


MasterAgent("CartPole-v1").train()
"""

# The local network is `clone_model` of the global one.
A3C_CLONED = """\
import tensorflow as tf
from tensorflow import keras

global_model = keras.Sequential([keras.layers.Dense(128, activation="relu"), keras.layers.Dense(2)])
global_model.build((None, 4))
shared_opt = keras.optimizers.Adam(1e-4)


class Worker:
    def __init__(self):
        self.local_model = keras.models.clone_model(global_model)
        self.local_model.build((None, 4))

    def push_and_pull(self, states, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.local_model(states, training=True) - targets))
        grads = tape.gradient(loss, self.local_model.trainable_weights)
        shared_opt.apply_gradients(zip(grads, global_model.trainable_weights))
        self.local_model.set_weights(global_model.get_weights())


Worker().push_and_pull(tf.zeros((8, 4)), tf.zeros((8, 2)))
"""

# The buggy twin: the generator's gradients applied to the discriminator (built by another builder).
GAN_MISMATCH = """\
import tensorflow as tf


def make_generator():
    return tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(64, activation="relu"),
                                tf.keras.layers.Dense(64)])


def make_discriminator():
    return tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(64, activation="relu"),
                                tf.keras.layers.Dense(64)])


generator = make_generator()
discriminator = make_discriminator()
g_opt = tf.keras.optimizers.Adam(2e-4)
d_opt = tf.keras.optimizers.Adam(2e-4)

for step in range(1000):
    noise = tf.random.normal((32, 16))
    with tf.GradientTape() as g_tape:
        fake = generator(noise, training=True)
        g_loss = -tf.reduce_mean(discriminator(fake, training=True))
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, discriminator.trainable_variables))
"""

# Also a bug: one builder, called with other arguments, makes two different networks.
SAME_BUILDER_OTHER_SHAPE = """\
import tensorflow as tf


def make_mlp(width, outputs):
    return tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(width, activation="relu"),
                                tf.keras.layers.Dense(outputs)])


actor = make_mlp(64, 4)
critic = make_mlp(64, 1)
opt = tf.keras.optimizers.Adam(1e-3)

for step in range(100):
    states = tf.random.normal((32, 8))
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(critic(states)))
    grads = tape.gradient(loss, critic.trainable_variables)
    opt.apply_gradients(zip(grads, actor.trainable_variables))
"""


@pytest.mark.parametrize("source", [XENT_PRINTED, XENT_IN_A_METRIC, XENT_IN_A_SUMMARY, XENT_PLOTTED],
                         ids=["printed", "metric", "summary", "plotted"])
def test_a_handwritten_cross_entropy_computed_only_for_logs_is_not_reported(source: str):
    assert findings("TL108", source) == []


def test_the_same_cross_entropy_differentiated_by_the_tape_is_reported():
    (line, message), = findings("TL108", XENT_IS_THE_LOSS)
    assert XENT_IS_THE_LOSS.splitlines()[line - 1].strip().startswith("return tf.reduce_mean(-tf.reduce_sum(y_true")
    assert "saturation gives `log(0)`" in message


@pytest.mark.parametrize("source", [PREVIEW_PLOTTED, PREVIEW_PRINTED, PREVIEW_MEASURED],
                         ids=["plotted", "printed", "metric-and-summary"])
def test_a_fixed_batch_fetched_for_a_preview_is_not_reported(source: str):
    assert findings("TL603", source) == []


def test_the_batch_fetched_afresh_for_the_training_step_is_reported():
    (line, message), = findings("TL603", TRAIN_BATCH_RECREATED)
    assert "next(iter(train_ds))" in TRAIN_BATCH_RECREATED.splitlines()[line - 1]
    assert "each step gets the first batch again" in message


@pytest.mark.parametrize("source", [A3C_SAME_CLASS, A3C_SAME_BUILDER_METHOD, A3C_SAME_BUILDER_FUNCTION,
                                    A3C_BUILDER_OTHER_SPELLING, A3C_CLONED],
                         ids=["class", "builder-method", "builder-function", "builder-other-spelling", "clone"])
def test_gradients_applied_to_a_structural_twin_are_not_a_mismatch(source: str):
    assert findings("TL006", source) == []


def test_the_generator_gradients_applied_to_the_discriminator_are_reported():
    (line, message), = findings("TL006", GAN_MISMATCH)
    assert message.startswith("Gradients of `generator.trainable_variables` are applied to "
                              "`discriminator.trainable_variables`")


def test_one_builder_with_other_arguments_is_no_twin():
    (line, message), = findings("TL006", SAME_BUILDER_OTHER_SHAPE)
    assert "`critic.trainable_variables` are applied to `actor.trainable_variables`" in message

from __future__ import annotations

from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl012_targets import bootstrapped_targets


class TargetWithoutStopGradient(Rule):
    """
    ## What it does
    Reports a regression loss whose target is bootstrapped from the network being trained, inside the
    tape, without `tf.stop_gradient`: `target = reward + gamma * max(q_net(next_states))` (a DQN
    target, a TD(0) target or TD error of a critic) regressed onto `q_net(states)` with a
    `MeanSquaredError`/`Huber` loss or `tf.square(target - prediction)`, while `tape.gradient` takes the
    gradient for `q_net.trainable_variables`.

    The evidence is structural: the target calls the model whose weights are the gradient's sources,
    on other inputs than the prediction, under the same tape, and combines that output with something
    that does not come from the model (a reward) or takes its max or a gather of it; no
    `tf.stop_gradient`, `.numpy()` or `argmax` cuts it.

    ## Why is this bad?
    Q-learning and TD learning treat the bootstrapped target as a constant (a "semi-gradient"). When
    the gradient also flows through the target, the optimizer moves the next state's value towards the
    current one as well: it minimises the squared Bellman residual instead, which with stochastic
    transitions converges to wrong values (and the TD loss looks lower while the values are worse).
    Measured on TF 2.21 on a six-state slippery chain (`tests/corpus/target_dqn_chain_no_stop_gradient.py`):
    Q(0, right) settles at 0.83 against the true 0.414 (largest error 0.55), while with
    `tf.stop_gradient` it is 0.42 (largest error 0.05).

    ## Example
    ```python
    with tf.GradientTape() as tape:
        next_q = q_net(next_states)
        targets = rewards + gamma * tf.reduce_max(next_q, axis=1) * (1.0 - dones)
        q_taken = tf.reduce_sum(q_net(states) * tf.one_hot(actions, n_actions), axis=1)
        loss = loss_fn(targets, q_taken)
    grads = tape.gradient(loss, q_net.trainable_variables)
    ```

    ## Use instead
    ```python
        next_q = tf.stop_gradient(q_net(next_states))
    ```
    or compute the targets before the tape, or with a separate target network.

    ## Known problems
    Residual-gradient methods differentiate through the target on purpose; silence them with
    `# noqa: TL012`. Targets built in helper functions that the tape calls, or from the model through
    an unpacked tuple, are not followed. A contrastive or consistency loss between two outputs of the
    same model is not reported: it has no reward or constant added to one side and no max or gather.

    ## Options
    None.

    ## Fix safety
    No fix: whether to stop the gradient at the target, at the model call, or to move the target out of
    the tape (or to a target network) is the author's choice, and residual gradients are a deliberate
    algorithm.

    ## References
    - https://github.com/openai/baselines/issues/105 (why `tf.stop_gradient` on the DQN target)
    - https://github.com/fg91/Deep-Q-Learning/issues/5 (a Double DQN target without `stop_gradient`)
    - https://github.com/philtabor/Deep-Q-Learning-Paper-To-Code/issues/16 (the target must not carry
      gradient: `torch.no_grad()`)
    - https://github.com/hill-a/stable-baselines/issues/564 (`tf.stop_gradient` on the SAC backups)
    - https://github.com/datawhalechina/easy-rl/pull/117 (a TD target without `detach()`, "not the
      semi-gradient method")
    """

    code = "TL012"
    name = "target-without-stop-gradient"
    message = ("the regression target `{target}` is computed from `{call}`, the model being trained, inside the "
               "tape and without `tf.stop_gradient`: the gradient also moves the target")
    severity = Severity.WARNING
    confidence = Confidence.INFERRED
    triggers = (("GradientTape", "square"), ("GradientTape", "Squared"), ("GradientTape", "Huber"),
                ("GradientTape", "mse"), ("GradientTape", "mean_squared"), ("GradientTape", "**"),
                ("GradientTape", "squared_difference"), ("GradientTape", "huber"), ("GradientTape", "abs"),
                ("GradientTape", "LogCosh"), ("GradientTape", "mae"), ("GradientTape", "mean_absolute"),
                ("GradientTape", "MeanAbsolute"), ("GradientTape", "log_cosh"), ("GradientTape", "logcosh"))
    probe = ""

    def check(self) -> None:
        seen: set[int] = set()
        for found in bootstrapped_targets(self.facts):
            node = found.regression.node
            if id(node) in seen:
                continue
            seen.add(id(node))
            self.report(node, target=_short(found.target), call=_short(found.model_call))

    VALID = [
        Valid(
            """
import tensorflow as tf

q_net = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.Huber()

@tf.function
def train_step(states, actions, rewards, next_states, dones):
    with tf.GradientTape() as tape:
        next_q = tf.stop_gradient(q_net(next_states))
        targets = rewards + 0.99 * tf.reduce_max(next_q, axis=1) * (1.0 - dones)
        q_taken = tf.reduce_sum(q_net(states) * tf.one_hot(actions, 2), axis=1)
        loss = loss_fn(targets, q_taken)
    grads = tape.gradient(loss, q_net.trainable_variables)
    optimizer.apply_gradients(zip(grads, q_net.trainable_variables))
""",
            "near miss: the bootstrapped values are stopped",
        ),
        Valid(
            """
import tensorflow as tf

q_net = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
target_net = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(states, actions, rewards, next_states, dones):
    with tf.GradientTape() as tape:
        targets = rewards + 0.99 * tf.reduce_max(target_net(next_states), axis=1) * (1.0 - dones)
        q_taken = tf.reduce_sum(q_net(states) * tf.one_hot(actions, 2), axis=1)
        loss = tf.reduce_mean(tf.square(targets - q_taken))
    grads = tape.gradient(loss, q_net.trainable_variables)
    optimizer.apply_gradients(zip(grads, q_net.trainable_variables))
""",
            "near miss: a separate target network, whose weights are not differentiated",
        ),
        Valid(
            """
import tensorflow as tf

q_net = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam(1e-3)

def train_step(states, actions, rewards, next_states, dones):
    targets = rewards + 0.99 * tf.reduce_max(q_net(next_states), axis=1) * (1.0 - dones)
    with tf.GradientTape() as tape:
        q_taken = tf.reduce_sum(q_net(states) * tf.one_hot(actions, 2), axis=1)
        loss = tf.reduce_mean(tf.square(targets - q_taken))
    grads = tape.gradient(loss, q_net.trainable_variables)
    optimizer.apply_gradients(zip(grads, q_net.trainable_variables))
""",
            "near miss: the targets are computed before the tape, so it does not record them",
        ),
        Valid(
            """
import tensorflow as tf

encoder = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(8)])
optimizer = tf.keras.optimizers.Adam(1e-3)

def train_step(left, right, same):
    with tf.GradientTape() as tape:
        distance = tf.reduce_sum(tf.square(encoder(left) - encoder(right)), axis=1)
        loss = tf.reduce_mean(same * distance + (1.0 - same) * tf.maximum(1.0 - distance, 0.0))
    grads = tape.gradient(loss, encoder.trainable_variables)
    optimizer.apply_gradients(zip(grads, encoder.trainable_variables))
""",
            "near miss: a siamese distance between two embeddings is no bootstrapped target",
        ),
        Valid(
            """
import tensorflow as tf

def make_critic():
    return tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])

critic = make_critic()
target_critic = make_critic()
optimizer = tf.keras.optimizers.Adam(1e-3)

def update(states, rewards, next_states):
    with tf.GradientTape() as tape:
        y = rewards + 0.99 * target_critic(next_states, training=True)
        loss = tf.reduce_mean(tf.square(y - critic(states, training=True)))
    grads = tape.gradient(loss, critic.trainable_variables)
    optimizer.apply_gradients(zip(grads, critic.trainable_variables))
""",
            "near miss: a target network built by the same factory is another object",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

q_net = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.Huber()

@tf.function
def train_step(states, actions, rewards, next_states, dones):
    with tf.GradientTape() as tape:
        next_q = q_net(next_states)
        targets = rewards + 0.99 * tf.reduce_max(next_q, axis=1) * (1.0 - dones)
        q_taken = tf.reduce_sum(q_net(states) * tf.one_hot(actions, 2), axis=1)
        loss = loss_fn(targets, q_taken)
    grads = tape.gradient(loss, q_net.trainable_variables)
    optimizer.apply_gradients(zip(grads, q_net.trainable_variables))
""",
            line=14,
            message_contains="the regression target `targets` is computed from `q_net(next_states)`",
        ),
        Invalid(
            """
import tensorflow as tf

critic = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="tanh"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(1e-2)

def update(states, rewards, next_states, dones, gamma=0.99):
    with tf.GradientTape() as tape:
        td_error = rewards + gamma * critic(next_states) * (1.0 - dones) - critic(states)
        loss = tf.reduce_mean(tf.square(td_error))
    grads = tape.gradient(loss, critic.trainable_variables)
    optimizer.apply_gradients(zip(grads, critic.trainable_variables))
    return loss
""",
            line=10,
        ),
        Invalid(
            """
import tensorflow as tf

class Agent:
    def __init__(self, n_actions):
        self.q = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(n_actions)])
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    def learn(self, s, a, r, s2, a2):
        with tf.GradientTape() as tape:
            target = r + 0.9 * tf.gather(self.q(s2), a2, batch_dims=1)
            q_sa = tf.gather(self.q(s), a, batch_dims=1)
            loss = tf.reduce_mean((target - q_sa) ** 2)
        grads = tape.gradient(loss, self.q.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.q.trainable_variables))
""",
            line=13,
            message_contains="`self.q(s2)`",
        ),
    ]


def _short(node) -> str:  # type: ignore[no-untyped-def]
    import libcst as cst

    text = " ".join(cst.Module([]).code_for_node(node).split())
    return text if len(text) <= 60 else text[:57] + "..."

from __future__ import annotations

from tapelint.analysis.constants import number
from tapelint.analysis.facts import arg_value
from tapelint.analysis.keras import learning_rate, trains_a_model, transfer_learning
from tapelint.analysis.keras import is_linear_model
from tapelint.analysis.optimizers import (
    Fate,
    optimizer_creations,
    optimizer_fate,
    steps_only_plain_variables,
    trained_models,
)
from tapelint.analysis.walk import contains
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Option, Rule, Valid

ADAM_LIKE = frozenset({"Adam", "AdamW", "Adamax", "Nadam", "RMSprop", "Lamb", "Lion"})
ACCUMULATING = frozenset({"Adagrad", "Ftrl"})


class LearningRateTooHigh(Rule):
    """
    ## What it does
    Reports an optimizer whose (initial) learning rate is above a limit for its family: adaptive
    optimizers (Adam, AdamW, Adamax, Nadam, RMSprop, Lamb, Lion), accumulating ones (Adagrad, Ftrl),
    plain SGD, and SGD with momentum. The value is read through constants, module-level names,
    arithmetic (`1e-2 * 5`) and learning-rate schedules (`initial_learning_rate`).

    ## Why is this bad?
    A first step that is too large does its damage at once: it pushes a softmax to exactly 0/1 in
    float32, where Keras' clipped cross-entropy passes no gradient, or it drives ReLU units negative
    for every input, after which they never recover. In `examples/seed1_frozen_vgg_head.py` (from a Stack
    Overflow question), `Adam(learning_rate=0.01)` on a fresh Dense(64, relu) head over 0..255 inputs:
    the share of dead units went 48% -> 72% -> 73% -> 73% -> 93% -> 98% in five steps (TF 2.21,
    measured), and with the 2-way softmax the gradient norm went 11, 0, 0, 0, ... At 0.001 the same
    loop learns.

    The defaults and the evidence behind them:
    - adaptive, 0.01 (reported above it): Adam's step is about `lr` per weight whatever the gradient's
      scale. Small networks on normalised inputs (the actor-critic tutorials of keras.io and
      tensorflow.org use Adam at 0.01) tolerate 0.01; above it, learning usually diverges. UMLAUT flags
      learning rates above 0.01 too.
    - adaptive on a pretrained or frozen backbone, 0.005 (so 0.01 is reported): a fresh head over
      hundreds of large, non-negative backbone features turns a step of 0.01 on every weight into a
      jump of its logits; that is `examples/seed1_frozen_vgg_head.py`. Keras' default is 0.001 and the
      Keras transfer-learning guide trains heads at its default and fine-tunes at 1e-5.
    - accumulating, 0.1: Adagrad divides by the accumulated squared gradients, so it tolerates 0.01-0.1
      (the original paper's range); above that it diverges like Adam.
    - SGD, 0.5: plain SGD at 0.1 is a standard setting for MNIST-sized models; a sum-reduced loss at
      0.5 is the "zero except the first step" report tensorflow/tensorflow#52175.
    - SGD with momentum, 0.2: momentum 0.9 multiplies the effective step by 10, so 0.1 with momentum 0.9
      (the ResNet setting) stays silent and 0.5 does not.

    ## Example
    ```python
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    ```

    ## Use instead
    ```python
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)  # 1e-4..1e-5 to fine-tune a backbone
    ```

    ## Known problems
    Only files that build or train a network (Keras layers or models, a `GradientTape`, `fit`) are
    checked, so optimizer unit tests that step a bare variable with `learning_rate=1.0` stay silent.
    An optimizer whose every update steps a bare `tf.Variable` of this file (the image in neural
    style transfer, a latent code being searched) is not judged: the limits are for network weights,
    and pixel-valued inputs are routinely stepped with learning rates of 1-100. Nor is an optimizer
    that provably trains only linear models (affine layers, no activation anywhere: a linear
    regression), where there is nothing to saturate or kill; nor one whose updates reach a network
    this file cannot read (built by a factory in another module, stepped through a custom
    `train_step` that ignores the optimizer given to `compile()`): the limits are a guess about the
    network, and without the network there is no finding. An optimizer that is never applied (the
    seed-1 loop) is still judged, since the rate matters once the missing update is added.
    A learning rate is only "too high" relative to the model, the loss scale and the batch; large-batch
    training with warm-up legitimately uses larger values (set the options). Learning rates computed
    at run time (command-line arguments, config files) are not read. Schedules are judged by their
    initial value.

    ## Options
    - `adaptive-max` (float, default 0.01): limit for Adam-like optimizers.
    - `transfer-adaptive-max` (float, default 0.005): limit for Adam-like optimizers in a file that
      builds a `keras.applications` backbone or freezes a model (a head over pretrained features).
    - `accumulating-max` (float, default 0.1): limit for Adagrad and Ftrl.
    - `sgd-max` (float, default 0.5): limit for SGD without momentum.
    - `sgd-momentum-max` (float, default 0.2): limit for SGD with momentum > 0.

    ```toml
    [tool.tapelint.learning-rate-too-high]
    adaptive-max = 0.02
    ```

    ## Fix safety
    No fix: the right learning rate depends on the model.

    ## References
    - https://keras.io/guides/transfer_learning/ (fine-tuning at 1e-5)
    - https://github.com/keras-team/keras/issues/7057 (a too-high learning rate knocks ReLU units out)
    - https://github.com/NLeSC/mcfly/issues/43 (models with lr > 0.03 did not learn)
    - https://github.com/tensorflow/tensorflow/issues/52175 ("gradients are zero except the first time")
    - `examples/seed1_frozen_vgg_head.py`, a reproduction of the Stack Overflow question "Gradients are
      zero except first iteration in tensorflow" (Adam at 0.01 on a frozen-backbone head)
    """

    code = "TL201"
    name = "learning-rate-too-high"
    message = "Learning rate {value:g} is high for {cls}{context} (limit {limit:g}): one step can saturate a softmax or kill ReLU units, after which gradients are zero"
    severity = Severity.WARNING
    confidence = Confidence.INFERRED
    triggers = ("optimizers",)
    options = {
        "adaptive-max": Option(0.01, float, "Limit for Adam, AdamW, Adamax, Nadam, RMSprop, Lamb, Lion."),
        "transfer-adaptive-max": Option(0.005, float, "Limit for Adam-like optimizers training a head over a pretrained or frozen backbone."),
        "accumulating-max": Option(0.1, float, "Limit for Adagrad and Ftrl."),
        "sgd-max": Option(0.5, float, "Limit for SGD without momentum."),
        "sgd-momentum-max": Option(0.2, float, "Limit for SGD with momentum."),
    }
    probe = "Confirmed when update ratios |dw|/|w| are far above 1e-2 or dead ReLU units appear after the first update (TL808, TL804)."

    def check(self) -> None:
        if not trains_a_model(self.facts):
            return  # e.g. optimizer unit tests stepping a bare variable
        for creation in optimizer_creations(self.facts):
            lr = learning_rate(self.facts, creation.site)
            if lr.value is None:
                continue
            limit = self._limit(creation)
            if limit is None or lr.value <= limit:
                continue
            if steps_only_plain_variables(self.facts, creation):
                continue  # it optimises an input (an image, a latent), not a network's weights
            models = trained_models(self.facts, creation)
            if models is None and optimizer_fate(self.facts, creation) not in (Fate.UNUSED, Fate.NEVER_APPLIED):
                # It steps something we cannot read (a factory, another module, a custom train_step):
                # the limit is a guess about the network, so without the network there is no finding.
                continue
            if models and all(is_linear_model(self.facts, m.node, m.cls if m.cls in self.facts.classes else None)
                              for m in models if m.node is not None) and all(m.node is not None for m in models):
                continue  # a linear model: nothing to saturate or kill, the claim would be wrong
            node = lr.node if lr.node is not None and contains(creation.node, lr.node) else creation.node
            cls = creation.cls
            if cls == "SGD" and self._momentum(creation) > 0:
                cls = "SGD with momentum"
            context = " on a head over a pretrained backbone" if self._transfer(creation) else ""
            self.report(node, value=lr.value, cls=cls, limit=limit, context=context)

    def _transfer(self, creation) -> bool:  # type: ignore[no-untyped-def]
        return creation.cls in ADAM_LIKE and transfer_learning(self.facts)

    def _momentum(self, creation) -> float:  # type: ignore[no-untyped-def]
        value = arg_value(creation.node, 1, "momentum")
        momentum = number(self.facts, value, creation.site.scope, creation.site.order)
        return momentum or 0.0

    def _limit(self, creation) -> float | None:  # type: ignore[no-untyped-def]
        if creation.cls in ADAM_LIKE:
            if transfer_learning(self.facts):
                return float(self.option("transfer-adaptive-max"))
            return float(self.option("adaptive-max"))
        if creation.cls in ACCUMULATING:
            return float(self.option("accumulating-max"))
        if creation.cls == "SGD":
            if self._momentum(creation) > 0:
                return float(self.option("sgd-momentum-max"))
            return float(self.option("sgd-max"))
        return None

    VALID = [
        Valid("import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=1e-3)\n", "Keras' default"),
        Valid("import tensorflow as tf\nopt = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=True)\n",
              "near miss: the standard ResNet setting"),
        Valid("import tensorflow as tf\nopt = tf.keras.optimizers.Adagrad(0.05)\n", "Adagrad tolerates more"),
        Valid("""
import tensorflow as tf

num_actions = 2
inputs = tf.keras.Input(shape=(4,))
common = tf.keras.layers.Dense(128, activation="relu")(inputs)
action = tf.keras.layers.Dense(num_actions, activation="softmax")(common)
critic = tf.keras.layers.Dense(1)(common)
model = tf.keras.Model(inputs=inputs, outputs=[action, critic])
optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
""", "near miss: an actor-critic policy network at Adam 0.01, as in the RL tutorials"),
        Valid("import tensorflow as tf\nopt = tf.keras.optimizers.Adam(0.05)\n"
              "model = tf.keras.Sequential([tf.keras.layers.Dense(2)])\n", "a project that raised the limit",
              config={"learning-rate-too-high": {"adaptive-max": 0.1}}),
        Valid("import torch\nopt = torch.optim.Adam(params, lr=0.1)\n", "not Keras"),
        Valid("""
import tensorflow as tf

class Net(tf.keras.Model):
    \"\"\"A simple linear model.\"\"\"

    def __init__(self):
        super().__init__()
        self.l1 = tf.keras.layers.Dense(5)

    def call(self, x):
        return self.l1(x)

def train_step(net, example, optimizer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.abs(net(example["x"]) - example["y"]))
    variables = net.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss

net = Net()
opt = tf.keras.optimizers.Adam(0.1)
for example in dataset:
    train_step(net, example, opt)
""", "near miss: the checkpoint guide's linear model; nothing can saturate or die"),
        Valid("""
import keras
import numpy as np
var = keras.Variable(np.ones(3))
optimizer = keras.optimizers.Adam(learning_rate=0.5)
optimizer.apply_gradients(zip([np.full(3, 0.1)], [var]))
""", "near miss: an optimizer unit test stepping a bare variable"),
        Valid("""
import tensorflow as tf
for lr in [1e-1, 1e-2, 1e-3]:
    opt = tf.keras.optimizers.Adam(learning_rate=lr)
""", "a sweep: the value is not one constant"),
        Valid("""
import tensorflow as tf

extractor = tf.keras.applications.VGG16(include_top=False, weights=None)
picture = tf.Variable(tf.random.uniform((1, 64, 64, 3), 0.0, 255.0))
stepper = tf.keras.optimizers.SGD(learning_rate=50.0)
for _ in range(100):
    with tf.GradientTape() as tape:
        score = -tf.reduce_mean(extractor(picture, training=False))
    stepper.apply_gradients([(tape.gradient(score, picture), picture)])
""", "near miss: gradient descent on an input image, not on weights"),
    ]
    INVALID = [
        Invalid("import tensorflow as tf\noptimizer = tf.keras.optimizers.Adam(learning_rate=0.01)\n"
                "base = tf.keras.applications.VGG16(include_top=False, weights=None)\n"
                "base.trainable = False\n"
                "model = tf.keras.Sequential([base, tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(2)])\n",
                line=2, column=52, message_contains="0.01 is high for Adam on a head over a pretrained backbone"),
        Invalid("import tensorflow as tf\noptimizer = tf.keras.optimizers.Adam(learning_rate=0.03)\n"
                "model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation='relu'), tf.keras.layers.Dense(2)])\n",
                message_contains="0.03 is high for Adam (limit 0.01)"),
        Invalid("""
from tensorflow import keras

BASE_LR = 1e-2
schedule = keras.optimizers.schedules.ExponentialDecay(
    initial_learning_rate=BASE_LR * 5, decay_steps=1000, decay_rate=0.9)
optimizer = keras.optimizers.RMSprop(learning_rate=schedule)
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
model.compile(optimizer=optimizer, loss="mse")
""", message_contains="0.05 is high for RMSprop"),
        Invalid("import keras\nopt = keras.optimizers.SGD(0.5, momentum=0.9)\nmodel = keras.models.load_model('m.keras')\n",
                message_contains="SGD with momentum"),
    ]


from __future__ import annotations

import libcst as cst

from tapelint.analysis.constants import boolean, number
from tapelint.analysis.facts import arg_value, keyword_arg
from tapelint.analysis.labels import Encoding, label_reader
from tapelint.analysis.names import dotted
from tapelint.analysis.purpose import only_in_unit_tests
from tapelint.analysis.evaluations import Evaluation, evaluations
from tapelint.analysis.predictions import prediction_source
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid

# What swapping `(y_true, y_pred)` does to each Keras loss and metric, read from its formula in the Keras 3
# source (keras/src/losses/losses.py, keras/src/metrics/) and the same functions of tf_keras. Names are the
# last part of the resolved `keras.losses.*`/`keras.metrics.*` callee, never the user's own names.
# The same value either way:
SYMMETRIC = frozenset(
    {
        # mean(square(y_true - y_pred)), mean(abs(...)), their root, and log(cosh(y_pred - y_true)), an even function
        "MeanSquaredError", "mean_squared_error", "mse", "MSE", "MeanAbsoluteError", "mean_absolute_error", "mae",
        "MAE", "RootMeanSquaredError", "LogCosh", "log_cosh", "logcosh", "LogCoshError",
        # square(log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)): both sides clipped alike
        "MeanSquaredLogarithmicError", "mean_squared_logarithmic_error", "msle", "MSLE",
        # a function of abs(y_pred - y_true) only
        "Huber", "huber",
        # -sum(l2_norm(y_true) * l2_norm(y_pred))
        "CosineSimilarity", "cosine_similarity",
        # 1 - 2 * sum(y_true * y_pred) / (sum(y_true) + sum(y_pred))
        "Dice", "dice",
        # equal(y_true, y_pred); equal(argmax(y_true), argmax(y_pred))
        "Accuracy", "accuracy", "CategoricalAccuracy", "categorical_accuracy",
        # covariance over the product of the spreads, and Lin's concordance: symmetric in the two series
        "PearsonCorrelation", "pearson_correlation", "ConcordanceCorrelation", "concordance_correlation",
    }
)
# Symmetric only under a condition on the object's or the call's own arguments:
# - Tversky weighs false positives by `alpha` and false negatives by `beta`; swapping trades one for the
#   other, so it is symmetric when alpha == beta (the defaults, 0.5 and 0.5: Dice);
# - IoU metrics count a confusion matrix, which the swap transposes (each class's IoU is unchanged), when
#   both sides are encoded alike (`sparse_y_true == sparse_y_pred`) and no `ignore_class` drops labels;
# - Hinge and SquaredHinge compute max(0, 1 - y_true * y_pred), symmetric in the product, but Keras first
#   turns 0/1 labels into -1/1, in `y_true` only: with 0/1 labels passed second the loss is wrong.
CONDITIONAL = {
    "Tversky": "alpha-beta", "tversky": "alpha-beta",
    "IoU": "iou", "MeanIoU": "iou", "OneHotIoU": "iou", "OneHotMeanIoU": "iou",
    "Hinge": "hinge", "hinge": "hinge", "SquaredHinge": "hinge", "squared_hinge": "hinge",
}
# Not a `(y_true, y_pred)` pair: `Mean()(values, sample_weight)`, a wrapper of a function not read here,
# base classes.
NOT_A_PAIR = frozenset({"Mean", "Sum", "MeanTensor", "MeanMetricWrapper", "Loss", "Metric", "Reduction",
                        "LossFunctionWrapper"})
# How each IoU class encodes its two sides by default: (sparse_y_true, sparse_y_pred, may the caller set them).
_IOU_DEFAULTS = {"IoU": (True, True), "MeanIoU": (True, True), "OneHotIoU": (False, False),
                 "OneHotMeanIoU": (False, False)}


class LossArgumentsSwapped(Rule):
    """
    ## What it does
    Reports a Keras loss or metric (`loss_fn(y_true, y_pred)`, `metric.update_state(y_true, y_pred)`,
    `keras.losses.categorical_crossentropy(...)`) whose *first* argument is the model's output and whose
    second is not, and `tf.nn.*_cross_entropy_with_logits(labels=..., logits=...)` with the model's
    output passed as `labels=`. The model's output is followed through assignments, helper functions,
    `self(...)` in a `train_step` and subclassed models; a layer written by hand (`tf.matmul(x, W) + b`,
    `x @ W` with `W` a `tf.Variable`) counts as a model. When the first value cannot be followed to a
    model, nothing is reported: a name such as `predictions` or `labels` is not evidence.

    ## Why is this bad?
    Keras losses take `(y_true, y_pred)`. Swapped, a cross-entropy takes the log of the (clipped) one-hot
    labels and weighs it by the predictions: the value is finite, the gradient is meaningless, and
    training fails quietly on anything harder than a toy. The official TensorFlow tutorials shipped
    this bug more than once. Symmetric losses and metrics give the same value either way and are not
    reported (see Known problems for the list).

    ## Example
    ```python
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(predictions, labels)
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    ```

    ## Known problems
    Knowledge distillation with precomputed teacher outputs read from a dataset can legitimately put a
    student's prediction first in a KL divergence; suppress the line then. Calls where both arguments
    come from models (distillation with a live teacher, consistency losses) are never reported.

    Losses and metrics whose value does not change when the arguments trade places are not reported,
    each checked against its formula in the Keras source: `MeanSquaredError`, `MeanAbsoluteError`,
    `RootMeanSquaredError`, `MeanSquaredLogarithmicError` (both sides are clipped and logged alike),
    `Huber` (a function of `abs(y_pred - y_true)`), `LogCosh`/`LogCoshError` (an even function),
    `CosineSimilarity`, `Dice`, `Accuracy`, `CategoricalAccuracy` (`argmax` of both), `PearsonCorrelation`,
    `ConcordanceCorrelation`, and their function forms. Some are symmetric only under a condition, read
    from the object's or the call's own arguments (silent when they cannot be read): `Tversky` when
    `alpha == beta` (the default), the IoU metrics (`IoU`, `MeanIoU`, `OneHotIoU`, `OneHotMeanIoU`) when
    both sides are encoded alike and no `ignore_class` drops labels. `Hinge` and `SquaredHinge` compute
    `max(0, 1 - y_true * y_pred)`, symmetric in the product, but Keras first turns 0/1 labels into -1/1
    in `y_true` only: a swap is reported only when the labels passed second are known to be 0/1 (one-hot),
    and not for -1/1 labels or labels of unknown encoding. Still reported: the cross-entropies (binary,
    categorical, sparse, focal), `KLDivergence`, `Poisson`, `MeanAbsolutePercentageError` (divides by
    `y_true`), `CategoricalHinge`, `BinaryAccuracy`, `SparseCategoricalAccuracy`, the top-k accuracies,
    `BinaryIoU`, `F1Score`/`FBetaScore`, `R2Score`, `Precision`, `Recall`, `AUC` (a threshold, `argmax` or
    normalisation applies to one side only). `Mean`, `Sum` and `MeanMetricWrapper` take no
    `(y_true, y_pred)` pair and are never judged. The squared and absolute errors convert `y_true` to the
    dtype of `y_pred`: swapped with integer labels, the predictions would be truncated; that case is not
    told apart. Calls in code that runs only in unit tests (methods of a `TestCase`, and functions only
    they call) are not reported: the swap changes how well a model learns, not whether the test runs.

    ## Options
    None.

    ## Fix safety
    The fix swaps the two positional arguments. It is unsafe: the loss value changes (that is the
    point), and code that compares the loss against recorded numbers will see different ones.

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/Loss#__call__ (`__call__(y_true, y_pred)`)
    - https://github.com/tensorflow/tensorflow/issues/38067 (the arguments swapped in an official tutorial)
    - https://github.com/tensorflow/docs/pull/1528
    - https://github.com/cleverhans-lab/cleverhans/issues/25 ("will make the training fail ... on cifar-10")
    - https://github.com/bolunwang/backdoor/issues/11 (`categorical_crossentropy` with swapped arguments: "It is actually not the same")
    """

    code = "TL103"
    name = "loss-arguments-swapped"
    message = "`{callee}` takes `(y_true, y_pred)` but gets {source} first and `{other}` second: the arguments are swapped"
    severity = Severity.ERROR
    fixable = True
    triggers = ("losses", "metrics", "Crossentropy", "crossentropy", "cross_entropy", "Divergence", "Hinge",
                "Accuracy")
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for ev in evaluations(facts):
            if ev.name in NOT_A_PAIR or ev.name in SYMMETRIC or ev.y_true is None or ev.y_pred is None:
                continue  # the same value either way, or no `(y_true, y_pred)` pair
            if ev.custom:
                continue  # a `Loss` subclass of this module: whether the swap changes its value is unknown
            first = prediction_source(facts, ev.y_true, ev.site.scope, ev.site.order)
            if first is None:
                continue
            second = prediction_source(facts, ev.y_pred, ev.site.scope, ev.site.order)
            confidence = Confidence.HIGH
            if second is not None:
                continue  # unknown, or both are predictions: distillation, consistency losses
            symmetric = self._symmetric(ev)
            if symmetric is not False:
                continue  # the same value either way (or that cannot be told)
            if only_in_unit_tests(facts, ev.site.scope):
                continue  # a test that fits two samples: the swap changes how well it learns, not whether it runs
            callee = dotted(ev.site.node.func) or ev.name
            other = cst.Module([]).code_for_node(ev.y_pred)
            if ev.role == "op":
                self.report(
                    ev.y_true_arg or ev.site.node,
                    f"`{callee}` gets {first} as `labels=` and `{other}` as `logits=`: the arguments are swapped",
                    confidence=confidence,
                    fix=self._fix(ev),
                )
                continue
            message = self.message.format(callee=callee, source=first, other=other)
            if CONDITIONAL.get(ev.name) == "hinge":
                message += ("; Keras turns 0/1 labels into -1/1 only in its first argument, so the 0/1 labels "
                            "passed second are not converted")
            self.report(ev.site.node, message, confidence=confidence, fix=self._fix(ev))

    def _symmetric(self, ev: Evaluation) -> bool | None:
        """Does swapping the two arguments leave the value unchanged? None when it depends on arguments that
        cannot be read."""
        if ev.role == "op":
            return False
        if ev.name in SYMMETRIC:
            return True
        condition = CONDITIONAL.get(ev.name)
        if condition is None:
            return False
        facts = self.facts
        if condition == "hinge":
            # The labels are what the call passes second here; known 0/1 labels make the swap matter.
            labels = label_reader(facts).encoding(ev.y_pred, ev.site.scope, ev.site.order)
            return False if labels.encoding is Encoding.ONE_HOT else None
        settings = ev.construction if ev.construction is not None else ev.site.node
        site = facts.call_site(settings) if isinstance(settings, cst.Call) else None
        scope, order = (site.scope, site.order) if site is not None else (ev.site.scope, ev.site.order)
        if condition == "alpha-beta":
            # `Tversky(alpha, beta)`, or `tversky(y_true, y_pred, alpha, beta)`
            first = 0 if ev.construction is not None else 2
            alpha = self._setting(settings, first, "alpha", 0.5, scope, order)
            beta = self._setting(settings, first + 1, "beta", 0.5, scope, order)
            if alpha is None or beta is None:
                return None
            return alpha == beta
        # IoU
        if settings is None or any(a.keyword is None for a in settings.args[2:]) or any(a.star for a in settings.args):
            return None
        sparse_true, sparse_pred = _IOU_DEFAULTS.get(ev.name, (True, True))
        ignore = keyword_arg(settings, "ignore_class")
        if ignore is not None and not (isinstance(ignore.value, cst.Name) and ignore.value.value == "None"):
            return False
        encoded = {"sparse_y_true": sparse_true, "sparse_y_pred": sparse_pred}
        for keyword in encoded:
            given = keyword_arg(settings, keyword)
            if given is not None:
                value = boolean(given.value)
                if value is None:
                    return None
                encoded[keyword] = value
        return encoded["sparse_y_true"] == encoded["sparse_y_pred"]

    def _setting(self, call: cst.Call | None, position: int, keyword: str, default: float, scope,  # type: ignore[no-untyped-def]
                 order: int) -> float | None:
        if call is None or any(a.star for a in call.args):
            return None
        given = arg_value(call, position, keyword)
        if given is None:
            return default
        return number(self.facts, given, scope, order)

    @staticmethod
    def _fix(ev: Evaluation) -> PendingFix | None:
        a, b = ev.y_true_arg, ev.y_pred_arg
        if a is None or b is None or ev.y_true is None or ev.y_pred is None:
            return None
        if ev.role != "op" and (a.keyword is not None or b.keyword is not None):
            return None
        return PendingFix("Swap the arguments to `(y_true, y_pred)`", False,
                          [(ev.y_true, ev.y_pred), (ev.y_pred, ev.y_true)])

    VALID = [
        Valid(
            """
from tensorflow import keras

bce = keras.losses.BinaryCrossentropy()

def evaluate(predictions, labels):
    return bce(predictions, labels)
""",
            "near miss: names are not evidence; nothing calls `evaluate`, so its arguments could hold anything",
        ),
        Valid(
            """
import tensorflow as tf

w = tf.Variable(tf.zeros((8, 4)))
b = tf.Variable(tf.zeros((1, 4)))
loss_fn = tf.keras.losses.CategoricalCrossentropy()
optimizer = tf.keras.optimizers.SGD(0.1)

def train(features, label):
    with tf.GradientTape() as tape:
        prediction = tf.nn.softmax(tf.matmul(features, w) + b)
        loss = loss_fn(label, prediction)
    grads = tape.gradient(loss, [w, b])
    optimizer.apply_gradients(zip(grads, [w, b]))
    return loss
""",
            "near miss: a layer written by hand, its output passed second",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    train_accuracy(labels, predictions)
    return gradients
""",
            "the TF quickstart loop: labels first",
        ),
        Valid(
            """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(784, activation="tanh")])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)

def generator_loss(fake_output):
    return cross_entropy(tf.ones_like(fake_output), fake_output)

with tf.GradientTape() as tape:
    fake_output = discriminator(generator(tf.random.normal([8, 100]), training=True), training=True)
    loss = generator_loss(fake_output)
""",
            "near miss: the GAN target is built from the prediction with `tf.ones_like`",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
mse = tf.keras.losses.MeanSquaredError()
with tf.GradientTape() as tape:
    y_pred = model(tf.zeros((4, 3)), training=True)
    loss = mse(y_pred, tf.zeros((4, 1)))
""",
            "near miss: mean squared error is symmetric",
        ),
        Valid(
            """
import tensorflow as tf

teacher = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
student = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
kld = tf.keras.losses.KLDivergence()
with tf.GradientTape() as tape:
    x = tf.zeros((4, 3))
    loss = kld(teacher(x, training=False), student(x, training=True))
""",
            "distillation: both arguments are model outputs",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1, activation="tanh")])
optimizer = tf.keras.optimizers.SGD(0.01)
hinge = tf.keras.losses.Hinge()
dice = tf.keras.losses.Dice()
x = tf.random.normal((256, 8))
y = tf.where(tf.reduce_sum(x, axis=1, keepdims=True) > 0, 1.0, -1.0)
with tf.GradientTape() as tape:
    scores = model(x, training=True)
    loss = hinge(scores, y) + tf.keras.losses.log_cosh(scores, y) + dice(scores, y)
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: hinge with -1/1 labels, log-cosh and Dice give the same value either way",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_object(logits, labels)
    return tape.gradient(loss, model.trainable_variables)
""",
            line=10, column=16,
            message_contains="`model(...)` first",
            expected_fix="""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_object(labels, logits)
    return tape.gradient(loss, model.trainable_variables)
""",
        ),
        Invalid(
            """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.head = tf.keras.layers.Dense(5)
        self.acc = tf.keras.metrics.CategoricalAccuracy()

    def call(self, x):
        return self.head(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_pred, logits=y))
        self.acc.update_state(y, y_pred)
        return {"loss": loss}
""",
            message_contains="as `labels=`",
        ),
        Invalid(
            """
import tensorflow as tf

class TransferHead(tf.Module):
    def __init__(self, features, classes):
        self.w = tf.Variable(tf.zeros((features, classes)))
        self.b = tf.Variable(tf.zeros((1, classes)))
        self.loss_fn = tf.keras.losses.CategoricalCrossentropy()
        self.optimizer = tf.keras.optimizers.Adam(0.001)

    @tf.function
    def train(self, features, label):
        with tf.GradientTape() as tape:
            prediction = tf.nn.softmax(tf.matmul(features, self.w) + self.b)
            loss = self.loss_fn(prediction, label)
        grads = tape.gradient(loss, [self.w, self.b])
        self.optimizer.apply_gradients(zip(grads, [self.w, self.b]))
        return loss
""",
            line=15,
            message_contains="a layer written by hand",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.SGD(0.01)
squared_hinge = tf.keras.losses.SquaredHinge()
x = tf.random.normal((256, 8))
labels = tf.one_hot(tf.argmax(x[:, :4], axis=1), 4)
with tf.GradientTape() as tape:
    loss = squared_hinge(model(x, training=True), labels)
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=10,
            message_contains="turns 0/1 labels into -1/1 only in its first argument",
        ),
    ]

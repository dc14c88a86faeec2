from __future__ import annotations

import libcst as cst

from tapelint.analysis.constants import boolean
from tapelint.analysis.dataflow import render
from tapelint.analysis.facts import CallSite, Facts, keyword_arg
from tapelint.analysis.gradients import gradient_calls, under_tape
from tapelint.analysis.models import layer_constructions, model_reader
from tapelint.analysis.modes import call_defaults_to_training, is_mode_layer, mode_layers
from tapelint.analysis.names import dotted
from tapelint.analysis.training import parts
from tapelint.analysis.values import Kind, Value, flatten, values_of
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid


def _trained_models(facts: Facts, site: CallSite) -> frozenset[Value] | None:
    """The models whose weights the tape(s) around the call differentiate, by the value model; an
    empty set when one of them differentiates weights of a model we cannot read; None when none
    trains (a saliency tape differentiates its input and runs the model in inference mode on purpose)."""
    tapes = site.tapes or tuple(t for c in facts.call_sites_of_scope(site.scope) for t in c.tapes)
    owners: set[Value] = set()
    trains = False
    for grad in gradient_calls(facts):
        if not any(grad.tape is t for t in tapes):
            continue
        weights = [v for v in flatten(values_of(facts, grad.sources, grad.site.scope, grad.site.order))
                   if v.kind is Kind.WEIGHTS]
        if not weights:
            continue  # not a model's weights: an input, a latent, a saliency map
        trains = True
        for weight in weights:
            found = {o for o in flatten(weight.owner) if o.kind in (Kind.MODEL, Kind.LAYER)}
            if not found:
                return frozenset()
            owners |= found
    if trains:
        return frozenset(owners)
    scopes = {id(t.scope) for t in tapes}
    if any(c.method == "apply_gradients" and id(c.scope) in scopes for c in facts.calls):
        return frozenset()
    return None


def _trains_callee(facts: Facts, site: CallSite, owners: frozenset[Value]) -> bool:
    """Is the called model one the tape trains, part of one, or built from one?"""
    called = {v for v in values_of(facts, site.node.func, site.scope, site.order)
              if v.kind in (Kind.MODEL, Kind.LAYER)}
    for owner in owners:
        for model in called:
            if model == owner:
                return True
            inside = parts(facts, owner)
            if inside is None or model in inside:
                return True
            around = parts(facts, model)
            if around is None or owner in around:
                return True
    return False


def _own_mode_flag_given(facts: Facts, site: CallSite) -> bool:
    """Does the call pass an argument for a parameter of the model's own `call` that `call` forwards
    to its layers as `training=<parameter>` (`def call(self, x, is_training=False)`)?"""
    info = model_reader(facts).model_of(site.node.func, site.scope, site.order)
    if info is None or info.kind != "subclass" or info.class_name is None:
        return False
    cls = facts.classes.get(info.class_name)
    method = cls.methods.get("call") if cls is not None else None
    if method is None:
        return False
    forwarded = set()
    for inner in facts.calls:
        if inner.scope is method or method.contains(inner.scope):
            flag = keyword_arg(inner.node, "training")
            if flag is not None and isinstance(flag.value, cst.Name) and flag.value.value in method.params:
                forwarded.add(flag.value.value)
    if not forwarded:
        return False
    params = [p for p in method.params if p not in ("self", "cls")]
    positional = [a for a in site.node.args if a.keyword is None]
    for arg in site.node.args:
        if arg.keyword is not None and arg.keyword.value in forwarded:
            return True
    return any(params.index(p) < len(positional) for p in forwarded if p in params)


def _mode_layer_places(facts: Facts, site: CallSite) -> list[tuple[cst.CSTNode, str]]:
    """Where the called model is built and its first Dropout/BatchNorm-like layer, when this module writes
    them (a layer of a nested model or of a functional graph is not looked for)."""
    func = site.node.func
    layers = layer_constructions(facts, func, site.scope, site.order) if dotted(func) != "self" else None
    if layers:
        found: list[tuple[cst.CSTNode, str]] = [(call, f"the `{cls}` layer") for cls, call in layers
                                                if is_mode_layer(cls)]
        return found[:1]
    model = model_reader(facts).model_of(func, site.scope, site.order)
    if model is None:
        return []
    own = [(node, f"its `{cls}` layer") for cls, node in model.layers if is_mode_layer(cls)][:1]
    return [(model.construction, "the model built"), *own]


def _frozen(facts: Facts, name: str) -> bool:
    """`name.trainable = False` somewhere: a frozen backbone wants `training=False` (TL301's business)."""
    return any(boolean(b.value) is False for b in facts.bindings_of(f"{name}.trainable"))


class TrainingFlagMissing(Rule):
    """
    ## What it does
    Reports a call of a model or layer inside a `GradientTape` block (or in a helper only called inside
    one) without a `training=` argument, when that model visibly contains Dropout or
    BatchNormalization: in a Sequential list, a functional graph, the layers of a subclassed model, a
    nested model, or a `keras.applications` family built with BatchNorm (ResNet, EfficientNet,
    MobileNet, DenseNet, Inception, ...).

    ## Why is this bad?
    `fit()` calls the model with `training=True`; a hand-written loop must do it itself. Without the
    flag, Dropout does nothing and BatchNormalization normalises with its moving statistics and never
    updates them. The model trains in inference mode: it overfits without its regularisation, its
    BatchNorm statistics stay at their initial values, and evaluation disagrees with training. This is
    the usual reason why "fit learns but my loop does not".

    ## Example
    ```python
    model = tf.keras.Sequential([layers.Dense(64, activation="relu"), layers.Dropout(0.5), layers.Dense(10)])
    with tf.GradientTape() as tape:
        logits = model(x)
        loss = loss_fn(y, logits)
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    ```

    ## Known problems
    Models loaded from disk, or built in another module, cannot be read, so calls of them are never
    reported. Only tapes that train are checked (their gradients are taken with respect to weights,
    or an optimizer applies them): a saliency or attribution tape runs the model in inference mode on
    purpose. A model whose weights the tape does not differentiate (a distillation teacher, a target
    network) is not reported either. A model whose `trainable` is set to False is left to TL301 (a frozen BatchNorm backbone
    wants `training=False`). The BatchNormalization of a frozen part (`backbone.trainable = False`, the
    transfer-learning guide's way) runs in inference mode whatever the flag says (TF 2.0 and later,
    Keras 3), and so does a part called with `training=False`: they are not counted, and a model whose
    only such layers are there is not reported (its Dropout, if it has one, still is). A `training` argument passed through from a parameter is trusted, and so
    is a subclass's own mode parameter (`def call(self, x, is_training=False)` that hands
    `training=is_training` to its layers) when the call passes it. A model handed to a trainer class
    through its constructor (`Trainer(get_encoder())`, then `self.encoder(x)`) is followed.

    ## Options
    None.

    ## Fix safety
    The fix adds `training=True`. It is unsafe: it changes what the step computes (that is the point),
    and code inside the tape that is meant as evaluation should get `training=False` instead.

    ## References
    - https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch
    - https://keras.io/getting_started/faq/ (the `training` argument in `call()`)
    - https://keras.io/guides/transfer_learning/ (a frozen BatchNormalization layer runs in inference mode;
      call a frozen base model with `training=False`)
    - https://github.com/tensorflow/tensorflow/issues/31184 (custom loop worse than fit; fixed by `training=True`)
    - https://github.com/tensorflow/tensorflow/issues/28028
    - `examples/seed2_vgg_cifar_loop.py`, a reproduction of the Stack Overflow question "Tensorflow 2
      Gradient Tape not working as expected" (the loop calls `model(x)` without `training=True`)
    - https://github.com/keras-team/keras/issues/15306 (a CIFAR-10 GradientTape loop that does not learn
      while `fit` does)
    """

    code = "TL302"
    name = "training-flag-missing"
    message = "`{call}` runs inside the tape without `training=True`, so it runs its {layers} in inference mode: {effect}"
    severity = Severity.WARNING
    triggers = ("GradientTape",)
    fixable = True
    probe = "Confirmed by TL812 (the model with Dropout or BatchNorm ran inside the tape without `training=True`); refuted when the called model has neither."

    def check(self) -> None:
        facts = self.facts
        if not facts.tapes:
            return
        for site in facts.calls:
            call = site.node
            if keyword_arg(call, "training") is not None or any(a.star for a in call.args):
                continue
            if sum(1 for a in call.args if a.keyword is None) > 1:
                continue  # `model(x, True)`: Keras 2 took the second positional argument as `training`
            name = site.func  # (the callee, spelled out)
            if name is None or site.qualified is not None or not under_tape(facts, site, every_caller=True, levels=1):
                continue
            cls = facts.classes.get(site.scope.class_name or "")
            if name in facts.functions or (name.startswith("self.") and cls is not None and name[5:] in cls.methods):
                continue  # a helper or method of this file, not a model
            if _frozen(facts, name):
                continue
            if _own_mode_flag_given(facts, site):
                continue  # `net(x, is_training=True)`: its `call` forwards that flag as `training=`
            if call_defaults_to_training(facts, site):
                continue  # `def call(self, x, training=True)`: training mode is its default
            owners = _trained_models(facts, site)
            if owners is None or (owners and not _trains_callee(facts, site, owners)):
                continue  # not a training tape, or a model it does not train (a teacher, a target net)
            layers = mode_layers(facts, call.func, site.scope, site.order, follows_flag=True)
            if not layers:
                continue
            effect = []
            if any("Dropout" in cls or "Noise" in cls for cls in layers):
                effect.append("dropout is off")
            if any("BatchNormalization" in cls for cls in layers):
                effect.append("BatchNorm uses its moving statistics and never updates them")
            self.report(call, call=render(call), layers=" and ".join(f"`{c}`" if " " not in c else c for c in layers),
                        effect=" and ".join(effect), fix=self._fix(call), related=_mode_layer_places(facts, site))

    @staticmethod
    def _fix(call: cst.Call) -> PendingFix:
        args = list(call.args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        args.append(cst.Arg(value=cst.Name("True"), keyword=cst.Name("training"),
                            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                  whitespace_after=cst.SimpleWhitespace(""))))
        return PendingFix("Call it with `training=True`", False, [(call, call.with_changes(args=args))])

    VALID = [
        Valid(
            """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.drop = tf.keras.layers.Dropout(0.3)
        self.out = tf.keras.layers.Dense(10)

    def call(self, x, training=True):
        return self.out(self.drop(self.hidden(x), training=training))

model = Classifier()
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: the subclass's `call` defaults to `training=True`, so `model(x)` trains",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dropout(0.5),
                             tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "the mode passed positionally (Keras 2 style; TL502 says what Keras 3 makes of it)",
        ),
        Valid(
            """
import tensorflow as tf

class Tagger(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = tf.keras.layers.Dense(32, activation="relu")
        self.noise = tf.keras.layers.Dropout(0.3)
        self.head = tf.keras.layers.Dense(5)

    def call(self, tokens, fitting=False):
        return self.head(self.noise(self.embed(tokens), training=fitting))

tagger = Tagger()
opt = tf.keras.optimizers.Adam()

def fit_batch(tokens, tags):
    with tf.GradientTape() as tape:
        scores = tagger(tokens, fitting=True)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tags, logits=scores))
    opt.apply_gradients(zip(tape.gradient(loss, tagger.trainable_variables), tagger.trainable_variables))
""",
            "near miss: the subclass's own mode parameter, forwarded to Dropout as `training=`",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dropout(0.5),
    tf.keras.layers.Dense(10),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()

def train_step(x, y, training=True):
    with tf.GradientTape() as tape:
        logits = model(x, training=training)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

def test_step(x, y):
    return loss_fn(y, model(x))
""",
            "training passed through; the evaluation call is outside any tape",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(10),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: no Dropout or BatchNorm, the flag changes nothing",
        ),
        Valid(
            """
import tensorflow as tf

base_model = tf.keras.applications.MobileNetV2(include_top=False, weights="imagenet")
base_model.trainable = False
inputs = tf.keras.Input(shape=(160, 160, 3))
x = base_model(inputs, training=False)
outputs = tf.keras.layers.Dense(1)(tf.keras.layers.GlobalAveragePooling2D()(x))
model = tf.keras.Model(inputs, outputs)
optimizer = tf.keras.optimizers.Adam(1e-4)
loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)

for images, labels in batches:
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: the only BatchNorm is in a backbone frozen on purpose, which runs in inference mode "
            "whatever the flag (Keras' transfer-learning guide)",
        ),
    ]
    INVALID = [
        Invalid(
            """
import keras
from keras import layers
import tensorflow as tf

def conv_bn(x):
    x = layers.Conv2D(filters=64, kernel_size=3, strides=2, padding="same")(x)
    x = layers.BatchNormalization()(x)
    return layers.ReLU()(x)

inputs = layers.Input(shape=(28, 28, 1))
x = conv_bn(inputs)
x = conv_bn(x)
x = layers.Flatten()(x)
outputs = layers.Dense(5, activation="softmax")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
optimizer = keras.optimizers.SGD(learning_rate=0.003)

for images, labels in batches:
    with tf.GradientTape() as tape:
        preds = model(images)
        loss = keras.losses.sparse_categorical_crossentropy(labels, preds)
    grads = tape.gradient(loss, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
""",
            line=21,
            message_contains="BatchNormalization",
        ),
        Invalid(
            """
import tensorflow as tf
from tensorflow.keras import layers

inputs = tf.keras.Input(shape=(32, 32, 3))
x = layers.Conv2D(32, 3, activation="relu")(inputs)
x = layers.BatchNormalization()(x)
x = layers.GlobalAveragePooling2D()(x)
outputs = layers.Dense(10)(x)
model = tf.keras.Model(inputs, outputs)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()

@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=17,
            column=18,
            message_contains="`BatchNormalization`",
            expected_fix="""
import tensorflow as tf
from tensorflow.keras import layers

inputs = tf.keras.Input(shape=(32, 32, 3))
x = layers.Conv2D(32, 3, activation="relu")(inputs)
x = layers.BatchNormalization()(x)
x = layers.GlobalAveragePooling2D()(x)
outputs = layers.Dense(10)(x)
model = tf.keras.Model(inputs, outputs)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()

@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
        ),
        Invalid(
            """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(128, activation="relu")
        self.dropout = tf.keras.layers.Dropout(0.3)
        self.out = tf.keras.layers.Dense(10)

    def call(self, x, training=False):
        return self.out(self.dropout(self.hidden(x), training=training))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
""",
            line=17,
            message_contains="`Dropout`",
        ),
    ]

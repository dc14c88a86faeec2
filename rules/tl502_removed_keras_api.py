from __future__ import annotations

import libcst as cst

from tapelint.analysis.blocks import blocks
from tapelint.analysis.dataflow import render
from tapelint.analysis.facts import CallSite, Facts, Scope
from tapelint.analysis.keras import model_reader
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, is_unknown, values_of
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid

_GENERATOR_METHODS = {"fit_generator": "fit", "evaluate_generator": "evaluate", "predict_generator": "predict"}
_REMOVED_FUNCTIONS = {
    "keras.backend.set_learning_phase": "pass `training=True`/`training=False` when calling the model",
    "keras.backend.learning_phase": "pass `training=` explicitly when calling the model",
    "keras.backend.get_session": "TF2 has no session; run eagerly or inside `tf.function`",
}
_EXPERIMENTAL = frozenset({"keras.optimizers.experimental", "keras.layers.experimental", "keras.experimental"})
# Members of the TF 2 `experimental` namespaces that Keras 3 has under a stable name with the same behaviour:
# namespace -> (where Keras 3 has them, below the module written before `experimental`; which ones). Each was checked with `hasattr` on the installed Keras
# 3.15.1; tests/test_defects_found_on_real_code.py checks them again on the installed Keras. A member that
# is not listed gets no rename: `RandomHeight`, for one, is gone from Keras 3.
MOVED = {
    "keras.experimental": ("optimizers.schedules", frozenset({"CosineDecay", "CosineDecayRestarts"})),
    "keras.optimizers.experimental": ("", frozenset({
        "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Nadam", "Optimizer", "RMSprop",
        "SGD",
    })),
    "keras.layers.experimental": ("", frozenset({"EinsumDense"})),
    "keras.layers.experimental.preprocessing": ("", frozenset({
        "CategoryEncoding", "CenterCrop", "Discretization", "HashedCrossing", "Hashing", "IntegerLookup",
        "Normalization", "RandomBrightness", "RandomContrast", "RandomCrop", "RandomFlip", "RandomRotation",
        "RandomTranslation", "RandomZoom", "Rescaling", "Resizing", "StringLookup", "TextVectorization",
    })),
}
# Members with no drop-in replacement in Keras 3: what to use instead (`{keras}` is the user's spelling of
# the keras module). The replacements named here exist on the installed Keras 3.15.1 (checked by the same test).
GONE = {
    "keras.experimental.export_saved_model": (
        "Keras 3 has no drop-in replacement: export a SavedModel for serving with `model.export(path)` "
        "(reload it with `{keras}.layers.TFSMLayer(path)`), or save the model with `model.save(\"model.keras\")`"),
    "keras.experimental.load_from_saved_model": (
        "Keras 3 has no drop-in replacement: load a `.keras` file with `{keras}.saving.load_model(\"model.keras\")`, "
        "or call a SavedModel for inference through `{keras}.layers.TFSMLayer(path)`"),
    "keras.experimental.LinearCosineDecay": (
        "Keras 3 has no such schedule: use `{keras}.optimizers.schedules.CosineDecay` or subclass "
        "`{keras}.optimizers.schedules.LearningRateSchedule`"),
    "keras.experimental.NoisyLinearCosineDecay": (
        "Keras 3 has no such schedule: use `{keras}.optimizers.schedules.CosineDecay` or subclass "
        "`{keras}.optimizers.schedules.LearningRateSchedule`"),
    "keras.experimental.LinearModel": "Keras 3 has no such model: build it from `{keras}.layers.Dense` layers",
    "keras.experimental.WideDeepModel": (
        "Keras 3 has no such model: combine the two parts with the functional API and `{keras}.layers.Concatenate`"),
    "keras.experimental.PeepholeLSTMCell": "Keras 3 has no peephole cell: `{keras}.layers.LSTMCell` has no peepholes",
    "keras.experimental.SequenceFeatures": (
        "Keras 3 dropped feature columns: preprocess with `{keras}.utils.FeatureSpace` or preprocessing layers"),
    "keras.layers.experimental.SyncBatchNormalization": "use `{keras}.layers.BatchNormalization(synchronized=True)`",
    "keras.layers.experimental.preprocessing.CategoryCrossing": (
        "Keras 3 has `{keras}.layers.HashedCrossing`, which hashes the crossed features"),
    "keras.layers.experimental.preprocessing.PreprocessingLayer": "subclass `{keras}.layers.Layer`",
    "keras.layers.experimental.preprocessing.RandomHeight": (
        "Keras 3 has no `RandomHeight`: `{keras}.layers.RandomZoom(height_factor, width_factor=0.0)` is the closest, "
        "and keeps the image size"),
    "keras.layers.experimental.preprocessing.RandomWidth": (
        "Keras 3 has no `RandomWidth`: `{keras}.layers.RandomZoom(0.0, width_factor)` is the closest, "
        "and keeps the image size"),
}
_NO_REPLACEMENT = ("there is no drop-in replacement: rewrite the code, or keep Keras 2 with `tf_keras` and "
                   "`TF_USE_LEGACY_KERAS=1`")
# Keras 3's LossScaleOptimizer scales the loss with `scale_loss` and unscales inside `apply_gradients`.
_LOSS_SCALE_METHODS = {
    "get_scaled_loss": "use `optimizer.scale_loss(loss)`",
    "get_unscaled_gradients": "drop the call: Keras 3's `LossScaleOptimizer.apply_gradients` unscales the gradients itself",
}
# Whole `tf.keras` modules that Keras 3 does not have.
_REMOVED_MODULES = {
    "keras.estimator": "Keras 3 has no Estimator bridge: train the Keras model with `fit()` or a custom loop",
    "keras.dtensor": "use `keras.distribution` (DataParallel, ModelParallel) instead of `tf.keras.dtensor`",
    "keras.callbacks.experimental": "use the stable callback, e.g. `keras.callbacks.BackupAndRestore`",
}
_REMOVED_OPTIMIZER_METHODS = {
    "get_gradients": "use `tf.GradientTape` and `tape.gradient`",
    "get_updates": "use `optimizer.apply_gradients`",
    "minimize": "compute the gradients with a `tf.GradientTape` and call `apply_gradients`",
}


class RemovedKerasApi(Rule):
    """
    ## What it does
    Reports Keras APIs that training loops use and that Keras 3 (TensorFlow 2.16 and later) removed:
    `Metric.reset_states()` (now `reset_state()`), `optimizer.lr` (now `optimizer.learning_rate`),
    `Model.fit_generator/evaluate_generator/predict_generator` (now `fit`/`evaluate`/`predict`),
    `optimizer.minimize`, `optimizer.get_gradients/get_updates`, the `experimental` namespaces
    (`tf.keras.optimizers.experimental.AdamW`, `tf.keras.layers.experimental.preprocessing.Rescaling`,
    `tf.keras.experimental.CosineDecay`), constructing `tf.keras.optimizers.legacy` optimizers, and
    `keras.backend.set_learning_phase`,
    `learning_phase` and `get_session`; `Model.reset_states()` (only stateful layers keep it),
    `LossScaleOptimizer.get_scaled_loss/get_unscaled_gradients` (now `scale_loss`, and
    `apply_gradients` unscales), and the `tf.keras.estimator`, `tf.keras.dtensor` and
    `tf.keras.callbacks.experimental` modules. `tf.compat.v1.keras` is Keras 3 on TF >= 2.16 too.
    Whether the receiver is a metric, a model or an optimizer is decided by the value model; an
    access to an `experimental` namespace or a removed module behind `hasattr(module, "experimental")
    and ...` or `if hasattr(...)` is not reported (the guard is False on Keras 3); one to
    `tf.keras.optimizers.legacy` still is, since Keras 3 keeps a `legacy` stub whose optimizers raise.

    ## Why is this bad?
    These raise `AttributeError` on Keras 3, usually at the end of the first epoch, after a long
    training run has already been paid for (`examples/seed2_vgg_cifar_loop.py`, from a Stack Overflow
    question, resets its metrics with `reset_states()` after each epoch). `optimizer.lr` is the spelling
    of countless learning-rate callbacks and loops.

    ## Example
    ```python
    train_acc_metric.reset_states()
    print(float(optimizer.lr))
    ```

    ## Use instead
    ```python
    train_acc_metric.reset_state()
    print(float(optimizer.learning_rate))
    ```

    ## Known problems
    `reset_states()` is reported only on objects known to be metrics (built from `keras.metrics` in
    this file, or taken from `model.metrics`): stateful RNN layers still have a `reset_states()` in
    Keras 3. `.lr` is reported on optimizers built in this file and on `<model>.optimizer`. An
    `experimental` module imported by name (`from tensorflow.keras.layers.experimental import
    preprocessing`) is not reported, only attribute chains that spell it out. Silent for
    Keras 2 code (`tf_keras`, `TF_USE_LEGACY_KERAS`, or `keras-version = 2` in the config).

    ## Options
    None.

    ## Fix safety
    `reset_states()` -> `reset_state()` and `.lr` -> `.learning_rate` are safe renames with the same
    behaviour. `fit_generator` -> `fit` (and the other two) is unsafe: Keras 3's `fit` does not accept
    `workers`, `use_multiprocessing` or `max_queue_size`, so remaining arguments may need changes.
    Dropping `experimental` (and `experimental.preprocessing`) is safe, and offered only for the members
    that Keras 3 has under the stable name (checked on Keras 3.15): the optimizers, `EinsumDense` and
    the preprocessing layers; `keras.experimental.CosineDecay` and `CosineDecayRestarts` become
    `keras.optimizers.schedules.CosineDecay` and `CosineDecayRestarts`. Members that Keras 3 dropped get
    no fix, only what to use instead: `keras.experimental.export_saved_model` (use `model.export(path)`
    or `model.save("model.keras")`), `load_from_saved_model` (`keras.saving.load_model` or
    `keras.layers.TFSMLayer`), `LinearCosineDecay`, `LinearModel`, `WideDeepModel`, `SequenceFeatures`,
    `SyncBatchNormalization` (`BatchNormalization(synchronized=True)`), `RandomHeight`, `RandomWidth`.
    Replacing a `legacy` optimizer by the current one is unsafe: their defaults and slot variables
    differ. The removed backend functions have no mechanical replacement.

    ## References
    - https://keras.io/guides/migrating_to_keras_3/
    - https://keras.io/api/metrics/base_metric/#reset_state-method
    - https://github.com/tensorflow/docs/pull/2336 (`'Mean' object has no attribute 'reset_states'` in the custom-loop tutorials)
    - https://github.com/tensorflow/tensorboard/pull/6932 (the same break in TensorBoard's get-started loop on TF 2.17)
    - `examples/seed2_vgg_cifar_loop.py`, a reproduction of the Stack Overflow question "Tensorflow 2
      Gradient Tape not working as expected" (`train_acc_metric.reset_states()` in a GradientTape loop)
    """

    code = "TL502"
    name = "removed-keras-api"
    message = "`{old}` was removed in Keras 3 (TF >= 2.16); {instead}"
    severity = Severity.ERROR
    fixable = True
    # The spellings user code writes (`tf.keras.optimizers.experimental.AdamW`, `from keras.layers.experimental
    # import preprocessing`, `tf.keras.estimator.model_to_estimator`): a library that merely mentions the
    # words is not parsed for nothing.
    triggers = ("reset_states", ".lr", ("experimental", "optimizers"), "layers.experimental",
                ("experimental", "layers"), "keras.experimental", "callbacks.experimental", "optimizers.legacy",
                ("legacy", "optimizers"), "fit_generator", "evaluate_generator", "predict_generator",
                "learning_phase", "get_session", "get_gradients", "get_updates", ("minimize", "optimizers"),
                "get_scaled_loss", "get_unscaled_gradients", "keras.estimator", ("estimator", "keras."),
                "keras.dtensor")

    def check(self) -> None:
        if self.context.keras_version == 2:
            return
        facts = self.facts
        reader = model_reader(facts)
        for site in facts.calls:
            method = site.method
            func = site.node.func
            receiver = site.receiver
            if method == "reset_states" and isinstance(func, cst.Attribute) and _is_metric(
                    facts, func.value, site.scope, site.order):
                self.report(func.attr, old=f"{receiver or render(func.value)}.reset_states()", instead="use `reset_state()`",
                            fix=PendingFix("Rename to `reset_state()`", True, [(func.attr, cst.Name("reset_state"))]))
            elif method == "reset_states" and isinstance(func, cst.Attribute) and _is_model(
                    facts, func.value, site.scope, site.order):
                self.report(func.attr, old=f"{receiver or render(func.value)}.reset_states()",
                            instead="Keras 3 models have none; reset each stateful layer: "
                                    "`for layer in model.layers: layer.reset_states()` on the RNN layers")
            elif method in _LOSS_SCALE_METHODS and isinstance(func, cst.Attribute) and (
                    _is_optimizer(facts, func.value, site.scope, site.order)):
                self.report(func.attr, old=f"{receiver or render(func.value)}.{method}()", instead=_LOSS_SCALE_METHODS[method])
            elif method in _GENERATOR_METHODS and receiver is not None and isinstance(func, cst.Attribute):
                if reader.model_of(func.value, site.scope, site.order) is None and not receiver.endswith("model"):
                    continue
                new = _GENERATOR_METHODS[method]
                self.report(func.attr, old=f"{receiver}.{method}()", instead=f"use `{new}()`, which takes generators",
                            fix=PendingFix(f"Rename to `{new}()`", False, [(func.attr, cst.Name(new))]))
            elif method in _REMOVED_OPTIMIZER_METHODS and isinstance(func, cst.Attribute) and _is_optimizer(
                facts, func.value, site.scope, site.order
            ):
                assert isinstance(func, cst.Attribute)
                self.report(func.attr, old=f"{receiver or render(func.value)}.{method}()",
                            instead=_REMOVED_OPTIMIZER_METHODS[method])
            elif site.qualified in _REMOVED_FUNCTIONS:
                self.report(site.node, old=site.func or site.qualified, instead=_REMOVED_FUNCTIONS[site.qualified])
        self._experimental_namespaces(facts)
        self._removed_modules(facts)
        for use in facts.name_uses:
            node = use.node
            if not isinstance(node, cst.Attribute) or node.attr.value != "lr":
                continue
            receiver = dotted(node.value)
            if receiver is None or not _is_optimizer(facts, node.value, use.scope, use.order):
                continue
            self.report(node.attr, old=f"{receiver}.lr", instead="use `.learning_rate`",
                        fix=PendingFix("Rename to `.learning_rate`", True, [(node.attr, cst.Name("learning_rate"))]))

    def _removed_modules(self, facts: Facts) -> None:
        """`tf.keras.estimator.model_to_estimator(...)`, `tf.keras.dtensor...`: modules Keras 3 dropped."""
        inner: set[int] = set()
        for use in facts.name_uses:
            if isinstance(use.node, cst.Attribute):
                inner.add(id(use.node.value))
        for use in facts.name_uses:
            node = use.node
            if not isinstance(node, cst.Attribute) or id(node) in inner:
                continue  # report the whole chain once, at its outermost attribute
            qualified = facts.resolve(node) or ""
            for module, instead in _REMOVED_MODULES.items():
                if (qualified == module or qualified.startswith(module + ".")) and not _guarded_by_hasattr(
                        facts, node, use.scope, use.order):
                    self.report(node, old=dotted(node) or qualified, instead=instead)
                    break

    def _experimental_namespaces(self, facts: Facts) -> None:
        """`tf.keras.optimizers.experimental.AdamW`, `tf.keras.layers.experimental.preprocessing.X`,
        `tf.keras.experimental.CosineDecay`, `tf.keras.optimizers.legacy.Adam(...)`."""
        parents: dict[int, cst.Attribute] = {}
        for use in facts.name_uses:
            node = use.node
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Attribute):
                parents[id(node.value)] = node
        for use in facts.name_uses:
            node = use.node
            if not isinstance(node, cst.Attribute):
                continue
            qualified = facts.resolve(node)
            if qualified not in _EXPERIMENTAL and qualified != "keras.optimizers.legacy":
                continue
            outer = parents.get(id(node))
            if outer is None:
                continue
            if qualified != "keras.optimizers.legacy" and _guarded_by_hasattr(facts, outer, use.scope, use.order):
                continue  # (Keras 3 keeps a `legacy` stub module, so a hasattr guard on it does not help)
            base = node.value  # the `keras.optimizers` / `keras.layers` / `keras` part
            text = dotted(outer) or ""
            if qualified == "keras.optimizers.legacy":
                if not _is_call_func(facts, outer):
                    continue
                new = cst.Attribute(value=base, attr=outer.attr)
                self.report(node, old=text, instead=f"use `{dotted(new)}` (the legacy optimizers raise ImportError "
                            "on Keras 3 unless tf_keras is installed and `TF_USE_LEGACY_KERAS=1`)",
                            fix=PendingFix(f"Use `{dotted(new)}`", False, [(outer, new)]))
                continue
            namespace, member = qualified, outer
            if qualified == "keras.layers.experimental" and outer.attr.value == "preprocessing":
                member = parents.get(id(outer))  # type: ignore[assignment]
                if member is None:
                    continue
                namespace = "keras.layers.experimental.preprocessing"
            name = member.attr.value
            root = base if namespace == "keras.experimental" else getattr(base, "value", None)
            keras_text = (dotted(root) if root is not None else None) or "keras"
            moved = MOVED[namespace]
            if name not in moved[1]:
                # A removed member with no drop-in replacement: say what to use, offer no rename.
                instead = GONE.get(f"{namespace}.{name}", _NO_REPLACEMENT).format(keras=keras_text)
                self.report(node, old=dotted(member) or text, instead=instead)
                continue
            new: cst.BaseExpression = base
            for part in filter(None, moved[0].split(".")):
                new = cst.Attribute(value=new, attr=cst.Name(part))
            new = cst.Attribute(value=new, attr=member.attr)
            self.report(node, old=dotted(member) or text, instead=f"use `{dotted(new)}`",
                        fix=PendingFix(f"Use `{dotted(new)}`", True, [(member, new)]))

    VALID = [
        Valid("""
import tensorflow as tf

def is_legacy(optimizer):
    return hasattr(tf.keras.optimizers, "experimental") and isinstance(
        optimizer, tf.keras.optimizers.experimental.Optimizer)
""", "near miss: the access sits behind a hasattr guard that is False on Keras 3"),
        Valid("""
import tensorflow as tf
acc = tf.keras.metrics.SparseCategoricalAccuracy()
opt = tf.keras.optimizers.Adam(1e-3)
acc.reset_state()
print(float(opt.learning_rate))
""", "the Keras 3 spellings"),
        Valid("""
import tensorflow as tf
lstm = tf.keras.layers.LSTM(8, stateful=True)
lstm.reset_states()
""", "near miss: stateful RNN layers keep reset_states()"),
        Valid("""
import tf_keras
acc = tf_keras.metrics.Mean()
acc.reset_states()
""", "Keras 2 code"),
        Valid("""
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import tensorflow as tf
opt = tf.keras.optimizers.legacy.Adam(learning_rate=1e-3)
schedule = tf.keras.experimental.CosineDecay(1e-3, decay_steps=100)
""", "near miss: tf_keras through TF_USE_LEGACY_KERAS, where these still exist"),
        Valid("""
import tensorflow as tf
opt = tf.compat.v1.train.AdamOptimizer(1e-3)
train_op = opt.minimize(loss)
""", "near miss: TF1 optimizers still have minimize"),
        Valid("""
import argparse
parser = argparse.ArgumentParser()
args = parser.parse_args()
print(args.lr)
""", "an `lr` attribute that is not an optimizer's"),
    ]
    INVALID = [
        Invalid("""
import tensorflow as tf
from tensorflow.keras import mixed_precision

model = tf.keras.Sequential([tf.keras.layers.Dense(1, dtype="float32")])
optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(1e-3))

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
""", count=2, line=12, message_contains="use `optimizer.scale_loss(loss)`"),
        Invalid("""
import tensorflow.compat.v1 as tf

def build_model(vocab, units):
    return tf.keras.Sequential([tf.keras.layers.Embedding(vocab, 8),
                                tf.keras.layers.GRU(units, return_sequences=True, stateful=True),
                                tf.keras.layers.Dense(vocab)])

model = build_model(65, 32)
loss_metric = tf.keras.metrics.Mean()
for epoch in range(3):
    model.reset_states()
    loss_metric.reset_states()
""", count=2, line=12, message_contains="Keras 3 models have none"),
        Invalid("""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
estimator = tf.keras.estimator.model_to_estimator(keras_model=model)
""", line=6, message_contains="no Estimator bridge"),
        Invalid("""
import tensorflow as tf
train_acc_metric = tf.keras.metrics.CategoricalAccuracy()
for epoch in range(2):
    train_acc_metric.reset_states()
""", line=5, column=22, expected_fix="""
import tensorflow as tf
train_acc_metric = tf.keras.metrics.CategoricalAccuracy()
for epoch in range(2):
    train_acc_metric.reset_state()
"""),
        Invalid("""
from tensorflow import keras
optimizer = keras.optimizers.Adam(1e-3)
keras.backend.set_value(optimizer.lr, 1e-4)
""", expected_fix="""
from tensorflow import keras
optimizer = keras.optimizers.Adam(1e-3)
keras.backend.set_value(optimizer.learning_rate, 1e-4)
"""),
        Invalid("""
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
for m in model.metrics:
    m.reset_states()
print(model.optimizer.lr)
""", count=2),
        Invalid("""
import tensorflow as tf
tf.keras.backend.set_learning_phase(1)
""", message_contains="training=True"),
        Invalid("""
import tensorflow as tf
optimizer = tf.keras.optimizers.legacy.Adam(learning_rate=1e-3)
""", line=3, column=13, message_contains="ImportError", expected_fix="""
import tensorflow as tf
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
"""),
        Invalid("""
import tensorflow as tf
augment = tf.keras.Sequential([tf.keras.layers.experimental.preprocessing.RandomFlip("horizontal")])
optimizer = tf.keras.optimizers.experimental.AdamW(learning_rate=1e-3, weight_decay=1e-4)
schedule = tf.keras.experimental.CosineDecay(1e-3, decay_steps=1000)
""", count=3, expected_fix="""
import tensorflow as tf
augment = tf.keras.Sequential([tf.keras.layers.RandomFlip("horizontal")])
optimizer = tf.keras.optimizers.AdamW(learning_rate=1e-3, weight_decay=1e-4)
schedule = tf.keras.optimizers.schedules.CosineDecay(1e-3, decay_steps=1000)
"""),
        Invalid("""
import tensorflow as tf
w = tf.Variable(5.0)
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
for _ in range(10):
    optimizer.minimize(lambda: (w - 2.0) ** 2, var_list=[w])
""", line=6, column=15, message_contains="apply_gradients"),
        Invalid("""
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
tf.keras.experimental.export_saved_model(model, "saved")
augment = tf.keras.layers.experimental.preprocessing.RandomHeight(0.2)
""", count=2, line=4, column=1, message_contains="model.export(path)"),
    ]


def _kinds(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> set[Kind]:
    """What the receiver may be, by the value model; empty when any possibility is unknown."""
    found = values_of(facts, expr, scope, order)
    if is_unknown(found):
        return set()
    return {v.kind for v in found}


def _is_metric(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> bool:
    return _kinds(facts, expr, scope, order) == {Kind.METRIC}


def _is_optimizer(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> bool:
    return _kinds(facts, expr, scope, order) == {Kind.OPTIMIZER}


def _is_model(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> bool:
    return _kinds(facts, expr, scope, order) == {Kind.MODEL}


def _guarded_by_hasattr(facts: Facts, node: cst.Attribute, scope: Scope, order: int) -> bool:
    """`hasattr(tf.keras.optimizers, "experimental") and ...tf.keras.optimizers.experimental...`:
    on Keras 3 the guard is False and the access never runs."""
    for site in facts.calls:
        if site.func != "hasattr" or site.scope is not scope or len(site.node.args) != 2:
            continue
        if not (site.order < order <= site.order + 400):
            continue
        owner, name = site.node.args[0].value, site.node.args[1].value
        text = dotted(owner)
        if text is None or not isinstance(name, cst.SimpleString):
            continue
        if (dotted(node) or "").startswith(f"{text}.{name.evaluated_value}") and _same_condition(facts, site, order):
            return True
    return False


def _same_condition(facts: Facts, guard: CallSite, order: int) -> bool:
    """Is `order` in the right operand of an `and` whose left is the guard, or in the body of an `if`
    whose test is the guard?"""
    spans = blocks(facts)
    for branch in spans.guards(order):
        if branch.order < guard.order < branch.body.order and branch.body.encloses(order):
            return True
    for boolean_op in facts.boolean_ands:
        start, end, left_end = boolean_op
        if start <= guard.order <= left_end < order <= end:
            return True
    return False


def _is_call_func(facts: Facts, node: cst.CSTNode) -> bool:
    return any(site.node.func is node for site in facts.calls)

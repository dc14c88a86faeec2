from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Facts, Scope
from tapelint.analysis.keras import model_reader, optimizer_class
from tapelint.analysis.names import dotted
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
    `learning_phase` and `get_session`.

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
    triggers = ("reset_states", ".lr", ("experimental", "keras"), ("legacy", "keras"), "fit_generator", "evaluate_generator", "predict_generator", "learning_phase", "get_session", "get_gradients", "get_updates", ("minimize", "optimizers"))

    def check(self) -> None:
        if self.context.keras_version == 2:
            return
        facts = self.facts
        reader = model_reader(facts)
        for site in facts.calls:
            method = site.method
            func = site.node.func
            receiver = site.receiver
            if method == "reset_states" and receiver is not None and _is_metric(facts, receiver, site.scope, site.order):
                assert isinstance(func, cst.Attribute)
                self.report(func.attr, old=f"{receiver}.reset_states()", instead="use `reset_state()`",
                            fix=PendingFix("Rename to `reset_state()`", True, [(func.attr, cst.Name("reset_state"))]))
            elif method in _GENERATOR_METHODS and receiver is not None and isinstance(func, cst.Attribute):
                if reader.model_of(func.value, site.scope, site.order) is None and not receiver.endswith("model"):
                    continue
                new = _GENERATOR_METHODS[method]
                self.report(func.attr, old=f"{receiver}.{method}()", instead=f"use `{new}()`, which takes generators",
                            fix=PendingFix(f"Rename to `{new}()`", False, [(func.attr, cst.Name(new))]))
            elif method in _REMOVED_OPTIMIZER_METHODS and receiver is not None and _is_optimizer(
                facts, receiver, site.scope, site.order
            ):
                assert isinstance(func, cst.Attribute)
                self.report(func.attr, old=f"{receiver}.{method}()", instead=_REMOVED_OPTIMIZER_METHODS[method])
            elif site.qualified in _REMOVED_FUNCTIONS:
                self.report(site.node, old=site.func or site.qualified, instead=_REMOVED_FUNCTIONS[site.qualified])
        self._experimental_namespaces(facts)
        for use in facts.name_uses:
            node = use.node
            if not isinstance(node, cst.Attribute) or node.attr.value != "lr":
                continue
            receiver = dotted(node.value)
            if receiver is None or not _is_optimizer(facts, receiver, use.scope, use.order):
                continue
            self.report(node.attr, old=f"{receiver}.lr", instead="use `.learning_rate`",
                        fix=PendingFix("Rename to `.learning_rate`", True, [(node.attr, cst.Name("learning_rate"))]))

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


def _binding_value(facts: Facts, name: str, scope: Scope, order: int) -> cst.BaseExpression | None:
    binding = facts.binding_before(name, scope, order)
    if binding is None:
        return None
    if binding.value is None:
        loop = facts.loop_bindings.get(id(binding))
        return loop
    return binding.value if binding.index is None else None


def _is_metric(facts: Facts, name: str, scope: Scope, order: int) -> bool:
    value = _binding_value(facts, name, scope, order)
    if isinstance(value, cst.Call):
        qualified = facts.resolve(value.func)
        return bool(qualified) and qualified.startswith("keras.metrics.") and qualified.rsplit(".", 1)[-1][:1].isupper()
    if isinstance(value, cst.Attribute):  # `for m in model.metrics:`
        return value.attr.value == "metrics"
    return False


def _is_optimizer(facts: Facts, name: str, scope: Scope, order: int) -> bool:
    if name.split(".")[-1] == "optimizer" and "." in name:
        return True
    value = _binding_value(facts, name, scope, order)
    return isinstance(value, cst.Call) and optimizer_class(facts.resolve(value.func)) is not None


def _is_call_func(facts: Facts, node: cst.CSTNode) -> bool:
    return any(site.node.func is node for site in facts.calls)

from __future__ import annotations

import libcst as cst

from tapelint.analysis.blocks import blocks
from tapelint.analysis.dataflow import render
from tapelint.analysis.constants import string
from tapelint.analysis.facts import CallSite, Facts, Scope, arg_value, keyword_arg
from tapelint.analysis.models import compiles, model_reader
from tapelint.analysis.names import canonical, dotted, origin
from tapelint.analysis.optimizers import stepped_variables
from tapelint.analysis.values import Kind, Value, is_unknown, values, values_of
from tapelint.analysis.vocabulary import TF1_SLOTLESS_OPTIMIZERS, tf1_optimizer_class
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid
from tapelint.triggers import attribute, call_with_string_first

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
_REMOVED_MODULE_WORDS = ("estimator", "dtensor", "experimental")
# Keras 2 modules that Keras 3 does not have: importing one raises ModuleNotFoundError (ImportError for
# `from keras.layers import core`, AttributeError for `tf.keras.layers.core`). Each was checked with
# `importlib.util.find_spec` on Keras 3.15.1, under `keras.` and under `tensorflow.keras.`;
# tests/test_defects_found_on_real_code.py checks them again on the installed Keras, and that the public module
# named here has the names the advice gives. module -> (the public module that holds what it held, or None; advice).
PRIVATE_MODULES: dict[str, tuple[str | None, str]] = {
    "keras.layers.core": ("keras.layers", ""),
    "keras.layers.convolutional": ("keras.layers", ""),
    "keras.layers.recurrent": ("keras.layers", ""),
    "keras.layers.normalization": ("keras.layers", ""),
    "keras.layers.pooling": ("keras.layers", ""),
    "keras.layers.embeddings": ("keras.layers", ""),
    "keras.layers.merge": ("keras.layers", "the merge layers are `Add`, `Concatenate`, `Multiply`, `Average`"),
    "keras.layers.advanced_activations": ("keras.layers", ""),
    "keras.layers.wrappers": ("keras.layers", ""),
    "keras.layers.noise": ("keras.layers", ""),
    "keras.utils.np_utils": ("keras.utils", "`to_categorical` and `normalize` are there"),
    "keras.utils.generic_utils": ("keras.utils", "`get_custom_objects` and `Progbar` are there"),
    "keras.utils.vis_utils": ("keras.utils", "`plot_model` is there"),
    "keras.utils.data_utils": ("keras.utils", "`get_file` and `Sequence` are there"),
    "keras.initializers.initializers_v1": ("keras.initializers", ""),
    "keras.engine": ("keras", "`Layer`, `Model`, `Input` and `InputSpec` are there"),
    "keras.wrappers.scikit_learn": (None, "Keras 3 has no `KerasClassifier`/`KerasRegressor`: use the scikeras package "
                                          "(`from scikeras.wrappers import KerasClassifier`) or "
                                          "`keras.wrappers.SKLearnClassifier` / `SKLearnRegressor`"),
}
# The spellings of the Keras 3 package the modules above are looked for under (as imported, not canonical:
# `keras.src.layers.core` is a Keras 3 module and exists).
_KERAS3_ROOTS = ("keras", "tensorflow.keras")
_PRIVATE_MODULE_WORDS = tuple(sorted({m.rsplit(".", 1)[-1] for m in PRIVATE_MODULES}))
# TF still ships its frozen, private copy of Keras 2 at `tensorflow.python.keras` (TF 2.21), but on TF 2.21 /
# Keras 3.15.1 its layers cannot go into a Keras 3 model (ValueError "Only instances of `keras.Layer` can be
# added to a Sequential model"), a Keras 3 `Input` cannot go into its layers (AttributeError "'tuple' object has
# no attribute 'rank'"), its own models' `fit` and `predict` raise (AttributeError "module
# 'tensorflow.python.distribute.input_lib' has no attribute 'DistributedDatasetInterface'"), and parts are
# missing (`from tensorflow.python.keras.layers import LSTM` and `...optimizers import Adam` raise ImportError,
# `...preprocessing` is gone). Only imports of the parts that build or train models are reported: its backend,
# utils, losses and callbacks still run.
TF_PRIVATE_KERAS = "tensorflow.python.keras"
_TF_PRIVATE_KERAS_PARTS = frozenset({"layers", "models", "engine", "optimizers", "optimizer_v2", "preprocessing",
                                     "Sequential", "Model", "Input"})
# Model methods that Keras 2.6 (TF 2.6) already removed and Keras 3 does not have: AttributeError.
_REMOVED_PREDICT_METHODS = {
    "predict_classes": ("use `np.argmax(model.predict(x), axis=-1)` for a softmax output, or "
                        "`(model.predict(x) > 0.5).astype(\"int32\")` for a sigmoid one"),
    "predict_proba": "use `predict()`, which returns the same probabilities",
}
# The Keras optimizer that replaces each TF 1 optimizer (TF's migration guide pairs them the same way).
_KERAS_OPTIMIZER = {
    "AdadeltaOptimizer": "Adadelta", "AdagradOptimizer": "Adagrad", "AdamOptimizer": "Adam", "FtrlOptimizer": "Ftrl",
    "GradientDescentOptimizer": "SGD", "MomentumOptimizer": "SGD(learning_rate, momentum=...)",
    "ProximalAdagradOptimizer": "Adagrad", "ProximalGradientDescentOptimizer": "SGD",
    "RMSPropOptimizer": "RMSprop(learning_rate, rho=decay)",
}
_SHORT_NAME_MESSAGE = ("`{old}` never matches on Keras 3 (TF >= 2.16): a variable's `name` is its own short name "
                       "(`kernel`, never `dense/kernel:0`; checked on Keras 3.15), so the filter selects nothing; "
                       "compare with `v.path` (`sequential/dense/kernel`, no `:0`)")
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
    It also reports the Keras 3 signature changes, each run on Keras 3.15.1: `model.save(...,
    save_format=...)` and `keras.models.save_model(..., save_format=...)` (ValueError "The `save_format`
    argument is deprecated in Keras 3") and `model.save(path)` to a path without `.keras`, `.h5` or
    `.hdf5` (ValueError "Invalid filepath extension for saving"; `.h5` still saves, with a "legacy"
    warning in the log, and is not reported); `model.save_weights(path)` to a path that does not end in
    `.weights.h5` (ValueError "The filename must end in `.weights.h5`") or with `save_format=` (TypeError);
    `model.load_weights(path, by_name=...)` on anything but a legacy `.h5` file (ValueError "`by_name`
    only supports loading legacy '.h5' or '.hdf5' files"); `layer.output_shape` / `layer.input_shape`
    (AttributeError; models keep `output_shape`); `add_metric()` (NotImplementedError);
    `self.add_variable("name", shape)` (ValueError "Could not interpret initializer identifier") and
    `self.add_weight("name", ...)` (ValueError "`name` must be passed as a keyword argument"); subclasses of
    the Keras optimizer that override `_resource_apply_dense` / `_create_slots` without `update_step`
    (`apply_gradients` raises NotImplementedError) or call `self._set_hyper` / `_get_hyper`
    (AttributeError); and a constant (`True`, `0.5`, `"x"`) passed positionally after the inputs of a
    layer or model call, `model(x, False)` (ValueError "Only input tensors may be passed as positional
    arguments"; `None` is accepted and not reported), including the `training` parameter of a Keras
    layer's own `call` forwarded positionally, `self.dropout(x, training)` (Keras fills it with a Python
    bool in `fit`, `evaluate` and `predict`, so each of them raises). These are reported only on objects the
    value model proves to be a Keras model, layer or optimizer, and never for tf_keras code.
    It also reports, each checked on TF 2.21 / Keras 3.15.1 (and, where it says so, against tf_keras 2.21):
    - imports of Keras 2 modules that Keras 3 does not have (`importlib.util.find_spec` finds none of them):
      `keras.layers.core`, `.convolutional`, `.recurrent`, `.normalization`, `.pooling`, `.embeddings`,
      `.merge`, `.advanced_activations`, `.wrappers`, `.noise`, `keras.utils.np_utils`, `.generic_utils`,
      `.vis_utils`, `.data_utils`, `keras.initializers.initializers_v1`, `keras.engine...` and
      `keras.wrappers.scikit_learn`, under `keras.` or `tensorflow.keras.`, as `import x.y`, `from x.y import
      z`, `from x import y` (ModuleNotFoundError or ImportError) or an attribute chain such as
      `tf.keras.layers.core.Dense` (AttributeError); the message names the public module (`from
      tensorflow.keras.layers import Dense`, `keras.utils.to_categorical`, scikeras for the scikit-learn
      wrappers);
    - imports of the layers, models, engine, optimizers or preprocessing of `tensorflow.python.keras`, TF's
      private copy of Keras 2: TF 2.21 still ships it, but its layers cannot go into a Keras 3 model (ValueError
      "Only instances of `keras.Layer` can be added to a Sequential model"), its models' `fit` and `predict`
      raise AttributeError, and `LSTM`, `optimizers.Adam` and `preprocessing` are gone from it;
    - `model.predict_classes()` and `model.predict_proba()` on a proven Keras model (AttributeError; they
      left Keras in TF 2.6, tf_keras 2.21 lacks them too); a scikit-learn classifier's `predict_proba` is not
      reported;
    - a TF 1 optimizer (`tf.compat.v1.train.AdamOptimizer`, `MomentumOptimizer`, `RMSPropOptimizer`, ...)
      stepping a Keras model's variables: `minimize(..., var_list=model.trainable_variables)` raises
      ValueError "Passed in object <Variable ...> of type 'Variable', not tf.Tensor or tf.Variable or
      ExtensionType" and `apply_gradients(zip(grads, model.trainable_variables))` AttributeError "'Variable'
      object has no attribute '_unique_id'" (or `get_shape`), while both ran on tf_keras 2.21; the slotless
      `GradientDescentOptimizer` and `ProximalGradientDescentOptimizer` still step Keras 3 variables through
      `apply_gradients` and are not reported there; `model.compile(optimizer=tf.compat.v1.train.AdamOptimizer())`
      raises ValueError "Could not interpret optimizer identifier";
    - `ModelCheckpoint(path)` with a known path that Keras 3 rejects when the callback is made (ValueError):
      with `save_weights_only=True` the path must end in `.weights.h5`, otherwise in `.keras` or `.h5`
      (`.hdf5` and TF checkpoint prefixes fail; tf_keras 2.21 accepted them);
    - `"dense/" in v.name` (also `==`, `startswith`, `endswith`) with a constant holding a `/`, where `v` is
      one of a Keras model's or layer's variables: a Keras 3 variable's `name` is its own short name
      (`kernel`; Keras 3 forbids `/` in it), where tf_keras 2.21 gave `dense/kernel:0`, so the filter
      never matches; `v.path` is `sequential/dense/kernel`.
    Whether the receiver is a metric, a model or an optimizer is decided by the value model; an
    access to an `experimental` namespace or a removed module behind `hasattr(module, "experimental")
    and ...` or `if hasattr(...)` is not reported (the guard is False on Keras 3); one to
    `tf.keras.optimizers.legacy` still is, since Keras 3 keeps a `legacy` stub whose optimizers raise.

    ## Why is this bad?
    These raise `AttributeError` on Keras 3, usually at the end of the first epoch, after a long
    training run has already been paid for (`examples/seed2_vgg_cifar_loop.py`, from a Stack Overflow
    question, resets its metrics with `reset_states()` after each epoch). `optimizer.lr` is the spelling
    of countless learning-rate callbacks and loops. A Keras 2 module import stops the program before it
    starts, a checkpoint callback before the first epoch. A name filter that never matches fails silently:
    the variables it was to freeze, decay or fine-tune are all left alone (or `apply_gradients` is given an
    empty list and raises).

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
    Keras 2 code (`tf_keras`, `TF_USE_LEGACY_KERAS`, or `keras-version = 2` in the config). A save path is
    judged only when its end is known (a string, the last part of `os.path.join`, the text after an
    f-string's last placeholder); `load_weights` of a TF checkpoint prefix is not reported (Keras 3.15
    may read it as an Orbax checkpoint directory). `output_shape` is reported on names and attribute
    chains (`layer.output_shape` in `for layer in model.layers`), not on `model.layers[0].output_shape`.
    A positional argument is reported only when the value model proves it a constant (`model(x, False)`, or a
    name that holds `False`) or it is the `training` parameter of the enclosing Keras `call`, not rebound: a
    parameter of a plain function, whose callers are unknown, is not. A Keras 2 module imported under an `if`
    or inside a `try` that catches ImportError is not reported (a version switch), nor an attribute chain
    behind `hasattr` or inside a `try` that catches AttributeError. Only the model-building parts of
    `tensorflow.python.keras` are reported: its backend, utils, losses and callbacks still run, and
    `tensorflow.python.training` (TF 1's optimizers and moving averages) still imports and works. A file that
    imports those parts is not checked for the other Keras 3 changes (its models are Keras 2's). TF 1
    optimizers are reported only on variables the value model proves to be a Keras model's or layer's
    (`model.trainable_variables`, a loop over `model.weights`): with `tf.Variable`s they still work, and
    `minimize(loss)` without `var_list` finds the variables itself in eager mode. A variable-name filter is
    reported only for a constant with a `/` (a `:0` suffix alone is not: a weight may be named with a `:`).
    `target.set_weights(online.get_weights())` on a model that is not built yet is not reported: it raises
    on Keras 3.15 (ValueError "... the layer was expecting 0 weights") but on tf_keras 2.21 as well, so it is
    no Keras 3 change.

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
    differ. `predict_proba()` -> `predict()` is safe: Keras 2's `predict_proba` returned `predict()`'s
    output (Keras 3's `predict` shows a progress bar unless `verbose=0`). The other new findings get no fix:
    `predict_classes` depends on the output activation, a module's replacement on the names imported from
    it, a checkpoint's file name on what later loads it, and a TF 1 optimizer's replacement has other
    defaults. The removed backend functions have no mechanical replacement. The signature changes get no
    fix: a new file name changes what other code loads, and a positional argument's keyword is the
    parameter's name, which only the layer's `call` knows.

    ## References
    - https://keras.io/guides/migrating_to_keras_3/
    - https://keras.io/api/metrics/base_metric/#reset_state-method
    - https://github.com/tensorflow/docs/pull/2336 (`'Mean' object has no attribute 'reset_states'` in the custom-loop tutorials)
    - https://github.com/tensorflow/tensorboard/pull/6932 (the same break in TensorBoard's get-started loop on TF 2.17)
    - https://github.com/keras-team/keras/issues/18467 (tf.keras <> Keras 3 incompatibilities: SavedModel
      saving through `model.save()` is gone)
    - https://github.com/tensorflow/tflite-micro/issues/3623 (`save_format="tf"`: "The `save_format` argument
      is deprecated in Keras 3")
    - https://github.com/KichangKim/DeepDanbooru/issues/105 (the same ValueError with `save_format=h5`)
    - `examples/seed2_vgg_cifar_loop.py`, a reproduction of the Stack Overflow question "Tensorflow 2
      Gradient Tape not working as expected" (`train_acc_metric.reset_states()` in a GradientTape loop)
    - https://github.com/michelpf/fiap-ml-visao-computacional-auditoria-video/issues/18 ("No module named
      'tensorflow.keras.layers.core'"), https://github.com/ialhashim/DenseDepth/pull/198 (`keras.engine.topology`)
    - https://github.com/keras-team/keras/issues/19747 (`keras.wrappers.scikit_learn` missing on Keras 3.3)
    - https://github.com/keras-team/keras/issues/19888 (`predict_classes` on Keras 3: "Did you mean:
      'predict_step'?"), https://github.com/keras-team/keras/issues/15838
    - https://github.com/keras-team/keras/issues/19874 (the ValueError "Passed in object <KerasVariable ...> of
      type 'Variable', not tf.Tensor or tf.Variable or ExtensionType"), https://github.com/google/eng-edu/pull/68
      (`tf.train.AdamOptimizer` in `compile` replaced by `tf.keras.optimizers.Adam`)
    - https://github.com/hfawaz/dl-4-tsc/issues/53 and https://github.com/kr-colab/ReLERNN/issues/53
      (`ModelCheckpoint` to `.hdf5` / `weights.h5` on Keras 3), https://github.com/tensorflow/docs/pull/2327
      (`save_weights_only=True` needs `.weights.h5`)
    - https://github.com/keras-team/keras/issues/18676 ("Only input tensors may be passed as positional
      arguments": "This is deliberate")
    - https://github.com/keras-team/keras-cv/pull/2037 (`/` is not allowed in Keras 3 variable names)
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
                "keras.dtensor", "save_format", "save_weights", (".save(", "keras"), ("save_model", "keras"),
                ("load_weights", "by_name"), (attribute("output_shape"), "keras"), (attribute("input_shape"), "keras"),
                "add_metric", "_resource_apply_dense", "_create_slots", "_set_hyper", "add_variable",
                (call_with_string_first("add_weight"), "keras"),
                ("keras", ", True)"), ("keras", ", False)"), ("layers.Layer", "call(self"),
                # Keras 2 modules that Keras 3 does not have, and TF's private copy of Keras 2.
                *(("keras", word) for word in _PRIVATE_MODULE_WORDS), TF_PRIVATE_KERAS,
                "predict_classes", "predict_proba", ("compat", "Optimizer"), "ModelCheckpoint",
                ("keras", ", training)"), (attribute("name"), "variables"), (attribute("name"), "weights"))

    def check(self) -> None:
        if self.context.keras_version == 2:
            return
        facts = self.facts
        reader = model_reader(facts)
        # A file that imports TF's private copy of Keras 2 is reported there; its objects are not Keras 3's.
        private_keras = _imports_private_keras(facts)
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
                if reader.model_of(func.value, site.scope, site.order) is None:
                    continue  # only a proven Keras model (a name ending in `model` is not evidence)
                new = _GENERATOR_METHODS[method]
                self.report(func.attr, old=f"{receiver}.{method}()", instead=f"use `{new}()`, which takes generators",
                            fix=PendingFix(f"Rename to `{new}()`", False, [(func.attr, cst.Name(new))]))
            elif method in _REMOVED_OPTIMIZER_METHODS and isinstance(func, cst.Attribute) and _is_optimizer(
                facts, func.value, site.scope, site.order
            ):
                assert isinstance(func, cst.Attribute)
                self.report(func.attr, old=f"{receiver or render(func.value)}.{method}()",
                            instead=_REMOVED_OPTIMIZER_METHODS[method])
            elif method in _REMOVED_PREDICT_METHODS and isinstance(func, cst.Attribute) and not private_keras:
                # Only a proven Keras model: scikit-learn classifiers (and Keras 3's own `SKLearnClassifier`)
                # have a `predict_proba` of their own.
                if reader.model_of(func.value, site.scope, site.order) is None:
                    continue
                old = f"{receiver or render(func.value)}.{method}()"
                fix = (PendingFix("Rename to `predict()`", True, [(func.attr, cst.Name("predict"))])
                       if method == "predict_proba" else None)
                self.report(func.attr, f"`{old}` was removed in Keras 2.6 and Keras 3 (TF >= 2.16) does not have it "
                                       f"either (AttributeError); {_REMOVED_PREDICT_METHODS[method]}", fix=fix)
            elif site.qualified in _REMOVED_FUNCTIONS:
                self.report(site.node, old=site.func or site.qualified, instead=_REMOVED_FUNCTIONS[site.qualified])
        # The attribute and module names these passes look for are spelled in the module's text (an import
        # alias expands to the text of its own import): a module that never spells one is not searched.
        text = self.context.source
        if "experimental" in text or "legacy" in text:
            self._experimental_namespaces(facts)
        if any(word in text for word in _REMOVED_MODULE_WORDS):
            self._removed_modules(facts)
        if any(word in text for word in _PRIVATE_MODULE_WORDS) or TF_PRIVATE_KERAS in text:
            self._private_modules(facts)
        self._changed_signatures(facts, private_keras)
        if not private_keras:
            if "Optimizer" in text:
                self._tf1_optimizers(facts)
            if "name" in text:
                self._variable_name_filters(facts)
        for use in facts.attribute_uses if "lr" in text else ():
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
        for use in facts.attribute_uses:
            if isinstance(use.node, cst.Attribute):
                inner.add(id(use.node.value))
        for use in facts.attribute_uses:
            node = use.node
            if id(node) in inner or not isinstance(node, cst.Attribute):
                continue  # report the whole chain once, at its outermost attribute (they all are attributes)
            # The canonical spelling never brings in a word the expanded chain lacks: only chains naming one
            # of these words are spelled out.
            expanded = facts.imports.expand_dotted(use.name)
            if expanded is None or not any(word in expanded for word in _REMOVED_MODULE_WORDS):
                continue
            qualified = canonical(expanded)
            for module, instead in _REMOVED_MODULES.items():
                if (qualified == module or qualified.startswith(module + ".")) and not _guarded_by_hasattr(
                        facts, node, use.scope, use.order):
                    self.report(node, old=dotted(node) or qualified, instead=instead)
                    break

    def _private_modules(self, facts: Facts) -> None:
        """`from keras.layers.core import Dense`, `from keras.utils import np_utils`, `tf.keras.layers.core.Dense`,
        `from tensorflow.python.keras.layers import Dense`: Keras 2 modules that Keras 3 does not have."""
        spans = blocks(facts)
        imported: set[str] = set()
        for site in facts.import_sites:
            # An import under an `if`, or in a `try` that catches ImportError, may be a version switch.
            guarded = bool(spans.guards(site.order)) or spans.caught(site.order, "ImportError", "ModuleNotFoundError")
            for written, where, names in _imported(site.node):
                found = _private_module(written)
                if found is None:
                    continue
                imported.add(found)
                if not guarded:
                    self.report(where, _private_message(site.node, written, found, names))
        for use in facts.attribute_uses:
            node = use.node
            if not isinstance(node, cst.Attribute) or node.attr.value not in _PRIVATE_MODULE_WORDS:
                continue
            chain = origin(facts.imports, node)
            found = _private_module(chain) if chain is not None else None
            if chain is None or found is None or found == TF_PRIVATE_KERAS or found in imported:
                continue  # (an import of the module itself is reported at the import)
            head = (dotted(node) or "").split(".", 1)[0]
            if _private_module(facts.imports.origins.get(head, "")) is not None:
                continue
            if _guarded_by_hasattr(facts, node, use.scope, use.order) or spans.caught(use.order, "AttributeError"):
                continue
            public, advice = PRIVATE_MODULES[found]
            root = _keras_root(chain)
            instead = f"use `{_spelled(root, public)}`" if public is not None else advice
            if public is not None and advice:
                instead += f" ({advice})"
            self.report(node, old=dotted(node) or chain,
                        instead=f"Keras 3.15 has no `{_spelled(root, found)}` (AttributeError); {instead}")

    def _experimental_namespaces(self, facts: Facts) -> None:
        """`tf.keras.optimizers.experimental.AdamW`, `tf.keras.layers.experimental.preprocessing.X`,
        `tf.keras.experimental.CosineDecay`, `tf.keras.optimizers.legacy.Adam(...)`."""
        parents: dict[int, cst.Attribute] = {}
        for use in facts.attribute_uses:
            node = use.node
            if type(node) is cst.Attribute and type(node.value) is cst.Attribute:
                parents[id(node.value)] = node
        for use in facts.attribute_uses:
            node = use.node
            # A resolved chain ends in the attribute's own name (only its head is an import): only
            # `...experimental` and `...legacy` chains can be one of these namespaces.
            if type(node) is not cst.Attribute or node.attr.value not in ("experimental", "legacy"):
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
                new: cst.BaseExpression = cst.Attribute(value=base, attr=outer.attr)
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
            new = base
            for part in filter(None, moved[0].split(".")):
                new = cst.Attribute(value=new, attr=cst.Name(part))
            new = cst.Attribute(value=new, attr=member.attr)
            self.report(node, old=dotted(member) or text, instead=f"use `{dotted(new)}`",
                        fix=PendingFix(f"Use `{dotted(new)}`", True, [(member, new)]))

    def _changed_signatures(self, facts: Facts, private_keras: bool) -> None:
        """Keras 3 signature changes, each reported only on an object the value model proves to be a Keras
        model, layer or optimizer (the errors quoted are Keras 3.15's)."""
        for site in facts.calls:
            func = site.node.func
            method = site.method
            if site.qualified == "keras.callbacks.ModelCheckpoint":
                if not private_keras and not (origin(facts.imports, func) or "").startswith(TF_PRIVATE_KERAS):
                    self._model_checkpoint(site)
                continue
            if site.qualified in _SAVE_FUNCTIONS:
                self._save(site, arg_value(site.node, 1, "filepath"), site.func or site.qualified, 1)
                continue
            if method in ("save", "save_weights", "load_weights") and isinstance(func, cst.Attribute):
                if not _is_model(facts, func.value, site.scope, site.order):
                    continue
                where = f"{site.receiver or render(func.value)}.{method}"
                if method == "save":
                    self._save(site, arg_value(site.node, 0, "filepath"), where, 0)
                elif method == "save_weights":
                    self._save_weights(site, where)
                else:
                    by_name = keyword_arg(site.node, "by_name")
                    tail = _path_tail(facts, arg_value(site.node, 0, "filepath"), site.scope, site.order)
                    legacy = tail is not None and tail.endswith(_LEGACY_H5) and not tail.endswith(".weights.h5")
                    if by_name is not None and tail is not None and not legacy:
                        self.report(by_name, old=f"{where}(..., by_name=...)",
                                    instead="it only works for legacy `.h5` files (Keras 3.15 raises ValueError "
                                            "\"`by_name` only supports loading legacy '.h5' or '.hdf5' files\"); "
                                            "drop it and load a `.weights.h5` file saved by the same model")
            elif method == "add_metric" and isinstance(func, cst.Attribute) and _kinds(
                    facts, func.value, site.scope, site.order) <= {Kind.MODEL, Kind.LAYER} and _kinds(
                    facts, func.value, site.scope, site.order):
                self.report(func.attr, old=f"{site.receiver or render(func.value)}.add_metric()",
                            instead="Keras 3.15 raises NotImplementedError; create a metric in `__init__` and call "
                                    "its `update_state()`, or pass it to `compile(metrics=...)`")
            elif method in ("add_variable", "add_weight") and isinstance(func, cst.Attribute):
                first = arg_value(site.node, 0)
                if (isinstance(first, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
                        and _kinds(facts, func.value, site.scope, site.order) in ({Kind.LAYER}, {Kind.MODEL})):
                    error = ("\"Could not interpret initializer identifier\"" if method == "add_variable" else
                             "\"`name` must be passed as a keyword argument\"")
                    self.report(first, old=f"{site.receiver or render(func.value)}.{method}({render(first)}, ...)",
                                instead=f"Keras 3's first parameter is `shape` (3.15 raises ValueError {error}); "
                                        "pass `shape=` and `name=` as keywords")
            else:
                self._positional_flag(site, private_keras)
        self._keras2_optimizer_subclasses(facts)
        for use in facts.attribute_uses if "_shape" in self.context.source else ():
            node = use.node
            if not isinstance(node, cst.Attribute) or node.attr.value not in ("output_shape", "input_shape"):
                continue
            if _kinds(facts, node.value, use.scope, use.order) != {Kind.LAYER} or _own_member(
                    facts, node.value, use.scope, use.order, node.attr.value):
                continue
            self.report(node.attr, old=render(node),
                        instead=f"use `{render(node.value)}.{node.attr.value[:-6]}.shape` (Keras 3.15 raises "
                                f"AttributeError: no attribute '{node.attr.value}')")

    def _save(self, site: CallSite, path: cst.BaseExpression | None, where: str, position: int) -> None:
        facts = self.facts
        save_format = keyword_arg(site.node, "save_format")
        tail = _path_tail(facts, path, site.scope, site.order)
        if keyword_arg(site.node, "zipped") is not None:
            return
        if save_format is not None:
            fmt = string(save_format.value)
            if (tail is not None and not tail.endswith(_SAVE_SUFFIXES)) or (
                    tail is None and fmt is not None and fmt.lower() in ("tf", "savedmodel")):
                self.report(save_format, old=f"{where}(..., save_format=...)",
                            instead="Keras 3.15 raises ValueError \"The `save_format` argument is deprecated in Keras "
                                    "3\"; save to a `.keras` file, or export a SavedModel with `model.export(path)`")
            return
        if tail is not None and not tail.endswith(_SAVE_SUFFIXES) and not tail.startswith("hf://"):
            self.report(path or site.node, old=f"{where}({'..., ' * position}{render(path)})",
                        instead="Keras 3.15 raises ValueError \"Invalid filepath extension for saving\"; save to a "
                                "`.keras` file, or export a SavedModel with `model.export(path)`")

    def _save_weights(self, site: CallSite, where: str) -> None:
        save_format = keyword_arg(site.node, "save_format")
        if save_format is not None:
            self.report(save_format, old=f"{where}(..., save_format=...)",
                        instead="Keras 3.15 raises TypeError (unexpected keyword argument 'save_format'); save to "
                                "a path ending in `.weights.h5`")
            return
        path = arg_value(site.node, 0, "filepath")
        tail = _path_tail(self.facts, path, site.scope, site.order)
        if tail is not None and not tail.endswith(".weights.h5") and keyword_arg(site.node, "max_shard_size") is None:
            self.report(path or site.node, old=f"{where}({render(path)})",
                        instead="Keras 3.15 raises ValueError \"The filename must end in `.weights.h5`\"; use "
                                "a `.weights.h5` path (or `tf.train.Checkpoint` for TF checkpoints)")

    def _model_checkpoint(self, site: CallSite) -> None:
        """`ModelCheckpoint(path)`: Keras 3 checks the file name when the callback is made."""
        facts = self.facts
        if any(a.star for a in site.node.args):
            return
        path = arg_value(site.node, 0, "filepath")
        tail = _path_tail(facts, path, site.scope, site.order)
        if tail is None:
            return
        flag = arg_value(site.node, 4, "save_weights_only")
        weights_only: bool | None = False
        if flag is not None:
            found = values_of(facts, flag, site.scope, site.order)
            consts = {bool(v.const) for v in found if v.kind is Kind.CONSTANT and v.const is not None}
            known = found and all(v.kind is Kind.CONSTANT and v.const is not None for v in found)
            weights_only = consts.pop() if known and len(consts) == 1 else None
        old = f"ModelCheckpoint({render(path)}{', save_weights_only=True' if weights_only else ''})"
        if weights_only:
            if not tail.endswith(".weights.h5"):
                self.report(path or site.node, f"`{old}` fails on Keras 3 (TF >= 2.16): Keras 3.15 raises ValueError "
                                               "\"When using `save_weights_only=True` in `ModelCheckpoint`, the "
                                               "filepath provided must end in `.weights.h5`\" when the callback is "
                                               "made; end the path in `.weights.h5`")
        elif not tail.endswith((".keras", ".h5")):
            # (With `save_weights_only` unknown: a path that ends in neither fails either way.)
            self.report(path or site.node, f"`{old}` fails on Keras 3 (TF >= 2.16): Keras 3.15 raises ValueError "
                                           "\"The filepath provided must end in `.keras` (Keras model format)\" when "
                                           "the callback is made (`.hdf5` too); end the path in `.keras`, or in "
                                           "`.weights.h5` with `save_weights_only=True`")

    def _tf1_optimizers(self, facts: Facts) -> None:
        """`tf.compat.v1.train.AdamOptimizer().minimize(loss, var_list=model.trainable_variables)` and its
        `apply_gradients`, and `model.compile(optimizer=tf.compat.v1.train.AdamOptimizer())`: TF 1 optimizers
        do not take Keras 3 variables or models."""
        for site in facts.calls:
            func = site.node.func
            if site.method not in ("minimize", "apply_gradients") or not isinstance(func, cst.Attribute):
                continue
            classes = _tf1_optimizer_classes(facts, func.value, site.scope, site.order)
            if not classes:
                continue
            if site.method == "apply_gradients" and classes & TF1_SLOTLESS_OPTIMIZERS:
                continue  # (a slotless one steps Keras 3 variables: checked on TF 2.21 / Keras 3.15)
            if not _keras_variables(stepped_variables(facts, site, tf1=True)):
                continue
            error = ("ValueError \"Passed in object <Variable path=...> of type 'Variable', not tf.Tensor or "
                     "tf.Variable or ExtensionType\"" if site.method == "minimize" else
                     "AttributeError (`'Variable' object has no attribute '_unique_id'`, or `'get_shape'` for "
                     "some of them) when it makes its slot variables")
            cls = sorted(classes)[0]
            self.report(func.attr, f"`{render(func.value)}.{site.method}(...)` steps a Keras model's variables with "
                                   f"TF 1's `{cls}`, which does not take Keras 3 variables (TF >= 2.16): TF 2.21 "
                                   f"raises {error}; use `tf.keras.optimizers.{_KERAS_OPTIMIZER[cls]}`")
        for compiled in compiles(facts):
            optimizer = compiled.optimizer
            if optimizer is None or not _keras_models(compiled.models):
                continue
            site = compiled.site
            classes = _tf1_optimizer_classes(facts, optimizer, site.scope, site.order)
            if classes:
                cls = sorted(classes)[0]
                self.report(optimizer, f"`{render(site.node.func)}(...)` is given TF 1's `{cls}`, which Keras 3 (TF >= "
                                       "2.16) does not take: Keras 3.15 raises ValueError \"Could not interpret "
                                       f"optimizer identifier\"; use `tf.keras.optimizers.{_KERAS_OPTIMIZER[cls]}`")

    def _variable_name_filters(self, facts: Facts) -> None:
        """`"dense/" in v.name` over a Keras model's variables: Keras 3's `name` is the weight's own short name."""
        for order, scope, node in facts.comparisons:
            if len(node.comparisons) != 1:
                continue
            target = node.comparisons[0]
            operator = target.operator
            if isinstance(operator, (cst.In, cst.NotIn)):
                pairs = [(node.left, target.comparator)]
            elif isinstance(operator, (cst.Equal, cst.NotEqual)):
                pairs = [(node.left, target.comparator), (target.comparator, node.left)]
            else:
                continue
            for text, name in pairs:
                if self._short_name_filter(text, name, scope, order):
                    self.report(node, _SHORT_NAME_MESSAGE.format(old=render(node)))
                    break
        for site in facts.calls:
            func = site.node.func
            if site.method in ("startswith", "endswith") and isinstance(func, cst.Attribute) and (
                    self._short_name_filter(arg_value(site.node, 0), func.value, site.scope, site.order)):
                self.report(site.node, _SHORT_NAME_MESSAGE.format(old=render(site.node)))

    def _short_name_filter(self, text: cst.BaseExpression | None, name: cst.BaseExpression, scope: Scope,
                           order: int) -> bool:
        """Is `text` a constant with a `/` in it, and `name` the `.name` of a Keras model's variable?"""
        if text is None or not isinstance(name, cst.Attribute) or name.attr.value != "name":
            return False
        facts = self.facts
        found = values_of(facts, text, scope, order)
        if isinstance(text, cst.Tuple):  # `v.name.startswith(("dense/", "conv/"))`
            found = frozenset().union(*(values_of(facts, e.value, scope, order) for e in text.elements))
        if not found or not all(v.kind is Kind.CONSTANT and isinstance(v.const, str) and "/" in v.const
                                for v in found):
            return False
        return _keras_variables(values_of(facts, name.value, scope, order))

    def _positional_flag(self, site: CallSite, private_keras: bool = False) -> None:
        """`model(x, True)`, `dropout(x, False)`: Keras 3 takes only tensors positionally."""
        facts = self.facts
        positional = [a for a in site.node.args if a.keyword is None and not a.star]
        if len(positional) < 2 or any(a.star for a in site.node.args):
            return
        callee = values_of(facts, site.node.func, site.scope, site.order)
        if not callee or is_unknown(callee) or any(v.kind not in (Kind.MODEL, Kind.LAYER) for v in callee):
            return
        if any(v.cls in facts.classes and _defines(facts, v.cls, "__call__") for v in callee):
            return
        for arg in positional[1:]:
            found = values_of(facts, arg.value, site.scope, site.order)
            if found and all(v.kind is Kind.CONSTANT and v.const is not None for v in found):
                shown = render(arg.value)
                self.report(arg.value, old=f"{render(site.node.func)}(..., {shown})",
                            instead=f"Keras 3.15 raises ValueError \"Only input tensors may be passed as positional "
                                    f"arguments\"; pass it by keyword (`training={shown}`, or the parameter's name)")
                return
            if not private_keras and _training_parameter(facts, arg.value, site.scope, site.order):
                self.report(arg.value, f"`{render(site.node.func)}(..., training)` passes `training` positionally, "
                                       "which Keras 3 (TF >= 2.16) rejects: Keras gives `call` a Python bool for "
                                       "`training` (True in `fit`, False in `evaluate` and `predict`), and Keras 3.15 "
                                       "then raises ValueError \"Only input tensors may be passed as positional "
                                       "arguments\"; pass it by keyword (`training=training`)")
                return

    def _keras2_optimizer_subclasses(self, facts: Facts) -> None:
        """A subclass of the Keras optimizer written against Keras 2's optimizer internals."""
        for info in facts.classes.values():
            bases = values(facts).library_bases(info.name)
            if not any(b in _OPTIMIZER_BASES for b in bases):
                continue
            hooks = [name for name in _KERAS2_OPTIMIZER_HOOKS if name in info.methods]
            if hooks and not _defines(facts, info.name, "update_step"):
                self.report(info.node.name, old=f"{info.name}.{hooks[0]}",
                            instead="Keras 3 optimizers never call `_create_slots`/`_resource_apply_dense`, and "
                                    "`apply_gradients` raises NotImplementedError (Keras 3.15): implement `build()` "
                                    "and `update_step()`")
            for site in facts.calls:
                if (site.scope.class_name == info.name and site.func in ("self._set_hyper", "self._get_hyper")):
                    self.report(site.node.func, old=f"{site.func}()",
                                instead="Keras 3.15 raises AttributeError; store the value on `self` (a hyperparameter "
                                        "such as `learning_rate` goes to `super().__init__`)")

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
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
model.save("model.keras")
model.save("legacy_model.h5")
model.save_weights("checkpoints/model.weights.h5")
model.load_weights("legacy_weights.h5", by_name=True)
tf.train.Checkpoint(model=model).save("checkpoints/ckpt")
out = model(tf.ones((2, 4)), training=False)
for layer in model.layers:
    print(layer.output.shape)
print(model.output_shape)
""", "near miss: the Keras 3 spellings, a legacy .h5 file, a tf.train.Checkpoint and Model.output_shape"),
        Valid("""
import keras

class Scale(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), name="w")

    def call(self, x, scale=1.0):
        return x * self.w * scale

class PlainSGD(keras.optimizers.Optimizer):
    def update_step(self, gradient, variable, learning_rate):
        variable.assign_sub(learning_rate * gradient)

    def _create_slots(self, var_list):
        pass

layer = Scale()
y = layer(keras.ops.ones((1, 3)), None)
""", "near miss: keyword names, None passed positionally, a Keras 3 optimizer that implements update_step"),
        Valid("""
import tf_keras

model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
model.save("saved_model", save_format="tf")
model.save_weights("ckpt")
""", "tf_keras keeps the Keras 2 signatures"),
        Valid("""
import argparse
parser = argparse.ArgumentParser()
args = parser.parse_args()
print(args.lr)
""", "an `lr` attribute that is not an optimizer's"),
        Valid("""
import tensorflow as tf
from tensorflow.keras.layers import Dense, Dropout
from tensorflow.keras.utils import to_categorical
from tensorflow.python.keras import backend as K
from scikeras.wrappers import KerasClassifier
try:
    from keras.layers.core import Activation
except ImportError:
    from keras.layers import Activation
""", "near miss: the public modules, TF's private backend (which still runs), and a guarded Keras 2 import"),
        Valid("""
import numpy as np
import tensorflow as tf
from sklearn.linear_model import LogisticRegression

clf = LogisticRegression().fit(np.zeros((4, 2)), [0, 1, 0, 1])
print(clf.predict_proba(np.zeros((1, 2))))
model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(3, activation="softmax")])
print(np.argmax(model.predict(np.zeros((1, 2))), axis=-1))
""", "near miss: a scikit-learn classifier's predict_proba"),
        Valid("""
import tensorflow as tf

w = tf.Variable(5.0)
adam = tf.compat.v1.train.AdamOptimizer(0.1)
adam.minimize(lambda: (w - 2.0) ** 2, var_list=[w])
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
sgd = tf.compat.v1.train.GradientDescentOptimizer(0.1)
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(model(tf.ones((2, 4))))
grads = tape.gradient(loss, model.trainable_variables)
sgd.apply_gradients(zip(grads, model.trainable_variables))
""", "near miss: a TF 1 optimizer on a tf.Variable, and the slotless SGD, which steps Keras 3 variables"),
        Valid("""
import tensorflow as tf

callbacks = [
    tf.keras.callbacks.ModelCheckpoint("best.keras", save_best_only=True),
    tf.keras.callbacks.ModelCheckpoint("ckpt/epoch_{epoch:02d}.weights.h5", save_weights_only=True),
    tf.keras.callbacks.ModelCheckpoint("legacy_{epoch}.h5"),
    tf.keras.callbacks.ModelCheckpoint(args.checkpoint_path, save_weights_only=True),
]
""", "near miss: the Keras 3 file names, and a path that cannot be read"),
        Valid("""
import tensorflow as tf

class Block(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(8)
        self.dropout = tf.keras.layers.Dropout(0.1)

    def call(self, x, training=None):
        return self.dropout(self.dense(x), training=training)

model = tf.keras.Sequential([tf.keras.Input((4,)), Block()])
trainable = [v for v in model.trainable_variables if "kernel" in v.name or "block/" in v.path]
""", "near miss: training by keyword; a short-name filter that still matches, and a path filter"),
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
        Invalid("""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.save("exported_model", save_format="tf")
for epoch in range(3):
    model.save_weights(f"checkpoints/epoch_{epoch}.h5")
model.load_weights("checkpoints/epoch_2.weights.h5", by_name=True)
""", count=3, line=6, column=30, message_contains="save_format"),
        Invalid("""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dropout(0.5),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
for layer in model.layers:
    print(layer.name, layer.output_shape)
""", count=2, line=9, message_contains="Only input tensors"),
        Invalid("""
import tensorflow as tf

class Dense(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.kernel = self.add_variable("kernel", [int(input_shape[-1]), 10])

    def call(self, inputs):
        self.add_metric(tf.reduce_mean(inputs), name="mean_input")
        return tf.matmul(inputs, self.kernel)

class SGDNoSlots(tf.keras.optimizers.Optimizer):
    def __init__(self, learning_rate=0.01, name="SGDNoSlots", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self._set_hyper("learning_rate", learning_rate)

    def _resource_apply_dense(self, grad, var, apply_state=None):
        return var.assign_sub(grad * 0.01)
""", count=4, line=6, message_contains="first parameter is `shape`"),
        Invalid("""
import tensorflow as tf
from tensorflow.keras.layers.core import Dense, Dropout
from keras.utils import np_utils
from keras.wrappers.scikit_learn import KerasClassifier
""", count=3, line=3, column=6, message_contains="use `from tensorflow.keras.layers import Dense, Dropout`"),
        Invalid("""
import tensorflow as tf
from tensorflow.python.keras.layers import Dense

layer = tf.keras.layers.core.Dropout(0.5)
""", count=2, line=3, message_contains="TF's private copy of Keras 2"),
        Invalid("""
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="softmax")])
probabilities = model.predict_proba(np.ones((2, 4)))
""", line=6, column=23, message_contains="Keras 2.6", expected_fix="""
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="softmax")])
probabilities = model.predict(np.ones((2, 4)))
"""),
        Invalid("""
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="softmax")])
labels = model.predict_classes(np.ones((2, 4)))
""", message_contains="np.argmax(model.predict(x), axis=-1)"),
        Invalid("""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
model.compile(optimizer=tf.compat.v1.train.RMSPropOptimizer(0.01), loss="mse")
""", count=2, line=10, message_contains="_unique_id"),
        Invalid("""
import tensorflow as tf

checkpoint = tf.keras.callbacks.ModelCheckpoint("weights.{epoch:02d}-{val_loss:.2f}.hdf5", save_best_only=True)
weights = tf.keras.callbacks.ModelCheckpoint("training_1/cp.ckpt", save_weights_only=True)
""", count=2, line=4, column=49, message_contains="must end in `.keras`"),
        Invalid("""
import tensorflow as tf

class Block(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(8)
        self.dropout = tf.keras.layers.Dropout(0.1)

    def call(self, x, training=None):
        return self.dropout(self.dense(x), training)
""", line=11, message_contains="training=training"),
        Invalid("""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])
head = [v for v in model.trainable_variables if "dense_1/" in v.name]
""", line=5, message_contains="v.path"),
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
        if text is None or not isinstance(name, cst.SimpleString) or not isinstance(name.evaluated_value, str):
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


_SAVE_FUNCTIONS = frozenset({"keras.models.save_model", "keras.saving.save_model"})
_SAVE_SUFFIXES = (".keras", ".h5", ".hdf5")
_LEGACY_H5 = (".h5", ".hdf5")
_OPTIMIZER_BASES = frozenset({"keras.optimizers.Optimizer", "keras.optimizers.optimizer.Optimizer"})
_KERAS2_OPTIMIZER_HOOKS = ("_resource_apply_dense", "_resource_apply_sparse", "_create_slots", "_prepare_local")


def _path_tail(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> str | None:
    """The known end of a file path: a string constant, the last part of `os.path.join(...)` or of
    `dir + "name"`, or the text after the last placeholder of an f-string. None when unknown."""
    if expr is None:
        return None
    if isinstance(expr, cst.FormattedString):
        last = expr.parts[-1] if expr.parts else None
        return last.value if isinstance(last, cst.FormattedStringText) else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _path_tail(facts, expr.right, scope, order)
    if isinstance(expr, cst.Call) and facts.resolve(expr.func) in ("os.path.join", "posixpath.join"):
        parts = [a.value for a in expr.args if a.keyword is None and not a.star]
        return _path_tail(facts, parts[-1], scope, order) if parts and len(parts) == len(expr.args) else None
    found = values_of(facts, expr, scope, order)
    texts = {v.const for v in found if v.kind is Kind.CONSTANT and isinstance(v.const, str)}
    if found and len(texts) == 1 and len(found) == sum(1 for v in found if v.kind is Kind.CONSTANT):
        return texts.pop()
    if isinstance(expr, cst.Name) and found and not is_unknown(found):
        return None
    return None


def _defines(facts: Facts, cls: str, member: str) -> bool:
    """Does the local class `cls` (or a local base) define the method `member`?"""
    seen: set[str] = set()
    current: str | None = cls
    while current is not None and current not in seen and current in facts.classes:
        seen.add(current)
        info = facts.classes[current]
        if member in info.methods:
            return True
        current = next((b for b in info.bases if b in facts.classes), None)
    return False


def _own_member(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int, attr: str) -> bool:
    """Does the local class of this layer set or define `attr` itself?"""
    for value in values_of(facts, expr, scope, order):
        if value.cls in facts.classes:
            if _defines(facts, value.cls, attr) or any(
                    b.scope.class_name == value.cls for b in facts.bindings_of(f"self.{attr}")):
                return True
    return False


def _imports_private_keras(facts: Facts) -> bool:
    """Does the file take models or layers from TF's private copy of Keras 2 (`tensorflow.python.keras`)? They
    are Keras 2's, though their names read as Keras (`names.canonical` merges the spellings)."""
    return any(_private_module(o) == TF_PRIVATE_KERAS for o in facts.imports.origins.values())


def _imported(node: cst.Import | cst.ImportFrom) -> list[tuple[str, cst.CSTNode, list[str] | None]]:
    """What an import statement imports, as spelled: (module path, where to report it, the names taken from
    it). `from keras.layers.core import Dense` is the module `keras.layers.core` with `Dense`;
    `from keras.utils import np_utils` is the module `keras.utils.np_utils` itself (names None)."""
    found: list[tuple[str, cst.CSTNode, list[str] | None]] = []
    if isinstance(node, cst.Import):
        for alias in node.names:
            name = dotted(alias.name)
            if name is not None:
                found.append((name, alias.name, None))
        return found
    if node.relative or node.module is None:
        return found
    module = dotted(node.module)
    if module is None:
        return found
    star = isinstance(node.names, cst.ImportStar)
    aliases = [] if isinstance(node.names, cst.ImportStar) else list(node.names)
    names = [dotted(a.name) or "" for a in aliases]
    if module != TF_PRIVATE_KERAS and _private_module(module) is not None:
        found.append((module, node.module, None if star else names))
        return found
    for alias, name in zip(aliases, names):
        found.append((f"{module}.{name}", alias.name, None))
    return found


def _private_module(written: str) -> str | None:
    """The Keras 2 module (a key of PRIVATE_MODULES, or TF_PRIVATE_KERAS) that a module path spelled as
    imported is or lies in; None when it is none of them."""
    if written == TF_PRIVATE_KERAS or written.startswith(TF_PRIVATE_KERAS + "."):
        part = written[len(TF_PRIVATE_KERAS) + 1:].split(".", 1)[0]
        return TF_PRIVATE_KERAS if not part or part in _TF_PRIVATE_KERAS_PARTS else None
    root = _keras_root(written)
    if root is None:
        return None
    qualified = "keras" + written[len(root):]
    for module in PRIVATE_MODULES:
        if qualified == module or qualified.startswith(module + "."):
            return module
    return None


def _keras_root(written: str) -> str | None:
    """`tensorflow.keras` for `tensorflow.keras.layers.core`: the spelling of the Keras 3 package a path starts with."""
    for root in _KERAS3_ROOTS:
        if written.startswith(root + "."):
            return root
    return None


def _spelled(root: str | None, module: str) -> str:
    """A canonical `keras...` module spelled under the user's root (`tensorflow.keras.layers`)."""
    return (root or "keras") + module[len("keras"):]


# What to import from in place of a part of `tensorflow.python.keras` (`tensorflow.keras` + this).
_TF_PRIVATE_KERAS_PUBLIC = {"": "", "layers": ".layers", "models": ".models", "engine": "", "optimizers": ".optimizers",
                            "optimizer_v2": ".optimizers", "preprocessing": ".preprocessing", "Sequential": "",
                            "Model": "", "Input": ""}


def _private_message(node: cst.Import | cst.ImportFrom, written: str, found: str, names: list[str] | None) -> str:
    old = _render_import(node)
    if found == TF_PRIVATE_KERAS:
        part = written[len(TF_PRIVATE_KERAS) + 1:].split(".", 1)[0]
        target = "tensorflow.keras" + _TF_PRIVATE_KERAS_PUBLIC.get(part, "")
        if names:
            replacement = f"from {target} import {', '.join(names)}"
        elif isinstance(node, cst.ImportFrom) and written == TF_PRIVATE_KERAS:
            replacement = "from tensorflow import keras"
        elif isinstance(node, cst.ImportFrom):
            replacement = f"from tensorflow.keras import {part}"
        else:
            replacement = target
        return (f"`{old}` imports TF's private copy of Keras 2, which does not work with Keras 3 (TF >= 2.16): its "
                "layers cannot go into a Keras 3 model (ValueError \"Only instances of `keras.Layer` can be added to a "
                "Sequential model\"), its models' `fit` and `predict` raise AttributeError on TF 2.21, and parts of "
                f"it are missing; use `{replacement}`")
    public, advice = PRIVATE_MODULES[found]
    keras_root = _keras_root(written)
    if public is None:
        instead = advice
    else:
        module = _spelled(keras_root, public)
        instead = f"use `from {module} import {', '.join(names)}`" if names else f"import from `{module}`"
        if advice:
            instead += f" ({advice})"
    return (f"`{old}` was removed in Keras 3 (TF >= 2.16); Keras 3.15 has no module `{_spelled(keras_root, found)}` "
            f"(ImportError); {instead}")


def _render_import(node: cst.Import | cst.ImportFrom) -> str:
    """The import statement as written, on one line."""
    text = cst.Module(body=[]).code_for_node(node)
    return " ".join(text.split())


def _training_parameter(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> bool:
    """Is `expr` the `training` parameter of a Keras layer's or model's `call`, not rebound? Keras fills that
    parameter itself, with a Python bool whenever the layer runs in `fit`, `evaluate`, `predict` or under a
    `training=` flag (None only when no flag was ever given)."""
    if type(expr) is not cst.Name or expr.value != "training" or scope.simple_name != "call":
        return False
    if scope.class_name is None or "training" not in scope.params:
        return False
    resolver = values(facts)
    if resolver.class_kind(scope.class_name) not in (Kind.LAYER, Kind.MODEL):
        return False
    return not resolver.reaching("training", scope, order)


def _tf1_optimizer_classes(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> set[str]:
    """The TF 1 optimizer classes `expr` may be (`AdamOptimizer`); empty unless it is one on every path."""
    found = values_of(facts, expr, scope, order)
    classes = {tf1_optimizer_class(v.cls) if v.kind is Kind.EXTERNAL else None for v in found}
    if not found or None in classes:
        return set()
    return {c for c in classes if c is not None}


def _keras_models(held: frozenset[Value]) -> bool:
    """Are these, on every path, Keras models or layers (not unknown)?"""
    return bool(held) and all(v.kind in (Kind.MODEL, Kind.LAYER) for v in held)


def _keras_variables(held: frozenset[Value]) -> bool:
    """Are these, on every path, a Keras model's (or layer's) variables: `model.trainable_variables`, or one
    element of it (`v` in `for v in model.weights`)?"""
    if not held:
        return False
    for value in held:
        if value.kind is Kind.VARIABLE and value.owner:
            if not all(w.kind is Kind.WEIGHTS and _keras_models(w.owner) for w in value.owner):
                return False
        elif not (value.kind is Kind.WEIGHTS and _keras_models(value.owner)):
            return False
    return True

"""The names tapelint knows: Keras classes, weight attributes and apply methods, in one table.

Every analysis module and rule reads these from here, so a new optimizer or a renamed attribute is
one edit.
"""

from __future__ import annotations

# Optimizers
ADAPTIVE_OPTIMIZERS = frozenset(
    {"Adam", "AdamW", "Adamax", "Nadam", "RMSprop", "Adagrad", "Adafactor", "Lion", "Lamb", "Ftrl"}
)
SGD_OPTIMIZERS = frozenset({"SGD"})
OTHER_OPTIMIZERS = frozenset({"Adadelta", "Optimizer", "LossScaleOptimizer", "Muon"})
OPTIMIZER_CLASSES = ADAPTIVE_OPTIMIZERS | SGD_OPTIMIZERS | OTHER_OPTIMIZERS
APPLY_METHODS = frozenset({"apply_gradients", "apply", "minimize"})
LOSS_SCALE_WRAPPERS = frozenset({"LossScaleOptimizer"})


def optimizer_class(qualified: str | None) -> str | None:
    """`Adam` for any spelling of a Keras optimizer class (incl. legacy/experimental), else None."""
    if not qualified or not qualified.startswith("keras.optimizers") and not qualified.startswith(
        "keras.mixed_precision"
    ):
        return None
    last = qualified.rsplit(".", 1)[-1]
    if last in OPTIMIZER_CLASSES and last != "Optimizer":
        return last
    return None


def is_legacy_optimizer(qualified: str | None) -> bool:
    return qualified is not None and ".legacy." in qualified


SCHEDULE_PREFIX = "keras.optimizers.schedules."

# TF 1's optimizers (`tf.compat.v1.train.AdamOptimizer`): not Keras optimizers, and not made for Keras 3's
# variables. The ones without slot variables step them in `apply_gradients` (checked on TF 2.21 / Keras 3.15).
TF1_OPTIMIZER_PREFIX = "tensorflow.compat.v1.train."
TF1_OPTIMIZERS = frozenset({
    "AdadeltaOptimizer", "AdagradOptimizer", "AdamOptimizer", "FtrlOptimizer",
    "GradientDescentOptimizer", "MomentumOptimizer", "ProximalAdagradOptimizer",
    "ProximalGradientDescentOptimizer", "RMSPropOptimizer",
})
TF1_SLOTLESS_OPTIMIZERS = frozenset({"GradientDescentOptimizer", "ProximalGradientDescentOptimizer"})


def tf1_optimizer_class(qualified: str | None) -> str | None:
    """`AdamOptimizer` for `tf.compat.v1.train.AdamOptimizer` (any spelling that resolves to it), else None."""
    if not qualified or not qualified.startswith(TF1_OPTIMIZER_PREFIX):
        return None
    last = qualified[len(TF1_OPTIMIZER_PREFIX):]
    return last if last in TF1_OPTIMIZERS else None

# Models
# The one list of each model class's canonical names (`names.canonical` maps every public spelling,
# `tf.keras.Sequential`, `keras.src.models.Sequential`, ..., onto these).
SEQUENTIAL_CLASSES = frozenset({"keras.Sequential", "keras.models.Sequential"})
FUNCTIONAL_CLASSES = frozenset({"keras.Model", "keras.models.Model"})
MODEL_CLASSES = SEQUENTIAL_CLASSES | FUNCTIONAL_CLASSES
APPLICATIONS_PREFIX = "keras.applications."
LOAD_MODEL = frozenset({"keras.models.load_model", "keras.saving.load_model"})
# `keras.Input(...)`: a model's symbolic input (in a Sequential list, or where a functional graph starts).
INPUT_CALLS = frozenset({"keras.Input", "keras.layers.Input"})

# Variables
WEIGHT_ATTRIBUTES = frozenset({"trainable_variables", "trainable_weights", "variables", "weights"})
VARIABLE_CLASSES = frozenset({"tensorflow.Variable", "keras.Variable", "keras.backend.Variable"})
TAPE_CLASSES = frozenset({"tensorflow.GradientTape", "tensorflow.autodiff.GradientTape"})

# tf.data: what creates a `tf.data.Dataset`, and the methods that return another one.
DATASET_PREFIX = "tensorflow.data.Dataset."
DATASET_SOURCES = frozenset({
    "tensorflow.data.TFRecordDataset", "tensorflow.data.TextLineDataset", "tensorflow.data.FixedLengthRecordDataset",
    "tensorflow.data.experimental.make_csv_dataset", "tensorflow.data.experimental.CsvDataset",
    "keras.utils.image_dataset_from_directory", "keras.preprocessing.image_dataset_from_directory",
    "keras.utils.text_dataset_from_directory", "keras.preprocessing.text_dataset_from_directory",
    "keras.utils.timeseries_dataset_from_array", "keras.preprocessing.timeseries_dataset_from_array",
    "keras.utils.audio_dataset_from_directory",
})
DATASET_METHODS = frozenset({
    "batch", "shuffle", "map", "repeat", "prefetch", "cache", "take", "skip", "filter", "unbatch", "padded_batch",
    "with_options", "apply", "interleave", "flat_map", "enumerate", "concatenate", "shard", "rebatch",
    "ragged_batch", "bucket_by_sequence_length", "take_while", "ignore_errors",
})

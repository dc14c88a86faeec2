"""The Keras 3 signature changes of TL502, on realistic loops: reported on Keras 3 objects, silent on the
Keras 3 spellings and on tf_keras code."""

from __future__ import annotations

import textwrap

from tapelint.config import Config
from tapelint.engine import lint_source

LOOP = """
import os
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
for epoch in range(5):
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    SAVE
"""


def _tl502(save: str, header: str = "") -> list[int]:
    source = header + LOOP.replace("SAVE", save)
    return [d.line for d in lint_source(textwrap.dedent(source), "t.py", Config(), force=True) if d.code == "TL502"]


def test_save_weights_to_a_checkpoint_prefix_is_reported():
    assert _tl502('model.save_weights(os.path.join("ckpt", "model"))') == [13]


def test_save_weights_to_a_weights_h5_file_is_silent():
    assert _tl502('model.save_weights(os.path.join("ckpt", f"epoch_{epoch}.weights.h5"))') == []


def test_save_with_save_format_tf_is_reported_and_a_keras_file_is_not():
    assert _tl502('model.save("export_dir", save_format="tf")') == [13]
    assert _tl502('model.save("model.keras")') == []
    assert _tl502('model.save("model.h5")') == []


def test_a_path_we_cannot_read_is_not_judged():
    assert _tl502("model.save(args.output_dir)") == []


def test_tf_keras_code_keeps_its_signatures():
    assert _tl502('model.save_weights("ckpt/model")', header="import tf_keras\n") == []


def test_a_constant_passed_positionally_to_a_layer_is_reported_but_not_a_variable():
    assert _tl502("model(x, False)") == [13]
    assert _tl502("model(x, is_training)") == []


def test_output_shape_of_a_layer_is_reported_and_of_a_model_is_not():
    assert _tl502("print([layer.output_shape for layer in model.layers])") == [13]
    assert _tl502("print(model.output_shape)") == []


def test_removed_modules_are_reported_through_any_import_spelling():
    header = """
from tensorflow.keras import estimator as est
from tensorflow import keras
import tensorflow.keras.callbacks.experimental as cbx
from tensorflow.keras import dtensor
"""
    line = 13 + header.count("\n")  # the loop's SAVE line, below the header
    assert _tl502("est.model_to_estimator(model)", header) == [line]
    assert _tl502("keras.estimator.model_to_estimator(keras_model=model)", header) == [line]
    assert _tl502("tf.keras.estimator.model_to_estimator(model)", header) == [line]
    assert _tl502('cbx.BackupAndRestore("/tmp/backup")', header) == [line]
    assert _tl502('tf.keras.callbacks.experimental.BackupAndRestore("/tmp/backup")', header) == [line]
    assert _tl502('dtensor.Mesh(["batch"], None, None)', header) == [line]
    # The removed module's name spelled only in the import, never where it is used.
    alone = "\nimport tensorflow.keras.callbacks.experimental as cbx\n"
    assert _tl502('cbx.BackupAndRestore("/tmp/backup")', alone) == [13 + alone.count("\n")]
    # The stable names, and a module of the user's own that happens to be called `estimator`, are not.
    assert _tl502('tf.keras.callbacks.BackupAndRestore("/tmp/backup")', header) == []
    assert _tl502("estimator.model_to_estimator(model)", "from . import estimator\n") == []


HUBER = '''
import tensorflow as tf
from tensorflow import keras


class HuberMetric(keras.metrics.Metric):
    def __init__(self, threshold=1.0, **kwargs):
        super().__init__(**kwargs)
        self.threshold = threshold
        self.total = self.add_weight(name="total", initializer="zeros")
        self.count = self.add_weight(name="count", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        error = tf.abs(y_true - y_pred)
        self.total.assign_add(tf.reduce_sum(tf.where(error < self.threshold, error ** 2 / 2, error)))
        self.count.assign_add(tf.cast(tf.size(y_true), tf.float32))

    def result(self):
        return self.total / self.count


m = HuberMetric(2.0)
m(tf.constant([[2.0]]), tf.constant([[10.0]]))
print(m.result())
m.RESET()
'''


def test_reset_states_on_a_subclass_of_keras_metric_is_reported_and_reset_state_is_not():
    """ageron/handson-ml2 chapter 12: `m.reset_states()` on a `keras.metrics.Metric` subclass raises
    AttributeError on Keras 3, like on the built-in metrics."""
    found = [d.line for d in lint_source(HUBER.replace("RESET", "reset_states"), "t.py", Config(), force=True)
             if d.code == "TL502"]
    assert found == [25]
    assert [d for d in lint_source(HUBER.replace("RESET", "reset_state"), "t.py", Config(), force=True)
            if d.code == "TL502"] == []


def _lines(source: str) -> list[int]:
    return [d.line for d in lint_source(textwrap.dedent(source), "t.py", Config(), force=True) if d.code == "TL502"]


def test_imports_of_keras2_private_modules_are_reported_in_every_spelling():
    assert _lines("""
        import tensorflow as tf
        import keras.layers.core
        from keras.layers import merge
        from tensorflow.keras.layers.convolutional import Conv2D
        from keras.engine.topology import Layer
        layer = tf.keras.layers.recurrent.LSTM(4)
        """) == [3, 4, 5, 6, 7]
    # The public modules, and Keras 2 imports that only run where they exist (a version switch).
    assert _lines("""
        import tensorflow as tf
        import tensorflow.keras.layers
        from tensorflow.keras import layers
        from keras.layers import Dense, Conv2D, concatenate
        from keras.utils import to_categorical
        try:
            from keras.layers.merge import concatenate
        except ImportError:
            pass
        if tf.__version__.startswith("2.1"):
            from keras.utils.np_utils import to_categorical
        """) == []


def test_tensorflow_python_keras_layers_are_reported_and_its_backend_is_not():
    assert _lines("""
        from tensorflow.python.keras.layers import Dense, LSTM
        from tensorflow.python.keras.models import Sequential
        from tensorflow.python.keras import backend as K
        from tensorflow.python.keras.utils import np_utils
        from tensorflow.python.training import moving_averages
        """) == [2, 3]


def test_predict_proba_is_reported_on_a_keras_model_but_not_on_a_scikit_learn_classifier():
    assert _tl502("print(model.predict_proba(x), model.predict_classes(x))") == [13, 13]
    assert _tl502("print(clf.predict_proba(x))",
                  header="from sklearn.svm import SVC\nclf = SVC(probability=True)\n") == []


def test_tf1_optimizer_is_reported_on_a_keras_models_variables_only():
    header = "import tensorflow as tf\nv1_adam = tf.compat.v1.train.AdamOptimizer(1e-3)\nw = tf.Variable(1.0)\n"
    line = 13 + header.count("\n")
    assert _tl502("v1_adam.apply_gradients(zip(grads, model.trainable_variables))", header) == [line]
    assert _tl502("v1_adam.minimize(lambda: loss, None, model.trainable_weights)", header) == [line]
    assert _tl502("v1_adam.minimize(lambda: loss, var_list=model.trainable_variables)", header) == [line]
    # A tf.Variable, variables the optimizer finds itself (it does in eager mode), the Keras optimizer.
    assert _tl502("v1_adam.minimize(lambda: w * w, var_list=[w])", header) == []
    assert _tl502("v1_adam.minimize(lambda: loss)", header) == []
    assert _tl502("optimizer.apply_gradients(zip(grads, model.trainable_variables))", header) == []


def test_model_checkpoint_paths_that_keras_3_rejects_are_reported():
    header = "from tensorflow.keras.callbacks import ModelCheckpoint\n"
    line = 13 + header.count("\n")
    assert _tl502('cb = ModelCheckpoint("model.{epoch:02d}.hdf5")', header) == [line]
    assert _tl502('cb = ModelCheckpoint(os.path.join("ckpt", "cp-{epoch:04d}.ckpt"), save_weights_only=True)',
                  header) == [line]
    assert _tl502('cb = ModelCheckpoint("model.keras", save_weights_only=True)', header) == [line]
    # `save_weights_only` unknown: reported only when both modes fail.
    assert _tl502('cb = ModelCheckpoint("ckpt/model", save_weights_only=flag)', header) == [line]
    assert _tl502('cb = ModelCheckpoint("ckpt/model.keras", save_weights_only=flag)', header) == []
    assert _tl502('cb = ModelCheckpoint("ckpt/model.h5")', header) == []
    assert _tl502('cb = ModelCheckpoint(f"ckpt/{epoch}.weights.h5", save_weights_only=True)', header) == []
    assert _tl502("cb = ModelCheckpoint(checkpoint_path, save_weights_only=True)", header) == []


CALL = """
import tensorflow as tf

class Block(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dropout = tf.keras.layers.Dropout(0.1)

    def call(self, x, training=None):
        BODY
"""


def test_the_training_parameter_of_call_passed_positionally_is_reported():
    assert _lines(CALL.replace("BODY", "return self.dropout(x, training)")) == [10]
    assert _lines(CALL.replace("BODY", "return self.dropout(x, training=training)")) == []
    # Rebound first: what it holds is no longer what Keras passed.
    assert _lines(CALL.replace("BODY", "training = tf.constant(True)\n        return self.dropout(x, training)")) == []
    # A plain function's parameter: what callers pass is unknown.
    assert _lines("""
        import tensorflow as tf
        dropout = tf.keras.layers.Dropout(0.1)

        def forward(x, training):
            return dropout(x, training)
        """) == []


def test_name_filters_that_keras_3_short_names_never_match_are_reported():
    assert _tl502('frozen = [v for v in model.trainable_variables if "dense/" in v.name]') == [13]
    assert _tl502('frozen = [v for v in model.weights if v.name.startswith(("dense/", "dense_1/"))]') == [13]
    assert _tl502('frozen = [v for v in model.trainable_variables if "kernel" in v.name]') == []
    assert _tl502('frozen = [v for v in model.trainable_variables if "dense/" in v.path]') == []
    # TF 1 variables keep their scoped names.
    assert _tl502('frozen = [v for v in tf.compat.v1.trainable_variables() if "dense/" in v.name]') == []

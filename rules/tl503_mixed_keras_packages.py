from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl503_keras_packages import LEGACY_FLAG, mixes

_HOW = {
    "sequential": "Keras rejects the layer when the model is built",
    "functional": "the layer cannot take the other package's symbolic tensor",
    "attribute": "the model does not track it, so its weights are not trained or saved",
}


class MixedKerasPackages(Rule):
    """
    ## What it does
    Reports a layer or model of one Keras package put into a model of the other: a `tf_keras` (Keras 2)
    object, `tensorflow_hub.KerasLayer` included (it subclasses `tf_keras`' `Layer` when `tf.keras` is
    Keras 3), in a Keras 3 model, or a Keras 3 layer in a `tf_keras` model. Three places are checked:
    the layers of a `Sequential([...])` (or its `.add(...)`), a layer applied to a symbolic tensor of
    the other package (`hub_layer(keras.Input(...))`, the functional API), and a trainable layer stored
    as an attribute of a `Model`/`Layer` subclass of the other package. On TF 2.16+, `tf.keras` is
    Keras 3 unless the file sets `os.environ["TF_USE_LEGACY_KERAS"] = "1"`; then it is `tf_keras`.
    The package of every object comes from its import (`keras`, `tf.keras`, `tf_keras`,
    `tensorflow_hub`) through the value model; where it cannot be proven, the rule is silent.

    ## Why is this bad?
    The two packages have separate `Layer` classes and separate symbolic tensors. Measured on TF 2.21 /
    Keras 3.15.1 with tf_keras 2.21 and tensorflow_hub 0.16.1 (a hub layer made from a local SavedModel):
    - `tf.keras.Sequential([hub.KerasLayer(path), ...])` (or `keras.Sequential`, or `.add(hub_layer)`)
      raises `ValueError: Only instances of `keras.Layer` can be added to a Sequential model. Received:
      <tensorflow_hub.keras_layer.KerasLayer object ...>`; the same with `tf_keras.layers.Dense`;
    - `hub.KerasLayer(path)(keras.Input((8,)))` raises `TypeError: ... Binding inputs to tf.function
      failed due to `A KerasTensor cannot be used as input to a TensorFlow function``, and
      `tf_keras.layers.Dense(4)(keras.Input((8,)))` raises `AttributeError: 'tuple' object has no
      attribute 'rank'`;
    - `tf_keras.Sequential([..., keras.layers.Dense(1)])` raises `TypeError: The added layer must be an
      instance of class Layer`;
    - silently: a Keras 3 `Model` subclass with `self.encoder = hub.KerasLayer(path, trainable=True)` (or
      a `tf_keras.layers.Dense`) fits without error, but `model.trainable_variables` holds only the
      Keras 3 weights and the hub layer's weights never change (max change 0.0 after 3 epochs); a
      Keras 3 `Dense` applied inside a `tf_keras` functional model is wrapped as a lambda and its
      kernel never changes either (also reported); a Keras 3 layer stored on a `tf_keras.Model`
      subclass makes `fit` fail with an `AttributeError`.

    ## Example
    ```python
    import tensorflow as tf
    import tensorflow_hub as hub

    encoder = hub.KerasLayer("saved_encoder", trainable=True)
    model = tf.keras.Sequential([encoder, tf.keras.layers.Dense(1)])  # ValueError on TF 2.16+
    ```

    ## Use instead
    Keep the whole model in one package. Either everything in `tf_keras`:
    ```python
    import os
    os.environ["TF_USE_LEGACY_KERAS"] = "1"  # before importing tensorflow: tf.keras is tf_keras
    import tensorflow as tf
    import tensorflow_hub as hub

    model = tf.keras.Sequential([hub.KerasLayer("saved_encoder"), tf.keras.layers.Dense(1)])
    ```
    or everything in Keras 3, loading the SavedModel with `keras.layers.TFSMLayer(path,
    call_endpoint="serving_default")`; or call the hub layer on its own (eagerly, to compute
    embeddings) and feed its outputs to the Keras 3 model as data.

    ## Known problems
    `tf.keras` counts as tf_keras only when the file itself sets `TF_USE_LEGACY_KERAS` with a string
    assignment or `os.environ.setdefault`; set any other way (the shell, a `%env` line, a helper),
    `tf.keras` objects are of unknown package and not checked. A project configured with
    `keras-version = 2` that also imports `tf_keras` is read as running Keras 3 for `keras`/`tf.keras`.
    A hub layer or `tf_keras` layer stored on a Keras 3 subclass with `trainable=False` is not
    reported: it runs and is frozen anyway (only saving it is affected). Layers passed through
    parameters, lists built in loops, or wrapped in `Lambda` are not followed.

    ## Options
    None.

    ## Fix safety
    No fix: the remedy is a choice between the two packages (and sometimes `TFSMLayer`, which loads
    the SavedModel differently), which changes imports across the program.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/65419 (`tf.keras.models.Sequential([hub.KerasLayer(...)])`
      raises "Only instances of `keras.Layer` can be added to a Sequential model" on TF 2.16)
    - https://github.com/tensorflow/hub/issues/920 (`model.add(hub.KerasLayer(...))` on a `tf.keras.Sequential`)
    - https://github.com/tensorflow/tensorflow/issues/76042 (the text_classification_with_hub tutorial fails
      at `model.add(hub_layer)`)
    - https://github.com/tensorflow/tensorflow/issues/86041 (installing tf_keras fixes one section, the
      `tf.keras.Sequential([feature_extractor_layer, ...])` head still fails)
    - https://github.com/tensorflow/tensorflow/issues/63085 (the same error; a `keras.Model` subclass holding
      the hub layer is suggested as a workaround)
    - https://cocalc.com/github/keras-team/keras-io/blob/master/guides/migrating_to_keras_3.py (Migrating
      Keras 2 code to multi-backend Keras 3)
    """

    code = "TL503"
    name = "mixed-keras-packages"
    message = "`{what}` is a {inner} object used in a {outer} model ({container}): {how}"
    severity = Severity.ERROR
    triggers = ("tf_keras", "tensorflow_hub", LEGACY_FLAG)

    def check(self) -> None:
        facts = self.facts
        if self.context.keras_version == 2 and not facts.imports.uses_tf_keras \
                and LEGACY_FLAG not in self.context.source:
            return  # the project runs Keras 2: `keras` and `tf.keras` are not Keras 3
        for mix in mixes(facts):
            self.report(mix.node, what=mix.what, inner=mix.inner.value, outer=mix.outer.value,
                        container=mix.container, how=_HOW[mix.how])

    VALID = [
        Valid(
            """
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import tensorflow as tf
import tensorflow_hub as hub

encoder = hub.KerasLayer("saved_encoder", input_shape=(8,))
model = tf.keras.Sequential([encoder, tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
""",
            why="TF_USE_LEGACY_KERAS=1 makes tf.keras the tf_keras package the hub layer belongs to",
        ),
        Valid(
            """
import tf_keras
import tensorflow_hub as hub

model = tf_keras.Sequential([hub.KerasLayer("saved_encoder", input_shape=(8,)), tf_keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
""",
            why="everything is tf_keras",
        ),
        Valid(
            """
import keras
import numpy as np
import tensorflow_hub as hub

encoder = hub.KerasLayer("saved_encoder")
features = encoder(np.random.rand(256, 8).astype("float32")).numpy()
head = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
head.compile(optimizer="adam", loss="mse")
head.fit(features, np.random.rand(256, 1), epochs=2)
""",
            why="the hub layer runs on its own; the Keras 3 model only sees its numpy outputs",
        ),
        Valid(
            """
import keras
import tensorflow_hub as hub

encoder = keras.layers.TFSMLayer("saved_encoder", call_endpoint="serving_default")
inputs = keras.Input((8,))
outputs = keras.layers.Dense(1)(encoder(inputs)["output_0"])
model = keras.Model(inputs, outputs)
""",
            why="TFSMLayer is the Keras 3 way to load a SavedModel",
        ),
        Valid(
            """
import keras
import tensorflow_hub as hub

class Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = hub.KerasLayer("saved_encoder", trainable=False)
        self.head = keras.layers.Dense(1)

    def call(self, x):
        return self.head(self.encoder(x))
""",
            why="a frozen hub layer held by a Keras 3 subclass runs; its weights are meant to stay fixed",
        ),
    ]

    INVALID = [
        Invalid(
            """
import tensorflow as tf
import tensorflow_hub as hub

encoder = hub.KerasLayer("saved_encoder", input_shape=(8,))
model = tf.keras.Sequential([
    encoder,
    tf.keras.layers.Dense(1),
])
""",
            line=7,
            column=5,
            message_contains="tf_keras object used in a Keras 3 model",
        ),
        Invalid(
            """
import tensorflow as tf
import tensorflow_hub as hub

model = tf.keras.Sequential()
model.add(hub.KerasLayer("saved_encoder", input_shape=(8,), trainable=True))
model.add(tf.keras.layers.Dense(1))
""",
            line=6,
        ),
        Invalid(
            """
import keras
import tensorflow_hub as hub

inputs = keras.Input(shape=(8,))
features = hub.KerasLayer("saved_encoder")(inputs)
outputs = keras.layers.Dense(1)(features)
model = keras.Model(inputs, outputs)
""",
            line=6,
        ),
        Invalid(
            """
import keras
import tf_keras

model = tf_keras.Sequential([tf_keras.Input((8,)), keras.layers.Dense(1)])
""",
            line=5,
            message_contains="Keras 3 object used in a tf_keras model",
        ),
        Invalid(
            """
import keras
import tensorflow_hub as hub

class Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = hub.KerasLayer("saved_encoder", trainable=True)
        self.head = keras.layers.Dense(1)

    def call(self, x):
        return self.head(self.encoder(x))
""",
            line=8,
            message_contains="not trained",
        ),
    ]

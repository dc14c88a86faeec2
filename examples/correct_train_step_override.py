"""A correct `train_step` override: the model's own optimizer and compute_loss, regularized layers,
BatchNormalization and Dropout run through `fit`. tapelint reports nothing."""

import numpy as np
import keras


class CustomModel(keras.Model):
    def __init__(self, num_classes):
        super().__init__()
        self.hidden = keras.layers.Dense(64, activation="relu", kernel_regularizer=keras.regularizers.L2(1e-4))
        self.norm = keras.layers.BatchNormalization()
        self.dropout = keras.layers.Dropout(0.3)
        self.classifier = keras.layers.Dense(num_classes)

    def call(self, inputs, training=False):
        x = self.hidden(inputs)
        x = self.norm(x, training=training)
        x = self.dropout(x, training=training)
        return self.classifier(x)

    def train_step(self, data):
        import tensorflow as tf

        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


model = CustomModel(num_classes=3)
model.compile(
    optimizer=keras.optimizers.Adam(learning_rate=1e-3),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
rng = np.random.default_rng(0)
model.fit(rng.random((128, 8), dtype=np.float32), rng.integers(0, 3, size=128), epochs=2, verbose=2)

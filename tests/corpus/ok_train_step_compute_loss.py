# expect: none
"""A Keras 3 Model subclass overriding train_step with compute_loss (adds model.losses itself)."""
import keras
import numpy as np
import tensorflow as tf
from keras import layers


class CustomModel(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


inputs = keras.Input(shape=(32,))
hidden = layers.Dense(64, activation="relu", kernel_regularizer=keras.regularizers.l2(1e-4))(inputs)
outputs = layers.Dense(3, activation="softmax")(hidden)
model = CustomModel(inputs, outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

x = np.random.random((1000, 32))
y = np.random.randint(0, 3, size=(1000,))
model.fit(x, y, epochs=3)

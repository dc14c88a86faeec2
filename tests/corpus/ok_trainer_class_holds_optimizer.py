# expect: none
"""A small trainer class: the optimizer is handed to __init__, kept on self, and applied in a method."""
import tensorflow as tf


class Trainer:
    def __init__(self, model, optimizer, loss_fn):
        self.model = model
        self.opt = optimizer
        self.loss_fn = loss_fn

    @tf.function
    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(y, self.model(x, training=True))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss


model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(8, activation="tanh"),
                             tf.keras.layers.Dense(1)])
trainer = Trainer(model, tf.keras.optimizers.Adam(learning_rate=1e-3), tf.keras.losses.MeanSquaredError())
for _ in range(10):
    trainer.step(tf.random.normal((16, 3)), tf.random.normal((16, 1)))

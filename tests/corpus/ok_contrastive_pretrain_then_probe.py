# expect: none
"""Self-supervised pre-training in a train_step override, then a linear probe: a feature model cut from
the pre-trained encoder is frozen and only the probe's Dense head is trained, with compile()/fit()."""
import tensorflow as tf

layers = tf.keras.layers


def make_encoder():
    pixels = layers.Input((16, 16, 3))
    h = layers.Conv2D(8, 3, activation="relu")(pixels)
    h = layers.GlobalAveragePooling2D(name="pooled")(h)
    return tf.keras.Model(pixels, layers.Dense(16)(h))


class TwoViewModel(tf.keras.Model):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.tracker = tf.keras.metrics.Mean(name="loss")

    def train_step(self, data):
        first, second = data
        with tf.GradientTape() as tape:
            a = tf.math.l2_normalize(self.encoder(first, training=True), axis=1)
            b = tf.math.l2_normalize(self.encoder(second, training=True), axis=1)
            loss = -tf.reduce_mean(tf.reduce_sum(a * tf.stop_gradient(b), axis=1))
        grads = tape.gradient(loss, self.encoder.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.encoder.trainable_variables))
        self.tracker.update_state(loss)
        return {"loss": self.tracker.result()}


views = tf.data.Dataset.from_tensor_slices((tf.zeros((8, 16, 16, 3)), tf.ones((8, 16, 16, 3)))).batch(4)
pretrainer = TwoViewModel(make_encoder())
pretrainer.compile(optimizer=tf.keras.optimizers.SGD(0.05, momentum=0.9))
pretrainer.fit(views, epochs=1)

trunk = tf.keras.Model(pretrainer.encoder.input, pretrainer.encoder.get_layer("pooled").output)
trunk.trainable = False
probe_in = layers.Input((16, 16, 3))
probe = tf.keras.Model(probe_in, layers.Dense(4)(trunk(probe_in, training=False)))
probe.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
probe.fit(tf.zeros((8, 16, 16, 3)), tf.zeros((8,), tf.int32), epochs=1)

# expect: none
"""Subclassed ResNet-style block with BatchNorm/Dropout, a lazily built head, and a train_step override."""
import tensorflow as tf
from tensorflow.keras import layers


class ResidualBlock(layers.Layer):
    def __init__(self, filters, **kwargs):
        super().__init__(**kwargs)
        self.conv1 = layers.Conv2D(filters, 3, padding="same")
        self.bn1 = layers.BatchNormalization()
        self.conv2 = layers.Conv2D(filters, 3, padding="same")
        self.bn2 = layers.BatchNormalization()
        self.shortcut = None
        self.filters = filters

    def build(self, input_shape):
        if input_shape[-1] != self.filters:
            self.shortcut = layers.Conv2D(self.filters, 1)

    def call(self, x, training=False):
        h = tf.nn.relu(self.bn1(self.conv1(x), training=training))
        h = self.bn2(self.conv2(h), training=training)
        skip = self.shortcut(x) if self.shortcut is not None else x
        return tf.nn.relu(h + skip)


class SmallResNet(tf.keras.Model):
    def __init__(self, num_classes=10):
        super().__init__()
        self.block1 = ResidualBlock(32)
        self.block2 = ResidualBlock(64)
        self.pool = layers.GlobalAveragePooling2D()
        self.dropout = layers.Dropout(0.3)
        self.classifier = layers.Dense(num_classes)

    def call(self, x, training=False):
        h = self.block2(self.block1(x, training=training), training=training)
        return self.classifier(self.dropout(self.pool(h), training=training))

    def train_step(self, data):
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

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.compute_loss(x=x, y=y, y_pred=y_pred)
        for metric in self.metrics:
            if metric.name != "loss":
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


model = SmallResNet()
model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
(x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
model.fit(x_train[:512] / 255.0, y_train[:512], epochs=1, batch_size=64)

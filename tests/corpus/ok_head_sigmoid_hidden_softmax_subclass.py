# expect: none
"""A subclassed MLP in the style of
https://datascience.stackexchange.com/questions/29364/softmax-vs-sigmoid-in-rbm-auto-encoder-final-layer/29369
(784 -> 150 -> 125 -> 100 -> 10 with sigmoid hidden units, "for the output layer, I need to decide on an
activation function"), written with the answer's choice: the hidden layers keep `sigmoid`, the output
layer is a 10-unit `softmax`, trained with `sparse_categorical_crossentropy` in a custom
`tf.GradientTape` loop. The near miss of TL111: `sigmoid` appears in the model, but not on the output.
The 784-pixel "digits" are synthetic (a random pattern per class under noise); labels from `np.random.randint`.

Observed on TF 2.21 (CPU): mean loss per epoch 1.84, 0.61, 0.17, 0.08, accuracy 0.69 after the first
epoch and 1.00 after the second; the outputs of each sample sum to 1.000.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(5)


class DigitMLP(tf.keras.Model):
    def __init__(self, num_classes=10):
        super().__init__()
        self.hidden1 = tf.keras.layers.Dense(150, activation="sigmoid")
        self.hidden2 = tf.keras.layers.Dense(125, activation="sigmoid")
        self.hidden3 = tf.keras.layers.Dense(100, activation="sigmoid")
        self.classifier = tf.keras.layers.Dense(num_classes, activation="softmax")

    def call(self, x):
        return self.classifier(self.hidden3(self.hidden2(self.hidden1(x))))


patterns = (np.random.rand(10, 784) < 0.2).astype("float32")
y_train = np.random.randint(0, 10, size=2000)
x_train = (patterns[y_train] + np.random.normal(0, 0.4, size=(2000, 784))).astype("float32")
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(2000).batch(32)

model = DigitMLP()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam(1e-3)
accuracy = tf.keras.metrics.SparseCategoricalAccuracy()



@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        probs = model(x, training=True)
        loss = loss_fn(y, probs)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y, probs)
    return loss


for epoch in range(4):
    accuracy.reset_state()
    losses = [float(train_step(x, y)) for x, y in train_ds]
    print(f"epoch {epoch + 1}: loss {np.mean(losses):.3f}, accuracy {float(accuracy.result()):.3f}")

sums = model(x_train[:200]).numpy().sum(axis=1)
print(f"sum of the outputs: min {sums.min():.3f}, max {sums.max():.3f}")

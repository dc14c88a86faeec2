# expect: TL105
"""Weight-decayed MLP whose custom loop forgets model.losses ("fit works, my loop overfits")."""
import numpy as np
import tensorflow as tf

L2 = tf.keras.regularizers.l2(1e-4)


def make_model(num_features, num_classes):
    return tf.keras.Sequential([
        tf.keras.layers.Input(shape=(num_features,)),
        tf.keras.layers.Dense(256, activation="relu", kernel_regularizer=L2),
        tf.keras.layers.Dense(128, activation="relu", kernel_regularizer=L2),
        tf.keras.layers.Dense(num_classes),
    ])


features = np.random.rand(2048, 40).astype("float32")
labels = np.random.randint(0, 5, size=(2048,))
train_ds = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(2048).batch(64)

model = make_model(40, 5)
optimizer = tf.keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
accuracy = tf.keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y, logits)
    return loss


for epoch in range(20):
    accuracy.reset_state()
    for x, y in train_ds:
        loss = train_step(x, y)
    print(f"epoch {epoch}: loss={loss.numpy():.4f} acc={accuracy.result().numpy():.3f}")

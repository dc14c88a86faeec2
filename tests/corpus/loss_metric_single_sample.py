# expect: TL109
"""CIFAR-10 VGG-style network in a GradientTape loop whose accuracy metric scores one sample
(seed report 2: "fit learns, my loop does not")."""
import tensorflow as tf
from tensorflow.keras import layers, models

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
x_train = x_train.astype("float32") / 255.0
y_train = tf.keras.utils.to_categorical(y_train, 10)
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1024).batch(64)

model = models.Sequential([
    layers.Conv2D(64, (3, 3), activation="relu", kernel_initializer="he_normal", padding="same",
                  input_shape=(32, 32, 3)),
    layers.Conv2D(64, (3, 3), activation="relu", kernel_initializer="he_normal", padding="same"),
    layers.MaxPooling2D((2, 2)),
    layers.Conv2D(128, (3, 3), activation="relu", kernel_initializer="he_normal", padding="same"),
    layers.MaxPooling2D((2, 2)),
    layers.Flatten(),
    layers.Dense(512, activation="relu", kernel_initializer="he_normal"),
    layers.Dense(10, activation="softmax"),
])

loss_fn = tf.keras.losses.CategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam(learning_rate=0.001, epsilon=1e-08)
train_acc_metric = tf.keras.metrics.CategoricalAccuracy()

for epoch in range(10):
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        with tf.GradientTape() as tape:
            logits = model(x_batch_train, training=True)
            loss_value = loss_fn(y_batch_train, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric(y_batch_train[0], logits[0][:-1])
        if step % 200 == 0:
            print(f"epoch {epoch} step {step}: loss {float(loss_value):.4f}")
    print("Training acc over epoch: %.4f" % (float(train_acc_metric.result()),))
    train_acc_metric.reset_state()

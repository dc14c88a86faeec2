# expect: TL107
"""Transfer-learning head trained eagerly, softmax applied by hand before a probability loss
(the "gradients are zero except the first iteration" report)."""
import tensorflow as tf

IMG_SIZE = 224

base = tf.keras.applications.MobileNetV2(input_shape=(IMG_SIZE, IMG_SIZE, 3), include_top=False,
                                         weights="imagenet")
head = tf.keras.Sequential([
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(2),
])
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-4)
loss_fn = tf.keras.losses.CategoricalCrossentropy()


def forward(images):
    features = base(tf.keras.applications.mobilenet_v2.preprocess_input(images), training=False)
    logits = head(features, training=True)
    return tf.nn.softmax(logits)


def train(dataset, epochs):
    history = []
    variables = head.trainable_variables
    for epoch in range(epochs):
        for images, labels in dataset:
            with tf.GradientTape() as tape:
                probs = forward(images)
                loss = loss_fn(labels, probs)
            grads = tape.gradient(loss, variables)
            optimizer.apply_gradients(zip(grads, variables))
            history.append(float(loss))
    return history

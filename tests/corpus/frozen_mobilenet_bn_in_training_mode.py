# expect: TL301
"""Transfer learning in a custom loop: the MobileNetV2 is frozen, so only the head learns (information).
Its BatchNorm stays in inference mode while frozen; the missing training=False matters once it is
unfrozen to fine-tune."""
import tensorflow as tf

IMG = 96
base_model = tf.keras.applications.MobileNetV2(input_shape=(IMG, IMG, 3), include_top=False, weights=None)
base_model.trainable = False

inputs = tf.keras.Input(shape=(IMG, IMG, 3))
x = tf.keras.applications.mobilenet_v2.preprocess_input(inputs)
x = base_model(x)
x = tf.keras.layers.GlobalAveragePooling2D()(x)
outputs = tf.keras.layers.Dense(1)(x)
model = tf.keras.Model(inputs, outputs)

loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-4)


def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


images = tf.random.uniform((8, IMG, IMG, 3), maxval=255)
labels = tf.cast(tf.random.uniform((8, 1), maxval=2, dtype=tf.int32), tf.float32)
print(float(train_step(images, labels)))

# expect: TL117
"""Custom `tf.GradientTape` loop over a `tf.data` pipeline that scores a two-unit `softmax` head with the
function `tf.keras.losses.binary_crossentropy` against one integer label per sample, the mismatch the
question https://wiki.keldo.uk/content/ai.stackexchange.com_en_all_2023-10/questions/26849/is-it-appropriate-to-use-a-softmax-activation-with-a-categorical-crossentropy-
circles around ("I have specified a softmax activation in the last layer with 2 outputs ... Is it the
same as using binary_crossentropy ... with 2 classes and a sigmoid activation"). The labels are drawn
with `tf.random.uniform(..., dtype=tf.int32)` and the features depend on them.

Observed on TF 2.21 (CPU): the first step fails with `ValueError: Arguments `target` and `output` must
have the same shape. Received: target.shape=(32, 1), output.shape=(32, 2)`.
"""
import tensorflow as tf

tf.keras.utils.set_random_seed(26)
labels = tf.random.uniform((1024, 1), maxval=2, dtype=tf.int32)
features = tf.random.normal((1024, 8)) + tf.cast(labels, tf.float32)
dataset = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(1024).batch(32)

model = tf.keras.Sequential([
    tf.keras.Input(shape=(8,)),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(2, activation="softmax"),
])
optimizer = tf.keras.optimizers.Adam()

for epoch in range(3):
    for x, y in dataset:
        with tf.GradientTape() as tape:
            probs = model(x, training=True)
            loss = tf.reduce_mean(tf.keras.losses.binary_crossentropy(tf.cast(y, tf.float32), probs))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(f"epoch {epoch + 1}: loss {float(loss):.4f}")

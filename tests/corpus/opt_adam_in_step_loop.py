# expect: TL202
"""Fine-tuning loop that constructs its Adam optimizer on every batch."""
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", input_shape=(20,)),
    tf.keras.layers.Dense(3),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
features = tf.random.normal((512, 20))
targets = tf.random.uniform((512,), maxval=3, dtype=tf.int32)
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(64)

for epoch in range(10):
    for step, (x, y) in enumerate(dataset):
        optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(f"epoch {epoch}: {float(loss):.4f}")

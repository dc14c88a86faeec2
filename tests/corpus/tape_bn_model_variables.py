# expect: TL006
"""A CNN with BatchNorm trained on `model.variables`: the moving statistics get None gradients."""
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.Input((32, 32, 3)),
    tf.keras.layers.Conv2D(16, 3),
    tf.keras.layers.BatchNormalization(),
    tf.keras.layers.ReLU(),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(10),
])
optimizer = tf.keras.optimizers.SGD(0.01)

def compute_loss(pred, label):
    return tf.reduce_mean(tf.square(pred - label))

for step in range(3):
    x = tf.random.normal((8, 32, 32, 3))
    label = tf.random.normal((8, 10))
    with tf.GradientTape() as tape:
        prediction = model(x, training=True)
        loss = compute_loss(prediction, label)
    grads = tape.gradient(loss, model.variables)
    optimizer.apply_gradients(zip(grads, model.variables))

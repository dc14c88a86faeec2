# expect: none
"""Texture synthesis: plain SGD with a large learning rate steps the pixels of a tf.Variable image
against features of a fixed pretrained network. No network weight is ever updated, so the learning-rate
limits for weights do not apply."""
import tensorflow as tf

features = tf.keras.applications.VGG16(include_top=False, weights=None, input_shape=(64, 64, 3))
target = tf.random.uniform((1, 64, 64, 3), 0.0, 255.0)


def gram(maps):
    flat = tf.reshape(maps, (-1, maps.shape[-1]))
    return tf.matmul(flat, flat, transpose_a=True) / tf.cast(tf.shape(flat)[0], tf.float32)


target_gram = gram(features(target, training=False))
canvas = tf.Variable(tf.random.uniform((1, 64, 64, 3), 0.0, 255.0))
pixel_opt = tf.keras.optimizers.SGD(learning_rate=80.0)


@tf.function
def texture_step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(gram(features(canvas, training=False)) - target_gram))
    grad = tape.gradient(loss, canvas)
    pixel_opt.apply_gradients([(grad, canvas)])
    canvas.assign(tf.clip_by_value(canvas, 0.0, 255.0))
    return loss


for _ in range(10):
    texture_step()

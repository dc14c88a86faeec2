# expect: TL007
"""Vanilla saliency map for an image classifier that forgets to watch the input image."""
import numpy as np
import tensorflow as tf

model = tf.keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3))
preprocess = tf.keras.applications.mobilenet_v2.preprocess_input


def load_image(path):
    raw = tf.io.read_file(path)
    image = tf.image.decode_jpeg(raw, channels=3)
    return tf.image.resize(image, (224, 224))


def saliency_map(image, class_index):
    batch = preprocess(tf.expand_dims(image, 0))
    with tf.GradientTape() as tape:
        predictions = model(batch, training=False)
        score = predictions[:, class_index]
    grads = tape.gradient(score, batch)
    return tf.reduce_max(tf.abs(grads), axis=-1)[0]


if __name__ == "__main__":
    image = load_image("cat.jpg")
    heat = saliency_map(image, 281)
    np.save("saliency.npy", heat.numpy())

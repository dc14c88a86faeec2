# expect: none
"""Integrated gradients and a vanilla saliency map, both watching their input tensors."""
import numpy as np
import tensorflow as tf

model = tf.keras.applications.ResNet50(weights=None)


def compute_gradients(images, target_class_idx):
    with tf.GradientTape() as tape:
        tape.watch(images)
        logits = model(images, training=False)
        probs = tf.nn.softmax(logits, axis=-1)[:, target_class_idx]
    return tape.gradient(probs, images)


def integrated_gradients(baseline, image, target_class_idx, m_steps=50):
    alphas = tf.linspace(start=0.0, stop=1.0, num=m_steps + 1)
    delta = tf.expand_dims(image, 0) - tf.expand_dims(baseline, 0)
    interpolated = tf.expand_dims(baseline, 0) + alphas[:, None, None, None] * delta
    grads = compute_gradients(interpolated, target_class_idx)
    avg_grads = tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)
    return (image - baseline) * avg_grads


def saliency(image, class_index):
    batch = tf.convert_to_tensor(image[np.newaxis, ...], dtype=tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(batch)
        score = model(batch, training=False)[:, class_index]
    grads = tape.gradient(score, batch)
    return tf.reduce_max(tf.abs(grads), axis=-1)[0]


image = tf.random.uniform((224, 224, 3))
attributions = integrated_gradients(tf.zeros_like(image), image, 208)
heat = saliency(np.random.rand(224, 224, 3), 208)

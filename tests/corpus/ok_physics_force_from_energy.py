# expect: none
"""Forces as the negative gradient of a pair-potential energy: a tape, no optimizer, no model."""
import tensorflow as tf


def lennard_jones_energy(positions, epsilon=1.0, sigma=1.0):
    diff = positions[:, None, :] - positions[None, :, :]
    r2 = tf.reduce_sum(diff * diff, axis=-1) + tf.eye(tf.shape(positions)[0])
    inv6 = (sigma * sigma / r2) ** 3
    pair = 4.0 * epsilon * (inv6 * inv6 - inv6)
    mask = 1.0 - tf.eye(tf.shape(positions)[0])
    return 0.5 * tf.reduce_sum(pair * mask)


positions = tf.Variable(tf.random.uniform((8, 3), maxval=3.0))
for step in range(20):
    with tf.GradientTape() as tape:
        energy = lennard_jones_energy(positions)
    forces = -tape.gradient(energy, positions)
    positions.assign_add(0.001 * tf.clip_by_norm(forces, 10.0, axes=[1]))
    print(step, float(energy))

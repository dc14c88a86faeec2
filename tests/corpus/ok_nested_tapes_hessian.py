# expect: none
"""Second derivatives with nested tapes, and a Hessian-vector product, as in the autodiff guide."""
import tensorflow as tf

x = tf.Variable(1.0)
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        y = x * x * x
    dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)
print(dy_dx.numpy(), d2y_dx2.numpy())

layer = tf.keras.layers.Dense(8, activation=tf.nn.elu)
inputs = tf.random.normal([16, 5])
layer.build(inputs.shape)


def hessian_vector_product(vector):
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = tf.reduce_mean(layer(inputs) ** 2)
        grads = inner.gradient(loss, layer.kernel)
        dot = tf.reduce_sum(grads * vector)
    return outer.gradient(dot, layer.kernel)


hvp = hessian_vector_product(tf.ones_like(layer.kernel))
print(hvp.shape)

with tf.GradientTape() as tape:
    tape.watch(inputs)
    out = layer(inputs)
jacobian = tape.batch_jacobian(out, inputs)
print(jacobian.shape)

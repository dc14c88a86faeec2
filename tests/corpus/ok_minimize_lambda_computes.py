# expect: TL502  # Keras 3 optimizers have no minimize() (checked on Keras 3.15); the lambda itself is fine
"""Keras `minimize` given a lambda that computes the loss itself."""
import tensorflow as tf
probs = tf.Variable([1.0, 2.0, 3.0], name="p")
objective = lambda: -tf.reduce_mean(tf.reduce_sum(tf.math.log(probs), axis=0))
tf.keras.optimizers.Adam(0.5).minimize(objective, var_list=[probs])

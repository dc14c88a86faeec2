# expect: TL003 TL502  # and Keras 3 optimizers have no minimize() (checked on Keras 3.15)
"""Keras `minimize` given a lambda that only returns a tensor computed beforehand: nothing is recorded."""
import tensorflow as tf
probs = tf.Variable([1.0, 2.0, 3.0], name="p")
cost = -tf.reduce_mean(tf.reduce_sum(tf.math.log(probs), axis=0))
objective = lambda: cost
tf.keras.optimizers.Adam(0.5).minimize(objective, var_list=[probs])

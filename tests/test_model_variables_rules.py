"""Behaviour of TL204 (one optimizer for two models), TL305 (tf.Variable on a Keras 3 layer) and TL306
(a weight list read before the model is built) beyond their documented examples."""

from __future__ import annotations

import textwrap

from tapelint.config import Config
from tapelint.engine import lint_source

MINE = {"TL204", "TL305", "TL306"}


def codes(source: str) -> list[str]:
    found = lint_source(textwrap.dedent(source), "case.py", Config())
    assert not [d for d in found if d.code in ("TL000", "TL999")], found
    return sorted(d.code for d in found if d.code in MINE)


GAN_MODELS = """
    import tensorflow as tf
    generator = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(2)])
    discriminator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
"""


def test_one_optimizer_for_generator_and_discriminator_in_a_model_subclass_is_reported():
    assert codes("""
        import tensorflow as tf
        class GAN(tf.keras.Model):
            def __init__(self, generator, discriminator):
                super().__init__()
                self.generator = generator
                self.discriminator = discriminator
                self.opt = tf.keras.optimizers.Adam(2e-4)

            def train_step(self, real):
                with tf.GradientTape() as d_tape:
                    d_loss = -tf.reduce_mean(self.discriminator(real))
                grads = d_tape.gradient(d_loss, self.discriminator.trainable_weights)
                self.opt.apply_gradients(zip(grads, self.discriminator.trainable_weights))
                with tf.GradientTape() as g_tape:
                    g_loss = -tf.reduce_mean(self.discriminator(self.generator(real)))
                grads = g_tape.gradient(g_loss, self.generator.trainable_weights)
                self.opt.apply_gradients(zip(grads, self.generator.trainable_weights))
                return {"d": d_loss, "g": g_loss}

        gan = GAN(tf.keras.Sequential([tf.keras.layers.Dense(2)]), tf.keras.Sequential([tf.keras.layers.Dense(1)]))
    """) == ["TL204"]


def test_a_loop_over_two_models_with_one_global_optimizer_is_reported():
    assert codes(GAN_MODELS + """
    optimizer = tf.keras.optimizers.SGD(0.01)
    for net in (generator, discriminator):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(net(tf.zeros((4, 8 if net is generator else 2))))
        optimizer.apply_gradients(zip(tape.gradient(loss, net.trainable_variables), net.trainable_variables))
    """) == ["TL204"]


def test_an_optimizer_made_in_the_loop_per_model_is_not_reported():
    assert codes(GAN_MODELS + """
    for net in (generator, discriminator):
        optimizer = tf.keras.optimizers.SGD(0.01)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(net(tf.zeros((4, 8 if net is generator else 2))))
        optimizer.apply_gradients(zip(tape.gradient(loss, net.trainable_variables), net.trainable_variables))
    """) == []


def test_two_optimizers_handed_to_one_helper_are_not_reported():
    assert codes(GAN_MODELS + """
    g_opt = tf.keras.optimizers.Adam(1e-4)
    d_opt = tf.keras.optimizers.Adam(4e-4)
    def update(model, opt, tape, loss):
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    def train_step(real, noise):
        with tf.GradientTape() as gt, tf.GradientTape() as dt:
            fake = generator(noise)
            d_loss = tf.reduce_mean(discriminator(fake)) - tf.reduce_mean(discriminator(real))
            g_loss = -tf.reduce_mean(discriminator(fake))
        update(discriminator, d_opt, dt, d_loss)
        update(generator, g_opt, gt, g_loss)
    """) == []


def test_a_model_rebuilt_under_the_same_name_in_a_notebook_is_not_two_models():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD()
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        strategy.run(train_step, args=(x, y))
    """) == []


def test_a_tf_variable_on_a_keras_layer_trained_with_fit_is_reported():
    assert codes("""
        import tensorflow as tf
        class Scale(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.scale = tf.Variable(tf.ones(input_shape[-1:]))
            def call(self, x):
                return x * self.scale
        model = tf.keras.Sequential([tf.keras.Input((3,)), Scale(), tf.keras.layers.Dense(1)])
        model.compile("adam", "mse")
        model.fit(x, y)
    """) == ["TL305"]


def test_a_tf_variable_on_a_plain_class_or_tf_module_is_not_reported():
    assert codes("""
        import tensorflow as tf
        class Params:
            def __init__(self):
                self.w = tf.Variable(tf.zeros((3, 1)))
        class Block(tf.Module):
            def __init__(self):
                super().__init__()
                self.w = tf.Variable(tf.zeros((3, 1)))
    """) == []


def test_a_tf_keras_layer_with_a_tf_variable_is_not_reported():
    assert codes("""
        import tensorflow as tf
        import tf_keras
        class Linear(tf_keras.layers.Layer):
            def build(self, input_shape):
                self.w = tf.Variable(tf.zeros((input_shape[-1], 1)))
            def call(self, x):
                return tf.matmul(x, self.w)
    """) == []


def test_a_class_that_lists_its_own_variables_is_not_reported():
    assert codes("""
        import tensorflow as tf
        class Linear(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.w = tf.Variable(tf.zeros((3, 1)))
            @property
            def trainable_weights(self):
                return [self.w]
            def call(self, x):
                return tf.matmul(x, self.w)
    """) == []


def test_a_weight_list_saved_before_the_first_call_is_reported():
    assert codes("""
        import tensorflow as tf
        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.d = tf.keras.layers.Dense(1)
            def call(self, x):
                return self.d(x)
        net = Net()
        params = net.trainable_variables
        opt = tf.keras.optimizers.SGD(0.1)
        for x, y in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(net(x) - y))
            opt.apply_gradients(zip(tape.gradient(loss, params), params))
    """) == ["TL306"]


def test_a_weight_list_saved_after_a_call_or_fit_is_not_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("adam", "mse")
        model.fit(x, y, epochs=1)
        params = model.trainable_variables
        opt = tf.keras.optimizers.SGD(0.1)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        opt.apply_gradients(zip(tape.gradient(loss, params), params))
    """) == []


def test_a_model_handed_to_a_helper_before_the_read_is_not_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        warm_up(model)
        params = model.trainable_variables
        opt = tf.keras.optimizers.SGD(0.1)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        opt.apply_gradients(zip(tape.gradient(loss, params), params))
    """) == []


def test_a_weight_list_only_printed_is_not_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        before = model.trainable_variables
        print(len(before))
    """) == []

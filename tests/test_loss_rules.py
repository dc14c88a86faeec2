"""Behaviour of the loss rules (TL103-TL109, TL203) beyond their documented examples."""

from __future__ import annotations

import textwrap

from tapelint.config import Config
from tapelint.engine import lint_source

MINE = {"TL103", "TL104", "TL105", "TL106", "TL107", "TL108", "TL109", "TL203"}


def codes(source: str) -> list[str]:
    found = lint_source(textwrap.dedent(source), "case.py", Config(preview=True))
    assert not [d for d in found if d.code in ("TL000", "TL999")], found
    return sorted(d.code for d in found if d.code in MINE)


def test_swapped_tf_nn_cross_entropy_keywords_are_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        def step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=logits, logits=y)
            return tape.gradient(loss, model.trainable_variables)
    """) == ["TL103"]


def test_gan_targets_built_from_the_prediction_are_not_swapped_arguments():
    assert codes("""
        import tensorflow as tf
        disc = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
        with tf.GradientTape() as tape:
            fake = disc(tf.zeros((2, 3)), training=True)
            loss = bce(tf.ones_like(fake), fake)
    """) == []


def test_keras_internal_helpers_named_like_losses_are_not_loss_calls():
    assert codes("""
        from keras.src.losses.loss import squeeze_or_expand_to_same_rank
        def update(y_true, y_pred):
            y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    """) == []


def test_labels_one_hot_encoded_inside_the_step_are_followed():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        def step(x, y):
            y = tf.one_hot(y, 10)
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            return tape.gradient(loss, model.trainable_variables)
    """) == ["TL104"]


def test_labels_of_unknown_origin_are_not_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            return tape.gradient(loss, model.trainable_variables)
    """) == []


def test_regularized_subclass_train_step_without_model_losses_is_reported():
    assert codes("""
        import keras
        import tensorflow as tf
        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.d1 = keras.layers.Dense(64, activation="relu", kernel_regularizer="l2")
                self.d2 = keras.layers.Dense(10)
                self.loss_fn = keras.losses.MeanSquaredError()
            def call(self, x):
                return self.d2(self.d1(x))
            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    loss = self.loss_fn(y, self(x, training=True))
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss}
    """) == ["TL105"]


def test_gradient_penalty_tape_is_not_a_training_loss():
    assert codes("""
        import tensorflow as tf
        critic = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_regularizer="l2")])
        opt = tf.keras.optimizers.Adam(1e-4)
        def penalty(real, fake):
            mixed = real + 0.5 * (fake - real)
            with tf.GradientTape() as gp_tape:
                gp_tape.watch(mixed)
                score = critic(mixed, training=True)
            grads = gp_tape.gradient(score, mixed)
            return tf.reduce_mean((tf.norm(grads, axis=-1) - 1.0) ** 2)
        def step(real, fake):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(critic(fake, training=True)) + 10.0 * penalty(real, fake)
                loss += tf.add_n(critic.losses)
            grads = tape.gradient(loss, critic.trainable_variables)
            opt.apply_gradients(zip(grads, critic.trainable_variables))
    """) == []


def test_attention_softmax_over_time_is_not_single_unit():
    assert codes("""
        import tensorflow as tf
        score = tf.keras.layers.Dense(1)
        def attend(h):
            weights = tf.nn.softmax(score(h), axis=1)
            return tf.reduce_sum(weights * h, axis=1)
    """) == []


def test_one_filter_softmax_segmentation_head_is_reported():
    assert codes("""
        from tensorflow import keras
        head = keras.layers.Conv2D(1, 1, activation="softmax")
    """) == ["TL106"]


def test_functional_softmax_activation_after_a_width_keeping_layer_on_one_unit_is_reported():
    assert codes("""
        import tensorflow as tf
        inputs = tf.keras.Input(shape=(16,))
        hidden = tf.keras.layers.Dense(32, activation="relu")(inputs)
        score = tf.keras.layers.Dense(1)(hidden)
        score = tf.keras.layers.BatchNormalization()(score)
        outputs = tf.keras.layers.Activation("softmax")(tf.keras.layers.Dropout(0.3)(score))
        model = tf.keras.Model(inputs, outputs)
        model.compile(optimizer="adam", loss="binary_crossentropy")
    """) == ["TL106"]


def test_functional_softmax_activation_over_two_units_is_not_reported():
    assert codes("""
        import tensorflow as tf
        inputs = tf.keras.Input(shape=(16,))
        hidden = tf.keras.layers.Dense(1, activation="relu")(inputs)
        score = tf.keras.layers.Dense(2)(hidden)
        score = tf.keras.layers.BatchNormalization()(score)
        outputs = tf.keras.layers.Activation("softmax")(tf.keras.layers.Dropout(0.3)(score))
        model = tf.keras.Model(inputs, outputs)
        model.compile(optimizer="adam", loss="categorical_crossentropy")
    """) == []


def test_softmax_activation_after_a_lambda_on_one_unit_is_not_reported():
    assert codes("""
        import tensorflow as tf
        inputs = tf.keras.Input(shape=(16,))
        score = tf.keras.layers.Dense(1)(inputs)
        outputs = tf.keras.layers.Activation("softmax")(tf.keras.layers.Lambda(lambda t: tf.tile(t, [1, 4]))(score))
        model = tf.keras.Model(inputs, outputs)
    """) == []


def test_raw_softmax_in_an_evaluation_outside_the_tape_is_not_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
        cce = tf.keras.losses.CategoricalCrossentropy()
        def evaluate(x, y):
            return cce(y, tf.nn.softmax(model(x, training=False)))
    """) == []


def test_raw_softmax_in_a_helper_called_from_a_tf_function_step_is_not_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
        cce = tf.keras.losses.CategoricalCrossentropy()
        opt = tf.keras.optimizers.Adam()
        def compute(x, y):
            return cce(y, tf.nn.softmax(model(x, training=True)))
        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = compute(x, y)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """) == []


def test_log_of_softmax_bound_to_a_name_is_a_handwritten_cross_entropy():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
        def loss(x, y):
            p = tf.nn.softmax(model(x, training=True))
            log_p = tf.math.log(tf.clip_by_value(p, 1e-7, 1.0))
            return -tf.reduce_mean(tf.reduce_sum(y * log_p, axis=-1))
    """) == ["TL108"]


def test_custom_loss_passed_to_compile_sees_the_model_output():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="softmax")])
        def my_loss(y_true, y_pred):
            return -tf.reduce_sum(y_true * tf.math.log(y_pred + 1e-9), axis=-1)
        model.compile(optimizer="adam", loss=my_loss)
    """) == ["TL108"]


def test_log_of_logits_is_not_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="relu")])
        def loss(x, y):
            return -tf.reduce_sum(y * tf.math.log(model(x) + 1.0))
    """) == []


def test_saliency_under_mixed_precision_needs_no_loss_scaling():
    assert codes("""
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        model = tf.keras.applications.ResNet50()
        def saliency(image):
            image = tf.convert_to_tensor(image)
            with tf.GradientTape() as tape:
                tape.watch(image)
                top = tf.reduce_max(model(image, training=False), axis=-1)
            return tape.gradient(top, image)
    """) == []


def test_policy_object_passed_to_set_global_policy_is_recognised():
    assert codes("""
        import tensorflow as tf
        policy = tf.keras.mixed_precision.Policy("mixed_float16")
        tf.keras.mixed_precision.set_global_policy(policy)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, dtype="float32")])
        opt = tf.keras.optimizers.Adam()
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """) == ["TL203"]


def test_directory_dataset_integer_labels_with_categorical_loss_in_fit_are_reported():
    assert codes("""
        import tensorflow as tf
        train_ds = tf.keras.utils.image_dataset_from_directory("data/train", image_size=(180, 180))
        model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(5)])
        model.compile(optimizer="adam", loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True))
        model.fit(train_ds, epochs=10)
    """) == ["TL104"]


def test_directory_dataset_one_hot_encoded_by_map_is_not_reported():
    assert codes("""
        import tensorflow as tf
        train_ds = tf.keras.utils.image_dataset_from_directory("data/train", image_size=(180, 180))
        train_ds = train_ds.map(lambda x, y: (x / 255.0, tf.one_hot(y, 5)))
        model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(5)])
        model.compile(optimizer="adam", loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True))
        model.fit(train_ds, epochs=10)
    """) == []


def test_image_data_generator_default_one_hot_with_sparse_loss_is_reported():
    assert codes("""
        import tensorflow as tf
        from tensorflow.keras.preprocessing.image import ImageDataGenerator
        gen = ImageDataGenerator(rescale=1.0 / 255).flow_from_directory("data", target_size=(150, 150))
        model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(3, activation="softmax")])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        model.fit(gen, epochs=5)
    """) == ["TL104"]


def test_metric_fed_one_prediction_of_a_single_output_model_is_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        acc = tf.keras.metrics.SparseCategoricalAccuracy()
        def step(x, y):
            logits = model(x, training=False)
            acc.update_state(y[0], logits[0])
    """) == ["TL109"]


def test_next_token_slices_are_not_single_samples():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Embedding(100, 16), tf.keras.layers.Dense(100)])
        acc = tf.keras.metrics.SparseCategoricalAccuracy()
        def step(tokens):
            logits = model(tokens, training=False)
            acc.update_state(tokens[:, 1:], logits[:, :-1])
    """) == []


def test_generator_step_through_a_regularized_discriminator_is_not_reported():
    assert codes("""
        import tensorflow as tf
        generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_regularizer="l2")])
        g_opt = tf.keras.optimizers.Adam(1e-4)
        bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
        def generator_step(noise):
            with tf.GradientTape() as tape:
                fake_logits = discriminator(generator(noise, training=True), training=False)
                loss = bce(tf.ones_like(fake_logits), fake_logits)
            grads = tape.gradient(loss, generator.trainable_variables)
            g_opt.apply_gradients(zip(grads, generator.trainable_variables))
    """) == []


def test_step_run_by_strategy_inside_a_tf_function_is_traced():
    assert codes("""
        import tensorflow as tf
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            cce = tf.keras.losses.CategoricalCrossentropy(reduction="none")
            opt = tf.keras.optimizers.Adam()
        def train_step(inputs):
            x, y = inputs
            with tf.GradientTape() as tape:
                per_example = cce(y, tf.nn.softmax(model(x, training=True)))
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=64)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        @tf.function
        def distributed_step(inputs):
            losses = strategy.run(train_step, args=(inputs,))
            return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)
    """) == []


def _tl101(source: str) -> list[str]:
    found = lint_source(textwrap.dedent(source), "case.py", Config(preview=True))
    return sorted(d.code for d in found if d.code in ("TL101", "TL102", "TL107"))


def test_softmax_applied_only_in_an_untaken_branch_is_not_a_double_softmax():
    # The head is linear; `call` adds a softmax only when not training, and the loss gets the
    # training-mode output. The branch's value is not the only one reaching `return`.
    assert _tl101("""
        import tensorflow as tf
        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.head = tf.keras.layers.Dense(4)
            def call(self, x, is_training=False):
                x = self.head(x)
                if not is_training:
                    x = tf.nn.softmax(x)
                return x
        net = Net()
        with tf.GradientTape() as tape:
            out = net(tf.zeros((2, 3)), is_training=True)
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 1]), logits=out)
    """) == []


def test_probabilities_reaching_a_tf_nn_cross_entropy_through_a_helper_parameter_are_reported():
    assert _tl101("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="softmax")])
        def xent(scores, targets):
            return tf.nn.softmax_cross_entropy_with_logits(labels=targets, logits=scores)
        with tf.GradientTape() as tape:
            loss = xent(model(tf.zeros((2, 3))), tf.one_hot([0, 1], 4))
    """) == ["TL101"]


def test_a_helper_called_with_logits_and_with_probabilities_is_not_judged():
    assert _tl101("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
        def xent(scores, targets):
            return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=scores)
        with tf.GradientTape() as tape:
            logits = model(tf.zeros((2, 3)), training=True)
            loss = xent(logits, tf.constant([0, 1]))
        shown = xent(tf.nn.softmax(logits), tf.constant([0, 1]))
    """) == []

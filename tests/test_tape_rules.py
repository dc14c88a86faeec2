"""Behaviour of the tape and layer rules (TL003-TL007, TL202, TL302-TL304) beyond their examples:
bugs reached through helpers, methods and lists, and correct shapes that must stay silent."""

from __future__ import annotations

import textwrap

import pytest

from tapelint.config import parse
from tapelint.engine import lint_source

CODES = ["TL003", "TL004", "TL005", "TL006", "TL007", "TL202", "TL302", "TL303", "TL304"]


def codes(source: str) -> list[str]:
    config = parse({"select": [*CODES, "TL999"], "preview": True}, "test", None)
    found = lint_source(textwrap.dedent(source), "t.py", config)
    assert not [d for d in found if d.code == "TL999"], found
    return [d.code for d in found]


def test_float_collected_in_a_list_inside_the_tape_is_reported():
    assert codes("""
        import numpy as np
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()
        def train(x, y):
            with tf.GradientTape() as tape:
                losses = []
                for i in range(4):
                    pred = model(x[i:i + 1], training=True)
                    losses.append(float(tf.reduce_mean((pred - y[i]) ** 2)))
                loss = tf.convert_to_tensor(np.mean(losses))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """) == ["TL004"]


def test_argmax_in_a_method_of_the_trainer_is_reported():
    assert codes("""
        import tensorflow as tf
        class Trainer:
            def __init__(self):
                self.model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
                self.opt = tf.keras.optimizers.Adam()
                self.loss_fn = tf.keras.losses.MeanSquaredError()
            def predict_class(self, x):
                return tf.cast(tf.argmax(self.model(x, training=True), axis=-1), tf.float32)
            def step(self, x, y):
                with tf.GradientTape() as tape:
                    loss = self.loss_fn(y, self.predict_class(x))
                grads = tape.gradient(loss, self.model.trainable_variables)
                self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
    """) == ["TL004"]


def test_comparison_used_as_the_loss_value_is_reported_but_a_mask_is_not():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
        opt = tf.keras.optimizers.Adam()
        def accuracy_loss(x, y):
            with tf.GradientTape() as tape:
                p = model(x, training=True)
                loss = 1.0 - tf.reduce_mean(tf.cast(p > 0.5, tf.float32) * y)
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        def masked_loss(x, y):
            with tf.GradientTape() as tape:
                p = model(x, training=True)
                mask = tf.cast(y > 0, tf.float32)
                loss = tf.reduce_sum(mask * tf.square(p - y)) / tf.maximum(tf.reduce_sum(mask), 1.0)
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    """) == ["TL004"]


def test_loss_rescaled_after_the_block_is_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()
        def step(x, y, scale):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            if scale:
                loss = loss * scale
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """) == ["TL003"]


def test_gradient_expression_written_after_the_block_is_reported():
    assert codes("""
        import tensorflow as tf
        generator = tf.keras.Sequential([tf.keras.layers.Dense(4)])
        def step(noise):
            with tf.GradientTape() as tape:
                score = tf.reduce_mean(generator(noise, training=True))
            return tape.gradient(-score, generator.trainable_variables)
    """) == ["TL003"]


def test_gradient_called_inside_the_block_is_silent():
    assert codes("""
        import tensorflow as tf
        x = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            y = x ** 3
            dy = tape.gradient(-y, x)
    """) == []


def test_symbolic_model_inputs_and_unwatched_variables_are_reported():
    assert codes("""
        import tensorflow as tf
        images = tf.random.normal((8, 28, 28, 1))
        model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
        with tf.GradientTape() as tape:
            tape.watch(model.inputs)
            out = model(images)
        g = tape.gradient(out, model.inputs)
        x = tf.Variable(1.0)
        with tf.GradientTape(watch_accessed_variables=False) as t2:
            y = x * x
        print(t2.gradient(y, x))
    """) == ["TL007", "TL007"]


def test_adversarial_batch_from_a_dataset_without_watch_is_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        dataset = tf.data.Dataset.from_tensor_slices((tf.zeros((8, 4)), tf.zeros((8,)))).batch(4)
        for images, labels in dataset:
            with tf.GradientTape() as tape:
                loss = loss_fn(labels, model(images, training=False))
            perturbation = tf.sign(tape.gradient(loss, images))
    """) == ["TL007"]


def test_loop_over_variables_is_not_an_unwatched_tensor():
    assert codes("""
        import tensorflow as tf
        w1 = tf.Variable(1.0)
        w2 = tf.Variable(2.0)
        with tf.GradientTape(persistent=True) as tape:
            loss = w1 * w2
        for var in [w1, w2]:
            print(tape.gradient(loss, var))
    """) == []


def test_variable_rebound_through_global_and_created_in_call_are_reported():
    assert codes("""
        import tensorflow as tf
        W = tf.Variable(tf.random.normal((3, 1)))
        def sgd(grad, lr=0.1):
            global W
            W = W - lr * grad
        class Net(tf.keras.Model):
            def call(self, x):
                return tf.matmul(x, tf.Variable(tf.ones((3, 1))))
    """) == ["TL303", "TL304"]


def test_layer_in_a_step_function_and_optimizer_in_a_helper_step_are_reported():
    assert codes("""
        import tensorflow as tf
        def train_step(model, x, y):
            opt = tf.keras.optimizers.Adam()
            head = tf.keras.layers.Dense(1)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(head(model(x, training=True)) - y)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        for epoch in range(3):
            train_step(None, None, None)
    """) == ["TL202", "TL304"]


def test_optimizer_created_once_in_a_train_function_is_silent():
    assert codes("""
        import tensorflow as tf
        def train(model, dataset, epochs):
            optimizer = tf.keras.optimizers.Adam()
            for epoch in range(epochs):
                for x, y in dataset:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return model
        def lazy_step(state, model, x):
            if state.get("opt") is None:
                state["opt"] = tf.keras.optimizers.Adam()
    """) == []


def test_training_flag_through_a_helper_and_a_batchnorm_application_is_reported():
    assert codes("""
        import tensorflow as tf
        from tensorflow.keras import layers
        base = tf.keras.applications.EfficientNetB0(include_top=False, weights=None)
        model = tf.keras.Sequential([base, layers.GlobalAveragePooling2D(), layers.Dense(5)])
        opt = tf.keras.optimizers.Adam()
        def forward(x):
            return model(x)
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, forward(x), from_logits=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """) == ["TL302"]


def test_saliency_tape_on_a_batchnorm_model_needs_no_training_flag():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.applications.ResNet50(weights=None)
        def grad_cam(img, idx):
            img = tf.convert_to_tensor(img)
            with tf.GradientTape() as tape:
                tape.watch(img)
                score = model(img)[:, idx]
            return tape.gradient(score, img)
    """) == []


def test_gradients_of_all_variables_applied_to_trainable_ones_are_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.BatchNormalization()])
        optimizer = tf.keras.optimizers.Adam()
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            params = model.weights
            grads = tape.gradient(loss, params)
            grads, _ = tf.clip_by_global_norm(grads, 1.0)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
    """) == ["TL006"]


@pytest.mark.parametrize("header", ["import torch", "import jax\nimport optax"])
def test_other_frameworks_stay_silent(header):
    assert codes(header + """
for epoch in range(3):
    optimizer = make_optimizer()
    loss = model(x).sum()
    with tape_recorder() as tape:
        loss = loss * 2
    grads = tape.gradient(loss, params)
""") == []


def test_the_autodiff_guide_cases_of_none_gradients_are_reported():
    found = codes("""
        import numpy as np
        import tensorflow as tf
        x0 = tf.Variable(3.0, name="x0")
        x1 = tf.Variable(3.0, name="x1", trainable=False)
        x2 = tf.Variable(2.0, name="x2") + 1.0
        x3 = tf.constant(3.0, name="x3")
        with tf.GradientTape() as tape:
            y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2)
        grad = tape.gradient(y, [x0, x1, x2, x3])

        x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
        with tf.GradientTape() as tape:
            x2 = x ** 2
            y = np.mean(x2, axis=0)
            y = tf.reduce_mean(y, axis=0)
        print(tape.gradient(y, x))

        x = tf.Variable(2.0)
        for epoch in range(2):
            with tf.GradientTape() as tape:
                y = x + 1
            print(type(x).__name__, ":", tape.gradient(y, x))
            x = x + 1
    """)
    assert found == ["TL007", "TL007", "TL007", "TL004", "TL303"]


def test_forward_pass_of_self_before_the_tape_in_train_step_is_reported():
    assert codes("""
        import tensorflow as tf
        class M(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.d = tf.keras.layers.Dense(1)
            def call(self, x):
                return self.d(x)
            def train_step(self, data):
                x, y = data
                y_pred = self(x, training=True)
                with tf.GradientTape() as tape:
                    loss = self.compute_loss(y=y, y_pred=y_pred)
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss}
    """) == ["TL003"]


def test_teacher_without_training_flag_in_a_distillation_tape_is_silent():
    assert codes("""
        import tensorflow as tf
        from tensorflow.keras import layers
        teacher = tf.keras.Sequential([layers.Dense(64), layers.Dropout(0.5), layers.Dense(10)])
        student = tf.keras.Sequential([layers.Dense(16), layers.Dense(10)])
        opt = tf.keras.optimizers.Adam()
        kl = tf.keras.losses.KLDivergence()
        def step(x):
            with tf.GradientTape() as tape:
                loss = kl(tf.nn.softmax(teacher(x) / 3.0), tf.nn.softmax(student(x, training=True) / 3.0))
            grads = tape.gradient(loss, student.trainable_variables)
            opt.apply_gradients(zip(grads, student.trainable_variables))
    """) == []


def test_gradient_in_a_comprehension_over_a_non_persistent_tape_is_reported():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        def per_output_grads(x):
            with tf.GradientTape() as tape:
                outputs = model(x, training=True)
                losses = [tf.reduce_mean(outputs[:, i]) for i in range(2)]
            return [tape.gradient(loss, model.trainable_variables) for loss in losses]
    """) == ["TL005"]


def test_tape_created_before_its_with_block_is_understood():
    from tapelint import Config, lint_source

    source = """
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
tape = tf.GradientTape()
with tape:
    loss = tf.reduce_mean(model(tf.zeros((2, 3)), training=True))
grads = tape.gradient(loss, model.trainable_variables)
again = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
print(again)
"""
    codes = [d.code for d in lint_source(source, "t.py", Config())]
    assert codes == ["TL005"]
    persistent = source.replace("tf.GradientTape()", "tf.GradientTape(persistent=True)")
    assert [d.code for d in lint_source(persistent, "t.py", Config())] == []


def _frozen(source: str) -> list:
    config = parse({"select": ["TL301"], "preview": True}, "test", None)
    return lint_source(textwrap.dedent(source), "t.py", config)


def test_frozen_batchnorm_backbone_never_unfrozen_is_only_information():
    # A frozen BatchNormalization runs in inference mode whatever `training` says (TF >= 2.0, Keras 3).
    found = _frozen("""
        import tensorflow as tf
        trunk = tf.keras.applications.EfficientNetB0(include_top=False, weights=None)
        trunk.trainable = False
        classifier = tf.keras.layers.Dense(3)
        opt = tf.keras.optimizers.Adam(1e-3)
        def step(images, labels):
            with tf.GradientTape() as tape:
                pooled = tf.reduce_mean(trunk(images, training=True), axis=[1, 2])
                loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, classifier(pooled), from_logits=True))
            opt.apply_gradients(zip(tape.gradient(loss, classifier.trainable_variables), classifier.trainable_variables))
    """)
    assert [d.code for d in found] == ["TL301"]
    assert found[0].severity.value == "info"
    assert "BatchNormalization" not in found[0].message


def test_frozen_model_used_only_for_input_gradients_is_silent():
    assert not _frozen("""
        import tensorflow as tf
        scorer = tf.keras.applications.DenseNet121(weights=None)
        scorer.trainable = False
        def perturbation(picture, onehot):
            with tf.GradientTape() as tape:
                tape.watch(picture)
                xent = tf.keras.losses.categorical_crossentropy(onehot, scorer(picture))
            return 0.01 * tf.sign(tape.gradient(xent, picture))
    """)


def test_model_handed_to_a_trainer_constructor_without_training_flag_is_reported():
    # Keras 3.15 / TF 2.21, measured: inside fit's train_step a sub-model called without `training`
    # runs its BatchNormalization in inference mode; the moving mean never moves.
    assert codes("""
        import tensorflow as tf
        def build_tower():
            pixels = tf.keras.Input((8,))
            hidden = tf.keras.layers.BatchNormalization()(tf.keras.layers.Dense(8)(pixels))
            return tf.keras.Model(pixels, tf.keras.layers.Dense(4)(hidden))
        class PairTrainer(tf.keras.Model):
            def __init__(self, tower):
                super().__init__()
                self.tower = tower
            def train_step(self, data):
                left, right = data
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self.tower(left) - tf.stop_gradient(self.tower(right))))
                grads = tape.gradient(loss, self.tower.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.tower.trainable_variables))
                return {"loss": loss}
        trainer = PairTrainer(build_tower())
        trainer.compile(optimizer="sgd")
    """) == ["TL302", "TL302"]


def test_subclass_with_own_mode_parameter_called_without_it_is_reported():
    assert codes("""
        import tensorflow as tf
        class Tagger(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.embed = tf.keras.layers.Dense(32, activation="relu")
                self.noise = tf.keras.layers.Dropout(0.3)
                self.head = tf.keras.layers.Dense(5)
            def call(self, tokens, fitting=False):
                return self.head(self.noise(self.embed(tokens), training=fitting))
        tagger = Tagger()
        opt = tf.keras.optimizers.Adam()
        def fit_batch(tokens, tags):
            with tf.GradientTape() as tape:
                scores = tagger(tokens)
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tags, logits=scores))
            opt.apply_gradients(zip(tape.gradient(loss, tagger.trainable_variables), tagger.trainable_variables))
    """) == ["TL302"]


def test_subclass_mode_parameter_given_by_position_is_understood():
    assert codes("""
        import tensorflow as tf
        class Tagger(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.norm = tf.keras.layers.BatchNormalization()
                self.head = tf.keras.layers.Dense(5)
            def call(self, tokens, fitting=False):
                return self.head(self.norm(tokens, training=fitting))
        tagger = Tagger()
        opt = tf.keras.optimizers.Adam()
        def fit_batch(tokens, tags):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tagger(tokens, True) - tags))
            opt.apply_gradients(zip(tape.gradient(loss, tagger.trainable_variables), tagger.trainable_variables))
    """) == []


def test_a_gradient_in_the_iterable_of_a_for_loop_runs_once():
    from tapelint.config import Config
    from tapelint.engine import lint_source

    source = '''
import tensorflow as tf

w = tf.Variable(tf.ones((3, 1)))
b = tf.Variable(tf.zeros((1,)))
ws = [w, b]
for step in range(100):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    for g, v in zip(tape.gradient(loss, ws), ws):
        v.assign_sub(0.01 * g)
'''
    assert [d.code for d in lint_source(source, "t.py", Config()) if d.code == "TL005"] == []
    in_body = source.replace("    for g, v in zip(tape.gradient(loss, ws), ws):\n        v.assign_sub(0.01 * g)\n",
                             "    for v in ws:\n        v.assign_sub(0.01 * tape.gradient(loss, v))\n")
    assert [d.code for d in lint_source(in_body, "t.py", Config()) if d.code == "TL005"] == ["TL005"]

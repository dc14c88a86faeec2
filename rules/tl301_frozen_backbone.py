from __future__ import annotations

import heapq
from bisect import bisect_left

import libcst as cst

from tapelint.analysis.constants import boolean
from tapelint.analysis.facts import Binding, Facts, Scope, keyword_arg
from tapelint.analysis.keras import application_has_batchnorm
from tapelint.analysis.models import KerasModel, model_reader
from tapelint.analysis.optimizers import COMPILED, OptimizerUse, optimizer_uses
from tapelint.analysis.purpose import only_in_unit_tests
from tapelint.analysis.training import frozen_values, head_weighted_layers, runs_in_tape, trained, trains_model
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl301_trainable import weight_reads


class FrozenBackbone(Rule):
    """
    ## What it does
    Reports a model (a `keras.applications` backbone, a functional or Sequential model, a loaded
    model) set `trainable = False` in a file that trains with a custom `GradientTape` loop. It is
    information by default, and a warning when:
    - the frozen model contains BatchNormalization (a BatchNorm `keras.applications` family, or layers
      you can see), is unfrozen later in the file (fine-tuning), and is called with `training=True` or
      without `training=False`;
    - `trainable` changes after the optimizer was used or `compile()` ran;
    - nothing trainable is left: the frozen model's own `trainable_variables` are what the tape
      differentiates.
    The message says how many layers can still learn when that is visible.

    ## Why is this bad?
    Freezing is often right (transfer learning), but it is also the most common reason why "the
    gradients are None/zero" for most of a model: a frozen model's weights never get a gradient, and in
    a custom loop nothing tells you how little is left to train. While the model is frozen its
    BatchNorm layers run in inference mode whatever `training` says (TF 2.0 and later, Keras 3), but
    once it is unfrozen for fine-tuning, `training=True` (or no flag inside `fit`) makes them normalise
    with batch statistics and update their moving averages, which destroys the pretrained features; the
    Keras guide requires `base_model(inputs, training=False)` for that reason. Changing
    `trainable` after the optimizer has been built changes the variable list under it: Keras 3 raises
    `Unknown variable`, TF 2.11-2.15 raise `KeyError`, and `compile()`d models ignore the change.

    ## Example
    ```python
    base = tf.keras.applications.ResNet50(include_top=False, weights="imagenet")
    base.trainable = False
    x = base(inputs)  # BatchNorm runs in training mode once `base` is unfrozen to fine-tune
    ```

    ## Use instead
    ```python
    base = tf.keras.applications.ResNet50(include_top=False, weights="imagenet")
    base.trainable = False
    x = base(inputs, training=False)
    ```

    ## Known problems
    Only a frozen model that a tape of this file trains (it, or a Sequential, functional or subclassed
    model built from it, has its weights differentiated or stepped) or records (it is called inside
    the `with` block) is reported. A frozen model that only `compile()`/`fit()` trains is not, even
    when the same file has a custom loop for another model (self-supervised pre-training, then a
    linear probe with `fit`); nor is a frozen teacher or target network that runs outside the tape,
    nor a file whose tapes train no weights (saliency, adversarial examples, style transfer). Freezing individual layers in a
    loop (`for layer in base.layers[:-4]: layer.trainable = False`) is fine-tuning practice and is not
    reported. Whether a model contains BatchNorm is known only for
    `keras.applications` families and layers built in this file.

    A model frozen only for a combined model (a GAN's `disc.trainable = False; gan = Model(z, disc(gen(z)))`)
    is not reported when its own step still trains it. In Keras 3 (read in `keras/src/layers/layer.py`)
    `trainable = False` empties `trainable_variables`/`trainable_weights` for as long as it holds, but
    `variables`/`weights` still list every variable, and a tape differentiates them: their `tf.Variable`s
    are created trainable and the freeze only sets Keras's own flag, so an optimizer steps them (tf_keras
    does the same for a model built before it is frozen). Silent, then: the discriminator's tape differentiates
    `disc.variables` or `disc.weights`; it reads `disc.trainable_variables` after `disc.trainable = True`
    (toggled back in the step, before the discriminator's tape) or into a name before the freeze
    (`d_vars = disc.trainable_variables`). Reported: the discriminator's own step differentiates
    `disc.trainable_variables` while the freeze holds, an empty list, so it never learns ("nothing trainable
    is left"). Where `trainable` stands at a read is decided like any setting: the last assignment before
    it in the same function, else what holds at every call of that function (a function nothing in the file
    calls runs after the module), and unknown when a helper of the file that sets `.trainable` runs in
    between. When its own step trains the model, only pretrained models (`keras.applications`, loaded) keep
    the BatchNorm warning on unfreezing, which protects pretrained weights. In unit tests (methods of a `TestCase`, and
    functions only they call) only the change of `trainable` after the optimizer ran, which raises, is
    reported.

    ## Options
    None. Ignore the rule (or `# noqa: TL301`) where freezing is intended and the information is noise.

    ## Fix safety
    No fix.

    ## References
    - https://keras.io/guides/transfer_learning/ (training=False for frozen BatchNorm; compile after changing trainable)
    - Measured on TF 2.21 / Keras 3.15: a frozen model's BatchNormalization called with `training=True`
      returns exactly its inference output and leaves its moving mean unchanged
    - https://github.com/keras-team/keras/issues/9214 (BatchNorm in a frozen backbone)
    - https://github.com/keras-team/keras/issues/20285
    - https://github.com/yzhao062/pyod/issues/459 (optimizer built with another variable set)
    - `examples/seed1_frozen_vgg_head.py`, a reproduction of the Stack Overflow question "Gradients are
      zero except first iteration in tensorflow" (`vgg.trainable = False`, only the head can learn)
    """

    code = "TL301"
    name = "frozen-backbone"
    message = "`{holder}` ({what}) is frozen (`trainable = False`): its weights get no gradient{detail}"
    severity = Severity.INFO
    also_severity = {Severity.WARNING: (
        "when nothing trainable is left, when BatchNorm would run in training mode once the model "
        "is unfrozen, or when `trainable` changes after the optimizer ran"
    )}
    triggers = (("trainable", "GradientTape"),)
    probe = "Reports how many variables receive gradients and which frozen ones were asked for (TL801)."

    def check(self) -> None:
        facts = self.facts
        if not facts.uses_gradient_tape:
            return
        reader = model_reader(facts)
        for binding in facts.bindings:
            if not binding.target.endswith(".trainable") or binding.augmented:
                continue
            value = boolean(binding.value)
            holder = binding.target[: -len(".trainable")]
            if not isinstance(binding.target_node, cst.Attribute):
                continue
            model = reader.model_of(binding.target_node.value, binding.scope, binding.order)
            if model is None:
                continue
            late = self._after_optimizer_use(facts, binding)
            if value is True:
                if late:
                    self.report(
                        binding.target_node,
                        f"`{holder}.trainable` changes after {late}: the optimizer was built for the "
                        "old variable list (Keras 3 raises `Unknown variable`; compiled models ignore it)",
                        severity=Severity.WARNING,
                    )
                continue
            if value is not False:
                continue
            if not late and not _in_custom_loop(facts, binding, holder):
                continue  # trained with compile()/fit() only: the tape in this file trains something else
            self._report_freeze(facts, binding, holder, model, late)

    def _report_freeze(self, facts: Facts, binding: Binding, holder: str, model: KerasModel, late: str | None) -> None:
        what = model.application or model.class_name or model.name
        reasons: list[str] = []
        severity = Severity.INFO
        reads = weight_reads(facts, binding, holder)
        # Differentiated all the same: `variables`/`weights` ignore `trainable`, and `trainable_variables` read
        # where `trainable` was set back to True (a GAN's discriminator, frozen for the combined model only).
        gets_gradient = any(r.kind == "all" or r.trainable is True for r in reads)
        nothing_left = any(r.kind == "trainable" and r.trainable is False and not r.inside for r in reads)
        bn_call = self._batchnorm_call(facts, holder, model) if _unfrozen_later(facts, binding, holder) else None
        if gets_gradient and not nothing_left and not late and not (bn_call and _pretrained(model)):
            return  # its own step trains it: "its weights get no gradient" does not hold
        if not late and (only_in_unit_tests(facts, binding.scope)
                         or facts.tapes and all(only_in_unit_tests(facts, t.scope) for t in facts.tapes)):
            return  # a unit test freezes on purpose; only the crash of a late change is worth saying there
        if nothing_left:
            reasons.append("nothing trainable is left: the tape differentiates its own `trainable_variables`")
            severity = Severity.WARNING
        if bn_call:
            reasons.append(f"it contains BatchNormalization and is called {bn_call}, so once it is unfrozen "
                           "to fine-tune, BatchNorm uses batch statistics; call it with `training=False`")
            severity = Severity.WARNING
        if late:
            reasons.append(f"`trainable` changes after {late}, under an optimizer built for the old variable list")
            severity = Severity.WARNING
        if not reasons:
            head = head_weighted_layers(facts, holder)
            if head:  # 0: a feature extractor cut from the backbone; the learning happens elsewhere
                reasons.append(f"only the {head} weighted layer{'s' if head != 1 else ''} after it can learn")
        detail = "; " + "; ".join(reasons) if reasons else ""
        related: list[tuple[cst.CSTNode | None, str]] = [(model.construction, f"`{holder}` built")]
        if nothing_left:
            related += [(r.node, "its empty `trainable_variables` differentiated")
                        for r in reads if r.kind == "trainable" and r.trainable is False and not r.inside][:1]
        self.report(binding.target_node, holder=holder, what=what, detail=detail, severity=severity,
                    confidence=Confidence.HIGH if model.kind == "application" else Confidence.INFERRED,
                    related=related)

    @staticmethod
    def _batchnorm_call(facts: Facts, holder: str, model: KerasModel) -> str | None:
        has_bn = (model.application is not None and application_has_batchnorm(model.application)) or any(
            cls == "BatchNormalization" for cls, _ in model.layers
        )
        if not has_bn:
            return None
        for site in facts.calls_to(holder):
            training = keyword_arg(site.node, "training")
            if training is None:
                return "without `training=False`"
            if boolean(training.value) is True:
                return "with `training=True`"
        return None

    @staticmethod
    def _after_optimizer_use(facts: Facts, binding: Binding) -> str | None:
        """Why the change comes too late, or None. It is too late when an optimizer that already ran
        (or a `compile()`) is used again after the change: a fresh optimizer or a new `compile()`
        afterwards picks up the new variable list. Optimizers are told apart by the value model
        (optimizers.optimizer_uses); each scope's answers are worked out once (_LateUses)."""
        late = facts.cached(("tl301.late_uses", id(binding.scope)), lambda: _LateUses(facts, binding.scope))
        return late.at(binding.order)

    VALID = [
        Valid(
            """
import tensorflow as tf

def vgg_layers(names):
    vgg = tf.keras.applications.VGG19(include_top=False, weights=None)
    vgg.trainable = False
    return tf.keras.Model([vgg.input], [vgg.get_layer(n).output for n in names])

class StyleContentModel(tf.keras.models.Model):
    def __init__(self, layers):
        super().__init__()
        self.vgg = vgg_layers(layers)
        self.vgg.trainable = False

    def call(self, inputs):
        return self.vgg(inputs * 255.0)

extractor = StyleContentModel(["block1_conv1"])
image = tf.Variable(tf.random.uniform((1, 64, 64, 3)))
opt = tf.keras.optimizers.Adam(learning_rate=0.02)

@tf.function
def train_step(image):
    with tf.GradientTape() as tape:
        loss = tf.add_n([tf.reduce_mean(o) for o in extractor(image)])
    grad = tape.gradient(loss, image)
    opt.apply_gradients([(grad, image)])
""",
            "near miss: style transfer optimises the pixels of an image; the frozen VGG is a fixed feature extractor",
        ),
        Valid(
            """
import tensorflow as tf

base = tf.keras.applications.MobileNetV2(input_shape=(160, 160, 3), include_top=False, weights=None)
base.trainable = False
classifier = tf.keras.Sequential([base, tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(1)])
classifier.compile(optimizer="adam", loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.l1 = tf.keras.layers.Dense(5)

    def call(self, x):
        return self.l1(x)

net = Net()
opt = tf.keras.optimizers.Adam(0.01)
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.abs(net(tf.ones((2, 3))) - 1.0))
variables = net.trainable_variables
opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
""",
            "near miss: the frozen backbone is trained by compile(); the file's tape trains an unrelated model",
        ),
        Valid(
            """
import tensorflow as tf

base = tf.keras.applications.MobileNetV2(include_top=False, weights=None, input_shape=(96, 96, 3))
base.trainable = False
model = tf.keras.Sequential([base, tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
model.fit(tf.zeros((2, 96, 96, 3)), tf.zeros((2, 1)))
""",
            "fit-based transfer learning: no custom loop",
        ),
        Valid(
            """
import tensorflow as tf

base = tf.keras.applications.MobileNetV2(include_top=False, weights=None, input_shape=(96, 96, 3))
head = tf.keras.layers.Dense(1)
optimizer = tf.keras.optimizers.Adam(1e-3)

def train(opt, variables_of, steps):
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(head(tf.reduce_mean(base(tf.zeros((1, 96, 96, 3)), training=False), axis=[1, 2])))
        variables = variables_of()
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))

train(optimizer, lambda: head.trainable_variables, 10)
base.trainable = True
fine_tune_optimizer = tf.keras.optimizers.Adam(1e-5)
train(fine_tune_optimizer, lambda: head.trainable_variables + base.trainable_variables, 10)
""",
            "near miss: unfreezing for fine-tuning with a fresh optimizer",
        ),
        Valid(
            """
import tensorflow as tf

base = tf.keras.applications.ResNet50(include_top=False, weights=None, input_shape=(64, 64, 3))
for layer in base.layers[:-10]:
    layer.trainable = False
head = tf.keras.layers.Dense(1)
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(head(tf.reduce_mean(base(tf.zeros((1, 64, 64, 3)), training=False), axis=[1, 2])))
""",
            "near miss: fine-tuning the last layers, layer by layer",
        ),
        Valid(
            """
import tensorflow as tf

trunk_in = tf.keras.Input((3,))
trunk = tf.keras.Model(trunk_in, tf.keras.layers.Dense(8)(tf.keras.layers.Dense(16, activation="relu")(trunk_in)))
pretrain_opt = tf.keras.optimizers.Adam(1e-3)

def pretrain_step(view_a, view_b):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(trunk(view_a, training=True) - trunk(view_b, training=True)))
    grads = tape.gradient(loss, trunk.trainable_variables)
    pretrain_opt.apply_gradients(zip(grads, trunk.trainable_variables))

pretrain_step(tf.zeros((4, 3)), tf.ones((4, 3)))
features = tf.keras.Model(trunk.inputs, trunk.layers[0].output)
features.trainable = False
probe_in = tf.keras.Input((3,))
probe = tf.keras.Model(probe_in, tf.keras.layers.Dense(2)(features(probe_in, training=False)))
probe.compile(optimizer="adam", loss="mse")
probe.fit(tf.zeros((4, 3)), tf.zeros((4, 2)))
""",
            "near miss: a custom pre-training loop, then a linear probe on the frozen trunk trained by fit",
        ),
        Valid(
            """
import tensorflow as tf
from tensorflow import keras

generator = keras.Sequential([keras.Input((32,)), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(784)])
discriminator = keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1)])
discriminator.trainable = False
z = keras.Input((32,))
gan = keras.Model(z, discriminator(generator(z)))
bce = keras.losses.BinaryCrossentropy(from_logits=True)
d_opt, g_opt = keras.optimizers.Adam(2e-4), keras.optimizers.Adam(2e-4)

def train_step(real):
    noise = tf.random.normal((64, 32))
    with tf.GradientTape() as d_tape:
        real_logits, fake_logits = discriminator(real), discriminator(generator(noise))
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.variables)
    d_opt.apply_gradients(zip(d_grads, discriminator.variables))
    with tf.GradientTape() as g_tape:
        logits = gan(noise)
        g_loss = bce(tf.ones_like(logits), logits)
    g_opt.apply_gradients(zip(g_tape.gradient(g_loss, gan.trainable_variables), gan.trainable_variables))

for step in range(1000):
    train_step(tf.random.uniform((64, 784)))
""",
            "near miss: frozen for the combined model only; its own step differentiates `variables`, which ignores `trainable`",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf
from tensorflow import keras

inp = keras.layers.Input(shape=(96, 96, 3))
vgg = tf.keras.applications.VGG16(include_top=False, weights=None, input_tensor=inp)
vgg.trainable = False
x = tf.keras.layers.GlobalAveragePooling2D()(vgg.get_layer("block5_pool").output)
x = keras.layers.Dense(64, activation="relu")(x)
output = keras.layers.Dense(2, activation="softmax")(x)
model = tf.keras.models.Model(inputs=inp, outputs=output)

with tf.GradientTape() as tape:
    loss = tf.reduce_mean(model(tf.zeros((1, 96, 96, 3)), training=True))
grads = tape.gradient(loss, model.trainable_variables)
""",
            line=7, column=1,
            message_contains="only the 2 weighted layers after it can learn",
        ),
        Invalid(
            """
import tensorflow as tf

base = tf.keras.applications.ResNet50(include_top=False, weights=None, input_shape=(64, 64, 3))
base.trainable = False
head = tf.keras.layers.Dense(10)
optimizer = tf.keras.optimizers.Adam(1e-3)

def train_step(x, y, opt, variables):
    with tf.GradientTape() as tape:
        features = tf.reduce_mean(base(x), axis=[1, 2])
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, head(features), from_logits=True))
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))

x, y = tf.zeros((2, 64, 64, 3)), tf.zeros((2,), tf.int32)
train_step(x, y, optimizer, head.trainable_variables)
base.trainable = True
fine_tune = tf.keras.optimizers.Adam(1e-5)
train_step(x, y, fine_tune, head.trainable_variables + base.trainable_variables)
""",
            message_contains="BatchNormalization",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
model.trainable = False
optimizer = tf.keras.optimizers.SGD(0.01)
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(model(tf.zeros((2, 3)), training=True))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            message_contains="nothing trainable is left",
        ),
        Invalid(
            """
import tensorflow as tf

base = tf.keras.applications.MobileNetV2(include_top=False, weights=None, input_shape=(96, 96, 3))
base.trainable = False
head = tf.keras.layers.Dense(1)
optimizer = tf.keras.optimizers.Adam(1e-3)

def train(steps):
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(head(tf.reduce_mean(base(tf.zeros((1, 96, 96, 3)), training=False), axis=[1, 2])))
        variables = head.trainable_variables + base.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))

train(10)
base.trainable = True
train(10)
""",
            count=2,
            message_contains="changes after training with `train()`",
        ),
        Invalid(
            """
import tensorflow as tf
from tensorflow import keras

generator = keras.Sequential([keras.Input((32,)), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(784)])
discriminator = keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1)])
discriminator.trainable = False
z = keras.Input((32,))
gan = keras.Model(z, discriminator(generator(z)))
bce = keras.losses.BinaryCrossentropy(from_logits=True)
d_opt, g_opt = keras.optimizers.Adam(2e-4), keras.optimizers.Adam(2e-4)

def train_step(real):
    noise = tf.random.normal((64, 32))
    with tf.GradientTape() as d_tape:
        real_logits, fake_logits = discriminator(real), discriminator(generator(noise))
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    with tf.GradientTape() as g_tape:
        logits = gan(noise)
        g_loss = bce(tf.ones_like(logits), logits)
    g_opt.apply_gradients(zip(g_tape.gradient(g_loss, gan.trainable_variables), gan.trainable_variables))

for step in range(1000):
    train_step(tf.random.uniform((64, 784)))
""",
            line=7,
            message_contains="nothing trainable is left",
        ),
    ]


def _pretrained(model: KerasModel) -> bool:
    """Weights that were learnt before this file (a `keras.applications` model, a loaded one): what
    BatchNorm's batch statistics would spoil when it is unfrozen to fine-tune."""
    return model.kind in ("application", "loaded")


def _unfrozen_later(facts: Facts, freeze: Binding, holder: str) -> bool:
    """Is `holder.trainable = True` set after this freeze (fine-tuning)? Until then a frozen
    BatchNormalization runs in inference mode whatever `training` says."""
    return any(
        b.order > freeze.order and not b.augmented and boolean(b.value) is True
        for b in facts.bindings_of(f"{holder}.trainable")
    )


def _in_custom_loop(facts: Facts, binding: Binding, holder: str) -> bool:
    """Does a tape of this module train the frozen model, a model built from it, or run it inside a
    tape that trains something? Models trained only by `compile()`/`fit()`, or handed to code we
    cannot see, are not reported."""
    state = trained(facts)
    target = binding.target_node.value if isinstance(binding.target_node, cst.Attribute) else None
    frozen = frozen_values(facts, target, binding.scope, binding.order) if target is not None else frozenset()
    if any(trains_model(facts, model) for model in frozen if model.kind.value != "unknown"):
        return True
    if not state.models:
        return False  # nothing trains here (saliency, style transfer, a probe fit elsewhere)
    # `features = backbone(x, training=False)` inside the tape, the head trained on top.
    if any(runs_in_tape(facts, model) for model in frozen if model.kind.value != "unknown"):
        return True
    for use in facts.name_uses:
        if use.name == holder and any(t.encloses(use.order) for t in facts.tapes):
            return True
    return False


class _LateUses:
    """For one scope, the first optimizer use that a change of `trainable` at a given point comes after,
    when the same optimizer is used again after that point: for every split of the scope's uses into
    "before" and "after", worked out in one sweep, so that each `.trainable = ...` costs a bisection.

    An optimizer counts as already run when one of its uses comes before the change, and as used again when
    one comes at or after it; of those, the one first used is reported, with the words of its first use. A
    `compile()` after the change (any, with or without an optimizer) rebuilds what `compile()` built: then
    compile()/fit() uses before the change no longer count."""

    def __init__(self, facts: Facts, scope: Scope) -> None:
        uses = optimizer_uses(facts, scope)
        self.orders: list[int] = []  # of the calls with uses, in document order
        self.last_compile = _last_compile(facts).get(id(scope), -1)
        first: dict[object, tuple[int, int, str]] = {}  # identity -> (call index, use index, words)
        last: dict[object, int] = {}  # identity -> index of its last call
        index = -1
        previous = None
        for number, use in enumerate(uses):
            if use.site is not previous:
                previous = use.site
                index += 1
                self.orders.append(use.site.order)
            words = _words(use)
            for key in use.optimizers:
                if key not in first:
                    first[key] = (index, number, words)
                last[key] = index
        calls = len(self.orders)
        self.any_use = self._sweep(first, last, calls, skip_compiled=False)
        self.recompiled = self._sweep(first, last, calls, skip_compiled=True)

    @staticmethod
    def _sweep(first: dict[object, tuple[int, int, str]], last: dict[object, int], calls: int,
               skip_compiled: bool) -> list[str | None]:
        """The answer for each split (0 .. calls: how many calls with uses come before the change): of the
        identities first used before the split and used again at or after it, the words of the one first
        used."""
        starting: dict[int, list[tuple[int, int, str, int]]] = {}
        for key, (index, number, words) in first.items():
            if skip_compiled and key == COMPILED:
                continue
            if last[key] > index:  # used again by a later call: may straddle a split
                starting.setdefault(index, []).append((index, number, words, last[key]))
        answers: list[str | None] = [None]
        heap: list[tuple[int, int, str, int]] = []
        for split in range(1, calls + 1):
            for entry in starting.get(split - 1, ()):
                heapq.heappush(heap, entry)
            while heap and heap[0][3] < split:
                heapq.heappop(heap)  # its last use comes before this split, and before every later one
            answers.append(heap[0][2] if heap else None)
        return answers

    def at(self, order: int) -> str | None:
        split = bisect_left(self.orders, order)
        return (self.recompiled if self.last_compile > order else self.any_use)[split]


def _last_compile(facts: Facts) -> dict[int, int]:
    """The order of the last `x.compile(...)` call (with an optimizer or not) made in each scope, by id."""

    def compute() -> dict[int, int]:
        found: dict[int, int] = {}
        for site in facts.calls:
            if site.method == "compile":
                found[id(site.scope)] = site.order
        return found

    return facts.cached("tl301.last_compile", compute)


def _words(use: OptimizerUse) -> str:
    site = use.site
    if use.kind == "compile":
        return "`compile()`"
    if use.kind == "helper":
        return f"training with `{site.func}()`"
    return f"`{site.receiver}.{site.method}()`"

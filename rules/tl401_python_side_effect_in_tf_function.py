from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Scope
from tapelint.analysis.tracing import Traced, changed_outside, declared_outside, outer_list, python_number, \
    runs_many, traced_scope, tracing
from tapelint.analysis.values import values_of
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid

_RANDOM_PREFIXES = ("numpy.random.", "random.")
_SEEDING = frozenset({"seed", "set_state", "get_state", "default_rng", "RandomState", "Generator", "SeedSequence",
                      "Random", "getstate", "setstate"})
_GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState", "random.Random"})


# `tf.function` needs the `tf` alias; TensorFlow's own modules only name it in docstrings.
_TF = "import tensorflow as tf"


class PythonSideEffectInTfFunction(Rule):
    """
    ## What it does
    Reports Python state that a `tf.function` body (decorated, wrapped with `tf.function(f)`, a Keras
    `train_step` that `fit` traces, or a helper they call) touches, when that function is called more
    than once:
    - a Python number on `self` or in a `global`/`nonlocal` name changed inside (`self.step += 1`);
    - `append`/`extend`/`insert` on a list that lives outside the function;
    - `np.random.*` / `random.*` draws (and a NumPy or `random` generator's methods);
    - a Python number on `self` (or a module global) read inside and given new values outside (a KL
      weight or a schedule stored as a float and updated each epoch).

    ## Why is this bad?
    The Python code of a `tf.function` runs only while it is traced, usually once; later calls run the
    graph. Measured on TF 2.21 (CPU), three calls of a traced step: `self.step += 1` leaves `step` at 1;
    a global `count += 1` leaves 1; `losses.append(loss)` leaves one symbolic tensor that `float()`
    cannot read ("SymbolicTensor"); `np.random.uniform()` and `random.random()` return the same number
    on every call; `self.kl_weight` set to 0.0, 0.5, 1.0 between calls is read as 0.0 every time.
    The loop runs without an error and trains with a frozen value.

    ## Example
    ```python
    class VAE(keras.Model):
        def __init__(self):
            super().__init__()
            self.kl_weight = 0.0

        @tf.function
        def train_step_fn(self, x):
            ...
            loss = reconstruction + self.kl_weight * kl
    ...
    for epoch in range(epochs):
        vae.kl_weight = min(1.0, epoch / 10)
    ```

    ## Use instead
    Keep changing state in a `tf.Variable` and update it with `assign` (`self.kl_weight =
    tf.Variable(0.0, trainable=False)`, then `vae.kl_weight.assign(...)`), count with
    `self.step.assign_add(1)` or the optimizer's `iterations`, draw noise with `tf.random.*`, and return
    values from the function instead of appending them to an outer list. `print` is not reported: it is
    the usual way to see when tracing happens (use `tf.print` to print on every call).

    ## Known problems
    Only Python numbers and lists that the value model proves to be such are judged: an attribute that
    may hold a `tf.Variable` or anything unknown is not reported. A function is judged only when its
    callers are seen calling it more than once (in a loop, or Keras `fit`).

    ## Options
    None.

    ## Fix safety
    No fix: moving state into a `tf.Variable` changes how the rest of the code reads it.

    ## References
    - https://www.tensorflow.org/guide/function ("Better performance with tf.function": do not rely on Python
      side effects such as object mutation or list appends; NumPy and Python calls become constants)
    - https://github.com/tensorflow/tensorflow/issues/31362 ("Non-tensorflow code gets executed only on
      the first run of tf.function": a counter on an object)
    - https://github.com/tensorflow/tensorflow/pull/24610 (the `tf.function` docs: `np.random` in a traced
      function returns the same value every time)
    """

    code = "TL401"
    name = "python-side-effect-in-tf-function"
    message = "{what} only while `{function}` is traced, not on every call: {effect}"
    severity = Severity.WARNING
    # A traced entry (`@tf.function`, `tf.function(f)`, a Keras step that `fit` traces) and an effect.
    triggers = (("@tf.function", "random.", _TF), ("@tf.function", ".append(", _TF), ("@tf.function", "+= ", _TF),
                ("@tf.function", "self.", _TF), ("tf.function(", "random.", _TF), ("tf.function(", ".append(", _TF),
                ("tf.function(", "+= ", _TF), ("tf.function(", "self.", _TF), ("def train_step", "compile("))
    probe = ""

    def check(self) -> None:
        facts = self.facts
        if not tracing(facts).entries:
            return
        reported: set[tuple[int, str]] = set()
        # Whether a scope runs traced, many times: asked once per scope, not once per binding, call and read.
        repeated: dict[int, Traced | None] = {}

        def traced_often(scope: Scope) -> Traced | None:
            key = id(scope)
            if key in repeated:
                return repeated[key]
            traced = None if scope.is_module else traced_scope(facts, scope)
            if traced is not None and not runs_many(facts, traced):
                traced = None
            repeated[key] = traced
            return traced

        for binding in facts.bindings:
            if binding.class_body is not None:
                continue
            traced = traced_often(binding.scope)
            if traced is None:
                continue
            name = binding.target
            attribute = name.startswith("self.") and name.count(".") == 1 and binding.scope.class_name is not None
            if not attribute and not ("." not in name and declared_outside(binding.scope, name)):
                continue
            if not python_number(facts, binding.target_node, binding.scope, binding.ready + 1):
                continue
            reported.add((id(traced.entry.scope), name))
            self.report(binding.node, what=f"`{name}` (a Python number) changes",
                        function=traced.entry.scope.simple_name,
                        effect="later calls leave it as it was after tracing; keep it in a `tf.Variable` and `assign` it")
        for site in facts.calls:
            traced = traced_often(site.scope)
            if traced is None:
                continue
            function = traced.entry.scope.simple_name
            if outer_list(facts, site) is not None:
                self.report(site.node, what=f"`{site.receiver}.{site.method}(...)` adds to a Python list made outside",
                            function=function,
                            effect="it grows once per trace and holds symbolic tensors; return the values instead")
            elif self._random_draw(site):
                self.report(site.node, what=f"`{site.func}(...)` draws its random numbers", function=function,
                            effect="every call reuses the same numbers; use `tf.random`")
        for use in facts.name_uses:
            traced = traced_often(use.scope)
            if traced is None:
                continue
            name = use.name
            dots = name.count(".")
            if dots > 1 or (dots == 1 and not name.startswith("self.")) or (id(traced.entry.scope), name) in reported:
                continue
            changed = changed_outside(facts, use.scope, use.name, use.order)
            if changed is None:
                continue
            reported.add((id(traced.entry.scope), use.name))
            where = self.location(changed.node)
            self.report(use.node, what=f"`{use.name}` (a Python number) is read", function=traced.entry.scope.simple_name,
                        effect=f"the new value set {'at ' + where if where else 'later'} never reaches the graph; keep it in a "
                               "`tf.Variable` and `assign` it")

    def _random_draw(self, site) -> bool:  # type: ignore[no-untyped-def]
        qualified = site.qualified
        if qualified is not None:
            return qualified.startswith(_RANDOM_PREFIXES) and qualified.count(".") == (2 if qualified.startswith("numpy") else 1) \
                and qualified.rsplit(".", 1)[-1] not in _SEEDING
        func = site.node.func
        if not isinstance(func, cst.Attribute) or func.attr.value in _SEEDING or func.attr.value.startswith("_"):
            return False
        owners = values_of(self.facts, func.value, site.scope, site.order)
        return bool(owners) and all(v.cls in _GENERATORS for v in owners)

    VALID = [
        Valid(
            """
import tensorflow as tf

class Trainer(tf.Module):
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.step = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - self.model(x, training=True)))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        self.step.assign_add(1)
        return loss

trainer = Trainer(model, optimizer)
for x, y in dataset:
    trainer.train_step(x, y)
""",
            "near miss: the counter is a tf.Variable updated with assign_add",
        ),
        Valid(
            """
import tensorflow as tf

@tf.function
def train_step(x, y):
    losses = []
    for head in heads:
        losses.append(tf.reduce_mean(tf.square(y - head(x))))
    noise = tf.random.normal(tf.shape(x))
    print("tracing train_step")
    return tf.add_n(losses) + tf.reduce_mean(noise)

for x, y in dataset:
    train_step(x, y)
""",
            "near miss: a local list, tf.random and a plain print",
        ),
        Valid(
            """
import numpy as np
import tensorflow as tf

@tf.function
def train_step(x, y, noise):
    return model(x + noise)

history = []
for x, y in dataset:
    noise = np.random.normal(size=x.shape).astype("float32")
    loss = train_step(x, y, noise)
    history.append(float(loss))
""",
            "near miss: NumPy draws and list appends in the eager loop, not in the traced step",
        ),
        Valid(
            """
import tensorflow as tf

class VAE(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.kl_weight = tf.Variable(0.0, trainable=False)

    @tf.function
    def step(self, x):
        return self.kl_weight * tf.reduce_sum(x)

vae = VAE()
for epoch in range(10):
    vae.kl_weight.assign(min(1.0, epoch / 5))
    for x in dataset:
        vae.step(x)
""",
            "near miss: the KL weight is a tf.Variable assigned outside",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.step = 0

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - self.model(x, training=True)))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        self.step += 1
        return loss

trainer = Trainer(model, optimizer)
for x, y in dataset:
    trainer.train_step(x, y)
""",
            line=16,
            message_contains="`self.step` (a Python number) changes",
        ),
        Invalid(
            """
import numpy as np
import tensorflow as tf

@tf.function
def augment(x):
    shift = np.random.uniform(-0.1, 0.1)
    return x + shift

for x in dataset:
    augment(x)
""",
            line=7,
            message_contains="draws its random numbers",
        ),
        Invalid(
            """
import tensorflow as tf

batch_losses = []

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - model(x, training=True)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    batch_losses.append(loss)

for epoch in range(5):
    for x, y in dataset:
        train_step(x, y)
""",
            line=12,
        ),
        Invalid(
            """
import tensorflow as tf

class VAE(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.kl_weight = 0.0

    @tf.function
    def step(self, x):
        return self.kl_weight * tf.reduce_sum(x)

vae = VAE()
for epoch in range(10):
    vae.kl_weight = min(1.0, epoch / 5)
    for x in dataset:
        vae.step(x)
""",
            line=11,
            message_contains="is read",
        ),
    ]

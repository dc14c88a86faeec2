from __future__ import annotations

import libcst as cst

from tapelint.analysis.blocks import positions
from tapelint.analysis.facts import Facts, keyword_arg
from tapelint.analysis.gradients import GradientCall, gradient_calls, watch_calls, watched_names
from tapelint.analysis.names import dotted
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid
from tapelint.rules._tl007_sources import copied_from, recorded_in, source_kind
from tapelint.text import source_lines


class UnwatchedTensorGradient(Rule):
    """
    ## What it does
    Reports `tape.gradient(target, x)` where `x` is a plain tensor (from `tf.constant`,
    `tf.convert_to_tensor`, `tf.cast`, NumPy, an image loaded from disk, arithmetic, `model.inputs`)
    created before the tape, and the tape never called `tape.watch(x)`. Arithmetic on a variable
    (`tf.Variable(2.0) + 1.0`) is such a tensor. A `tf.Variable(..., trainable=False)` is reported
    too, and so is any unwatched `tf.Variable` of a tape opened with `watch_accessed_variables=False`.

    ## Why is this bad?
    A tape automatically watches only the trainable `tf.Variable`s that are read inside it. A tensor
    created outside the tape is a constant to it, so the gradient with respect to it is `None`, with
    no error. Saliency maps, adversarial examples (FGSM), input gradients and physics-informed
    residuals are the usual places where this bites. `model.inputs` is a symbolic Keras tensor, not the
    batch that was fed to the model, so watching it does not help either.

    ## Example
    ```python
    image = tf.convert_to_tensor(batch)
    with tf.GradientTape() as tape:
        score = tf.reduce_max(model(image), axis=-1)
    saliency = tape.gradient(score, image)  # None
    ```

    ## Use instead
    ```python
    image = tf.convert_to_tensor(batch)
    with tf.GradientTape() as tape:
        tape.watch(image)
        score = tf.reduce_max(model(image), axis=-1)
    saliency = tape.gradient(score, image)
    ```

    ## Known problems
    A tensor that reaches the function as a parameter is reported only when every call in the file
    passes a tensor; a loop variable only when the loop does not iterate over variables. Tensors
    computed inside the tape are intermediate results the tape recorded and are never reported.

    ## Options
    None.

    ## Fix safety
    The fix inserts `tape.watch(x)` as the first statement of the `with` block. It is safe: watching a
    tensor only makes the tape record it.

    ## References
    - https://www.tensorflow.org/guide/autodiff#controlling_what_the_tape_watches
    - https://www.tensorflow.org/tutorials/interpretability/integrated_gradients
    - https://github.com/tensorflow/tensorflow/issues/31264 (watch the batch, not `model.inputs`)
    """

    code = "TL007"
    name = "unwatched-tensor-gradient"
    message = "`{source}` is {what}, and `{tape}` never watches it: `{tape}.{method}(..., {source})` returns None"
    severity = Severity.ERROR
    triggers = ("GradientTape",)
    fixable = True
    probe = "Confirmed when the gradient with respect to the tensor is None."

    def check(self) -> None:
        facts = self.facts
        for grad in gradient_calls(facts):
            if grad.sources is None or grad.tape.name is None:
                continue
            watched = watched_names(facts, grad.tape, grad.site.order)
            if any(not _plain_watch(call.node) for call in watch_calls(facts, grad.tape, grad.site.order)):
                continue  # something we cannot read is watched: it may be our tensor
            watch_all = _watches_variables(grad.tape.call)
            for element in _elements(grad.sources):
                self._check_source(facts, grad, element, watched, watch_all)

    def _check_source(self, facts: Facts, grad: GradientCall, expr: cst.BaseExpression, watched: set[str],
                      watch_all: bool | None) -> None:
        name = dotted(expr)
        if name is None:
            return
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("inputs", "input"):
            self._report(expr, grad, name, "a symbolic Keras input, not the tensor the model was called on",
                         Confidence.HIGH, fixable=False)
            return
        site = grad.site
        if copied_from(facts, name, site.scope, site.order) & watched:
            return
        if recorded_in(facts, grad.tape, name, site.scope, site.order):
            return  # an intermediate result the tape recorded
        kind = source_kind(facts, expr, site.scope, site.order, watch_all)
        if kind is None:
            return
        self._report(expr, grad, name, kind.what, Confidence.HIGH if kind.certain else Confidence.INFERRED,
                     fixable=True)

    def _report(self, expr: cst.BaseExpression, grad: GradientCall, name: str, what: str, confidence: Confidence,
                fixable: bool) -> None:
        fix = self._fix(grad, name) if fixable else None
        self.report(expr, source=name, what=what, tape=grad.tape.name, method=grad.method,
                    confidence=confidence, fix=fix)

    def _fix(self, grad: GradientCall, name: str) -> PendingFix | None:
        body = grad.tape.node.body
        if not isinstance(body, cst.IndentedBlock) or not body.body:
            return None
        first = body.body[0]
        if not isinstance(first, cst.SimpleStatementLine) or first.leading_lines:
            return None
        small = first.body[0]
        where = positions(self.context.shared, self.context.module).get(small)
        if where is None:
            return None
        line = source_lines(self.context.source)[where.start.line - 1]
        indent = line[: where.start.column]
        if indent.strip():
            return None
        newline = self.context.module.default_newline  # the file's own line ending: LF, CRLF or a lone CR
        text = f"{grad.tape.name}.watch({name}){newline}{indent}{self.context.module.code_for_node(small)}"
        return PendingFix(f"Watch `{name}` on the tape", True, [(small, text)])

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.applications.MobileNetV2(weights=None)

def saliency_map(image):
    image = tf.convert_to_tensor(image[None, ...])
    with tf.GradientTape() as tape:
        tape.watch(image)
        predictions = model(image, training=False)
        top_class = tf.reduce_max(predictions, axis=-1)
    grads = tape.gradient(top_class, image)
    return tf.reduce_max(tf.abs(grads), axis=-1)[0]
""",
            "a saliency map that watches its input",
        ),
        Valid(
            """
import tensorflow as tf

x = tf.Variable(2.0)
y = tf.constant(3.0)
with tf.GradientTape() as tape:
    z = x * x * y
    w = z * 2.0
dz = tape.gradient(w, [x, z])
""",
            "near miss: a variable, and an intermediate tensor recorded inside the tape",
        ),
        Valid(
            """
import tensorflow as tf

def pde_residual(u_model, x, t):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, t])
        u = u_model(tf.stack([x, t], axis=1))
        u_x = tape.gradient(u, x)
    u_t = tape.gradient(u, t)
    u_xx = tape.gradient(u_x, x)
    del tape
    return u_t + u * u_x - 0.01 * u_xx

x = tf.constant([0.1, 0.2])
t = tf.constant([0.0, 0.5])
""",
            "physics-informed residual: both inputs watched through a list",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.applications.MobileNetV2(weights=None)

def saliency_map(image):
    image = tf.convert_to_tensor(image[None, ...])
    with tf.GradientTape() as tape:
        predictions = model(image, training=False)
        top_class = tf.reduce_max(predictions, axis=-1)
    grads = tape.gradient(top_class, image)
    return tf.reduce_max(tf.abs(grads), axis=-1)[0]
""",
            line=11,
            column=38,
            message_contains="`image` is a plain tensor (from `tf.convert_to_tensor`)",
            expected_fix="""
import tensorflow as tf

model = tf.keras.applications.MobileNetV2(weights=None)

def saliency_map(image):
    image = tf.convert_to_tensor(image[None, ...])
    with tf.GradientTape() as tape:
        tape.watch(image)
        predictions = model(image, training=False)
        top_class = tf.reduce_max(predictions, axis=-1)
    grads = tape.gradient(top_class, image)
    return tf.reduce_max(tf.abs(grads), axis=-1)[0]
""",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_object = tf.keras.losses.CategoricalCrossentropy(from_logits=True)

def fgsm(images, labels, eps=0.01):
    with tf.GradientTape() as tape:
        loss = loss_object(labels, model(images))
    signed = tf.sign(tape.gradient(loss, images))
    return images + eps * signed

adversarial = fgsm(tf.constant([[0.5] * 4]), tf.constant([[1.0] + [0.0] * 9]))
""",
            line=10,
            message_contains="a tensor passed in as `images`",
        ),
    ]


def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [e.value for e in expr.elements if not isinstance(e, cst.StarredElement)]
    return [expr]


def _plain_watch(call: cst.Call) -> bool:
    """`tape.watch(x)` / `tape.watch([x, y])`: arguments made of names only."""
    for arg in call.args:
        values = _elements(arg.value)
        if not all(dotted(v) is not None for v in values):
            return False
    return True


def _watches_variables(call: cst.Call) -> bool | None:
    arg = keyword_arg(call, "watch_accessed_variables")
    if arg is None:
        return True
    if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
        return arg.value.value == "True"
    return None

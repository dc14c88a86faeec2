from __future__ import annotations

import functools

import libcst as cst

from tapelint.analysis.walk import child_nodes

from tapelint.analysis.dataflow import names_in, render
from tapelint.analysis.facts import Binding, Facts, Scope
from tapelint.analysis.names import dotted
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid

VARIABLE_MAKERS = frozenset({"tensorflow.Variable", "keras.Variable", "keras.backend.variable"})
# tf ops that build a new tensor out of the variable
TENSOR_OPS = frozenset({
    "tensorflow.subtract", "tensorflow.math.subtract", "tensorflow.add", "tensorflow.math.add",
    "tensorflow.multiply", "tensorflow.math.multiply", "tensorflow.divide", "tensorflow.math.divide",
    "tensorflow.clip_by_value", "tensorflow.add_n", "tensorflow.maximum", "tensorflow.minimum",
    "tensorflow.math.maximum", "tensorflow.math.minimum",
})
_AUG_METHODS = {cst.SubtractAssign: "assign_sub", cst.AddAssign: "assign_add"}


def _creates_variable(facts: Facts, value: cst.BaseExpression | None) -> bool:
    if not isinstance(value, cst.Call):
        return False
    if facts.resolve(value.func) in VARIABLE_MAKERS:
        return True
    return isinstance(value.func, cst.Attribute) and value.func.attr.value == "add_weight"


def _globals(scope: Scope) -> set[str]:
    names: set[str] = set()
    if scope.node is None:
        return names
    stack: list[cst.CSTNode] = [scope.node.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Global):
            names.update(n.name.value for n in node.names)
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(child_nodes(node))
    return names


class VariableReboundToTensor(Rule):
    """
    ## What it does
    Reports a name first bound to a `tf.Variable` (or `self.add_weight(...)`) that is later rebound to
    arithmetic on itself: `w = w - lr * grad`, `w = tf.subtract(w, ...)`, `w -= lr * grad`, including
    `self.kernel = self.kernel - ...` in another method of the class.

    ## Why is this bad?
    `w - lr * grad` is a new `tf.Tensor`, not an update of the variable. The name now points to a
    constant tensor: from the second step on the tape no longer watches it and `tape.gradient`
    returns `None` for it; `w.assign_sub(...)` then fails with `'EagerTensor' object has no attribute
    'assign_sub'`; the original variable (the one a checkpoint or a Keras layer holds) never changes.
    `w -= ...` on a variable raises `RuntimeError` in current TensorFlow and rebinds to a tensor in
    older versions.

    ## Example
    ```python
    w = tf.Variable(tf.random.normal((3, 1)))
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x @ w - y))
        dw = tape.gradient(loss, w)
        w = w - 0.01 * dw
    ```

    ## Use instead
    ```python
    w = tf.Variable(tf.random.normal((3, 1)))
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x @ w - y))
        dw = tape.gradient(loss, w)
        w.assign_sub(0.01 * dw)
    ```

    ## Known problems
    Only rebinding in the same function (or through `global`, or `self.` attributes in the same
    class) is seen. A variable deliberately turned into a tensor (for a functional, MAML-style inner
    step) under the same name is reported too; give the tensor its own name.

    ## Options
    None.

    ## Fix safety
    `w = w - d` becomes `w.assign_sub(d)` and `w = w + d` / `w += d` become `w.assign_add(...)`. The
    fix is safe: the variable then holds the value the tensor would have held, and later code that
    reads `w` sees that value.

    ## References
    - https://www.tensorflow.org/guide/autodiff#cases_where_gradient_returns_none (1. Replaced a variable with a tensor)
    - https://github.com/dragen1860/Deep-Learning-with-TensorFlow-book/issues/156
    - https://github.com/tensorflow/tensorflow/issues/34335 (a kernel overwritten with `tf.subtract`)
    """

    code = "TL303"
    name = "variable-rebound-to-tensor"
    message = "`{name}` was a `tf.Variable` ({where}), but `{text}` rebinds it to a new tensor: the variable is never updated and the gradient of `{name}` is None from the next step on; use `{name}.{method}(...)`"
    severity = Severity.ERROR
    triggers = (("Variable", "grad"), ("add_weight", "grad"))
    fixable = True
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for binding in facts.bindings:
            if binding.index is not None or binding.augmented or not _creates_variable(facts, binding.value):
                continue
            for later in self._later_bindings(facts, binding):
                if _creates_variable(facts, later.value) or not self._is_tensor_update(facts, later):
                    break  # rebound to something else: a new story
                self._report(later, binding)
                break

    @staticmethod
    def _later_bindings(facts: Facts, binding: Binding) -> list[Binding]:
        target = binding.target
        found = []
        for other in facts.bindings_of(target):
            if other is binding or other.order <= binding.order and other.scope is binding.scope:
                continue
            if other.scope is binding.scope and other.order > binding.order:
                found.append(other)
            elif target.startswith("self.") and other.scope.class_name == binding.scope.class_name and (
                other.scope is not binding.scope
            ):
                found.append(other)
            elif binding.scope.is_module and target in facts.cached(("globals", id(other.scope)),
                                                                     functools.partial(_globals, other.scope)):
                found.append(other)
        if target.startswith("self."):
            # A method other than the one that created it may run in any order: keep document order.
            found.sort(key=lambda b: b.order)
        return found

    @staticmethod
    def _is_tensor_update(facts: Facts, binding: Binding) -> bool:
        value = binding.value
        if binding.augmented:
            return True
        if binding.index is not None or value is None:
            return False
        if binding.target not in names_in(value):
            return False
        if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
            return True
        return isinstance(value, cst.Call) and facts.resolve(value.func) in TENSOR_OPS

    def _report(self, later: Binding, original: Binding) -> None:
        where = self.location(original.node) or "line ?"
        fix, method = self._fix(later)
        node = later.node
        if later.augmented:
            self.report(
                node,
                f"`{later.target}` is a `tf.Variable` ({where}): `{render(node)}` raises RuntimeError in "
                f"current TensorFlow and rebound the name to a plain tensor in older versions; use "
                f"`{later.target}.{method}(...)`",
                fix=fix,
            )
            return
        self.report(node, name=later.target, where=where, text=render(node), method=method, fix=fix)

    @staticmethod
    def _fix(later: Binding) -> tuple[PendingFix | None, str]:
        node = later.node
        target = later.target
        if isinstance(node, cst.AugAssign):
            method = _AUG_METHODS.get(type(node.operator))
            if method is None:
                return None, "assign"
            text = f"{target}.{method}({cst.Module(body=[]).code_for_node(node.value)})"
            return PendingFix(f"Update `{target}` in place with `{method}`", True, [(node, text)]), method
        value = later.value
        if (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(value, cst.BinaryOperation)
                and isinstance(value.operator, (cst.Subtract, cst.Add))
                and dotted(value.left) == target):
            method = "assign_sub" if isinstance(value.operator, cst.Subtract) else "assign_add"
            delta = cst.Module(body=[]).code_for_node(value.right).strip()
            return PendingFix(f"Update `{target}` in place with `{method}`", True,
                              [(node, f"{target}.{method}({delta})")]), method
        return None, "assign"

    VALID = [
        Valid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal((3, 1)))
b = tf.Variable(tf.zeros((1,)))
for x, y in [(tf.ones((4, 3)), tf.zeros((4, 1)))]:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x @ w + b - y))
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(0.01 * dw)
    b.assign(b - 0.01 * db)
""",
            "in-place updates keep the variables",
        ),
        Valid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal((3, 1)))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(w * w)
grad = tape.gradient(loss, w)
w_next = w - 0.1 * grad
w = tf.Variable(w_next)
""",
            "near miss: the tensor gets its own name; the variable is recreated explicitly",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

w = tf.Variable(tf.random.normal((3, 1)))
b = tf.Variable(tf.zeros((1,)))
for x, y in [(tf.ones((4, 3)), tf.zeros((4, 1)))]:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x @ w + b - y))
    dw, db = tape.gradient(loss, [w, b])
    w = w - 0.01 * dw
    b.assign_sub(0.01 * db)
""",
            line=10,
            column=5,
            message_contains="`w` was a `tf.Variable` (line 4)",
            expected_fix="""
import tensorflow as tf

w = tf.Variable(tf.random.normal((3, 1)))
b = tf.Variable(tf.zeros((1,)))
for x, y in [(tf.ones((4, 3)), tf.zeros((4, 1)))]:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x @ w + b - y))
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(0.01 * dw)
    b.assign_sub(0.01 * db)
""",
        ),
        Invalid(
            """
import tensorflow as tf

class Linear(tf.Module):
    def __init__(self):
        self.kernel = tf.Variable(tf.random.normal((4, 2)))

    def __call__(self, x):
        return x @ self.kernel

    def sgd_step(self, grad, lr=0.01):
        self.kernel = tf.subtract(self.kernel, lr * grad)
""",
            line=12,
            message_contains="`self.kernel`",
        ),
    ]

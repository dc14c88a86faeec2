from __future__ import annotations

from tapelint.analysis.tracing import changes_per_iteration, created_per_iteration, entry_calls, tracing
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


# `tf.function` needs the `tf` alias; TensorFlow's own modules only name it in docstrings.
_TF = "import tensorflow as tf"


class TfFunctionRetracing(Rule):
    """
    ## What it does
    Reports two ways of making a `tf.function` trace again and again:
    - a Python `int` or `float` that takes a new value on every iteration of a loop (a `range` or
      `enumerate` counter, a counter incremented in the loop, a learning rate or weight computed from
      one) passed as an argument to a `tf.function` called in that loop;
    - a `tf.function` created inside a loop body (decorated def or `tf.function(g)`) and called once in
      that same iteration.

    ## Why is this bad?
    A `tf.function` keys its traces on the *values* of Python arguments: every new number is a new
    graph, traced and optimised from scratch, and kept in memory. A function object created anew has no
    traces at all. Either way the loop pays the tracing cost on each iteration, usually many times the
    cost of running the step, and TF warns "triggered tf.function retracing". Measured on TF 2.21 (CPU):
    a step called with `epoch` for 5 epochs has `experimental_get_tracing_count() == 5` (1 with
    `tf.constant(epoch)`); `reduce_retracing=True` does not help (still 5: it relaxes tensor shapes, not
    Python values); an `input_signature` converts the number to a tensor (1 trace). In
    `tests/corpus/tffn_step_counter_argument.py` 30 steps take 30 traces and 4.1 s instead of
    1 trace and 0.3 s.

    ## Example
    ```python
    @tf.function
    def train_step(x, y, step):
        ...

    for step, (x, y) in enumerate(dataset):
        train_step(x, y, step)
    ```

    ## Use instead
    ```python
    for step, (x, y) in enumerate(dataset):
        train_step(x, y, tf.constant(step, dtype=tf.int64))
    ```
    or give the `tf.function` an `input_signature`, or keep the value in a `tf.Variable` that the step
    reads. Define `tf.function`s once, outside the loop.

    ## Known problems
    Only numbers built visibly from loop counters, counters and literals are judged; a value returned by
    a function is not followed. A Python `bool` flag or `step % 2` takes few values (a few traces) and is
    not reported. A `tf.function` re-created per iteration and then called in an inner loop (once per
    model, once per epoch) is taken as intended and not reported.

    ## Options
    None.

    ## Fix safety
    No fix: `tf.constant(step)` changes the argument's type inside the function (Python control flow on
    it becomes graph control flow), which the author must check.

    ## References
    - https://www.tensorflow.org/guide/function#controlling_retracing
    - https://github.com/microsoft/AirSim-Drone-Racing-VAE-Imitation/issues/10 (a Python `epoch` passed to
      a `tf.function` train step in a loop)
    - https://github.com/yerkojahve/Meta-Pseudo-label/issues/1 (a Python learning rate and temperature
      passed to a traced `train_step` in a while loop)
    - https://github.com/theislab/scCODA/issues/13 ("triggered tf.function retracing" from a
      `tf.function` defined inside the function that is called repeatedly)
    - https://github.com/N3PDF/vegasflow/pull/85 (move `tf.function`-decorated functions out of the
      function that re-creates them)
    """

    code = "TL402"
    name = "tf-function-retracing"
    message = "{what}: `{function}` is traced again on every iteration{extra}"
    severity = Severity.WARNING
    # A `tf.function` and a loop that calls it.
    triggers = (("@tf.function", "for ", _TF), ("@tf.function", "while ", _TF), ("tf.function(", "for ", _TF),
                ("tf.function(", "while ", _TF))
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for entry in tracing(facts).entries:
            if entry.how == "keras":
                continue
            function = entry.scope.simple_name
            loop = created_per_iteration(facts, entry)
            if loop is not None:
                self.report(entry.node, what="`tf.function` is created inside the loop", function=function,
                            extra="; create it once, before the loop")
                continue
            if entry.input_signature:
                continue  # the numbers are converted to tensors of the signature: one trace
            for site in entry_calls(facts, entry):
                for arg in site.node.args:
                    if arg.star:
                        continue
                    driver = changes_per_iteration(facts, arg.value, site.scope, site.order)
                    if driver is None:
                        continue
                    extra = "; pass it as a tensor (`tf.constant(...)`)"
                    if entry.reduce_retracing:
                        extra += " (`reduce_retracing=True` relaxes tensor shapes, not Python values)"
                    text = self.text(arg.value)
                    what = (f"`{text}` is a Python loop counter" if text == driver else
                            f"`{text}` is a Python number that changes with `{driver}`")
                    self.report(arg.value, what=what, function=function, extra=extra)
                    break

    def text(self, node) -> str:  # type: ignore[no-untyped-def]
        code = self.context.module.code_for_node(node)
        return code if len(code) <= 40 else code[:37] + "..."

    VALID = [
        Valid(
            """
import tensorflow as tf

@tf.function
def train_step(x, y, step):
    tf.summary.scalar("step", step)
    return x

for epoch in range(10):
    for step, (x, y) in enumerate(dataset):
        train_step(x, y, tf.constant(step, dtype=tf.int64))
""",
            "near miss: the counter is passed as a tensor",
        ),
        Valid(
            """
import tensorflow as tf

@tf.function
def train_step(x, y, training):
    return model(x, training=training)

for epoch in range(10):
    for x, y in dataset:
        train_step(x, y, True)
    for x, y in val_dataset:
        train_step(x, y, False)
""",
            "near miss: a Python bool with two values traces twice",
        ),
        Valid(
            """
import tensorflow as tf

learning_rate = 0.01

@tf.function(input_signature=[tf.TensorSpec([None, 4]), tf.TensorSpec([], tf.float32)])
def train_step(x, lr):
    return x * lr

for epoch in range(10):
    lr = learning_rate * 0.9 ** epoch
    train_step(batch, lr)
""",
            "near miss: the input_signature converts the number to a tensor",
        ),
        Valid(
            """
import tensorflow as tf

scale = 0.5

@tf.function
def train_step(x, factor):
    return x * factor

for epoch in range(10):
    train_step(batch, scale)
""",
            "near miss: the Python number is the same on every call",
        ),
        Valid(
            """
import tensorflow as tf

for model in models:
    @tf.function
    def train_step(x):
        return model(x)
    for x in dataset:
        train_step(x)
""",
            "near miss: one tf.function per model, called many times",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

@tf.function
def train_step(x, y, epoch):
    return x * tf.cast(epoch, tf.float32)

for epoch in range(20):
    for x, y in dataset:
        train_step(x, y, epoch)
""",
            line=10,
            column=26,
            message_contains="`epoch` is a Python loop counter",
        ),
        Invalid(
            """
import tensorflow as tf

@tf.function(reduce_retracing=True)
def train_step(x, lr):
    return x * lr

base_lr = 0.1
for epoch in range(30):
    lr = base_lr * 0.5 ** (epoch // 10)
    train_step(batch, lr)
""",
            line=11,
            message_contains="reduce_retracing=True",
        ),
        Invalid(
            """
import tensorflow as tf

global_step = 0
for x, y in dataset:
    global_step += 1
    loss = trainer.step(x, y)
    log_step(x, global_step)

@tf.function
def log_step(x, step):
    tf.print(step)
""",
            line=8,
        ),
        Invalid(
            """
import tensorflow as tf

def step(x):
    return model(x)

for x in dataset:
    fast_step = tf.function(step)
    fast_step(x)
""",
            line=8,
            message_contains="created inside the loop",
        ),
    ]

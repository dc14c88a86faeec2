from __future__ import annotations

import libcst as cst

from tapelint.analysis.constants import number
from tapelint.analysis.vocabulary import is_legacy_optimizer
from tapelint.analysis.names import dotted
from tapelint.analysis.optimizers import OptimizerCreation, optimizer_creations
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid

# argument -> (what Keras 3 does with it, severity)
REMOVED = {
    "lr": ("raises `ValueError: Argument(s) not recognized`; TF 2.11-2.15 silently ignored it", Severity.ERROR),
    "decay": ("is ignored with a warning, so the learning-rate decay silently disappears", Severity.WARNING),
    "schedule_decay": ("raises `ValueError: Argument(s) not recognized`", Severity.ERROR),
}
# TF1's `tf.train.RMSPropOptimizer(decay=0.9)` is the discount of the moving average that Keras calls `rho`,
# and code ported from TF1 keeps it as `RMSprop(decay=0.9)`. A learning-rate decay is small (1e-6, 1e-4):
# from this value up to 1 (or when the value is unknown) `decay=` on RMSprop is read as the old rho.
_RHO_LIKE_FROM = 0.5
_RHO_EFFECT = ("is ignored by Keras 3 (with a warning); in TF1's RMSProp, `decay` is what Keras calls `rho`, the "
               "discount of the moving average of squared gradients (0.9 by default): write `rho={value}` if that "
               "is what it means (a learning-rate decay needs a schedule such as `InverseTimeDecay`)")


class RemovedOptimizerArgument(Rule):
    """
    ## What it does
    Reports Keras optimizer arguments that Keras 3 (TensorFlow 2.16 and later) rejects or ignores:
    `lr=`, `decay=` and `schedule_decay=`.

    ## Why is this bad?
    `lr=` was renamed `learning_rate=`. Its history is treacherous: accepted on TF <= 2.10, accepted and
    silently **ignored** on TF 2.11 to 2.15 (the default 0.001 is used, see tensorflow/tensorflow#58831),
    and a `ValueError: Argument(s) not recognized: {'lr': ...}` on Keras 3 (measured on TF 2.21).
    `decay=` (the old inverse-time decay) raises on TF 2.11 to 2.15 and is ignored with a warning on
    Keras 3, so a schedule the script relied on silently stops decaying. On `RMSprop` a `decay=` of 0.5
    or more is usually TF1's `tf.train.RMSPropOptimizer(decay=0.9)`, which is Keras's `rho` (the
    discount of the moving average of squared gradients), not a learning-rate decay.

    ## Example
    ```python
    optimizer = tf.keras.optimizers.Adam(lr=0.001, beta_1=0.9, decay=1e-6)
    ```

    ## Use instead
    ```python
    schedule = tf.keras.optimizers.schedules.InverseTimeDecay(0.001, decay_steps=1, decay_rate=1e-6)
    optimizer = tf.keras.optimizers.Adam(learning_rate=schedule, beta_1=0.9)
    ```

    ## Known problems
    Stays silent for code that targets Keras 2: files that import `tf_keras` or set
    `TF_USE_LEGACY_KERAS`, projects with `keras-version = 2` in `[tool.tapelint]`, and the
    `optimizers.legacy` classes, which still take these arguments.

    ## Options
    None. Set `keras-version = 2` in `[tool.tapelint]` to silence it for a whole Keras 2 project.

    ## Fix safety
    `lr=` -> `learning_rate=` is safe: it is the documented rename and does what the code says.
    Removing `decay=0` (or `0.0`) is safe. A non-zero `decay=` is replaced by an
    `InverseTimeDecay(lr, decay_steps=1, decay_rate=decay)` schedule, which reproduces the legacy
    formula `lr / (1 + decay * iterations)`; that fix is unsafe because training changes from today's
    Keras 3 behaviour (no decay) back to what the code asked for. `RMSprop(decay=...)` with a value of
    0.5 or more, or one that cannot be read, gets no schedule: the fix renames it to `rho=`, unsafe
    because it is a guess that the code was ported from TF1, and none is offered when `rho=` is given.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/58831 (`lr` accepted but ignored on TF 2.11+)
    - https://github.com/keras-team/keras/issues/19025 (`lr` rejected by Keras 3)
    - https://github.com/keras-team/keras-io/issues/1441 ("if you use lr, model fails to learn")
    - https://github.com/keras-team/keras/pull/17752 (`decay` removed from the new optimizers)
    - https://keras.io/api/optimizers/learning_rate_schedules/inverse_time_decay/
    - https://www.tensorflow.org/api_docs/python/tf/compat/v1/train/RMSPropOptimizer (the TF1 -> TF2
      argument map: `decay` becomes `rho=decay`)
    - `examples/seed2_vgg_cifar_loop.py`, a reproduction of the Stack Overflow question "Tensorflow 2
      Gradient Tape not working as expected": `Adam(lr=0.001, ..., decay=0.0)` in a custom loop
    """

    code = "TL501"
    name = "removed-optimizer-argument"
    message = "`{arg}=` on `{cls}` {effect}"
    severity = Severity.ERROR
    also_severity = {Severity.WARNING: (
        "for `decay=`, which Keras 3 warns about and ignores instead of rejecting"
    )}
    fixable = True
    triggers = (("lr", "optimizers"), ("decay", "optimizers"))
    probe = "Confirmed when the script stops with the ValueError on this line, or shows the learning rate the optimizer really runs with."

    def check(self) -> None:
        if self.context.keras_version == 2:
            return
        for creation in optimizer_creations(self.facts):
            if is_legacy_optimizer(creation.qualified):
                continue
            call = creation.node
            for arg in call.args:
                if arg.keyword is None or arg.keyword.value not in REMOVED:
                    continue
                keyword = arg.keyword.value
                effect, severity = REMOVED[keyword]
                if keyword == "decay" and number(self.facts, arg.value, creation.site.scope,
                                                 creation.site.order) == 0:
                    effect = "is no longer accepted (Keras 3 warns and ignores it); `decay=0` never did anything"
                elif keyword == "decay" and self._decay_is_rho(arg, creation):
                    effect = _RHO_EFFECT.format(value=self.context.module.code_for_node(arg.value))
                self.report(
                    arg,
                    severity=severity,
                    fix=self._fix(call, arg, creation),
                    arg=keyword,
                    cls=creation.cls,
                    effect=effect,
                )

    def _fix(self, call: cst.Call, arg: cst.Arg, creation: OptimizerCreation) -> PendingFix | None:
        if arg.keyword is None:
            return None
        keyword = arg.keyword.value
        if keyword == "lr":
            if any(a.keyword is not None and a.keyword.value == "learning_rate" for a in call.args):
                return None
            return PendingFix("Rename `lr=` to `learning_rate=`", True,
                              [(arg.keyword, cst.Name("learning_rate"))])
        if keyword != "decay":
            return None
        value = number(self.facts, arg.value, creation.site.scope, creation.site.order)
        if value == 0:
            return PendingFix("Remove `decay=0`", True, [(call, _without(call, arg))])
        if self._decay_is_rho(arg, creation):
            if any(a.keyword is not None and a.keyword.value == "rho" for a in call.args):
                return None
            return PendingFix("Rename `decay=` to `rho=` (TF1's RMSProp `decay`)", False,
                              [(arg.keyword, cst.Name("rho"))])
        schedules = _schedules_prefix(call)
        lr_arg = next((a for a in call.args if a.keyword is not None and a.keyword.value in ("learning_rate", "lr")),
                      None)
        if lr_arg is None:
            positional = [a for a in call.args if a.keyword is None]
            lr_arg = positional[0] if positional else None
        if schedules is None:
            return None
        initial = cst.Float("0.001") if lr_arg is None else lr_arg.value
        schedule = cst.parse_expression(
            f"{schedules}.InverseTimeDecay(__LR__, decay_steps=1, decay_rate=__DECAY__)"
        )
        schedule = schedule.deep_replace(schedule.args[0].value, initial)  # type: ignore[attr-defined]
        schedule = schedule.deep_replace(schedule.args[2].value, arg.value)  # type: ignore[attr-defined]
        new_args = []
        replaced = False
        for a in call.args:
            if a is arg:
                continue
            if a is lr_arg:
                new_args.append(a.with_changes(keyword=cst.Name("learning_rate"), value=schedule,
                                               equal=a.equal if a.keyword is not None else cst.AssignEqual(
                                                   cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
                replaced = True
            else:
                new_args.append(a)
        if not replaced:
            new_args.insert(0, cst.Arg(keyword=cst.Name("learning_rate"), value=schedule,
                                       equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                                       comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        return PendingFix("Replace `decay=` by an `InverseTimeDecay` learning-rate schedule", False,
                          [(call, call.with_changes(args=_fix_commas(new_args)))])

    def _decay_is_rho(self, arg: cst.Arg, creation: OptimizerCreation) -> bool:
        if creation.cls != "RMSprop":
            return False
        value = number(self.facts, arg.value, creation.site.scope, creation.site.order)
        return value is None or _RHO_LIKE_FROM <= value < 1

    VALID = [
        Valid("import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=1e-3, weight_decay=1e-4)\n",
              "the Keras 3 spelling"),
        Valid("import tf_keras\nopt = tf_keras.optimizers.Adam(lr=1e-3, decay=1e-6)\n",
              "Keras 2 via tf_keras still accepts them"),
        Valid("import tensorflow as tf\nopt = tf.keras.optimizers.legacy.Adam(lr=1e-3)\n",
              "legacy optimizers take `lr`"),
        Valid("import torch\nopt = torch.optim.Adam(model.parameters(), lr=1e-3)\n",
              "PyTorch optimizers take `lr`"),
        Valid("import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=1e-3)\n", "a Keras 2 project",
              config={"keras-version": 2}),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.001, beta_1=0.9)\n",
            line=2, column=32,
            expected_fix="import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=0.001, beta_1=0.9)\n",
        ),
        Invalid(
            "from tensorflow.keras.optimizers import Adam\nopt = Adam(lr=0.001, beta_1=0.9, beta_2=0.999, decay=0.0)\n",
            count=2,
            expected_fix="from tensorflow.keras.optimizers import Adam\n"
                         "opt = Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999)\n",
        ),
        Invalid(
            "import keras\nopt = keras.optimizers.SGD(0.1, momentum=0.9, decay=1e-4)\n",
            message_contains="ignored with a warning",
        ),
        Invalid(
            "import tensorflow as tf\nopt = tf.keras.optimizers.RMSprop(learning_rate=2.5e-4, decay=0.95, epsilon=0.01)\n",
            line=2, column=57, message_contains="`decay` is what Keras calls `rho`",
            expected_fix="import tensorflow as tf\n"
                         "opt = tf.keras.optimizers.RMSprop(learning_rate=2.5e-4, rho=0.95, epsilon=0.01)\n",
        ),
    ]


def _without(call: cst.Call, arg: cst.Arg) -> cst.Call:
    return call.with_changes(args=_fix_commas([a for a in call.args if a is not arg]))


def _fix_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """The last argument keeps no trailing comma unless the original layout had one on every line."""
    if not args:
        return args
    last = args[-1]
    if isinstance(last.comma, cst.Comma) and "\n" not in cst.Module([]).code_for_node(last.comma):
        args = [*args[:-1], last.with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    return args


def _schedules_prefix(call: cst.Call) -> str | None:
    func = dotted(call.func)
    if func is None:
        return None
    if "." in func and func.rsplit(".", 1)[0].endswith("optimizers"):
        return func.rsplit(".", 1)[0] + ".schedules"
    return None

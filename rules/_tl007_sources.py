"""What kind of tensor a `tape.gradient` source is: a plain tensor, a variable the tape does not watch
by itself, or something a tape watches (or that cannot be told).

A tape watches only the trainable `tf.Variable`s read inside it. `source_kind` answers for a source
expression at the gradient call: a tensor from a factory (`tf.constant`, NumPy, an image decoder),
arithmetic on one or on a variable, a tensor every caller passes in, a batch of a data pipeline, or a
non-trainable variable. Names are followed with the value model (`Values.reaching`, call resolution,
local helpers' returns); one budget bounds each question. None means "not such a tensor, or cannot
tell": rules stay silent on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Binding, Facts, Scope, TapeBlock, keyword_arg
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, Value, values
from tapelint.analysis.vocabulary import WEIGHT_ATTRIBUTES

# Constructors of plain tensors (never a tf.Variable).
TENSOR_FACTORIES = frozenset({
    "tensorflow.constant", "tensorflow.convert_to_tensor", "tensorflow.zeros", "tensorflow.ones",
    "tensorflow.zeros_like", "tensorflow.ones_like", "tensorflow.fill", "tensorflow.range",
    "tensorflow.linspace", "tensorflow.cast", "tensorflow.expand_dims", "tensorflow.reshape",
    "tensorflow.identity", "tensorflow.stack", "tensorflow.concat", "tensorflow.image.resize",
    "tensorflow.io.decode_image", "tensorflow.image.decode_jpeg", "tensorflow.image.convert_image_dtype",
    "keras.utils.img_to_array", "keras.preprocessing.image.img_to_array", "keras.ops.convert_to_tensor",
})
TENSOR_PREFIXES = ("tensorflow.random.", "numpy.", "keras.applications.")  # keras.applications.*.preprocess_input
VARIABLE_MAKERS = frozenset({"tensorflow.Variable", "keras.Variable", "keras.backend.variable"})

# Words of a loop's iterable (and of what its name holds) that say what the loop yields.
_BUDGET = 64


@dataclass(frozen=True)
class SourceKind:
    """What a gradient source is, in words for a message, and how sure that is."""

    what: str
    certain: bool  # read from the code that makes it (HIGH), not inferred from callers or names
    variable: bool = False  # a `tf.Variable` (watched only in some tapes), not a plain tensor


def source_kind(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int,
                watches_variables: bool | None = True) -> SourceKind | None:
    """What the source `expr` of a gradient call at (`scope`, `order`) is, when it is a tensor the tape
    does not watch by itself. `watches_variables` is the tape's `watch_accessed_variables` (None when
    it cannot be read): with False, a trainable `tf.Variable` is reported too."""
    reader = _Reader(facts, watches_variables)
    if isinstance(expr, cst.Attribute):  # `self.x`, `agent.x`: only as the source itself
        name = dotted(expr)
        return reader.of_name(name, scope, order) if name is not None else None
    return reader.of_expr(expr, scope, order)


def recorded_in(facts: Facts, tape: TapeBlock, name: str, scope: Scope, order: int) -> bool:
    """Is the value `name` holds at (`scope`, `order`) computed inside `tape`'s block (an intermediate
    result the tape recorded)?"""
    return any(b.scope is tape.scope and tape.encloses(b.order) for b in _holders(facts, name, scope, order))


def copied_from(facts: Facts, name: str, scope: Scope, order: int) -> set[str]:
    """`name` and the names it was copied from (`inp = x` makes `x` the same tensor as `inp`)."""
    found = {name}
    current = name
    for _ in range(_BUDGET):
        holders = _holders(facts, current, scope, order)
        if len(holders) != 1 or not isinstance(holders[-1].value, cst.Name):
            break
        binding = holders[-1]
        current = binding.value.value  # type: ignore[union-attr]
        if current in found:
            break
        found.add(current)
        scope, order = binding.scope, binding.order
    return found


def _holders(facts: Facts, name: str, scope: Scope, order: int) -> list[Binding]:
    """The bindings a read of `name` at (`scope`, `order`) may see (for `self.x`: its class's)."""
    if name.startswith("self.") and scope.class_name is not None:
        return [b for b in facts.bindings_of(name) if b.scope.class_name == scope.class_name and b.class_body is None]
    return values(facts).reaching(name, scope, order)


class _Reader:
    def __init__(self, facts: Facts, watches_variables: bool | None) -> None:
        self.f = facts
        self.values = values(facts)
        self.watch_all = watches_variables
        self.budget = _BUDGET
        self.active: set[tuple[int, int]] = set()

    def _spend(self, key: tuple[int, int]) -> bool:
        if self.budget <= 0 or key in self.active:
            return False
        self.budget -= 1
        return True

    # ------------------------------------------------------------------ names
    def of_name(self, name: str, scope: Scope, order: int) -> SourceKind | None:
        holders = _holders(self.f, name, scope, order)
        if not holders:
            return self._parameter(name, scope)
        kinds = [self._binding(b) for b in holders]
        if any(k is None for k in kinds):
            return None  # one of the values that may reach here is not such a tensor
        return kinds[-1]

    def _parameter(self, name: str, scope: Scope) -> SourceKind | None:
        """A parameter is such a tensor when every call in the module passes one."""
        function = self.f.param_scope(name, scope)
        if function is None or function.is_module:
            return None
        sites = self.values.call_sites(function)
        if not sites:
            return None
        for site in sites:
            arg = self.f.argument_for_param(site.node, function, name)
            if arg is None or self.of_expr(arg, site.scope, site.order) is None:
                return None
        return SourceKind(f"a tensor passed in as `{name}`", certain=False)

    def _binding(self, binding: Binding) -> SourceKind | None:
        key = (id(binding), 0)
        if not self._spend(key):
            return None
        self.active.add(key)
        try:
            if binding.value is None:
                return self._loop_target(binding)
            if binding.index is not None or binding.path or binding.augmented:
                return None
            return self.of_expr(binding.value, binding.scope, binding.order)
        finally:
            self.active.discard(key)

    def _loop_target(self, binding: Binding) -> SourceKind | None:
        """A loop's target: a batch when the loop reads a data pipeline, never when it reads weights."""
        loop = binding.node
        if not isinstance(loop, (cst.For, cst.CompFor)):
            return None
        # Only a loop over what the value model proves is a `tf.data.Dataset` (its elements are tensors,
        # never variables); a name such as `loader` or `train_ds` is not evidence.
        iterated = self.values.of(loop.iter, binding.scope, binding.order)
        if not iterated or any(v.kind is not Kind.DATASET for v in iterated):
            return None
        return SourceKind("a batch tensor from the `tf.data` pipeline", certain=True)

    # ------------------------------------------------------------------ expressions
    def of_expr(self, expr: cst.BaseExpression, scope: Scope, order: int) -> SourceKind | None:
        key = (id(expr), order)
        if not self._spend(key):
            return None
        self.active.add(key)
        try:
            if isinstance(expr, cst.Name):
                return self.of_name(expr.value, scope, order)
            if isinstance(expr, cst.Call):
                return self._call(expr, scope, order)
            if isinstance(expr, cst.BinaryOperation):
                return self._arithmetic(expr, scope, order)
            return None
        finally:
            self.active.discard(key)

    def _call(self, call: cst.Call, scope: Scope, order: int) -> SourceKind | None:
        qualified = self.f.resolve(call.func)
        if qualified is None and isinstance(call.func, cst.Name):
            callee = self.values.of(call.func, scope, order)
            helpers = [v for v in callee if v.kind is Kind.FUNCTION and isinstance(v.node, cst.FunctionDef)]
            if helpers and len(helpers) == len(callee):
                return self._returns(helpers)
            # `preprocess = tf.keras.applications.resnet50.preprocess_input`: a library callable by another name.
            named = {v.cls for v in callee if v.kind is Kind.EXTERNAL and v.node is None}
            if len(named) == 1 and len(callee) == 1:
                qualified = named.pop()
        if qualified in VARIABLE_MAKERS:
            trainable = keyword_arg(call, "trainable")
            if trainable is not None and isinstance(trainable.value, cst.Name) and trainable.value.value == "False":
                return SourceKind("a non-trainable `tf.Variable` (`trainable=False`), which tapes do not watch by "
                                  "themselves", certain=True, variable=True)
            if self.watch_all is False:
                return SourceKind("a `tf.Variable` of a tape opened with `watch_accessed_variables=False`",
                                  certain=True, variable=True)
            return None
        if qualified is not None and (qualified in TENSOR_FACTORIES or qualified.startswith(TENSOR_PREFIXES)):
            short = qualified.replace("tensorflow.", "tf.")
            return SourceKind(f"a plain tensor (from `{short}`), not a variable", certain=True)
        return None

    def _returns(self, helpers: list[Value]) -> SourceKind | None:
        """A helper of this module: the tensor every one of its returns gives back."""
        kinds = []
        for helper in helpers:
            sites = self.f.returns_of(helper.scope) if helper.scope is not None else []
            if not sites:
                return None
            for ret in sites:
                kind = self.of_expr(ret.value, ret.scope, ret.order) if ret.value is not None else None
                if kind is None:
                    return None
                kinds.append(kind)
        return kinds[0]

    def _arithmetic(self, expr: cst.BinaryOperation, scope: Scope, order: int) -> SourceKind | None:
        """`a + b` is a tensor when one side is, or is a variable; `enc.trainable_variables + ...` is a list."""
        for side in (expr.left, expr.right):
            if isinstance(side, (cst.List, cst.Tuple, cst.ListComp)) or dotted(side) is None:
                continue
            if isinstance(side, cst.Attribute) and side.attr.value in WEIGHT_ATTRIBUTES:
                return None
        for side in (expr.left, expr.right):
            if not isinstance(side, (cst.Call, cst.Name)):
                continue
            if self._is_variable(side, scope, order):
                return SourceKind("a plain tensor (arithmetic on a `tf.Variable` returns a tensor)", certain=True)
            kind = self.of_expr(side, scope, order)
            if kind is not None and not kind.variable:
                return SourceKind("a plain tensor (an arithmetic result), not a variable", kind.certain)
        return None

    def _is_variable(self, expr: cst.BaseExpression, scope: Scope, order: int) -> bool:
        """A `tf.Variable` made in this module (not one of a model's weights, whose maker we do not see)."""
        found = self.values.of(expr, scope, order)
        return bool(found) and all(
            v.kind is Kind.VARIABLE and v.cls is not None or v.kind is Kind.EXTERNAL and v.cls in VARIABLE_MAKERS
            and v.node is not None for v in found)

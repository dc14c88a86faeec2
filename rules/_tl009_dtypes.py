"""What dtype a tensor or a `tf.Variable` has, when the code proves it.

`dtype_name(facts, expr)` (from `analysis/dtype_names.py`) reads a dtype written in the code (`tf.int32`,
`"float32"`, `np.int64`).
`value_dtype(facts, expr, scope, order)` is the dtype TensorFlow gives the tensor `expr` converts to:
Python literals (`3` is int32, `3.0` float32, `True` bool), lists of them, NumPy constructors (`np.arange(5)`
is int64), TensorFlow factories (`tf.zeros`, `tf.range`, `tf.cast`, `tf.constant(..., dtype=...)`), and
names bound to any of these (through the value model). `variable_dtype` answers for a `tf.Variable` /
`keras.Variable` construction: its `dtype=`, else its initial value's dtype. The figures were measured on
TF 2.21 (Linux): `tf.Variable(3)` and `tf.Variable([1, 2])` are int32, `tf.Variable(np.arange(5))` int64,
`tf.Variable(range(3))` int32, `keras.Variable(3)` int32.

None means "cannot tell" (a function's result, a parameter, arithmetic on tensors): rules stay silent.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.dtype_names import dtype_name, is_integer
from tapelint.analysis.facts import Facts, Scope, arg_value
from tapelint.analysis.values import Kind, Value, values_of
from tapelint.analysis.variable_sets import variable_list

# TensorFlow factories: where `dtype` may be passed positionally (None: keyword only) and the default.
_TF_FACTORIES = {
    "tensorflow.zeros": (1, "float32"),
    "tensorflow.ones": (1, "float32"),
    "tensorflow.eye": (None, "float32"),
    "tensorflow.random.normal": (None, "float32"),
    "tensorflow.random.uniform": (None, "float32"),
    "tensorflow.random.truncated_normal": (None, "float32"),
}
_NUMPY_FLOAT = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.eye", "numpy.identity",
                          "numpy.random.rand", "numpy.random.randn", "numpy.random.normal",
                          "numpy.random.uniform", "numpy.random.random", "numpy.linspace"})
_NUMPY_INT = frozenset({"numpy.random.randint"})
_NUMPY_FROM_DATA = frozenset({"numpy.array", "numpy.asarray"})
_TF_FROM_DATA = frozenset({"tensorflow.constant", "tensorflow.convert_to_tensor", "keras.ops.convert_to_tensor"})
_LIKE = frozenset({"tensorflow.zeros_like", "tensorflow.ones_like"})
_CASTS = frozenset({"tensorflow.cast", "tensorflow.dtypes.cast", "keras.ops.cast"})
VARIABLE_CONSTRUCTORS = frozenset({"tensorflow.Variable", "keras.Variable", "keras.backend.Variable"})
_BUDGET = 200


@dataclass(frozen=True)
class VariableDtype:
    """The dtype of a variable construction and the expression that decides it."""

    dtype: str
    because: cst.BaseExpression  # the `dtype=` argument, or the initial value
    explicit: bool  # given as `dtype=`
    trainable: bool | None  # `trainable=True/False` when written, else None


class _Reader:
    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.budget = _BUDGET
        self.active: set[int] = set()

    def expr(self, expr: cst.BaseExpression | None, scope: Scope, order: int) -> str | None:
        if expr is None or self.budget <= 0 or id(expr) in self.active:
            return None
        self.budget -= 1
        self.active.add(id(expr))
        try:
            return self._expr(expr, scope, order)
        finally:
            self.active.discard(id(expr))

    def _expr(self, expr: cst.BaseExpression, scope: Scope, order: int) -> str | None:
        if isinstance(expr, cst.Integer):
            return "int32"
        if isinstance(expr, cst.Float):
            return "float32"
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self.expr(expr.expression, scope, order)
        if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
            return "bool"
        if isinstance(expr, (cst.List, cst.Tuple)):
            return _join([self.expr(e.value, scope, order) if isinstance(e, cst.Element) else None
                          for e in expr.elements])
        if isinstance(expr, cst.Call):
            return self.call(expr, scope, order)
        if isinstance(expr, (cst.Name, cst.Attribute)):
            if isinstance(expr, cst.Attribute) and self.f.resolve(expr) is not None:
                return None  # a library attribute, not a tensor we can read
            return self.values(values_of(self.f, expr, scope, order))
        return None

    def values(self, found: frozenset[Value]) -> str | None:
        dtypes: list[str | None] = []
        for value in found:
            if value.kind is Kind.CONSTANT:
                const = value.const
                if isinstance(const, bool):
                    dtypes.append("bool")
                elif isinstance(const, int):
                    dtypes.append("int32")
                elif isinstance(const, float):
                    dtypes.append("float32")
                else:
                    return None
            elif value.kind is Kind.CONTAINER and value.keys is None and not value.uniform:
                dtypes.append(_join([self.values(item) for item in value.items]))
            elif value.kind in (Kind.EXTERNAL, Kind.VARIABLE) and isinstance(value.node, cst.Call):
                site = self.f.call_site(value.node)
                if site is None:
                    return None
                dtypes.append(self.call(value.node, site.scope, site.order))
            else:
                return None
        if not dtypes or any(d is None for d in dtypes) or len(set(dtypes)) != 1:
            return None
        return dtypes[0]

    def call(self, call: cst.Call, scope: Scope, order: int) -> str | None:
        f = self.f
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "astype":
            return dtype_name(f, arg_value(call, 0, "dtype"))
        if isinstance(func, cst.Name) and func.value == "range" and not f.visible_bindings("range", scope):
            return "int32"
        qualified = f.resolve(func)
        if qualified is None:
            return None
        written = arg_value(call, None, "dtype")
        if written is not None:
            return dtype_name(f, written)
        if qualified in VARIABLE_CONSTRUCTORS:
            found = self.variable(call, scope, order)
            return found.dtype if found is not None else None
        if qualified in _TF_FACTORIES:
            position, default = _TF_FACTORIES[qualified]
            if position is not None and arg_value(call, position) is not None:
                return dtype_name(f, arg_value(call, position))
            return default
        if qualified in _CASTS:
            return dtype_name(f, arg_value(call, 1, "dtype"))
        if qualified in _TF_FROM_DATA:
            if arg_value(call, 1) is not None and qualified == "tensorflow.constant":
                return dtype_name(f, arg_value(call, 1))
            return self.expr(arg_value(call, 0, "value"), scope, order)
        if qualified in _LIKE:
            if arg_value(call, 1) is not None:
                return dtype_name(f, arg_value(call, 1))
            return self.expr(arg_value(call, 0, "input"), scope, order)
        if qualified == "tensorflow.fill":
            return self.expr(arg_value(call, 1, "value"), scope, order)
        if qualified == "tensorflow.range":
            return _join([self.expr(a.value, scope, order) for a in call.args if a.keyword is None])
        if qualified in _NUMPY_INT:
            return "int64"
        if qualified in _NUMPY_FLOAT:
            if qualified in ("numpy.zeros", "numpy.ones", "numpy.empty") and arg_value(call, 1) is not None:
                return dtype_name(f, arg_value(call, 1))
            return "float64"
        if qualified == "numpy.arange":
            return _numpy(_join([self.expr(a.value, scope, order) for a in call.args if a.keyword is None]))
        if qualified in _NUMPY_FROM_DATA:
            if arg_value(call, 1) is not None:
                return dtype_name(f, arg_value(call, 1))
            return _numpy(self.expr(arg_value(call, 0, "object"), scope, order))
        return None

    def variable(self, call: cst.Call, scope: Scope, order: int) -> VariableDtype | None:
        f = self.f
        qualified = f.resolve(call.func)
        if qualified not in VARIABLE_CONSTRUCTORS:
            return None
        trainable = _boolean(arg_value(call, None, "trainable"))
        written = arg_value(call, None, "dtype")
        if written is None and qualified != "tensorflow.Variable":
            written = arg_value(call, 2)  # keras.Variable(initializer, shape, dtype, ...)
        if written is not None:
            dtype = dtype_name(f, written)
            return VariableDtype(dtype, written, True, trainable) if dtype is not None else None
        initial = arg_value(call, 0, "initial_value" if qualified == "tensorflow.Variable" else "initializer")
        if initial is None or isinstance(initial, cst.SimpleString):
            return None  # a named Keras initializer: the default float type
        dtype = self.expr(initial, scope, order)
        return VariableDtype(dtype, initial, False, trainable) if dtype is not None else None


def _join(dtypes: list[str | None]) -> str | None:
    """The dtype TensorFlow gives a list of elements of these dtypes (ints and floats give floats)."""
    if not dtypes or any(d is None for d in dtypes):
        return None
    kinds = set(dtypes)
    if len(kinds) == 1:
        return dtypes[0]
    if kinds <= {"int32", "float32"}:
        return "float32"
    return None


def _numpy(dtype: str | None) -> str | None:
    """NumPy's default for data of this Python kind: int64 and float64 (on Linux and macOS)."""
    return {"int32": "int64", "float32": "float64"}.get(dtype or "", dtype)


def _boolean(expr: cst.BaseExpression | None) -> bool | None:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def value_dtype(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> str | None:
    """The dtype of the tensor `expr` holds (or converts to) at (`scope`, `order`), when provable."""
    return _Reader(facts).expr(expr, scope, order)


def variable_dtype(facts: Facts, creation: cst.Call) -> VariableDtype | None:
    """The dtype of the variable a `tf.Variable(...)` / `keras.Variable(...)` call creates, when provable."""
    site = facts.call_site(creation)
    if site is None:
        return None
    return _Reader(facts).variable(creation, site.scope, site.order)


def variable_holder(facts: Facts, creation: cst.Call) -> str | None:
    """The name the variable made at `creation` is bound to (`w`, `self.step`), if one binding holds it."""
    targets = {b.target for b in facts.bindings_of_value(creation) if b.index is None}
    return targets.pop() if len(targets) == 1 else None


def integer_variables(facts: Facts, expr: cst.BaseExpression | None, scope: Scope,
                      order: int) -> list[tuple[cst.Call, VariableDtype]]:
    """The variables of integer or bool dtype among what `expr` (a variable, or a list of them) holds at
    (`scope`, `order`): an element counts only when every value it may be is such a variable."""
    found: list[tuple[cst.Call, VariableDtype]] = []
    seen: set[int] = set()
    pending = [values_of(facts, expr, scope, order)]
    # `model.trainable_variables + [offsets]`: the value model keeps no order in such a sum, the
    # variable lists do; each named variable in it is read as the gradient call sees it.
    listed = variable_list(facts, expr, scope, order)
    if listed is not None:
        pending += [values_of(facts, part.node, scope, order) for part in listed.parts if part.kind == "variable"]
    while pending and len(seen) < 256:
        current = pending.pop(0)  # in the order of the list
        if current and all(v.kind is Kind.CONTAINER and v.keys is None for v in current):
            for container in current:
                pending.extend(container.items)
            continue
        creations: list[tuple[cst.Call, VariableDtype]] = []
        for value in current:
            if value.kind is not Kind.VARIABLE or not isinstance(value.node, cst.Call):
                creations = []
                break
            dtype = variable_dtype(facts, value.node)
            if dtype is None or not is_integer(dtype.dtype):
                creations = []
                break
            creations.append((value.node, dtype))
        # A set of possible values has no order (string hashing changes it from run to run): the
        # variables are listed as the source creates them, so the message is the same on every run.
        creations.sort(key=lambda creation: _source_order(facts, creation[0]))
        for node, dtype in creations:
            if id(node) not in seen:
                seen.add(id(node))
                found.append((node, dtype))
    return found


def _source_order(facts: Facts, call: cst.Call) -> int:
    site = facts.call_site(call)
    return site.order if site is not None else -1

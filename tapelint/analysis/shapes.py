"""What shape a tensor has, when that is provable: its rank, the sizes of its axes, and where it came from.

`shape_of(facts, expr, scope, order)` answers with a `TensorShape`, or None for "cannot tell". It knows
NumPy and TensorFlow constructors with literal shapes (`np.random.rand(256)`, `rng.normal(size=(N, 1))`,
`tf.zeros([B, 1])`, `np.arange(n)`), rank-keeping conversions and element-wise functions, NumPy
broadcasting of arithmetic, `@`, reductions with a constant `axis`, `reshape`/`expand_dims`/`squeeze`
with literal arguments, indexing (`data[:, -1]`, `y[:, None]`, `y[i:j]`), the outputs of `Dense`/convolution
layers and models (their last axis, through `outputs.last_axis_units`), `keras.datasets` loaders, and
`tf.data` pipelines (`from_tensor_slices((x, y))`, `.batch`, `.shuffle`, ...) iterated by a `for` loop.
Names are followed with the value model's binding resolution (`Values.reaching`) and parameters through
their call sites; every binding that reaches a read must agree. Anything else is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Union

import libcst as cst

from tapelint.analysis.facts import Facts, Scope, arg_value
from tapelint.analysis.names import dotted
from tapelint.analysis.outputs import last_axis_units
from tapelint.analysis.values import Kind, values, values_of
from tapelint.analysis.walk import iter_nodes


@dataclass(frozen=True)
class TensorShape:
    """A tensor's shape as far as it is known. `dims` lists every axis (None: size unknown) when the rank
    is known; otherwise `last` is the size of the last axis if known and `min_rank` a lower bound."""

    dims: tuple[int | None, ...] | None
    last: int | None = None
    min_rank: int = 0
    from_model: bool = False  # computed from a model's or layer's output
    column: bool = False  # built with an explicit `(..., 1)` shape (a constructor, not a reshape)
    evidence: str = ""  # the code that fixes the shape, for messages

    @property
    def rank(self) -> int | None:
        return len(self.dims) if self.dims is not None else None

    @property
    def last_dim(self) -> int | None:
        if self.dims is not None:
            return self.dims[-1] if self.dims else None
        return self.last

    @property
    def at_least_2d(self) -> bool:
        return (self.rank or 0) >= 2 or self.min_rank >= 2

    def same(self, other: "TensorShape") -> bool:
        return (self.dims, self.last, self.min_rank, self.from_model, self.column) == (
            other.dims, other.last, other.min_rank, other.from_model, other.column)


@dataclass(frozen=True)
class Dataset:
    """A `tf.data` pipeline: iterating it yields `element`."""

    element: "Struct"


# A tensor, a tuple of structures (a Python tuple, a dataset element), a dataset, or unknown.
Struct = Union[TensorShape, tuple, Dataset, None]

SCALAR = TensorShape(())
_BUDGET = 800
_MAX_DEPTH = 40

_CONVERT = frozenset({
    "numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.float32", "numpy.float64", "numpy.ascontiguousarray",
    "tensorflow.constant", "tensorflow.convert_to_tensor", "tensorflow.cast", "tensorflow.identity",
    "tensorflow.stop_gradient", "keras.ops.convert_to_tensor", "keras.ops.cast", "keras.ops.stop_gradient",
    "tensorflow.Variable", "keras.Variable", "tensorflow.dtypes.cast",
})
_UNARY = frozenset({
    "abs", "square", "sqrt", "exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sigmoid", "relu",
    "softplus", "negative", "sign", "floor", "ceil", "round", "rint", "reciprocal", "rsqrt", "erf", "elu",
    "selu", "gelu", "swish", "silu", "leaky_relu", "log_sigmoid", "clip_by_value", "clip", "nan_to_num",
})
_BINARY = frozenset({"subtract", "add", "multiply", "divide", "truediv", "squared_difference", "maximum", "minimum",
                     "pow", "power", "mod", "floordiv", "realdiv", "true_divide"})
_REDUCE = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "amax", "amin", "reduce_sum",
                     "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_std", "reduce_variance",
                     "nansum", "nanmean"})
_OP_PREFIXES = ("numpy.", "tensorflow.", "tensorflow.math.", "tensorflow.nn.", "keras.ops.", "keras.activations.",
                "keras.backend.")
# NumPy random functions: the position of their `size` argument.
_SIZED = {"normal": 2, "uniform": 2, "randint": 2, "integers": 2, "binomial": 2, "poisson": 1, "exponential": 1,
          "standard_normal": 0, "random": 0, "random_sample": 0, "choice": 1, "beta": 2, "gamma": 2,
          "lognormal": 2, "laplace": 2, "logistic": 2, "bernoulli": 1}
_GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"})
_SHAPED = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "tensorflow.zeros", "tensorflow.ones",
                     "tensorflow.fill", "tensorflow.random.normal", "tensorflow.random.uniform",
                     "tensorflow.random.truncated_normal", "keras.ops.zeros", "keras.ops.ones", "keras.ops.full",
                     "keras.random.normal", "keras.random.uniform"})
_LIKE = frozenset({"numpy.zeros_like", "numpy.ones_like", "numpy.full_like", "numpy.empty_like",
                   "tensorflow.zeros_like", "tensorflow.ones_like", "keras.ops.zeros_like", "keras.ops.ones_like"})
_RANGES = frozenset({"numpy.arange", "numpy.linspace", "tensorflow.range", "tensorflow.linspace",
                     "numpy.random.permutation", "keras.ops.arange"})
_RESHAPE = frozenset({"numpy.reshape", "tensorflow.reshape", "keras.ops.reshape"})
_EXPAND = frozenset({"numpy.expand_dims", "tensorflow.expand_dims", "keras.ops.expand_dims"})
_SQUEEZE = frozenset({"numpy.squeeze", "tensorflow.squeeze", "keras.ops.squeeze"})
_SAME_DATASET = frozenset({"shuffle", "prefetch", "cache", "repeat", "take", "skip", "filter", "with_options"})
# keras.datasets loaders whose labels are one axis (N,) and those whose labels are (N, 1).
_FLAT_LABELS = frozenset({"mnist", "fashion_mnist", "boston_housing", "imdb", "reuters", "california_housing"})
_COLUMN_LABELS = frozenset({"cifar10", "cifar100"})


def shape_of(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> TensorShape | None:
    """The shape `expr` has at (`scope`, `order`), or None when it cannot be proved."""
    found = _reader(facts).top(expr, scope, order)
    return found if isinstance(found, TensorShape) else None


@dataclass(frozen=True)
class Elementwise:
    """An element-wise operation of two tensors: `a - b`, `tf.math.squared_difference(a, b)`."""

    node: cst.BaseExpression
    left: cst.BaseExpression
    right: cst.BaseExpression
    scope: Scope
    order: int


_ARITHMETIC = (cst.Subtract, cst.Add, cst.Multiply, cst.Divide)


def elementwise_operation(facts: Facts, node: cst.CSTNode) -> Elementwise | None:
    """`node` as an element-wise operation of two tensors (`a - b`, `a + b`, `a * b`, `a / b`, a call of
    `subtract`/`squared_difference`/... of TF, NumPy or `keras.ops`), with the scope and document order of
    its first read; None when it is not one."""
    pair: tuple[cst.BaseExpression, cst.BaseExpression] | None = None
    if type(node) is cst.BinaryOperation and isinstance(node.operator, _ARITHMETIC):
        pair = (node.left, node.right)
    elif isinstance(node, cst.Call):
        site = facts.call_site(node)
        qualified = (site.qualified if site is not None else None) or ""
        if qualified.startswith(_OP_PREFIXES) and qualified.rsplit(".", 1)[-1] in _BINARY:
            a, b = arg_value(node, 0, "x"), arg_value(node, 1, "y")
            if a is not None and b is not None:
                pair = (a, b)
    if pair is None:
        return None
    position = _position(facts, node)
    if position is None:
        return None
    return Elementwise(node, pair[0], pair[1], position[0], position[1])  # type: ignore[arg-type]


def elementwise_operations(facts: Facts) -> list[Elementwise]:
    """Every element-wise operation of two tensors in the module (see `elementwise_operation`)."""

    def compute() -> list[Elementwise]:
        found = (elementwise_operation(facts, node) for node in iter_nodes(facts.module))
        return [op for op in found if op is not None]

    return facts.cached("elementwise_operations", compute)


def _position(facts: Facts, node: cst.CSTNode) -> tuple[Scope, int] | None:
    """The scope and order of the first name read or call inside `node` (Facts numbers those)."""
    where: dict[int, tuple[Scope, int]] = facts.cached("read_positions", lambda: _read_positions(facts))
    current: cst.CSTNode | None = node
    for _ in range(64):
        if current is None:
            break
        found = where.get(id(current))
        if found is not None:
            return found
        if isinstance(current, cst.BinaryOperation):
            current = current.left
        elif isinstance(current, (cst.Attribute, cst.Subscript)):
            current = current.value
        elif isinstance(current, cst.UnaryOperation):
            current = current.expression
        elif isinstance(current, cst.Comparison):
            current = current.left
        else:
            break
    for inner in iter_nodes(node):
        found = where.get(id(inner))
        if found is not None:
            return found
    return None


def _read_positions(facts: Facts) -> dict[int, tuple[Scope, int]]:
    where: dict[int, tuple[Scope, int]] = {}
    for use in facts.name_uses:
        where.setdefault(id(use.node), (use.scope, use.order))
    for site in facts.calls:
        where.setdefault(id(site.node), (site.scope, site.order))
    return where


def _reader(facts: Facts) -> "_Shapes":
    return facts.cached("shapes", lambda: _Shapes(facts))


def _int(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> int | None:
    if expr is None:
        return None
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(
            expr.expression, cst.Integer):
        return -int(expr.expression.evaluated_value)
    found = values_of(facts, expr, scope, order)
    numbers = {v.const for v in found if v.kind is Kind.CONSTANT}
    if len(numbers) == 1 and len(found) == 1:
        number = next(iter(numbers))
        if isinstance(number, int) and not isinstance(number, bool):
            return number
    return None


def broadcast(a: TensorShape, b: TensorShape) -> TensorShape | None:
    """NumPy broadcasting of two shapes (None when it cannot be told)."""
    from_model, column = a.from_model or b.from_model, a.column or b.column
    evidence = a.evidence or b.evidence
    if a.dims is not None and b.dims is not None:
        dims: list[int | None] = []
        for i in range(1, max(len(a.dims), len(b.dims)) + 1):
            x = a.dims[-i] if i <= len(a.dims) else 1
            y = b.dims[-i] if i <= len(b.dims) else 1
            if x == 1:
                dims.append(y)
            elif y == 1 or x == y:
                dims.append(x)
            elif x is None or y is None:
                dims.append(x if y is None else y)
            else:
                return None  # would raise
        return TensorShape(tuple(reversed(dims)), from_model=from_model, column=column, evidence=evidence)
    for known, other in ((a, b), (b, a)):
        if known.dims == ():
            return replace(other, from_model=from_model, column=column, evidence=other.evidence or evidence)
    last = None
    if a.last_dim is not None and b.last_dim is not None:
        last = a.last_dim if b.last_dim == 1 else b.last_dim if a.last_dim == 1 else (
            a.last_dim if a.last_dim == b.last_dim else None)
    return TensorShape(None, last=last, min_rank=max(a.rank or a.min_rank, b.rank or b.min_rank),
                       from_model=from_model, column=column, evidence=evidence)


def _drop_first(struct: Struct) -> Struct:
    if isinstance(struct, TensorShape):
        if struct.dims is None:
            return TensorShape(None, last=struct.last if struct.min_rank >= 2 else None,
                               min_rank=max(struct.min_rank - 1, 0), from_model=struct.from_model,
                               evidence=struct.evidence)
        if not struct.dims:
            return None
        return replace(struct, dims=struct.dims[1:])
    if isinstance(struct, tuple):
        return tuple(_drop_first(s) for s in struct)
    return None


def _prepend(struct: Struct) -> Struct:
    if isinstance(struct, TensorShape):
        if struct.dims is None:
            return replace(struct, min_rank=struct.min_rank + 1)
        return replace(struct, dims=(None, *struct.dims))
    if isinstance(struct, tuple):
        return tuple(_prepend(s) for s in struct)
    return None


def _iterate(struct: Struct) -> Struct:
    """What one step of a `for` loop over `struct` yields."""
    if isinstance(struct, Dataset):
        return struct.element
    if isinstance(struct, TensorShape):
        return _drop_first(struct)
    return None


def _select(struct: Struct, path: tuple[int, ...]) -> Struct:
    for index in path:
        if isinstance(struct, tuple) and -len(struct) <= index < len(struct):
            struct = struct[index]
        else:
            return None
    return struct


def _agree(found: list[Struct]) -> Struct:
    if not found:
        return None
    first = found[0]
    for other in found[1:]:
        if isinstance(first, TensorShape) and isinstance(other, TensorShape):
            if not first.same(other):
                return None
        elif other != first:
            return None
    return first


class _Shapes:
    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.memo: dict[tuple[int, int, int], tuple[cst.CSTNode, Struct]] = {}
        self.active: set[tuple[int, int, int]] = set()
        self.budget = 0
        self.depth = 0

    def top(self, expr: cst.BaseExpression | None, scope: Scope, order: int) -> Struct:
        self.budget = _BUDGET
        return self.of(expr, scope, order)

    def of(self, expr: cst.BaseExpression | None, scope: Scope, order: int) -> Struct:
        if expr is None:
            return None
        key = (id(expr), id(scope), order)
        cached = self.memo.get(key)
        if cached is not None and cached[0] is expr:
            return cached[1]
        if key in self.active or self.budget <= 0 or self.depth > _MAX_DEPTH:
            return None
        self.budget -= 1
        self.active.add(key)
        self.depth += 1
        try:
            result = self._expr(expr, scope, order)
        finally:
            self.depth -= 1
            self.active.discard(key)
        if self.budget > 0:
            self.memo[key] = (expr, result)
        return result

    def tensor(self, expr: cst.BaseExpression | None, scope: Scope, order: int) -> TensorShape | None:
        found = self.of(expr, scope, order)
        return found if isinstance(found, TensorShape) else None

    # ------------------------------------------------------------------ expressions
    def _expr(self, expr: cst.BaseExpression, scope: Scope, order: int) -> Struct:
        if type(expr) is cst.Integer or type(expr) is cst.Float:
            return SCALAR
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self.tensor(expr.expression, scope, order)
        if isinstance(expr, cst.Tuple):
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return None
            return tuple(self.of(e.value, scope, order) for e in expr.elements)
        if isinstance(expr, cst.BinaryOperation):
            return self._binary(expr, scope, order)
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            left = self.tensor(expr.left, scope, order)
            right = self.tensor(expr.comparisons[0].comparator, scope, order)
            return broadcast(left, right) if left is not None and right is not None else None
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, scope, order)
        if isinstance(expr, cst.Call):
            return self._call(expr, scope, order)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "T":
            inner = self.tensor(expr.value, scope, order)
            return replace(inner, dims=tuple(reversed(inner.dims))) if inner and inner.dims is not None else None
        name = dotted(expr)
        if name is not None and not name.startswith("self."):
            return self._name(name, scope, order)
        return None

    def _binary(self, expr: cst.BinaryOperation, scope: Scope, order: int) -> Struct:
        left = self.tensor(expr.left, scope, order)
        right = self.tensor(expr.right, scope, order)
        if left is None or right is None:
            return None
        if isinstance(expr.operator, cst.MatrixMultiply):
            product = _matmul(left, right)
            return replace(product, evidence=_text(self.f, expr)) if product is not None else None
        if isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
                                      cst.Power, cst.Modulo)):
            return broadcast(left, right)
        return None

    def _subscript(self, expr: cst.Subscript, scope: Scope, order: int) -> Struct:
        base = self.of(expr.value, scope, order)
        if isinstance(base, tuple):
            if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
                index = _int(self.f, expr.slice[0].slice.value, scope, order)
                return _select(base, (index,)) if index is not None else None
            return None
        if not isinstance(base, TensorShape) or base.dims is None:
            return None
        dims = list(base.dims)
        out: list[int | None] = []
        axis = 0
        for element in expr.slice:
            part = element.slice
            if isinstance(part, cst.Slice):
                if axis >= len(dims):
                    return None
                whole = part.lower is None and part.upper is None and part.step is None
                out.append(dims[axis] if whole else None)
                axis += 1
                continue
            if not isinstance(part, cst.Index):
                return None
            value = part.value
            if isinstance(value, cst.Name) and value.value == "None" or dotted(value) in ("tf.newaxis", "np.newaxis"):
                out.append(1)
                continue
            if isinstance(value, cst.Ellipsis):
                return None
            if axis >= len(dims):
                return None
            if _int(self.f, value, scope, order) is not None:
                axis += 1  # an integer index drops the axis
                continue
            selection = self.tensor(value, scope, order)
            if selection is not None and selection.rank == 1 and not selection.from_model:
                out.append(None)  # one integer array: a selection of rows
                axis += 1
                continue
            return None
        out.extend(dims[axis:])
        evidence = base.evidence if len(out) == len(dims) else _text(self.f, expr)
        return replace(base, dims=tuple(out), column=base.column and out[-1:] == [1] and len(out) == len(dims),
                       evidence=evidence)

    # ------------------------------------------------------------------ names
    def _name(self, name: str, scope: Scope, order: int) -> Struct:
        f = self.f
        resolver = values(f)
        bindings = resolver.reaching(name, scope, order)
        if not bindings:
            if "." in name:
                return None
            function = f.param_scope(name, scope)
            if function is None or function.is_module:
                return None
            sites = resolver.call_sites(function)
            found: list[Struct] = []
            for site in sites:
                if any(a.star for a in site.node.args):
                    return None
                arg = f.argument_for_param(site.node, function, name)
                if arg is None:
                    return None
                found.append(self.of(arg, site.scope, site.order))
            return _agree(found)
        found = []
        for binding in bindings:
            if binding.augmented or isinstance(binding.node, cst.With):
                return None
            loop = f.loop_bindings.get(id(binding))
            if loop is not None:
                found.append(_select(self._iterated(loop, binding.scope, binding.order), binding.path))
            elif binding.path:
                found.append(_select(self.of(binding.source, binding.scope, binding.order), binding.path))
            else:
                found.append(self.of(binding.value, binding.scope, binding.order))
        return _agree(found)

    def _iterated(self, expr: cst.BaseExpression, scope: Scope, order: int) -> Struct:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("zip", "enumerate"):
            if expr.func.value == "enumerate":
                return (SCALAR, self._iterated(arg_value(expr, 0, "iterable"), scope, order))  # type: ignore[arg-type]
            if any(a.star or a.keyword for a in expr.args):
                return None
            return tuple(self._iterated(a.value, scope, order) for a in expr.args)
        return _iterate(self.of(expr, scope, order))

    # ------------------------------------------------------------------ calls
    def _call(self, call: cst.Call, scope: Scope, order: int) -> Struct:
        f = self.f
        func = call.func
        qualified = f.resolve(func) or ""
        last = qualified.rsplit(".", 1)[-1]
        first = arg_value(call, 0)
        if qualified in _CONVERT:
            shape = arg_value(call, None, "shape")
            if shape is not None:
                return self._literal_shape(shape, scope, order, qualified)
            inner = arg_value(call, 0, "value") or arg_value(call, 0, "initial_value") or arg_value(call, 0, "x")
            return self._nested(inner, scope, order) if isinstance(inner, cst.List) else self.tensor(inner, scope, order)
        if qualified.startswith(_OP_PREFIXES):
            if last in _UNARY:
                return self.tensor(first, scope, order)
            if last in _BINARY:
                a, b = self.tensor(first, scope, order), self.tensor(arg_value(call, 1), scope, order)
                return broadcast(a, b) if a is not None and b is not None else None
            if last in _REDUCE:
                return self._reduce(self.tensor(first, scope, order), call, 1, scope, order)
            if last == "matmul":
                a, b = self.tensor(first, scope, order), self.tensor(arg_value(call, 1), scope, order)
                product = _matmul(a, b) if a is not None and b is not None else None
                return replace(product, evidence=_text(f, call)) if product is not None else None
        if qualified in _SHAPED:
            return self._literal_shape(arg_value(call, 0, "shape") or arg_value(call, 0, "dims"), scope, order,
                                       _text(f, call))
        if qualified in _LIKE:
            like = self.tensor(first, scope, order)
            return replace(like, from_model=False, column=False, evidence=_text(f, call)) if like else None
        if qualified in _RANGES:
            return TensorShape((None,), evidence=_text(f, call))
        if qualified in _RESHAPE:
            return self._reshape(self.tensor(first, scope, order), arg_value(call, 1, "shape") or arg_value(
                call, 1, "newshape"), scope, order)
        if qualified in _EXPAND:
            return self._expand(self.tensor(first, scope, order), arg_value(call, 1, "axis"), scope, order)
        if qualified in _SQUEEZE:
            return self._squeeze(self.tensor(first, scope, order), arg_value(call, 1, "axis"), scope, order)
        if qualified.startswith("numpy.random.") and last in ("rand", "randn"):
            return self._dims_args(call, scope, order)
        if qualified.startswith("numpy.random.") and last in _SIZED:
            return self._sized(call, last, scope, order)
        if qualified == "tensorflow.data.Dataset.from_tensor_slices":
            return Dataset(_drop_first(self.of(arg_value(call, 0, "tensors"), scope, order)))
        if qualified == "tensorflow.data.Dataset.from_tensors":
            return Dataset(self.of(arg_value(call, 0, "tensors"), scope, order))
        if qualified.startswith("keras.datasets.") and last == "load_data":
            return _dataset_loader(qualified, _text(f, call))
        if isinstance(func, cst.Name) and func.value in ("next", "iter") and first is not None:
            return self._iterated(first, scope, order) if func.value == "next" else self.of(first, scope, order)
        if isinstance(func, cst.Attribute):
            found = self._method(call, func, scope, order)
            if found is not None:
                return found
        if qualified:
            return None
        return self._local_or_model(call, scope, order)

    def _method(self, call: cst.Call, func: cst.Attribute, scope: Scope, order: int) -> Struct:
        method = func.attr.value
        if method in ("predict", "predict_on_batch"):
            # `model.predict(x)` returns what `model(x)` computes, as a NumPy array.
            held = values_of(self.f, func.value, scope, order)
            if held and all(v.kind is Kind.MODEL for v in held):
                return self._local_or_model(cst.Call(func=func.value, args=call.args), scope, order)
            return None
        receiver = self.of(func.value, scope, order) if method not in _SIZED and method not in (
            "rand", "randn") else None
        if isinstance(receiver, Dataset):
            if method in ("batch", "padded_batch"):
                return Dataset(_prepend(receiver.element))
            if method in _SAME_DATASET:
                return receiver
            if method == "unbatch":
                return Dataset(_drop_first(receiver.element))
            if method == "map":
                return self._mapped(receiver, arg_value(call, 0, "map_func"))
            return None
        if isinstance(receiver, TensorShape):
            if method in ("astype", "copy", "numpy", "__array__"):
                return receiver
            if method in ("flatten", "ravel"):
                return TensorShape((None,), from_model=receiver.from_model, evidence=receiver.evidence)
            if method == "reshape":
                shape = arg_value(call, 0, "shape")
                if len([a for a in call.args if a.keyword is None]) > 1:
                    shape = cst.Tuple([cst.Element(a.value) for a in call.args if a.keyword is None])
                return self._reshape(receiver, shape, scope, order)
            if method in _REDUCE:
                return self._reduce(receiver, call, 0, scope, order)
            if method == "squeeze":
                return self._squeeze(receiver, arg_value(call, 0, "axis"), scope, order)
            return None
        if method in _SIZED or method in ("rand", "randn", "permutation"):
            held = values_of(self.f, func.value, scope, order)
            if held and all(v.kind is Kind.EXTERNAL and v.cls in _GENERATORS for v in held):
                if method == "permutation":
                    return TensorShape((None,), evidence=_text(self.f, call))
                if method in ("rand", "randn"):
                    return self._dims_args(call, scope, order)
                return self._sized(call, method, scope, order)
        return None

    def _local_or_model(self, call: cst.Call, scope: Scope, order: int) -> Struct:
        f = self.f
        held = values_of(f, call.func, scope, order)
        if held and all(v.kind is Kind.FUNCTION and v.scope is not None and isinstance(v.node, cst.FunctionDef)
                        for v in held):
            found: list[Struct] = []
            for value in held:
                returns = f.returns_of(value.scope)  # type: ignore[arg-type]
                if not returns:
                    return None
                found.extend(self.of(r.value, r.scope, r.order) for r in returns)
            return _agree(found)
        # A layer's or a model's output: the one reader of widths (`outputs.width_layers`).
        units = last_axis_units(f, call, scope, order)
        if units is None or units != int(units):
            return None
        return TensorShape(None, last=int(units), min_rank=2, from_model=True,
                           evidence=f"the output of `{_text(f, call.func)}`")

    def _mapped(self, dataset: Dataset, func: cst.BaseExpression | None) -> Struct:
        """`ds.map(lambda x, y: (x, y))`-style steps that only reorder or drop the element's parts."""
        if not isinstance(func, cst.Lambda) or not isinstance(dataset.element, tuple):
            return None
        params = [p.name.value for p in func.params.params]
        body = func.body
        if not isinstance(body, cst.Tuple) or len(params) != len(dataset.element):
            return None
        out: list[Struct] = []
        for element in body.elements:
            if not isinstance(element.value, cst.Name) or element.value.value not in params:
                out.append(None)
                continue
            out.append(dataset.element[params.index(element.value.value)])
        return Dataset(tuple(out))

    # ------------------------------------------------------------------ shape arguments
    def _literal_shape(self, shape: cst.BaseExpression | None, scope: Scope, order: int, evidence: str) -> Struct:
        if shape is None:
            return None
        if isinstance(shape, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in shape.elements):
                return None
            dims = tuple(_int(self.f, e.value, scope, order) for e in shape.elements)
        else:
            size = _int(self.f, shape, scope, order)
            if size is None:
                shape_value = self.tensor(shape, scope, order)
                if shape_value is None or shape_value.rank != 1 or shape_value.dims[0] is None:  # type: ignore[index]
                    return None
                return TensorShape(tuple([None] * shape_value.dims[0]), evidence=evidence)  # type: ignore[index]
            dims = (size,)
        return TensorShape(dims, column=len(dims) >= 2 and dims[-1] == 1, evidence=evidence)

    def _dims_args(self, call: cst.Call, scope: Scope, order: int) -> Struct:
        if any(a.keyword is not None or a.star for a in call.args):
            return None
        dims = tuple(_int(self.f, a.value, scope, order) for a in call.args)
        return TensorShape(dims, column=len(dims) >= 2 and dims[-1] == 1, evidence=_text(self.f, call))

    def _sized(self, call: cst.Call, name: str, scope: Scope, order: int) -> Struct:
        size = arg_value(call, _SIZED[name], "size")
        if size is None:
            if any(a.star or (a.keyword is not None and a.keyword.value == "shape") for a in call.args):
                return None
            return SCALAR
        return self._literal_shape(size, scope, order, _text(self.f, call))

    def _reshape(self, base: TensorShape | None, shape: cst.BaseExpression | None, scope: Scope, order: int) -> Struct:
        if base is None or shape is None:
            return None
        if isinstance(shape, (cst.Tuple, cst.List)):
            parts = [e.value for e in shape.elements if not isinstance(e, cst.StarredElement)]
            if len(parts) != len(shape.elements):
                return None
        else:
            parts = [shape]
        dims: list[int | None] = []
        for part in parts:
            size = _int(self.f, part, scope, order)
            dims.append(None if size is None or size < 0 else size)
        return TensorShape(tuple(dims), from_model=base.from_model, evidence=base.evidence)

    def _expand(self, base: TensorShape | None, axis: cst.BaseExpression | None, scope: Scope, order: int) -> Struct:
        where = _int(self.f, axis, scope, order)
        if base is None or base.dims is None or where is None:
            return None
        position = where if where >= 0 else len(base.dims) + 1 + where
        if not 0 <= position <= len(base.dims):
            return None
        return replace(base, dims=(*base.dims[:position], 1, *base.dims[position:]), column=False)

    def _squeeze(self, base: TensorShape | None, axis: cst.BaseExpression | None, scope: Scope, order: int) -> Struct:
        if base is None:
            return None
        where = _int(self.f, axis, scope, order) if axis is not None else None
        if base.dims is None:
            if where == -1 and base.last == 1 and base.min_rank >= 2:
                # `tf.squeeze(model(x), -1)`: one axis less, last size unknown
                return TensorShape(None, min_rank=base.min_rank - 1, from_model=base.from_model, evidence=base.evidence)
            return None
        if axis is None:
            if any(d is None for d in base.dims):
                return None
            return replace(base, dims=tuple(d for d in base.dims if d != 1), column=False)
        if where is None or not -len(base.dims) <= where < len(base.dims):
            return None
        position = where % len(base.dims)
        return replace(base, dims=base.dims[:position] + base.dims[position + 1:], column=False)

    def _reduce(self, base: TensorShape | None, call: cst.Call, position: int, scope: Scope, order: int) -> Struct:
        if base is None or base.dims is None:
            return None
        axis = arg_value(call, position, "axis")
        keep = arg_value(call, None, "keepdims") or arg_value(call, None, "keep_dims")
        keepdims = isinstance(keep, cst.Name) and keep.value == "True"
        if keep is not None and not (isinstance(keep, cst.Name) and keep.value in ("True", "False")):
            return None
        if axis is None or (isinstance(axis, cst.Name) and axis.value == "None"):
            dims: tuple[int | None, ...] = tuple(1 for _ in base.dims) if keepdims else ()
            return replace(base, dims=dims, column=False)
        where = _int(self.f, axis, scope, order)
        if where is None or not -len(base.dims) <= where < len(base.dims):
            return None
        position = where % len(base.dims)
        if keepdims:
            return replace(base, dims=(*base.dims[:position], 1, *base.dims[position + 1:]), column=False)
        return replace(base, dims=base.dims[:position] + base.dims[position + 1:], column=False)

    def _nested(self, literal: cst.List, scope: Scope, order: int) -> Struct:
        """`np.array([[1, 2], [3, 4]])`: the nesting depth of a list literal."""
        dims: list[int | None] = []
        current: cst.BaseExpression = literal
        while isinstance(current, (cst.List, cst.Tuple)):
            dims.append(len(current.elements))
            if not current.elements or isinstance(current.elements[0], cst.StarredElement):
                return None
            current = current.elements[0].value
        return TensorShape(tuple(dims))


def _matmul(a: TensorShape, b: TensorShape) -> TensorShape | None:
    if a.dims is None or b.dims is None:
        return None
    from_model, evidence = a.from_model or b.from_model, a.evidence or b.evidence
    shapes = {(2, 1): a.dims[:1], (1, 2): b.dims[1:], (2, 2): (a.dims[0], b.dims[-1]), (1, 1): ()}
    dims = shapes.get((len(a.dims), len(b.dims)))
    if dims is None:
        return None
    return TensorShape(tuple(dims), from_model=from_model, column=bool(len(dims) == 2 and dims[-1] == 1 and b.column),
                       evidence=evidence)


def _dataset_loader(qualified: str, evidence: str) -> Struct:
    """`(x_train, y_train), (x_test, y_test) = keras.datasets.<name>.load_data()`: the labels' shape."""
    name = qualified.split(".")[-2]
    if name in _FLAT_LABELS:
        labels = TensorShape((None,), evidence=evidence)
    elif name in _COLUMN_LABELS:
        labels = TensorShape((None, 1), evidence=evidence)
    else:
        return None
    return ((None, labels), (None, labels))


def _text(facts: Facts, node: cst.CSTNode) -> str:
    if isinstance(node, cst.BaseExpression) and node.lpar:
        node = node.with_changes(lpar=[], rpar=[])
    text = facts.module.code_for_node(node)
    return text if len(text) <= 60 else text[:57] + "..."

"""Label provenance: whether a value holds one-hot vectors or integer class ids.

Followed through assignments, parameters (when every call site agrees), `for x, y in dataset` loops
over `tf.data` pipelines built from `from_tensor_slices((x, y))` (and `.map` steps that only pass
the label through or one-hot encode it), `enumerate`/`zip`, `keras.datasets.*.load_data()` (integer
labels) and `model.fit(x, y)`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Binding, Facts, Scope, arg_value
from tapelint.analysis.names import dotted
from tapelint.analysis.values import last_assignment


class Encoding(str, enum.Enum):
    ONE_HOT = "one-hot"
    INTEGER = "integer"
    UNKNOWN = "unknown"


@dataclass
class LabelInfo:
    encoding: Encoding
    evidence: str = ""  # "`tf.one_hot`", "`mnist.load_data()`"


UNKNOWN = LabelInfo(Encoding.UNKNOWN)

_ONE_HOT = frozenset(
    {
        "keras.utils.to_categorical", "keras.utils.np_utils.to_categorical", "keras.ops.one_hot",
        "tensorflow.one_hot", "keras.backend.one_hot", "keras.ops.nn.one_hot",
    }
)
_INTEGER = frozenset(
    {"tensorflow.argmax", "tensorflow.math.argmax", "keras.ops.argmax", "numpy.argmax", "keras.backend.argmax"}
)
_PASS = frozenset(
    {
        "tensorflow.squeeze", "tensorflow.reshape", "tensorflow.identity", "tensorflow.convert_to_tensor",
        "tensorflow.constant", "numpy.array", "numpy.asarray", "tensorflow.cast", "numpy.squeeze",
        "keras.ops.convert_to_tensor", "keras.ops.squeeze", "keras.ops.cast",
    }
)
_INT_DATASETS = ("mnist", "fashion_mnist", "cifar10", "cifar100")
_FROM_DIRECTORY = frozenset({"image_dataset_from_directory", "text_dataset_from_directory",
                             "audio_dataset_from_directory"})
_FLOW_METHODS = frozenset({"flow_from_directory", "flow_from_dataframe"})
_INT_DTYPES = frozenset({"int32", "int64", "int8", "int16", "uint8"})
_DATASET_STEPS = frozenset({"batch", "shuffle", "prefetch", "cache", "repeat", "take", "skip", "unbatch",
                            "padded_batch", "with_options", "filter", "apply_options", "rebatch"})


def _is_int_dtype(facts: Facts, expr: cst.BaseExpression | None) -> bool:
    if expr is None:
        return False
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value in _INT_DTYPES
    qualified = facts.resolve(expr) or dotted(expr) or ""
    return qualified.rsplit(".", 1)[-1] in _INT_DTYPES


def _int_literals(expr: cst.BaseExpression) -> bool:
    """`[3, 0, 7]`: class ids. Only 0s and 1s (`[0, 1, 0]`) may as well be one one-hot row."""
    if not isinstance(expr, (cst.List, cst.Tuple)) or not expr.elements:
        return False
    if not all(isinstance(e.value, cst.Integer) for e in expr.elements):
        return False
    return any(e.value.value not in ("0", "1") for e in expr.elements)  # type: ignore[attr-defined]


class LabelReader:
    def __init__(self, facts: Facts) -> None:
        self.f = facts

    def encoding(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> LabelInfo:
        f = self.f
        if expr is None or depth > 12:
            return UNKNOWN
        if isinstance(expr, cst.Call):
            qualified = f.resolve(expr.func)
            if qualified in _ONE_HOT:
                return LabelInfo(Encoding.ONE_HOT, f"`{dotted(expr.func)}`")
            if qualified in _INTEGER:
                return LabelInfo(Encoding.INTEGER, f"`{dotted(expr.func)}`")
            if qualified in ("numpy.random.randint", "numpy.random.default_rng.integers"):
                return LabelInfo(Encoding.INTEGER, f"`{dotted(expr.func)}`")
            if qualified == "tensorflow.random.uniform" and _is_int_dtype(f, arg_value(expr, None, "dtype")):
                return LabelInfo(Encoding.INTEGER, "`tf.random.uniform(..., dtype=int)`")
            if qualified in _PASS:
                inner = arg_value(expr, 0, "value")
                if inner is None:
                    inner = arg_value(expr, 0, "tensor") or arg_value(expr, 0, "x") or arg_value(expr, 0, "object")
                if inner is not None and _int_literals(inner):
                    return LabelInfo(Encoding.INTEGER, "integer literals")
                return self.encoding(inner, scope, order, depth + 1)
            return UNKNOWN
        if (type(expr) is cst.List or type(expr) is cst.Tuple) and _int_literals(expr):
            return LabelInfo(Encoding.INTEGER, "integer literals")
        if isinstance(expr, cst.Subscript):
            # `y_train[:1000]`, `y[idx]`: a selection of rows keeps the encoding.
            return self.encoding(expr.value, scope, order, depth + 1)
        name = dotted(expr)
        if name is None:
            return UNKNOWN
        binding = last_assignment(f, name, scope, order)
        if binding is None:
            return self._from_parameter(name, scope, depth)
        return self._from_binding(binding, depth)

    def _from_parameter(self, name: str, scope: Scope, depth: int) -> LabelInfo:
        func = self.f.param_scope(name, scope)
        if func is None or "." in name:
            return UNKNOWN
        found: LabelInfo | None = None
        for site in self.f.call_sites_of_scope(func):
            arg = self.f.argument_for_param(site.node, func, name)
            info = self.encoding(arg, site.scope, site.order, depth + 1)
            if info.encoding is Encoding.UNKNOWN:
                return UNKNOWN
            if found is not None and found.encoding is not info.encoding:
                return UNKNOWN
            found = info
        return found or UNKNOWN

    def _from_binding(self, binding: Binding, depth: int) -> LabelInfo:
        if binding.augmented:
            return UNKNOWN
        stmt = binding.node
        if isinstance(stmt, (cst.For, cst.CompFor)):
            path = _path_in(stmt.target, binding.target_node)
            if path is None:
                return UNKNOWN
            return self._element(stmt.iter, path, binding.scope, binding.order, depth + 1)
        if binding.value is None:
            if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
                path = _path_in(stmt.targets[0].target, binding.target_node)
                if path is not None:
                    return self._element(stmt.value, path, binding.scope, binding.order, depth + 1)
            return UNKNOWN
        if binding.index is not None:
            return self._element(binding.value, [binding.index], binding.scope, binding.order, depth + 1)
        return self.encoding(binding.value, binding.scope, binding.order, depth + 1)

    def _element(self, expr: cst.BaseExpression | None, path: list[int], scope: Scope, order: int,
                 depth: int) -> LabelInfo:
        """The encoding of `expr[path[0]][path[1]]...` where `expr` is a tuple, a dataset, a loader."""
        f = self.f
        if expr is None or depth > 12:
            return UNKNOWN
        if not path:
            return self.encoding(expr, scope, order, depth + 1)
        if type(expr) is cst.Tuple or type(expr) is cst.List:
            if path[0] < len(expr.elements) and not isinstance(expr.elements[path[0]], cst.StarredElement):
                return self._element(expr.elements[path[0]].value, path[1:], scope, order, depth + 1)
            return UNKNOWN
        if isinstance(expr, cst.Call):
            qualified = f.resolve(expr.func) or ""
            parts = qualified.split(".")
            if qualified.startswith("keras.datasets.") and parts[-1] == "load_data" and len(parts) >= 2 and (
                parts[-2] in _INT_DATASETS
            ):
                # ((x_train, y_train), (x_test, y_test))
                if len(path) == 2 and path[1] == 1:
                    return LabelInfo(Encoding.INTEGER, f"`{parts[-2]}.load_data()`")
                return UNKNOWN
            if parts[-1] in _FROM_DIRECTORY and qualified.startswith("keras."):
                # (images, labels) batches; `label_mode="int"` is the default.
                if path[0] != 1:
                    return UNKNOWN
                mode = arg_value(expr, None, "label_mode")
                text = mode.evaluated_value if isinstance(mode, cst.SimpleString) else None
                if mode is None or text == "int":
                    return LabelInfo(Encoding.INTEGER, f"`{parts[-1]}` with `label_mode=\"int\"`")
                if text == "categorical":
                    return LabelInfo(Encoding.ONE_HOT, f"`{parts[-1]}` with `label_mode=\"categorical\"`")
                return UNKNOWN
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _FLOW_METHODS:
                # ImageDataGenerator: `class_mode="categorical"` is the default.
                if path[0] != 1:
                    return UNKNOWN
                mode = arg_value(expr, None, "class_mode")
                text = mode.evaluated_value if isinstance(mode, cst.SimpleString) else None
                method = expr.func.attr.value
                if mode is None or text == "categorical":
                    return LabelInfo(Encoding.ONE_HOT, f"`{method}` with `class_mode=\"categorical\"`")
                if text == "sparse":
                    return LabelInfo(Encoding.INTEGER, f"`{method}` with `class_mode=\"sparse\"`")
                return UNKNOWN
            func_name = dotted(expr.func)
            if func_name == "enumerate":
                if path[0] == 1:
                    return self._element(arg_value(expr, 0), path[1:], scope, order, depth + 1)
                return UNKNOWN
            if func_name == "zip":
                return self._element(arg_value(expr, path[0]), path[1:], scope, order, depth + 1)
            if qualified in ("tensorflow.data.Dataset.from_tensor_slices", "tensorflow.data.Dataset.from_tensors"):
                # A dataset yields its structure; `for x, y in ds` iterates it.
                return self._element(arg_value(expr, 0, "tensors"), path, scope, order, depth + 1)
            if qualified in ("tensorflow.data.Dataset.zip",):
                inner = arg_value(expr, 0, "datasets")
                if isinstance(inner, (cst.Tuple, cst.List)) and path[0] < len(inner.elements):
                    return self._element(inner.elements[path[0]].value, [*path[1:]], scope, order, depth + 1) \
                        if len(path) > 1 else self._dataset_whole(inner.elements[path[0]].value, scope, order, depth)
                return UNKNOWN
            if isinstance(expr.func, cst.Attribute):
                method = expr.func.attr.value
                if method in _DATASET_STEPS:
                    return self._element(expr.func.value, path, scope, order, depth + 1)
                if method == "map":
                    return self._mapped(expr, path, scope, order, depth)
            return UNKNOWN
        name = dotted(expr)
        if name is None:
            return UNKNOWN
        binding = last_assignment(f, name, scope, order)
        if binding is None or binding.augmented:
            return UNKNOWN
        if binding.value is None:
            return UNKNOWN
        if binding.index is not None:
            return self._element(binding.value, [binding.index, *path], binding.scope, binding.order, depth + 1)
        return self._element(binding.value, path, binding.scope, binding.order, depth + 1)

    def _dataset_whole(self, expr: cst.BaseExpression, scope: Scope, order: int, depth: int) -> LabelInfo:
        return self._element(expr, [], scope, order, depth + 1) if not isinstance(expr, cst.Call) else UNKNOWN

    def _mapped(self, call: cst.Call, path: list[int], scope: Scope, order: int, depth: int) -> LabelInfo:
        """`ds.map(lambda x, y: (x, tf.one_hot(y, 10)))`: read the element the function returns."""
        func = arg_value(call, 0, "map_func")
        if not isinstance(func, cst.Lambda) or not isinstance(call.func, cst.Attribute):
            return UNKNOWN
        body = func.body
        if not isinstance(body, cst.Tuple) or path[0] >= len(body.elements):
            return UNKNOWN
        element = body.elements[path[0]].value
        params = [p.name.value for p in func.params.params]
        if isinstance(element, cst.Name) and element.value in params:
            # Passed through unchanged from the input element at that parameter's position.
            return self._element(call.func.value, [params.index(element.value), *path[1:]], scope, order, depth + 1)
        if isinstance(element, cst.Call):
            qualified = self.f.resolve(element.func)
            if qualified in _ONE_HOT:
                return LabelInfo(Encoding.ONE_HOT, f"`{dotted(element.func)}`")
            if qualified in _INTEGER:
                return LabelInfo(Encoding.INTEGER, f"`{dotted(element.func)}`")
        return UNKNOWN


def _path_in(target: cst.BaseExpression, node: cst.CSTNode) -> list[int] | None:
    if target is node:
        return []
    if type(target) is cst.Tuple or type(target) is cst.List:
        for index, element in enumerate(target.elements):
            inner = element.value
            sub = _path_in(inner, node)
            if sub is not None:
                return [index, *sub]
    return None


def label_reader(facts: Facts) -> LabelReader:
    return facts.cached("label_reader", lambda: LabelReader(facts))

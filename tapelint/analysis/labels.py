"""What the targets of a loss are: one-hot vectors, integer class ids or continuous values, with the number of
classes and the range of values when the code proves them.

The one answer for rules that check a model's output layer, its loss and its targets against each other
(`LabelReader.encoding`, `LabelReader.element`, `fit_targets`). Labels are followed through assignments
(several reaching ones when they agree), parameters (when every call site agrees), `for x, y in dataset`
loops over `tf.data` pipelines built from `from_tensor_slices((x, y))` (and `.map` steps that pass the label
through or one-hot encode it), `enumerate`/`zip`, `train_test_split`, and the steps that keep what values are
(`np.array`, `tf.constant`, `reshape`, `astype` to a float, row selection `y[:1000]`). They are made by:

- one-hot: `to_categorical`, `tf.one_hot`, `keras.ops.one_hot`, `np.eye(K)[y]`, `pd.get_dummies` of a column;
- integer ids: `keras.datasets.*.load_data()`, the `sklearn.datasets` generators and toy loaders,
  `np.argmax`/`tf.argmax`, `LabelEncoder`, pandas category codes, integer literals, `np.random.randint`;
- continuous values: `boston_housing`/`california_housing`, `make_regression`, `load_diabetes`,
  `fetch_california_housing`, `MinMaxScaler`/`StandardScaler`, division of known values by a constant or
  by their own maximum, and the uint8 images of the image loaders (an autoencoder's targets).

Anything else is UNKNOWN: a column of a data frame, arithmetic, a call we do not know.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Sequence

import libcst as cst

from tapelint.analysis.constants import boolean, number, string
from tapelint.analysis.dataflow import names_in
from tapelint.analysis.dtype_names import FLOAT_DTYPES, INTEGER_DTYPES, dtype_name
from tapelint.analysis.facts import Binding, CallSite, Facts, Scope, arg_value
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, Value, reaching_assignments, values_of


class Encoding(str, enum.Enum):
    ONE_HOT = "one-hot"
    INTEGER = "integer"
    CONTINUOUS = "continuous"
    UNKNOWN = "unknown"


@dataclass
class LabelInfo:
    encoding: Encoding
    evidence: str = ""  # "`to_categorical(y, 10)`", "`boston_housing.load_data()`" (for messages)
    classes: int | None = None  # number of classes K, when proved (one-hot width or id range 0..K-1)
    below: float | None = None  # proved: some target value is < below (None: not known)
    above: float | None = None  # proved: some target value is > above (None: not known)
    within: tuple[float, float] | None = None  # proved: every target value lies in [lo, hi]
    node: cst.CSTNode | None = None  # where the evidence is written (the to_categorical call, the loader call)


UNKNOWN = LabelInfo(Encoding.UNKNOWN)
_UNIT = (0.0, 1.0)

# Path elements: tuple positions (int) and the fields of an sklearn Bunch (`data.target`, `data["target"]`).
ElementPath = Sequence[int | str]

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
        "keras.ops.convert_to_tensor", "keras.ops.squeeze", "keras.ops.cast", "numpy.reshape", "numpy.ravel",
    }
)
_CASTS = frozenset({"tensorflow.cast", "keras.ops.cast"})
# Array and tensor methods that keep what the values are (`y.reshape(-1, 1)`, `df[col].to_numpy()`).
_PASS_METHODS = frozenset({"reshape", "squeeze", "flatten", "ravel", "copy", "to_numpy", "numpy"})
_MAXIMUM = frozenset({"numpy.max", "numpy.amax", "tensorflow.reduce_max", "tensorflow.math.reduce_max",
                      "keras.ops.max"})
_FROM_DIRECTORY = frozenset({"image_dataset_from_directory", "text_dataset_from_directory",
                             "audio_dataset_from_directory"})
_FLOW_METHODS = frozenset({"flow_from_directory", "flow_from_dataframe"})
_DATASET_STEPS = frozenset({"batch", "shuffle", "prefetch", "cache", "repeat", "take", "skip", "unbatch",
                            "padded_batch", "with_options", "filter", "apply_options", "rebatch"})

# keras.datasets: the labels of `(x_train, y_train), (x_test, y_test) = <name>.load_data()`, checked against
# the installed keras.datasets and its docstrings. Integer ids with their number of classes; for the house
# prices, continuous values and a value some target is proved to exceed (Boston: median values in k$, 5 to 50;
# California: median values in dollars, about 15,000 to 500,000).
_KERAS_CLASSES = {"mnist": 10, "fashion_mnist": 10, "cifar10": 10, "cifar100": 100, "imdb": 2, "reuters": 46}
_KERAS_ABOVE = {"boston_housing": 5.0, "california_housing": 1.0}
_KERAS_IMAGES = frozenset({"mnist", "fashion_mnist", "cifar10", "cifar100"})  # uint8 pixels, 0 to 255
_CIFAR100_COARSE = 20

# sklearn.datasets toy loaders: ids with their number of classes, or continuous targets above a value
# (diabetes: 25 to 346; California: median values in units of $100,000, about 0.15 to 5).
_SKLEARN_LOADERS = {"load_iris": 3, "load_digits": 10, "load_breast_cancer": 2, "load_wine": 3}
_SKLEARN_ABOVE = {"load_diabetes": 1.0, "fetch_california_housing": 1.0}
_SPLITS = frozenset({"sklearn.model_selection.train_test_split", "sklearn.cross_validation.train_test_split"})
_SCALERS = frozenset({"sklearn.preprocessing.MinMaxScaler", "sklearn.preprocessing.StandardScaler",
                      "sklearn.preprocessing.LabelEncoder"})
_FITS = frozenset({"fit", "fit_transform", "partial_fit"})
# `make_regression`'s targets are X @ w with X standard normal and weights drawn from 0..100: with its default
# 100 samples and 10 informative features they spread over hundreds on both sides of zero (the largest sample
# minimum over 200 seeds is -210, the smallest maximum 155). Fewer samples than this prove nothing.
_REGRESSION_SAMPLES = 20


def _integer(evidence: str, classes: int | None, node: cst.CSTNode | None) -> LabelInfo:
    within = (0.0, float(classes - 1)) if classes is not None else None
    return LabelInfo(Encoding.INTEGER, evidence, classes=classes, within=within, node=node)


def _count(value: float | None) -> int | None:
    """A number of classes: a whole number of at least one."""
    if value is None or value != int(value) or value < 1:
        return None
    return int(value)


def merge(first: LabelInfo, second: LabelInfo) -> LabelInfo:
    """What is proved on either of two paths: the same encoding (else UNKNOWN), the classes both agree on, the
    weaker bounds, and the range that holds both ranges."""
    if first.encoding is Encoding.UNKNOWN or first.encoding is not second.encoding:
        return UNKNOWN
    below = max(first.below, second.below) if first.below is not None and second.below is not None else None
    above = min(first.above, second.above) if first.above is not None and second.above is not None else None
    within = None
    if first.within is not None and second.within is not None:
        within = (min(first.within[0], second.within[0]), max(first.within[1], second.within[1]))
    return LabelInfo(first.encoding, first.evidence, first.classes if first.classes == second.classes else None,
                     below, above, within, first.node if first.node is second.node else None)


def _merged(infos: list[LabelInfo]) -> LabelInfo:
    if not infos:
        return UNKNOWN
    found = infos[0]
    for info in infos[1:]:
        found = merge(found, info)
    return found


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

    # ------------------------------------------------------------------ expressions
    def encoding(self, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> LabelInfo:
        """What `expr` holds as targets at (`scope`, `order`)."""
        f = self.f
        if expr is None or depth > 12:
            return UNKNOWN
        if isinstance(expr, cst.Call):
            return self._call(expr, scope, order, depth)
        if (type(expr) is cst.List or type(expr) is cst.Tuple) and _int_literals(expr):
            return LabelInfo(Encoding.INTEGER, "integer literals", node=expr)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, scope, order, depth)
        if isinstance(expr, cst.BinaryOperation):
            return self._binary(expr, scope, order, depth)
        name = dotted(expr)
        if name is not None:
            bindings = reaching_assignments(f, name, scope, order)
            if bindings:
                return _merged([self._from_binding(b, depth) for b in bindings])
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, scope, order, depth)
        if name is None:
            return UNKNOWN
        return self._from_parameter(name, scope, depth)

    def _call(self, call: cst.Call, scope: Scope, order: int, depth: int) -> LabelInfo:
        f = self.f
        qualified = f.resolve(call.func)
        shown = dotted(call.func) or ""
        if qualified in _ONE_HOT:
            return self._one_hot(call, qualified, shown, scope, order)
        if qualified in _INTEGER:
            return self._argmax(call, shown, scope, order, depth)
        if qualified in ("numpy.random.randint", "numpy.random.default_rng.integers"):
            return self._randint(call, shown, scope, order)
        if qualified == "tensorflow.random.uniform" and dtype_name(f, arg_value(call, None, "dtype")) in INTEGER_DTYPES:
            return LabelInfo(Encoding.INTEGER, "`tf.random.uniform(..., dtype=int)`", node=call)
        if qualified in _PASS:
            inner = arg_value(call, 0, "value")
            if inner is None:
                inner = arg_value(call, 0, "tensor") or arg_value(call, 0, "x") or arg_value(call, 0, "object") \
                    or arg_value(call, 0, "a")
            if inner is not None and _int_literals(inner):
                return LabelInfo(Encoding.INTEGER, "integer literals", node=inner)
            info = self.encoding(inner, scope, order, depth + 1)
            if qualified in _CASTS:
                return self._cast(info, arg_value(call, 1, "dtype"))
            return info
        if qualified == "pandas.get_dummies":
            return self._dummies(call, shown, scope, order, depth)
        if qualified is not None or type(call.func) is not cst.Attribute:
            return UNKNOWN
        method = call.func.attr.value
        receiver = call.func.value
        if method in _PASS_METHODS:
            return self.encoding(receiver, scope, order, depth + 1)
        if method == "astype":
            if dtype_name(f, arg_value(call, 0, "dtype")) is None and string(arg_value(call, 0, "dtype")) is not None:
                return UNKNOWN  # `astype("category")`: no longer numbers
            return self._cast(self.encoding(receiver, scope, order, depth + 1), arg_value(call, 0, "dtype"))
        if method in ("fit_transform", "transform"):
            return self._transformed(call, method, scope, order)
        return UNKNOWN

    def _one_hot(self, call: cst.Call, qualified: str, shown: str, scope: Scope, order: int) -> LabelInfo:
        width = arg_value(call, 1, "num_classes") or arg_value(call, 1, "depth")
        classes = _count(number(self.f, width, scope, order)) if width is not None else None
        # `tf.one_hot(..., on_value=, off_value=)` writes other values than 0 and 1.
        plain = qualified != "tensorflow.one_hot" or (
            arg_value(call, 2, "on_value") is None and arg_value(call, 3, "off_value") is None)
        return LabelInfo(Encoding.ONE_HOT, f"`{shown}`", classes=classes, within=_UNIT if plain else None, node=call)

    def _argmax(self, call: cst.Call, shown: str, scope: Scope, order: int, depth: int) -> LabelInfo:
        """Class ids; as many classes as the one-hot labels it reads, when it reads them along their last axis
        (`axis=-1`, or `axis=1` of the usual (samples, classes) array)."""
        classes = None
        axis = number(self.f, arg_value(call, 1, "axis"), scope, order)
        if axis in (-1.0, 1.0):
            inner = self.encoding(arg_value(call, 0, "input") or arg_value(call, 0, "a") or arg_value(call, 0, "x"),
                                  scope, order, depth + 1)
            if inner.encoding is Encoding.ONE_HOT:
                classes = inner.classes
        return _integer(f"`{shown}`", classes, call)

    def _randint(self, call: cst.Call, shown: str, scope: Scope, order: int) -> LabelInfo:
        """`np.random.randint(low, high)` draws from [low, high); `randint(high)` from [0, high)."""
        low = number(self.f, arg_value(call, 0, "low"), scope, order)
        high_expr = arg_value(call, 1, "high")
        high = number(self.f, high_expr, scope, order) if high_expr is not None else None
        if high_expr is None and "high" not in [a.keyword.value for a in call.args if a.keyword is not None]:
            low, high = 0.0, low
        if low is None or high is None or high <= low:
            return LabelInfo(Encoding.INTEGER, f"`{shown}`", node=call)
        classes = _count(high) if low == 0 else None
        return LabelInfo(Encoding.INTEGER, f"`{shown}`", classes=classes, within=(low, high - 1), node=call)

    def _cast(self, info: LabelInfo, dtype: cst.BaseExpression | None) -> LabelInfo:
        """A cast keeps one-hot rows, and ids unless it makes them booleans; continuous values survive only a
        cast to a float."""
        name = dtype_name(self.f, dtype)
        if isinstance(dtype, cst.Name) and dtype.value in ("float", "int") and not self.f.bindings_of(dtype.value):
            name = "float64" if dtype.value == "float" else "int64"  # the builtins, as NumPy reads them
        if info.encoding is Encoding.CONTINUOUS:
            return info if name in FLOAT_DTYPES else UNKNOWN
        if info.encoding is Encoding.INTEGER and name in ("bool", "string"):
            return UNKNOWN
        return info

    def _dummies(self, call: cst.Call, shown: str, scope: Scope, order: int, depth: int) -> LabelInfo:
        """`pd.get_dummies` one-hot encodes a column (a Series, a 1-D array). Given a data frame it encodes only
        the text and category columns and passes number columns through: one-hot only when it is proved to
        read one column (`df["label"]`, `df.pop("label")`, a known label array)."""
        data = arg_value(call, 0, "data")
        if data is None or arg_value(call, None, "columns") is not None:
            return UNKNOWN
        if self._one_column(data, scope, order, depth):
            return LabelInfo(Encoding.ONE_HOT, f"`{shown}`", within=_UNIT, node=call)
        return UNKNOWN

    def _one_column(self, expr: cst.BaseExpression, scope: Scope, order: int, depth: int) -> bool:
        for _ in range(6):
            if isinstance(expr, cst.Subscript) and self._string_key(expr, scope, order) is not None:
                return True
            if isinstance(expr, cst.Call) and type(expr.func) is cst.Attribute and expr.func.attr.value == "pop" \
                    and self.f.resolve(expr.func) is None:
                key = arg_value(expr, 0)
                return key is not None and all(
                    v.kind is Kind.CONSTANT and isinstance(v.const, str) for v in values_of(self.f, key, scope, order))
            if isinstance(expr, cst.Call) and self.f.resolve(expr.func) == "pandas.Series":
                return True
            name = dotted(expr)
            bindings = reaching_assignments(self.f, name, scope, order) if type(expr) is cst.Name and name else []
            if len(bindings) != 1 or bindings[0].value is None or bindings[0].index is not None:
                break
            scope, order, expr = bindings[0].scope, bindings[0].order, bindings[0].value
        return self.encoding(expr, scope, order, depth + 1).encoding in (Encoding.INTEGER, Encoding.CONTINUOUS)

    def _string_key(self, expr: cst.Subscript, scope: Scope, order: int) -> str | None:
        """`df["label"]`, `data[key]` with a constant string key."""
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        found = values_of(self.f, expr.slice[0].slice.value, scope, order)
        if not all(v.kind is Kind.CONSTANT and isinstance(v.const, str) for v in found):
            return None
        texts = {v.const for v in found}
        return str(next(iter(texts))) if len(texts) == 1 else None

    def _index(self, expr: cst.Subscript, scope: Scope, order: int) -> int | None:
        """`x[2]`: one constant, non-negative position."""
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        index = number(self.f, expr.slice[0].slice.value, scope, order)
        if index is None or index != int(index) or index < 0:
            return None
        return int(index)

    def _subscript(self, expr: cst.Subscript, scope: Scope, order: int, depth: int) -> LabelInfo:
        key = self._string_key(expr, scope, order)
        if key is not None:
            # A field of an sklearn Bunch (`data["target"]`), else a column of a frame: not known.
            return self.element(expr.value, [key], scope, order, depth + 1)
        base = expr.value
        if isinstance(base, cst.Call) and self.f.resolve(base.func) in ("numpy.eye", "numpy.identity") \
                and len(expr.slice) == 1:
            # `np.eye(K)[y]`: row y of the identity, a one-hot row of width K.
            width = number(self.f, arg_value(base, 0, "N") or arg_value(base, 0, "n"), scope, order)
            return LabelInfo(Encoding.ONE_HOT, f"`{dotted(base.func)}(...)[...]`", classes=_count(width),
                             within=_UNIT, node=expr)
        index = self._index(expr, scope, order)
        if index is not None:
            # `pair[1]` of a tuple; else row i of the labels.
            found = self.element(base, [index], scope, order, depth + 1)
            if found.encoding is not Encoding.UNKNOWN:
                return found
        info = self.encoding(base, scope, order, depth + 1)
        if info.encoding is Encoding.ONE_HOT and len(expr.slice) > 1 and not all(
                _full_slice(element) for element in expr.slice[1:]):
            return UNKNOWN  # `y[:, 0]`: one column of the one-hot rows
        # `y_train[:1000]`, `y[idx]`: a selection of rows keeps what the values are.
        return info

    def _binary(self, expr: cst.BinaryOperation, scope: Scope, order: int, depth: int) -> LabelInfo:
        """Scaling: `y / 255.0` of known values, `y / y.max()` of non-negative ones. Other arithmetic: UNKNOWN."""
        if not isinstance(expr.operator, cst.Divide):
            return UNKNOWN
        info = self.encoding(expr.left, scope, order, depth + 1)
        if info.encoding is Encoding.UNKNOWN:
            return UNKNOWN
        divisor = number(self.f, expr.right, scope, order)
        if divisor is not None:
            if divisor <= 0 or (info.within is None and info.below is None and info.above is None):
                return UNKNOWN
            within = (info.within[0] / divisor, info.within[1] / divisor) if info.within is not None else None
            return LabelInfo(Encoding.CONTINUOUS, info.evidence,
                             below=info.below / divisor if info.below is not None else None,
                             above=info.above / divisor if info.above is not None else None,
                             within=within, node=info.node)
        if self._maximum_of(expr.right, expr.left) and info.within is not None and info.within[0] >= 0:
            return LabelInfo(Encoding.CONTINUOUS, info.evidence, within=_UNIT, node=info.node)
        return UNKNOWN

    def _maximum_of(self, expr: cst.BaseExpression, data: cst.BaseExpression) -> bool:
        """`y.max()` or `np.max(y)` of the same `y`, whole (no axis: a maximum per column keeps each column in
        [0, 1] as well, so `axis=` is allowed)."""
        if not isinstance(expr, cst.Call):
            return False
        code = self.f.module.code_for_node
        if type(expr.func) is cst.Attribute and expr.func.attr.value == "max" and self.f.resolve(expr.func) is None:
            return code(expr.func.value) == code(data) and not any(a.keyword is None for a in expr.args)
        if self.f.resolve(expr.func) in _MAXIMUM:
            inner = arg_value(expr, 0)
            return inner is not None and code(inner) == code(data)
        return False

    def _attribute(self, expr: cst.Attribute, scope: Scope, order: int, depth: int) -> LabelInfo:
        attr = expr.attr.value
        if attr == "values":
            return self.encoding(expr.value, scope, order, depth + 1)  # a pandas object's array
        if attr == "target":
            return self.element(expr.value, ["target"], scope, order, depth + 1)  # an sklearn Bunch
        if attr == "codes" and (
                (type(expr.value) is cst.Attribute and expr.value.attr.value == "cat"
                 and self._categorical(expr.value.value, scope, order))
                or (isinstance(expr.value, cst.Call) and self.f.resolve(expr.value.func) == "pandas.Categorical")):
            return LabelInfo(Encoding.INTEGER, "pandas category codes", node=expr)
        return UNKNOWN

    def _categorical(self, expr: cst.BaseExpression, scope: Scope, order: int) -> bool:
        """`s.astype("category")`, `s.astype(pd.CategoricalDtype(...))`, through assignments."""
        for _ in range(6):
            if isinstance(expr, cst.Call) and type(expr.func) is cst.Attribute and expr.func.attr.value == "astype":
                dtype = arg_value(expr, 0, "dtype")
                return string(dtype) == "category" or (
                    isinstance(dtype, cst.Call) and self.f.resolve(dtype.func) == "pandas.CategoricalDtype")
            name = dotted(expr) if type(expr) is cst.Name else None
            bindings = reaching_assignments(self.f, name, scope, order) if name else []
            if len(bindings) != 1 or bindings[0].value is None or bindings[0].index is not None:
                return False
            scope, order, expr = bindings[0].scope, bindings[0].order, bindings[0].value
        return False

    # ------------------------------------------------------------------ sklearn preprocessing objects
    def _transformed(self, call: cst.Call, method: str, scope: Scope, order: int) -> LabelInfo:
        """`scaler.fit_transform(y)`, `scaler.transform(y)` of a MinMaxScaler, a StandardScaler or a LabelEncoder,
        made here or on another line (read through the value model)."""
        assert type(call.func) is cst.Attribute
        found = values_of(self.f, call.func.value, scope, order)
        if not found or any(v.kind is not Kind.EXTERNAL or v.cls not in _SCALERS or not isinstance(v.node, cst.Call)
                            for v in found):
            return UNKNOWN
        return _merged([self._scaler_output(v, call, method, scope, order) for v in found])

    def _scaler_output(self, scaler: Value, call: cst.Call, method: str, scope: Scope, order: int) -> LabelInfo:
        made = scaler.node
        assert isinstance(made, cst.Call) and scaler.cls is not None
        short = scaler.cls.rsplit(".", 1)[-1]
        evidence = f"`{short}.{method}`"
        if short == "LabelEncoder":
            return LabelInfo(Encoding.INTEGER, evidence, node=call)
        site = self.f.call_site(made)
        made_scope, made_order = (site.scope, site.order) if site is not None else (scope, order)
        data = arg_value(call, 0, "X")
        # What fitting gives the data it was fitted on; `transform` of other data may fall outside it.
        fitted_here = method == "fit_transform" or (data is not None and self._fitted_on(scaler, data, scope, order))
        if short == "MinMaxScaler":
            span = self._feature_range(made, made_scope, made_order)
            clipped = boolean(arg_value(made, 2, "clip")) is True
            if span is not None and (fitted_here or clipped):
                return LabelInfo(Encoding.CONTINUOUS, evidence, within=span, node=call)
            return LabelInfo(Encoding.CONTINUOUS, evidence, node=call)
        # StandardScaler: centred values have both signs (`with_mean=False` only divides).
        centred = arg_value(made, None, "with_mean") is None or boolean(arg_value(made, None, "with_mean")) is True
        if centred and fitted_here:
            return LabelInfo(Encoding.CONTINUOUS, evidence, below=0.0, above=0.0, node=call)
        return LabelInfo(Encoding.CONTINUOUS, evidence, node=call)

    def _feature_range(self, made: cst.Call, scope: Scope, order: int) -> tuple[float, float] | None:
        given = arg_value(made, 0, "feature_range")
        if given is None:
            return _UNIT
        found = values_of(self.f, given, scope, order)
        if len(found) != 1:
            return None
        pair = next(iter(found))
        if pair.kind is not Kind.CONTAINER or len(pair.items) != 2 or pair.uniform:
            return None
        ends = []
        for item in pair.items:
            numbers = {v.const for v in item if v.kind is Kind.CONSTANT and isinstance(v.const, (int, float))
                       and not isinstance(v.const, bool)}
            if len(numbers) != 1 or len(item) != 1:
                return None
            ends.append(float(next(iter(numbers))))
        return (ends[0], ends[1]) if ends[0] < ends[1] else None

    def _fitted_on(self, scaler: Value, data: cst.BaseExpression, scope: Scope, order: int) -> bool:
        """Is every `fit` of this scaler on the same data as `data` here (the same text, whose names see the
        same assignments)? `partial_fit` accumulates several batches: no."""
        fits = []
        for site in self.f.calls:
            if site.method not in _FITS or type(site.node.func) is not cst.Attribute:
                continue
            if scaler not in values_of(self.f, site.node.func.value, site.scope, site.order):
                continue
            if site.method == "partial_fit":
                return False
            fits.append(site)
        return bool(fits) and all(self._same_data(arg_value(s.node, 0, "X"), s, data, scope, order) for s in fits)

    def _same_data(self, fitted: cst.BaseExpression | None, site: CallSite, data: cst.BaseExpression,
                   scope: Scope, order: int) -> bool:
        code = self.f.module.code_for_node
        if fitted is None or site.scope is not scope or code(fitted) != code(data):
            return False
        return all(reaching_assignments(self.f, name, scope, site.order) == reaching_assignments(self.f, name, scope, order)
                   for name in names_in(data))

    # ------------------------------------------------------------------ names
    def _from_parameter(self, name: str, scope: Scope, depth: int) -> LabelInfo:
        func = self.f.param_scope(name, scope)
        if func is None or "." in name:
            return UNKNOWN
        infos = []
        for site in self.f.call_sites_of_scope(func):
            arg = self.f.argument_for_param(site.node, func, name)
            info = self.encoding(arg, site.scope, site.order, depth + 1)
            if info.encoding is Encoding.UNKNOWN:
                return UNKNOWN
            infos.append(info)
        return _merged(infos)

    def _from_binding(self, binding: Binding, depth: int) -> LabelInfo:
        if binding.augmented:
            return UNKNOWN
        stmt = binding.node
        if isinstance(stmt, (cst.For, cst.CompFor)):
            path = _path_in(stmt.target, binding.target_node)
            if path is None:
                return UNKNOWN
            return self.element(stmt.iter, path, binding.scope, binding.order, depth + 1)
        if binding.value is None:
            if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
                path = _path_in(stmt.targets[0].target, binding.target_node)
                if path is not None:
                    return self.element(stmt.value, path, binding.scope, binding.order, depth + 1)
            return UNKNOWN
        if binding.index is not None:
            return self.element(binding.value, [binding.index], binding.scope, binding.order, depth + 1)
        return self.encoding(binding.value, binding.scope, binding.order, depth + 1)

    # ------------------------------------------------------------------ elements of tuples, datasets, loaders
    def element(self, expr: cst.BaseExpression | None, path: ElementPath, scope: Scope, order: int,
                depth: int = 0) -> LabelInfo:
        """What `expr[path[0]][path[1]]...` holds, where `expr` is a tuple, a dataset, a loader's result, a
        generator of batches (`[1]`: its labels) or an sklearn Bunch (`["target"]`)."""
        f = self.f
        if expr is None or depth > 12:
            return UNKNOWN
        if not path:
            return self.encoding(expr, scope, order, depth + 1)
        head = path[0]
        if type(expr) is cst.Tuple or type(expr) is cst.List:
            if isinstance(head, int) and head < len(expr.elements) and \
                    not isinstance(expr.elements[head], cst.StarredElement):
                return self.element(expr.elements[head].value, path[1:], scope, order, depth + 1)
            return UNKNOWN
        if isinstance(expr, cst.Call):
            return self._call_element(expr, path, scope, order, depth)
        if isinstance(expr, cst.Subscript):
            # `x, y = mnist.load_data()[0]`: element i of the whole, then the path.
            index = self._index(expr, scope, order)
            if index is None:
                return UNKNOWN
            return self.element(expr.value, [index, *path], scope, order, depth + 1)
        name = dotted(expr)
        if name is None:
            return UNKNOWN
        infos = []
        for binding in reaching_assignments(f, name, scope, order):
            if binding.augmented or binding.value is None:
                return UNKNOWN
            if binding.index is not None:
                infos.append(self.element(binding.value, [binding.index, *path], binding.scope, binding.order,
                                          depth + 1))
            else:
                infos.append(self.element(binding.value, path, binding.scope, binding.order, depth + 1))
        return _merged(infos)

    def _call_element(self, expr: cst.Call, path: ElementPath, scope: Scope, order: int, depth: int) -> LabelInfo:
        f = self.f
        head = path[0]
        qualified = f.resolve(expr.func) or ""
        parts = qualified.split(".")
        if qualified.startswith("keras.datasets.") and parts[-1] == "load_data" and len(parts) >= 2:
            # ((x_train, y_train), (x_test, y_test))
            if len(path) == 2 and head in (0, 1):
                return self._keras_dataset(expr, parts[-2], path[1])
            return UNKNOWN
        if qualified.startswith("sklearn.datasets."):
            return self._sklearn_dataset(expr, parts[-1], path, scope, order)
        if qualified in _SPLITS:
            # X_train, X_test, y_train, y_test = train_test_split(X, y): element i is a part of array i // 2.
            if not isinstance(head, int) or any(a.star for a in expr.args):
                return UNKNOWN
            return self.element(arg_value(expr, head // 2), path[1:], scope, order, depth + 1)
        if qualified == "pandas.factorize":
            return LabelInfo(Encoding.INTEGER, "`pd.factorize`", node=expr) if list(path) == [0] else UNKNOWN
        if not isinstance(head, int):
            return UNKNOWN
        if parts[-1] in _FROM_DIRECTORY and qualified.startswith("keras."):
            # (images, labels) batches; `label_mode="int"` is the default.
            if head != 1:
                return UNKNOWN
            mode = arg_value(expr, None, "label_mode")
            text = string(mode)
            if mode is None or text == "int":
                return LabelInfo(Encoding.INTEGER, f"`{parts[-1]}` with `label_mode=\"int\"`", node=expr)
            if text == "categorical":
                return LabelInfo(Encoding.ONE_HOT, f"`{parts[-1]}` with `label_mode=\"categorical\"`", node=expr)
            return UNKNOWN
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _FLOW_METHODS:
            # ImageDataGenerator: `class_mode="categorical"` is the default.
            if head != 1:
                return UNKNOWN
            mode = arg_value(expr, None, "class_mode")
            text = string(mode)
            method = expr.func.attr.value
            if mode is None or text == "categorical":
                return LabelInfo(Encoding.ONE_HOT, f"`{method}` with `class_mode=\"categorical\"`", node=expr)
            if text == "sparse":
                return LabelInfo(Encoding.INTEGER, f"`{method}` with `class_mode=\"sparse\"`", node=expr)
            return UNKNOWN
        func_name = dotted(expr.func)
        if func_name == "enumerate":
            if head == 1:
                return self.element(arg_value(expr, 0), path[1:], scope, order, depth + 1)
            return UNKNOWN
        if func_name == "zip":
            return self.element(arg_value(expr, head), path[1:], scope, order, depth + 1)
        if qualified in ("tensorflow.data.Dataset.from_tensor_slices", "tensorflow.data.Dataset.from_tensors"):
            # A dataset yields its structure; `for x, y in ds` iterates it.
            return self.element(arg_value(expr, 0, "tensors"), path, scope, order, depth + 1)
        if qualified in ("tensorflow.data.Dataset.zip",):
            inner = arg_value(expr, 0, "datasets")
            if isinstance(inner, (cst.Tuple, cst.List)) and head < len(inner.elements):
                if len(path) > 1:
                    return self.element(inner.elements[head].value, path[1:], scope, order, depth + 1)
                return self._dataset_whole(inner.elements[head].value, scope, order, depth)
            return UNKNOWN
        if isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            if method in _DATASET_STEPS:
                return self.element(expr.func.value, path, scope, order, depth + 1)
            if method == "map":
                return self._mapped(expr, path, scope, order, depth)
        return UNKNOWN

    def _keras_dataset(self, call: cst.Call, dataset: str, part: int | str) -> LabelInfo:
        evidence = f"`{dataset}.load_data()`"
        if part == 0:
            if dataset in _KERAS_IMAGES:
                return LabelInfo(Encoding.CONTINUOUS, f"{evidence} images", above=1.0, within=(0.0, 255.0), node=call)
            return UNKNOWN
        if part != 1:
            return UNKNOWN
        if dataset in _KERAS_ABOVE:
            return LabelInfo(Encoding.CONTINUOUS, evidence, above=_KERAS_ABOVE[dataset], node=call)
        if dataset not in _KERAS_CLASSES:
            return UNKNOWN
        classes: int | None = _KERAS_CLASSES[dataset]
        if dataset == "cifar100":
            mode = arg_value(call, 0, "label_mode")
            text = string(mode)
            if text == "coarse":
                classes = _CIFAR100_COARSE
            elif mode is not None and text != "fine":
                classes = None
        return _integer(evidence, classes, call)

    def _sklearn_dataset(self, call: cst.Call, name: str, path: ElementPath, scope: Scope, order: int) -> LabelInfo:
        f = self.f
        evidence = f"`{name}()`"
        if name in _SKLEARN_LOADERS or name in _SKLEARN_ABOVE:
            # `X, y = load_iris(return_X_y=True)`, else a Bunch: `data.target`.
            split = boolean(arg_value(call, None, "return_X_y"))
            if list(path) != ([1] if split else ["target"]):
                return UNKNOWN
            if name in _SKLEARN_ABOVE:
                return LabelInfo(Encoding.CONTINUOUS, evidence, above=_SKLEARN_ABOVE[name], node=call)
            classes: int | None = _SKLEARN_LOADERS[name]
            if name == "load_digits" and arg_value(call, 0, "n_class") is not None:
                classes = _count(number(f, arg_value(call, 0, "n_class"), scope, order))
            return _integer(evidence, classes, call)
        if list(path) != [1]:
            return UNKNOWN  # (X, y, ...): the generators' targets are element 1
        if name == "make_classification":
            given = arg_value(call, None, "n_classes")
            return _integer(evidence, _count(number(f, given, scope, order)) if given is not None else 2, call)
        if name == "make_blobs":
            return _integer(evidence, self._blob_count(call, scope, order), call)
        if name in ("make_moons", "make_circles"):
            return _integer(evidence, 2, call)
        if name == "make_regression":
            return self._regression(call, evidence, scope, order)
        return UNKNOWN

    def _blob_count(self, call: cst.Call, scope: Scope, order: int) -> int | None:
        """`centers=K`, a list of K centres, or 3 by default (with an int `n_samples`)."""
        centers = arg_value(call, 2, "centers")
        samples = arg_value(call, 0, "n_samples")
        if centers is None or (isinstance(centers, cst.Name) and centers.value == "None"):
            if samples is None or number(self.f, samples, scope, order) is not None:
                return 3
            if isinstance(samples, (cst.List, cst.Tuple)):
                return len(samples.elements) or None
            return None
        if isinstance(centers, (cst.List, cst.Tuple)):
            return len(centers.elements) or None
        return _count(number(self.f, centers, scope, order))

    def _regression(self, call: cst.Call, evidence: str, scope: Scope, order: int) -> LabelInfo:
        f = self.f
        samples = arg_value(call, 0, "n_samples")
        informative = arg_value(call, 2, "n_informative")
        bias = arg_value(call, 4, "bias")
        spread = (samples is None or (number(f, samples, scope, order) or 0) >= _REGRESSION_SAMPLES) and (
            informative is None or (number(f, informative, scope, order) or 0) >= 1) and (
            bias is None or number(f, bias, scope, order) == 0)
        if spread:
            return LabelInfo(Encoding.CONTINUOUS, evidence, below=-1.0, above=1.0, node=call)
        return LabelInfo(Encoding.CONTINUOUS, evidence, node=call)

    def _dataset_whole(self, expr: cst.BaseExpression, scope: Scope, order: int, depth: int) -> LabelInfo:
        return self.element(expr, [], scope, order, depth + 1) if not isinstance(expr, cst.Call) else UNKNOWN

    def _mapped(self, call: cst.Call, path: ElementPath, scope: Scope, order: int, depth: int) -> LabelInfo:
        """`ds.map(lambda x, y: (x, tf.one_hot(y, 10)))`: read the element the function returns."""
        func = arg_value(call, 0, "map_func")
        if not isinstance(func, cst.Lambda) or not isinstance(call.func, cst.Attribute):
            return UNKNOWN
        body = func.body
        head = path[0]
        if not isinstance(body, cst.Tuple) or not isinstance(head, int) or head >= len(body.elements):
            return UNKNOWN
        element = body.elements[head].value
        params = [p.name.value for p in func.params.params]
        if isinstance(element, cst.Name) and element.value in params:
            # Passed through unchanged from the input element at that parameter's position.
            return self.element(call.func.value, [params.index(element.value), *path[1:]], scope, order, depth + 1)
        if isinstance(element, cst.Call):
            # Only what the call itself proves: its arguments are the lambda's parameters, not names of `scope`.
            qualified = self.f.resolve(element.func)
            shown = dotted(element.func) or ""
            if qualified in _ONE_HOT:
                return self._one_hot(element, qualified, shown, scope, order)
            if qualified in _INTEGER:
                return _integer(f"`{shown}`", None, element)
        return UNKNOWN


def _full_slice(element: cst.SubscriptElement) -> bool:
    """`:` (every entry along that axis)."""
    part = element.slice
    return isinstance(part, cst.Slice) and part.lower is None and part.upper is None and part.step is None


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


def fit_targets(facts: Facts, fit_site: CallSite) -> LabelInfo:
    """The targets a `model.fit(...)` call trains on: its `y` (second argument or `y=`), else element 1 of what
    its `x` yields (a `tf.data` pipeline, a generator of batches)."""
    reader = label_reader(facts)
    y = arg_value(fit_site.node, 1, "y")
    if y is not None:
        return reader.encoding(y, fit_site.scope, fit_site.order)
    x = arg_value(fit_site.node, 0, "x")
    if x is None:
        return UNKNOWN
    return reader.element(x, [1], fit_site.scope, fit_site.order)

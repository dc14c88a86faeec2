"""The dtype a piece of code names: `tf.int32`, `"float32"`, `np.int64`, `tf.dtypes.bool`.

Apart from TL009's `rules/_tl009_dtypes.py` (which also works out the dtype a value has) so that the
analyses read dtypes the same way without importing a rule's helper: `dataflow` asks which `tf.cast`
cuts a gradient.
"""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Facts

INTEGER_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
_ALIASES = {"half": "float16", "double": "float64", "float": "float32", "bool_": "bool"}
_KNOWN = INTEGER_DTYPES | FLOAT_DTYPES | {"bool", "complex64", "complex128", "string"}
_DTYPE_PREFIXES = ("tensorflow.", "numpy.", "keras.", "jax.numpy.")


def dtype_name(facts: Facts, expr: cst.BaseExpression | None) -> str | None:
    """The dtype a `dtype=` argument names (`tf.int32`, `"int64"`, `np.float32`, `tf.dtypes.bool`)."""
    if expr is None:
        return None
    if isinstance(expr, cst.SimpleString):
        text = expr.evaluated_value
        if isinstance(text, str):
            text = _ALIASES.get(text, text)
            return text if text in _KNOWN else None
        return None
    if isinstance(expr, cst.Name) and expr.value == "bool" and not facts.bindings_of("bool"):
        return "bool"  # the builtin: `tf.as_dtype(bool)` is tf.bool (int and float are refused)
    qualified = facts.resolve(expr)
    if qualified is None or not qualified.startswith(_DTYPE_PREFIXES):
        return None
    last = qualified.rsplit(".", 1)[-1]
    if qualified.startswith("numpy.") and last in ("float", "int", "bool"):
        return None  # removed NumPy aliases
    last = _ALIASES.get(last, last)
    return last if last in _KNOWN else None


def is_integer(dtype: str | None) -> bool:
    """Integer and bool dtypes: TensorFlow defines no gradient for them."""
    return dtype in INTEGER_DTYPES or dtype == "bool"

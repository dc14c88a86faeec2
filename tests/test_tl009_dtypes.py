"""What dtype a tensor or a variable has: the questions of rules/_tl009_dtypes.py (figures measured on
TF 2.21: `tf.Variable(3)` is int32, `tf.Variable(np.arange(5))` int64, `tf.Variable(range(3))` int32)."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.dtype_names import dtype_name, is_integer
from tapelint.analysis.facts import Facts
from tapelint.analysis.gradients import gradient_calls
from tapelint.rules._tl009_dtypes import integer_variables, value_dtype, variable_dtype


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _variables(source: str) -> dict[str, str | None]:
    facts = _facts(source)
    found = {}
    for binding in facts.bindings:
        if isinstance(binding.value, cst.Call) and facts.resolve(binding.value.func) in (
                "tensorflow.Variable", "keras.Variable"):
            answer = variable_dtype(facts, binding.value)
            found[binding.target] = answer.dtype if answer is not None else None
    return found


def test_python_literals_give_tensorflow_default_dtypes():
    assert _variables("""
        import tensorflow as tf
        import keras
        a = tf.Variable(3)
        b = tf.Variable(3.0)
        c = tf.Variable(True)
        d = tf.Variable([1, 2, 3])
        e = tf.Variable([1, 2.5])
        f = tf.Variable(-4)
        g = keras.Variable(3)
        h = tf.Variable(range(3))
    """) == {"a": "int32", "b": "float32", "c": "bool", "d": "int32", "e": "float32", "f": "int32",
             "g": "int32", "h": "int32"}


def test_numpy_and_tensorflow_constructors():
    assert _variables("""
        import numpy as np
        import tensorflow as tf
        a = tf.Variable(np.arange(5))
        b = tf.Variable(np.zeros(3))
        c = tf.Variable(np.random.randint(0, 5, size=(3,)))
        d = tf.Variable(np.array([1, 2]))
        e = tf.Variable(tf.zeros((2, 2)))
        f = tf.Variable(tf.zeros(3, dtype=tf.int32))
        g = tf.Variable(tf.range(4))
        h = tf.Variable(tf.constant(3))
        i = tf.Variable(tf.cast(x, tf.int64))
        j = tf.Variable(tf.random.normal((3, 2)))
        k = tf.Variable(np.zeros(3).astype("int32"))
    """) == {"a": "int64", "b": "float64", "c": "int64", "d": "int64", "e": "float32", "f": "int32",
             "g": "int32", "h": "int32", "i": "int64", "j": "float32", "k": "int32"}


def test_an_explicit_dtype_wins_over_the_initial_value():
    assert _variables("""
        import tensorflow as tf
        a = tf.Variable(3, dtype=tf.float32)
        b = tf.Variable(0.0, dtype="int64")
        c = tf.Variable([1, 2], dtype=tf.dtypes.bool)
    """) == {"a": "float32", "b": "int64", "c": "bool"}


def test_names_are_followed_and_unknown_values_stay_unknown():
    assert _variables("""
        import numpy as np
        import tensorflow as tf
        start = 3
        table = np.arange(4)
        a = tf.Variable(start)
        b = tf.Variable(table)
        c = tf.Variable(make_initial())
        d = tf.Variable(x * 2)
        e = tf.Variable(np.array(rows))
        f = tf.Variable(tf.zeros(3, dtype=chosen_dtype))
    """) == {"a": "int32", "b": "int64", "c": None, "d": None, "e": None, "f": None}


def test_dtype_names_and_integer_test():
    facts = _facts("""
        import numpy as np
        import tensorflow as tf
        x = [tf.int32, "int64", np.float32, tf.bool, tf.float16, "half", tf.string, dtype]
    """)
    (binding,) = [b for b in facts.bindings if b.target == "x"]
    names = [dtype_name(facts, e.value) for e in binding.value.elements]
    assert names == ["int32", "int64", "float32", "bool", "float16", "float16", "string", None]
    assert [is_integer(n) for n in names] == [True, True, False, True, False, False, False, False]


def test_value_dtype_of_a_name_bound_to_a_literal_list():
    facts = _facts("""
        import tensorflow as tf
        ids = [[1, 2], [3, 4]]
        print(ids)
    """)
    (site,) = [s for s in facts.calls if s.func == "print"]
    assert value_dtype(facts, site.node.args[0].value, site.scope, site.order) == "int32"


def test_integer_variables_among_gradient_sources_keep_their_order():
    facts = _facts("""
        import numpy as np
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        slope = tf.Variable(1)
        scale = tf.Variable(1.0)
        offsets = tf.Variable(np.arange(3))
        with tf.GradientTape() as tape:
            loss = model(x) * scale
        a = tape.gradient(loss, [slope, scale, offsets])
        b = tape.gradient(loss, model.trainable_variables + [offsets])
        c = tape.gradient(loss, scale)
    """)
    names = []
    for grad in gradient_calls(facts):
        found = integer_variables(facts, grad.sources, grad.site.scope, grad.site.order)
        names.append([(d.dtype, cst.Module(body=[]).code_for_node(d.because)) for _, d in found])
    assert names == [[("int32", "1"), ("int64", "np.arange(3)")], [("int64", "np.arange(3)")], []]


def test_dtype_names_are_read_once_for_casts_too():
    from tapelint.analysis.dataflow import integer_dtype

    module = cst.parse_module("import tensorflow as tf\nimport numpy as np\n"
                              "a = (tf.int32, 'int64', np.uint8, bool, tf.float32, 'float16', float)\n")
    facts = Facts(module)
    values = module.body[2].body[0].value.elements  # type: ignore[attr-defined]
    names = [dtype_name(facts, e.value) for e in values]
    assert names == ["int32", "int64", "uint8", "bool", "float32", "float16", None]
    assert [integer_dtype(facts, e.value) for e in values] == ["int32", "int64", "uint8", "bool", None, None, None]

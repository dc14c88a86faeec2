"""Is this code a unit test? Methods of `unittest`/`absl`/`tf.test`/Keras `TestCase` subclasses.

Tests build networks with constant weights on purpose, to assert exact numbers; rules about how a model
is set up for training can skip them. Decided from the resolved base classes, never from names.
"""

from __future__ import annotations

from tapelint.analysis.facts import Facts, Scope
from tapelint.analysis.values import values

_TEST_ROOTS = ("unittest.", "absl.", "tensorflow.", "keras.", "tf_keras.", "parameterized.")


def in_unit_test(facts: Facts, scope: Scope) -> bool:
    """True when `scope` is (inside) a method of a class deriving from a library `TestCase`."""
    resolver = values(facts)
    for current in scope.chain():
        if current.class_name is None:
            continue
        bases = resolver.library_bases(current.class_name)
        if any(base.endswith(".TestCase") and base.startswith(_TEST_ROOTS) for base in bases):
            return True
    return False

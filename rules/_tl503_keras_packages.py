"""Which Keras package a layer, model or symbolic tensor comes from: Keras 3, tf_keras, or unknown.

On TF >= 2.16 two Keras packages can live in one program: Keras 3 (`keras`, and `tf.keras` unless
`TF_USE_LEGACY_KERAS` is set) and Keras 2 (`tf_keras`, which `tensorflow_hub.KerasLayer` subclasses).
Their layers, models and KerasTensors do not mix. `names.canonical` merges the spellings on purpose, so
this module reads the names as imported (`ImportMap.origins`).

- `package_of_name(facts, dotted)`: the package of a library name spelled as imported.
- `package_of_value(facts, value)`: the package of a value of the value model (a library layer or model
  created by a call, or an object of a local subclass of one).
- `class_package(facts, cls)`: the package of a local class through its Keras base classes.
- `tensor_package(facts, expr, scope, order)`: the package of a symbolic tensor (`Input(...)`, or what a
  layer of a known package returned), followed through plain assignments.
- `mixes(facts)`: every place where an object of one package is put into a model of the other.

UNKNOWN is an answer: whenever the package cannot be proven (a project configured for Keras 2, a
`TF_USE_LEGACY_KERAS` set in a way we cannot read, a local class with mixed or unknown bases), callers
stay silent.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Facts, Scope, arg_value, keyword_arg
from tapelint.analysis.names import dotted, origin
from tapelint.analysis.values import Kind, Value, is_unknown, values, values_of
from tapelint.analysis.models import sequential_stack
from tapelint.analysis.vocabulary import SEQUENTIAL_CLASSES

LEGACY_FLAG = "TF_USE_LEGACY_KERAS"
# hub.KerasLayer subclasses tf_keras' Layer when tf.keras is Keras 3 (tensorflow_hub 0.16, checked
# on TF 2.21), and tf.keras' Layer when that is tf_keras: tf_keras either way.
HUB_LAYERS = frozenset({"tensorflow_hub.KerasLayer", "tensorflow_hub.keras_layer.KerasLayer"})
_TF_KERAS_ROOTS = ("tensorflow.keras", "tensorflow.compat.v1.keras", "tensorflow.compat.v2.keras")
_INPUTS = frozenset({"keras.Input", "keras.layers.Input"})


class Package(str, enum.Enum):
    KERAS3 = "Keras 3"
    TF_KERAS = "tf_keras"
    UNKNOWN = "unknown"


def legacy_tf_keras(facts: Facts) -> bool | None:
    """Does this file make `tf.keras` mean tf_keras? True when it sets `TF_USE_LEGACY_KERAS` to a true
    value (`os.environ["TF_USE_LEGACY_KERAS"] = "1"`, `os.environ.setdefault(...)`), False when the
    flag is not mentioned, None when it is mentioned in a way we cannot read."""
    return facts.cached("keras_packages.legacy", lambda: _legacy(facts))


def _string(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # pragma: no cover - malformed literal
            return None
        return value if isinstance(value, str) else None
    return None


def _truthy(node: cst.BaseExpression | None) -> bool | None:
    text = _string(node)
    if text is None:
        return None
    return text.strip().lower() in ("1", "true", "yes")


def _legacy(facts: Facts) -> bool | None:
    found: list[bool | None] = []
    for store in facts.stores:
        target = store.target
        if isinstance(target, cst.Subscript) and dotted(target.value) == "os.environ" and len(target.slice) == 1:
            index = target.slice[0].slice
            if isinstance(index, cst.Index) and _string(index.value) == LEGACY_FLAG:
                found.append(_truthy(store.value) if not store.path else None)
    for site in facts.calls:
        if site.func in ("os.environ.setdefault", "os.putenv") and _string(arg_value(site.node, 0)) == LEGACY_FLAG:
            found.append(_truthy(arg_value(site.node, 1)))
    if not found:
        # Named some other way (`%env` in a notebook, `os.environ.update`, a comment): cannot tell.
        return None if LEGACY_FLAG in facts.code else False
    if all(f is True for f in found):
        return True
    if all(f is False for f in found):
        return False
    return None


def package_of_name(facts: Facts, name: str | None) -> Package:
    """The package of a library name spelled as imported (`tf_keras.layers.Dense`,
    `tensorflow.keras.Sequential`, `keras.layers.Dense`, `tensorflow_hub.KerasLayer`)."""
    if not name:
        return Package.UNKNOWN
    if name in HUB_LAYERS:
        return Package.TF_KERAS
    root = name.split(".", 1)[0]
    if root == "tf_keras":
        return Package.TF_KERAS
    if root == "keras":
        # `keras.api._v2` is Keras 2's own spelling of its API.
        return Package.UNKNOWN if name.startswith("keras.api._v2") else Package.KERAS3
    if any(name == r or name.startswith(r + ".") for r in _TF_KERAS_ROOTS):
        legacy = legacy_tf_keras(facts)
        if legacy is None:
            return Package.UNKNOWN
        return Package.TF_KERAS if legacy else Package.KERAS3
    return Package.UNKNOWN


def call_package(facts: Facts, call: cst.Call) -> Package:
    """The package of what a call of a library class creates (`tf_keras.layers.Dense(4)`)."""
    return package_of_name(facts, origin(facts.imports, call.func))


def class_package(facts: Facts, cls: str | None) -> Package:
    """The package of a local class, from the library classes it derives from (through local bases).
    UNKNOWN unless every library base is a Keras class of one package."""
    found: set[Package] = set()
    pending = [cls] if cls else []
    seen: set[str] = set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        info = facts.classes.get(current)
        if info is None:
            return Package.UNKNOWN
        for arg in info.node.bases:
            local = dotted(arg.value)
            if local in facts.classes:
                pending.append(local)
                continue
            found.add(package_of_name(facts, origin(facts.imports, arg.value)))
    if len(found) != 1:
        return Package.UNKNOWN
    return found.pop()


def package_of_value(facts: Facts, value: Value) -> Package:
    """The package of a layer or model value: a library class created by a call (hub.KerasLayer
    included), or an object of a local subclass."""
    if value.kind in (Kind.LAYER, Kind.MODEL, Kind.INSTANCE) and value.cls in facts.classes:
        return class_package(facts, value.cls)
    if value.kind in (Kind.LAYER, Kind.MODEL) or value.kind is Kind.EXTERNAL and value.cls in HUB_LAYERS:
        if isinstance(value.node, cst.Call):
            return call_package(facts, value.node)
    return Package.UNKNOWN


def is_layer_like(value: Value, facts: Facts) -> bool:
    if value.kind in (Kind.LAYER, Kind.MODEL):
        return True
    return value.kind is Kind.EXTERNAL and value.cls in HUB_LAYERS


def packages_of(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> tuple[Package, Value] | None:
    """The one package every value `expr` may hold belongs to (with one such value), or None when
    they are not all layers or models of one known package."""
    found = values_of(facts, expr, scope, order)
    if not found or is_unknown(found):
        return None
    packages = set()
    for value in found:
        if not is_layer_like(value, facts):
            return None
        packages.add(package_of_value(facts, value))
    if len(packages) != 1 or Package.UNKNOWN in packages:
        return None
    # The message names one of them: the first the source creates (a set's order changes from run to run).
    return packages.pop(), min(found, key=lambda value: (_source_order(facts, value), value.cls or ""))


def _source_order(facts: Facts, value: Value) -> int:
    site = facts.call_site(value.node) if isinstance(value.node, cst.Call) else None
    return site.order if site is not None else -1


def tensor_package(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int,
                   depth: int = 0) -> Package:
    """The package of a symbolic tensor: `keras.Input(...)`/`tf_keras.Input(...)`, or the output of
    applying a layer of a known package, followed through plain assignments."""
    if expr is None or depth > 8:
        return Package.UNKNOWN
    if isinstance(expr, cst.Call):
        name = origin(facts.imports, expr.func)
        if name is not None and facts.resolve(expr.func) in _INPUTS:
            return package_of_name(facts, name)
        if not expr.args or expr.args[0].star:
            return Package.UNKNOWN
        # A layer's output is symbolic only when its input is: `self.encoder(x)` in `call` is eager.
        callee = packages_of(facts, expr.func, scope, order)
        if callee is None or expr.args[0].keyword is not None:
            return Package.UNKNOWN
        given = tensor_package(facts, expr.args[0].value, scope, order, depth + 1)
        # A mismatch is reported where it happens; what follows it is not judged again.
        return callee[0] if given is callee[0] else Package.UNKNOWN
    if isinstance(expr, cst.Name):
        reaching = values(facts).reaching(expr.value, scope, order)
        if len(reaching) != 1:
            return Package.UNKNOWN
        binding = reaching[0]
        if binding.value is None or binding.index is not None or binding.path or id(binding) in facts.loop_bindings:
            return Package.UNKNOWN
        return tensor_package(facts, binding.value, binding.scope, binding.order, depth + 1)
    return Package.UNKNOWN


@dataclass(frozen=True)
class Mix:
    """An object of package `inner` put into a model of package `outer`."""

    node: cst.CSTNode  # where to report: the layer expression (or the layer call)
    what: str  # how the object is written (`hub.KerasLayer`)
    inner: Package
    outer: Package
    how: str  # "sequential", "functional" or "attribute"
    container: str  # the model as the message names it (`` `keras.Sequential` ``, "subclass `Net`")


def mixes(facts: Facts) -> list[Mix]:
    return facts.cached("keras_packages.mixes", lambda: _mixes(facts))


def _written(facts: Facts, value: Value, expr: cst.BaseExpression) -> str:
    if isinstance(value.node, cst.Call):
        name = dotted(value.node.func)
        if name:
            return name
    return dotted(expr) or (value.cls or "layer")


def _mixes(facts: Facts) -> list[Mix]:
    out: list[Mix] = []
    for site in facts.calls:
        resolved = site.qualified
        if resolved in SEQUENTIAL_CLASSES:
            # Every layer of it, from its list and from later `.add(...)` calls alike.
            outer = call_package(facts, site.node)
            if outer is not Package.UNKNOWN:
                for entry in sequential_stack(facts, site.node) or ():
                    if entry is not None:
                        _check(facts, out, entry.node, entry.scope, entry.order, outer, "sequential",
                               f"`{dotted(site.node.func) or 'Sequential'}`")
            continue
        # A layer applied to a symbolic tensor of the other package (functional API).
        if site.node.args and not site.node.args[0].star and site.node.args[0].keyword is None \
                and resolved is None:
            layer = packages_of(facts, site.node.func, site.scope, site.order)
            if layer is None:
                continue
            tensor = tensor_package(facts, site.node.args[0].value, site.scope, site.order)
            if tensor is not Package.UNKNOWN and tensor is not layer[0]:
                out.append(Mix(site.node, _written(facts, layer[1], site.node.func), layer[0], tensor, "functional",
                               "functional API"))
    _attributes(facts, out)
    return out


def _check(facts: Facts, out: list[Mix], expr: cst.BaseExpression, scope: Scope, order: int, outer: Package,
           how: str, container: str) -> None:
    inner = packages_of(facts, expr, scope, order)
    if inner is not None and inner[0] is not outer:
        out.append(Mix(expr, _written(facts, inner[1], expr), inner[0], outer, how, container))


def _trainable(facts: Facts, value: Value) -> bool | None:
    """Does this layer have weights that should train? hub.KerasLayer defaults to `trainable=False`,
    Keras layers to True. None when `trainable=` is not a literal."""
    call = value.node
    if not isinstance(call, cst.Call):
        return None
    arg = keyword_arg(call, "trainable")
    if arg is None:
        return not (value.kind is Kind.EXTERNAL and value.cls in HUB_LAYERS)
    if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
        return arg.value.value == "True"
    return None


def _attributes(facts: Facts, out: list[Mix]) -> None:
    """`self.x = <layer of the other package>` in a Keras model or layer subclass: the attribute is
    not tracked, so its weights never train (Keras 3), or `fit` fails (tf_keras)."""
    for binding in facts.bindings:
        if not binding.target.startswith("self.") or binding.target.count(".") != 1:
            continue
        cls = binding.scope.class_name
        if cls is None or binding.value is None or binding.index is not None or binding.path:
            continue
        if values(facts).class_kind(cls) not in (Kind.MODEL, Kind.LAYER):
            continue
        outer = class_package(facts, cls)
        if outer is Package.UNKNOWN:
            continue
        inner = packages_of(facts, binding.value, binding.scope, binding.order)
        if inner is None or inner[0] is outer:
            continue
        if not all(_trainable(facts, v) for v in values_of(facts, binding.value, binding.scope, binding.order)):
            continue
        out.append(Mix(binding.value, _written(facts, inner[1], binding.value), inner[0], outer, "attribute",
                       f"subclass `{cls}`"))


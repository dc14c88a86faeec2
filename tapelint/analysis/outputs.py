"""Where a tensor came from and what its last axis holds: the questions about layer and model outputs.

The value model (values.py) answers "what object may this be" and says UNKNOWN for tensors. Rules about
outputs need the tensor's provenance: which expressions may have computed it (`origins`), how many
units the layer that set its width has (`last_axis_units`, `model_units`: width-keeping layers such as
`Activation` and `Dropout` looked through, in Sequential and functional models alike), whether it holds
probabilities once clips and epsilons are stripped (`prediction_kind`), and which models a `tape.gradient`
takes gradients for (`gradient_owners`). Names are followed with the value model's own binding resolution
(`Values.reaching`) and its call sites, with one budget per query and iterative walks.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import CallSite, Facts, Scope, arg_value
from tapelint.analysis.keras import SAME_WIDTH_LAYERS, Output, OutputInfo, layer_class
from tapelint.analysis.models import (
    KerasModel, compiles, is_functional, is_sequential, model_reader, sequential_stack, sequential_width_layer,
    width_entry_before,
)
from tapelint.analysis.training import weight_owners
from tapelint.analysis.values import Kind, Value, is_unknown, values, values_of

# Layers whose last output axis has as many entries as their first argument.
UNIT_LAYERS: dict[str, tuple[int, str]] = {
    "Dense": (0, "units"), "Conv1D": (0, "filters"), "Conv2D": (0, "filters"), "Conv3D": (0, "filters"),
    "Conv2DTranspose": (0, "filters"), "SeparableConv2D": (0, "filters"), "Conv1DTranspose": (0, "filters"),
    "Conv3DTranspose": (0, "filters"),
}
CLIP_FUNCTIONS = frozenset({"tensorflow.clip_by_value", "keras.ops.clip", "keras.backend.clip"})
MAX_FUNCTIONS = frozenset({"tensorflow.maximum", "tensorflow.math.maximum", "keras.ops.maximum"})
# Calls that return Keras' fuzz factor, a small constant.
EPSILON_FUNCTIONS = frozenset({"keras.backend.epsilon", "keras.config.epsilon"})

_BUDGET = 256
_MAX_STRIP = 16

_UNKNOWN = OutputInfo(Output.UNKNOWN)


@dataclass(frozen=True)
class Origin:
    """An expression that may have computed a tensor, and the point where it runs."""

    expr: cst.BaseExpression
    scope: Scope
    order: int


def origins(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int, *,
            through_params: bool = True) -> list[Origin] | None:
    """The expressions that may have computed `expr` at this point, following plain names through the
    assignments that reach the read (the value model's `reaching`) and, with `through_params`,
    parameters through what their call sites pass. Anything else is its own origin. None when a path
    cannot be read: unpacking, an augmented or loop assignment, a parameter nobody in sight calls, or a
    budget spent."""
    if expr is None:
        return None
    resolver = values(facts)
    found: list[Origin] = []
    pending: list[Origin] = [Origin(expr, scope, order)]
    seen: set[tuple[int, int, int]] = set()
    budget = _BUDGET
    while pending:
        current = pending.pop()
        key = (id(current.expr), id(current.scope), current.order)
        if key in seen:
            continue
        seen.add(key)
        budget -= 1
        if budget < 0:
            return None
        if not isinstance(current.expr, cst.Name) or current.expr.value in ("None", "True", "False"):
            found.append(current)
            continue
        name = current.expr.value
        bindings = resolver.reaching(name, current.scope, current.order)
        nxt: list[Origin] = []
        if bindings:
            for binding in bindings:
                if binding.value is None or binding.path or binding.augmented or binding.index is not None:
                    return None
                nxt.append(Origin(binding.value, binding.scope, binding.order))
        else:
            function = facts.param_scope(name, current.scope)
            if not through_params or function is None or function.is_module:
                return None
            sites = resolver.call_sites(function)
            if not sites:
                return None
            for site in sites:
                arg = facts.argument_for_param(site.node, function, name)
                if arg is None or any(a.star for a in site.node.args):
                    return None
                nxt.append(Origin(arg, site.scope, site.order))
        pending.extend(reversed(nxt))  # depth first, in document order
    return found


def constant_number(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> float | None:
    """The one number `expr` may be here, through the value model; None if it may be several or unknown."""
    found = values_of(facts, expr, scope, order)
    numbers = {v.const for v in found if v.kind is Kind.CONSTANT and isinstance(v.const, (int, float))
               and not isinstance(v.const, bool)}
    if len(numbers) != 1 or len(numbers) != len({v.const for v in found}) or is_unknown(found):
        return None
    return float(next(iter(numbers)))


def layer_units(facts: Facts, construction: cst.Call) -> float | None:
    """The units (or filters) a `Dense`/convolution construction gives its output's last axis."""
    cls = layer_class(facts, construction)
    if cls not in UNIT_LAYERS:
        return None
    site = facts.call_site(construction)
    if site is None:
        return None
    position, keyword = UNIT_LAYERS[cls]
    return constant_number(facts, arg_value(construction, position, keyword), site.scope, site.order)


def producing_layers(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int, *,
                     through_params: bool = True) -> list[cst.Call] | None:
    """The layer constructions whose application may have produced `expr` (`Dense(1)(h)`,
    `self.score(h)`, a name bound to either), or None when some origin is not a layer's output."""
    found = origins(facts, expr, scope, order, through_params=through_params)
    if not found:
        return None
    layers: list[cst.Call] = []
    for origin in found:
        call = origin.expr
        if not isinstance(call, cst.Call):
            return None
        if isinstance(call.func, cst.Call):
            if layer_class(facts, call.func) is None:
                return None
            layers.append(call.func)
            continue
        held = values_of(facts, call.func, origin.scope, origin.order)
        for value in held:
            if value.kind is Kind.MODEL and isinstance(value.node, cst.Call):
                last = _sequential_last_layer(facts, value.node)
                if last is None:
                    return None
                layers.append(last)
                continue
            if value.kind is not Kind.LAYER or not isinstance(value.node, cst.Call):
                return None
            if layer_class(facts, value.node) is None:
                return None
            layers.append(value.node)
    return layers or None


def _sequential_last_layer(facts: Facts, construction: cst.Call) -> cst.Call | None:
    """The layer that sets the width of a `Sequential(...)`'s output, or None when it cannot be read."""
    found = sequential_width_layer(facts, construction)
    return found[1] if found is not None else None


_WIDTH_STEPS = 32


def width_layers(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int, *,
                 through_params: bool = True) -> list[cst.Call] | None:
    """The layer constructions that may have set the width of `expr`'s last axis: the layers whose
    application computed it, where a layer that keeps its input's width (`SAME_WIDTH_LAYERS`: `Activation`,
    `Dropout`, ...) applied to one input is looked through to what computed that input, and a model's
    application to what sets its output's width (a Sequential's `width_entry_before`, a functional
    model's `outputs`, what a subclass's `call` returns). So `Dense(7)` then `Activation("softmax")` sets a
    width of 7 however the model is written. None when some origin cannot be read."""
    found: list[cst.Call] = []
    pending: list[tuple[cst.BaseExpression | None, Scope, int]] = [(expr, scope, order)]
    seen: set[tuple[int, int, int]] = set()
    steps = 0
    while pending:
        current, where, at = pending.pop()
        if current is None or steps >= _WIDTH_STEPS:
            return None
        key = (id(current), id(where), at)
        if key in seen:
            continue
        seen.add(key)
        steps += 1
        computed = origins(facts, current, where, at, through_params=through_params)
        if not computed:
            return None
        for origin in computed:
            application = origin.expr
            if type(application) is not cst.Call:
                return None
            held: list[Value] = []
            if type(application.func) is cst.Call and layer_class(facts, application.func) is not None:
                layers = [application.func]
            else:
                values_held = values_of(facts, application.func, origin.scope, origin.order)
                if not values_held:
                    return None
                layers = [v.node for v in values_held if type(v.node) is cst.Call and v.kind is Kind.LAYER
                          and layer_class(facts, v.node) is not None]
                # Models, and layers of a class of this module: read on from what their `call` returns.
                held = [v for v in values_held if v.kind is Kind.MODEL or (
                    v.kind is Kind.LAYER and v.cls is not None and v.cls in facts.classes)]
                if len(held) + len(layers) != len(values_held):
                    return None
            keeping = [layer for layer in layers if layer_class(facts, layer) in SAME_WIDTH_LAYERS]
            if keeping:
                positional = [arg for arg in application.args if arg.keyword is None]
                if len(positional) > 1 or any(arg.star for arg in application.args):
                    return None
                pending.append((arg_value(application, 0, "inputs"), origin.scope, origin.order))
            found.extend(layer for layer in layers if layer_class(facts, layer) not in SAME_WIDTH_LAYERS)
            for model in held:
                ends = _model_ends(facts, model.node, model.cls)
                if ends is None:
                    return None
                for end in ends:
                    if isinstance(end, tuple):
                        pending.append(end)
                    else:
                        found.append(end)
    return found or None


def _model_ends(facts: Facts, node: cst.CSTNode | None, cls: str | None, depth: int = 0
                ) -> list[cst.Call | tuple[cst.BaseExpression, Scope, int]] | None:
    """Where a model's output width is set: a Sequential's width layer (or, for a model nested last in it,
    where that one's is set), or the expressions it outputs (a functional model's `outputs`, what the `call`
    of a model or layer class of this module returns) to read on; None when not readable."""
    if depth > _MODEL_DEPTH:
        return None
    info = facts.classes.get(cls or "")
    if info is not None:
        method = info.methods.get("call")
        returns = facts.returns_of(method) if method is not None else []
        if not returns or any(r.value is None for r in returns):
            return None
        return [(r.value, r.scope, r.order) for r in returns]  # type: ignore[misc]
    if type(node) is not cst.Call:
        return None
    if is_sequential(facts, node):
        stack = sequential_stack(facts, node)
        entry = width_entry_before(stack, len(stack)) if stack is not None else None
        if entry is None:
            return None
        if entry.layer is not None:
            return [entry.layer[1]]
        nested = next(iter(entry.held)) if len(entry.held) == 1 else None
        if nested is None or not (nested.kind is Kind.MODEL or (nested.kind is Kind.LAYER and nested.cls in facts.classes)):
            return None
        return _model_ends(facts, nested.node, nested.cls, depth + 1)
    if is_functional(facts, node):
        site = facts.call_site(node)
        outputs = arg_value(node, 1, "outputs")
        if site is None or outputs is None or type(outputs) in (cst.List, cst.Tuple, cst.Dict):
            return None
        return [(outputs, site.scope, site.order)]
    return None


_MODEL_DEPTH = 8


def model_units(facts: Facts, construction: cst.CSTNode, class_name: str | None = None) -> float | None:
    """The width of the output of the model built at `construction` (a `Sequential(...)`, a functional
    `Model(...)`, or an instance of the model class `class_name` of this module): the units of the layer
    that sets it, width-keeping layers after it skipped. None when it cannot be proved."""
    ends = _model_ends(facts, construction, class_name)
    if not ends:
        return None
    widths: set[float | None] = set()
    for end in ends:
        widths.add(last_axis_units(facts, *end) if isinstance(end, tuple) else layer_units(facts, end))
    return widths.pop() if len(widths) == 1 else None


def last_axis_units(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int, *,
                    through_params: bool = True) -> float | None:
    """How many units the last axis of `expr` has, when it is the output of `Dense`/convolution layers
    that all agree (width-keeping layers after them looked through, `width_layers`); None otherwise."""
    layers = width_layers(facts, expr, scope, order, through_params=through_params)
    if not layers:
        return None
    units = {layer_units(facts, layer) for layer in layers}
    if len(units) != 1:
        return None
    return next(iter(units))


def small_constant(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> bool:
    """A number known here (`1e-7`, `EPS`, `self.eps`, `1 - 1e-7`: the value model folds arithmetic) or
    Keras' `epsilon()`."""
    if expr is None:
        return False
    if isinstance(expr, cst.Call) and facts.resolve(expr.func) in EPSILON_FUNCTIONS:
        return True
    return constant_number(facts, expr, scope, order) is not None


def strip_guards(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> cst.BaseExpression | None:
    """The probability under the guards put around it before a `log`: `p + eps`, `eps + p`, `1 - p`,
    `clip_by_value(p, lo, hi)`, `maximum(p, eps)` -> `p` (nested ones too)."""
    for _ in range(_MAX_STRIP):
        if expr is None:
            return None
        inner: cst.BaseExpression | None = None
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Add):
                if small_constant(facts, expr.right, scope, order):
                    inner = expr.left
                elif small_constant(facts, expr.left, scope, order):
                    inner = expr.right
            elif isinstance(expr.operator, cst.Subtract) and small_constant(facts, expr.left, scope, order):
                inner = expr.right
        elif isinstance(expr, cst.Call):
            qualified = facts.resolve(expr.func)
            if qualified in CLIP_FUNCTIONS:
                inner = arg_value(expr, 0)
            elif qualified in MAX_FUNCTIONS:
                a, b = arg_value(expr, 0), arg_value(expr, 1)
                if b is not None and small_constant(facts, b, scope, order):
                    inner = a
                elif a is not None and small_constant(facts, a, scope, order):
                    inner = b
        if inner is None:
            return expr
        expr = inner
    return expr


def prediction_kind(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> OutputInfo:
    """`ModelReader.value_kind` of `expr` once its guards are stripped, also through guarded rebindings
    (`p = clip_by_value(p, ...)`) and parameters of loss helpers: what their call sites pass, and the
    model's output for a `model.compile(loss=fn)` function (Keras calls it with `(y_true, y_pred)`).
    All paths must agree, else UNKNOWN."""
    reader = model_reader(facts)
    resolver = values(facts)
    results: list[OutputInfo] = []
    pending: list[Origin] = [Origin(expr, scope, order)] if expr is not None else []
    budget = _BUDGET
    while pending:
        budget -= 1
        if budget < 0:
            return _UNKNOWN
        current = pending.pop()
        stripped = strip_guards(facts, current.expr, current.scope, current.order)
        if stripped is None:
            return _UNKNOWN
        here = Origin(stripped, current.scope, current.order)
        if isinstance(stripped, cst.Name):
            bindings = resolver.reaching(stripped.value, here.scope, here.order)
            if not bindings:
                found = _parameter_paths(facts, stripped.value, here.scope)
                if found is None:
                    return _UNKNOWN
                paths, compiled = found
                results.extend(compiled)
                pending.extend(reversed(paths))
                continue
            if len(bindings) == 1:
                binding = bindings[0]
                plain = (binding.value is not None and not binding.path and not binding.augmented
                         and binding.index is None)
                if plain and strip_guards(facts, binding.value, binding.scope, binding.order) is not binding.value:
                    pending.append(Origin(binding.value, binding.scope, binding.order))  # type: ignore[arg-type]
                    continue
        results.append(reader.value_kind(here.expr, here.scope, here.order))
    if results and all(r.kind is results[0].kind for r in results):
        return results[0]
    return _UNKNOWN


def _parameter_paths(facts: Facts, name: str, scope: Scope) -> tuple[list[Origin], list[OutputInfo]] | None:
    """What a parameter of a loss helper may receive: its call sites' arguments and, for the `y_pred`
    of a `compile(loss=fn)` function, the compiled model's output. None when it receives nothing
    we can see."""
    function = facts.param_scope(name, scope)
    if function is None or function.is_module or function.node is None:
        return None
    paths: list[Origin] = []
    for site in values(facts).call_sites(function):
        arg = facts.argument_for_param(site.node, function, name)
        if arg is None:
            return None
        paths.append(Origin(arg, site.scope, site.order))
    compiled: list[OutputInfo] = []
    params = [p for p in function.params if p not in ("self", "cls")]
    if len(params) >= 2 and params[1] == name and function.class_name is None:
        reader = model_reader(facts)
        for compile_call in compiles(facts):
            site = compile_call.site
            loss = values_of(facts, compile_call.loss, site.scope, site.order)
            if any(v.kind is Kind.FUNCTION and v.node is function.node for v in loss):
                model = reader.model_of(site.node.func.value, site.scope, site.order)  # type: ignore[attr-defined]
                compiled.append(model.output if model is not None else _UNKNOWN)
    if not paths and not compiled:
        return None
    return paths, compiled


# ----------------------------------------------------------------------------- models


def single_output(model: KerasModel) -> bool:
    """A Sequential model, or a functional one whose `outputs` is one tensor (not a list or dict)."""
    if model.kind == "sequential":
        return True
    if model.kind != "functional" or not isinstance(model.construction, cst.Call):
        return False
    outputs = arg_value(model.construction, 1, "outputs")
    return outputs is not None and not isinstance(outputs, (cst.List, cst.Tuple, cst.Dict))


def output_model(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int, *,
                 through_params: bool = True) -> KerasModel | None:
    """The model whose call computed `expr` (`logits = model(x)`), when every origin is a call of the
    same model."""
    found = origins(facts, expr, scope, order, through_params=through_params)
    if not found:
        return None
    reader = model_reader(facts)
    model: KerasModel | None = None
    for origin in found:
        if not isinstance(origin.expr, cst.Call):
            return None
        info = reader.model_of(origin.expr.func, origin.scope, origin.order)
        if info is None or (model is not None and info.construction is not model.construction):
            return None
        model = info
    return model


@dataclass(frozen=True)
class Owners:
    models: frozenset[Value]  # models and layers whose weights are among the sources
    unknown: bool  # some source cannot be read


def gradient_owners(facts: Facts, site: CallSite) -> Owners:
    """The models and layers whose weights a `tape.gradient(target, sources)` call differentiates for:
    the owners of `model.trainable_variables`-like values among the sources (to any container depth)."""
    found = _source_values(facts, arg_value(site.node, 1, "sources"), site.scope, site.order)
    models, unknown = weight_owners(found)
    return Owners(frozenset(models), unknown)


def _source_values(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> frozenset[Value]:
    """`values_of` the sources, reading a list display element by element: the value model spreads
    only containers, and `[*model.trainable_variables]` spreads weights."""
    paths = origins(facts, expr, scope, order, through_params=False) or []
    if not any(isinstance(p.expr, (cst.List, cst.Tuple)) for p in paths):
        return values_of(facts, expr, scope, order)
    out: set[Value] = set()
    for path in paths:
        if not isinstance(path.expr, (cst.List, cst.Tuple)):
            out |= values_of(facts, path.expr, path.scope, path.order)
            continue
        for element in path.expr.elements:
            out |= values_of(facts, element.value, path.scope, path.order)
    return frozenset(out)


def is_model(value: Value, model: KerasModel) -> bool:
    """Does the value-model object `value` stand for the model `KerasModel` read (same construction, or
    an object of the same local subclass)?"""
    if value.node is not None and value.node is model.construction:
        return True
    return model.class_name is not None and value.cls == model.class_name

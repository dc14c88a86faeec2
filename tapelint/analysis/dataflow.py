"""Gradient flow through a module: does a value depend differentiably on trainable weights?

`gradient_flow(facts, expr, scope, order)` follows an expression back through assignments, tuple
unpacking, `list.append`, comprehensions and the helper functions and methods of the same module
(their parameters are mapped to the arguments of the call being followed). Every value ends up in
one of four states:

- CONNECTED: some path reaches a model/layer call, a `tf.Variable` or a watched tensor through ops
  that pass gradients;
- CUT: every such path goes through an op that passes no gradient (`tf.argmax`, `.numpy()`,
  `float()`, `model.predict()`, an index `x[i]` with `i` computed from the weights, ...); the flow names
  the first op that cut it and the value it cut;
- NONE: it depends on data and constants only;
- UNKNOWN: something on the way cannot be read (an unknown callable, an attribute of an object).

Combining states is conservative: one CONNECTED path makes the whole value CONNECTED, and an UNKNOWN
part hides a CUT, so rules built on CUT stay silent when in doubt.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import libcst as cst

from tapelint.analysis.walk import child_nodes, iter_nodes
from tapelint.analysis.walk import contains as walk_contains

from tapelint.analysis.dtype_names import dtype_name, is_integer
from tapelint.analysis.facts import Binding, Facts, Scope, arg_value
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, last_assignment, reaching_assignments, values_of
from tapelint.analysis.vocabulary import MODEL_CLASSES, WEIGHT_ATTRIBUTES

_LITERAL_TYPES = frozenset({cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                            cst.FormattedString, cst.Ellipsis})


class State(enum.IntEnum):
    NONE = 0
    CUT = 1
    UNKNOWN = 2
    CONNECTED = 3


@dataclass(frozen=True)
class Flow:
    state: State
    node: cst.CSTNode | None = None  # the op that cut the gradient (for CUT)
    op: str = ""  # how to name it: "`tf.argmax`", "`.numpy()`"
    value: cst.CSTNode | None = None  # the value it cut


NONE = Flow(State.NONE)
UNKNOWN = Flow(State.UNKNOWN)
CONNECTED = Flow(State.CONNECTED)


def combine(flows: list[Flow]) -> Flow:
    best = NONE
    for flow in flows:
        if flow.state > best.state:
            best = flow
    return best


# Ops whose output carries no gradient to their (first) input.
CUT_OPS = {
    "tensorflow.argmax": "tf.argmax",
    "tensorflow.math.argmax": "tf.math.argmax",
    "tensorflow.argmin": "tf.argmin",
    "tensorflow.math.argmin": "tf.math.argmin",
    "tensorflow.round": "tf.round",
    "tensorflow.math.round": "tf.math.round",
    "tensorflow.math.floor": "tf.math.floor",
    "tensorflow.floor": "tf.floor",
    "tensorflow.math.ceil": "tf.math.ceil",
    "tensorflow.ceil": "tf.ceil",
    "tensorflow.sign": "tf.sign",
    "tensorflow.math.sign": "tf.math.sign",
    "tensorflow.equal": "tf.equal",
    "tensorflow.math.equal": "tf.math.equal",
    "tensorflow.not_equal": "tf.not_equal",
    "tensorflow.math.not_equal": "tf.math.not_equal",
    "tensorflow.greater": "tf.greater",
    "tensorflow.math.greater": "tf.math.greater",
    "tensorflow.greater_equal": "tf.greater_equal",
    "tensorflow.math.greater_equal": "tf.math.greater_equal",
    "tensorflow.less": "tf.less",
    "tensorflow.math.less": "tf.math.less",
    "tensorflow.less_equal": "tf.less_equal",
    "tensorflow.math.less_equal": "tf.math.less_equal",
    "tensorflow.stop_gradient": "tf.stop_gradient",
    "tensorflow.numpy_function": "tf.numpy_function",
    "tensorflow.compat.v1.py_func": "tf.compat.v1.py_func",
    "tensorflow.math.top_k": "tf.math.top_k",
    "tensorflow.argsort": "tf.argsort",
    "tensorflow.unique": "tf.unique",
    "keras.ops.argmax": "keras.ops.argmax",
    "keras.ops.argmin": "keras.ops.argmin",
    "keras.ops.round": "keras.ops.round",
    "keras.ops.stop_gradient": "keras.ops.stop_gradient",
    "keras.backend.argmax": "K.argmax",
    "keras.backend.round": "K.round",
    "keras.backend.eval": "K.eval",
    "keras.backend.get_value": "K.get_value",
    "keras.backend.stop_gradient": "K.stop_gradient",
}
# Ops whose output does not depend differentiably on their input at all (no gradient, not a cut).
NO_GRAD_OPS = frozenset({
    "tensorflow.shape", "tensorflow.size", "tensorflow.rank", "tensorflow.ones_like", "tensorflow.zeros_like",
    "tensorflow.shape_n", "keras.ops.shape", "keras.ops.ones_like", "keras.ops.zeros_like",
})
CAST_OPS = frozenset({"tensorflow.cast", "tensorflow.dtypes.cast", "keras.ops.cast", "keras.backend.cast"})
BUILTIN_CUTS = frozenset({"float", "int", "bool", "round"})
BUILTIN_COMBINE = frozenset({"sum", "abs", "max", "min", "list", "tuple", "sorted", "reversed", "zip"})
BUILTIN_NONE = frozenset({"len", "range", "print", "isinstance", "str", "type", "enumerate", "hasattr", "id"})
TENSOR_EXITS = frozenset({"numpy", "item", "tolist"})
PREDICT_METHODS = frozenset({"predict", "predict_on_batch"})
# Keras methods of a model that compute a loss from their arguments.
LOSS_METHODS = frozenset({"compute_loss", "compiled_loss"})
NO_GRADIENT_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "name", "device"})
INDEX_KEYWORDS = frozenset({"dtype", "name", "axis", "keepdims", "output_type"})


def integer_dtype(facts: Facts, expr: cst.BaseExpression | None) -> str | None:
    """`int32` when `expr` names an integer or bool dtype (`tf.int32`, `"int64"`, `np.int32`, `bool`):
    what `tf.cast` to it cuts. The dtype itself is read by `dtype_names.dtype_name`, the one answer."""
    dtype = dtype_name(facts, expr)
    return dtype if is_integer(dtype) else None


@dataclass(eq=False)
class Frame:
    """One function being followed; `args` maps its parameters to the caller's expressions."""

    scope: Scope
    args: dict[str, tuple[cst.BaseExpression, "Frame", int]] = field(default_factory=dict)
    fixed: dict[str, Flow] = field(default_factory=dict)  # comprehension targets and the like
    depth: int = 0


def _render(node: cst.CSTNode | None) -> str:
    if node is None:
        return ""
    try:
        text = cst.Module(body=[]).code_for_node(node)
    except Exception:  # noqa: BLE001 - a label only
        return "?"
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def render(node: cst.CSTNode | None) -> str:
    """Short source text of a node, for messages."""
    return _render(node)


class _Flow:
    MAX_DEPTH = 40
    MAX_NESTING = 60

    def __init__(self, facts: Facts, connected: frozenset[str], others: Callable[..., bool] | None = None) -> None:
        self.f = facts
        self.connected = connected
        # `others(func, scope, order)`: the callee is a model whose weights are not differentiated here
        # (`D(G(z))` with gradients for G only), so it passes its input's gradient and adds none.
        self.others = others
        self.active: set[tuple[int, int]] = set()
        self.memo: dict[tuple[int, int], Flow] = {}
        self.frames: dict[int, Frame] = {}
        self.steps = 0

    def warm_up(self, scope: Scope, order: int, reads: Iterable[str]) -> None:
        """Evaluate first, in document order, the function's earlier bindings that the question can reach
        by the names it reads (its backward slice), so that a long chain of rebindings (`h = h + f(h)` a
        hundred times) is followed one memoised step at a time. Only the slice: a module of many programs
        would otherwise evaluate every earlier program before each question, and spend on them the
        budget the question has."""
        # The slice follows reaching definitions, as `name` does: a read at `order` reaches back only to
        # the bindings it may see (the last one, and earlier ones a conditional last one may not have
        # replaced), not to every earlier binding of the name. A module that rebinds `model` and `loss`
        # for each of hundreds of training loops would otherwise put every earlier loop in the slice of
        # each question, and a file's lint would grow with the square of its loops.
        pending = [(prefix, order) for name in reads for prefix in _prefixes(name)]
        seen: set[tuple[str, int]] = set()
        chosen: dict[int, Binding] = {}
        while pending and len(chosen) < 2000:
            name, at = pending.pop()
            if (name, at) in seen:
                continue
            seen.add((name, at))
            for binding in reaching_assignments(self.f, name, scope, at):
                if binding.scope is not scope or id(binding) in chosen:
                    continue
                chosen[id(binding)] = binding
                read = binding.value if binding.value is not None else self.f.loop_bindings.get(id(binding))
                pending.extend((prefix, binding.order) for used in names_in(read) for prefix in _prefixes(used))
                if binding.augmented:
                    pending.append((binding.target, binding.order))
        if len(chosen) < self.MAX_NESTING // 2:
            return
        frame = self.frame_for(scope, 0)
        for binding in sorted(chosen.values(), key=lambda b: b.order):
            self.binding(binding, frame)

    def frame_for(self, scope: Scope, depth: int) -> Frame:
        """One argument-free frame per function, so results computed in it can be reused."""
        frame = self.frames.get(id(scope))
        if frame is None:
            frame = self.frames[id(scope)] = Frame(scope, depth=depth)
        return frame

    # ----- names
    def name(self, name: str, frame: Frame, order: int) -> Flow:
        if name in frame.fixed:
            return frame.fixed[name]
        if frame.depth == 0 and name in self.connected:
            return CONNECTED
        binding = last_assignment(self.f, name, frame.scope, order)
        if binding is None:
            if name in frame.args and self.f.is_param(name.split(".")[0], frame.scope):
                expr, caller, at = frame.args[name]
                return self.expr(expr, caller, at)
            if name.startswith("self."):
                return UNKNOWN
            if self.f.is_param(name.split(".")[0], frame.scope):
                return NONE  # data handed in by the caller of the step
            return NONE if name.split(".")[0] in self.f.imports.aliases else UNKNOWN
        if binding.scope is not frame.scope:
            frame = self.frame_for(binding.scope, frame.depth + 1)
        return self.binding(binding, frame)

    def binding(self, binding: Binding, frame: Frame) -> Flow:
        key = (id(binding), id(frame))
        if key in self.memo:
            return self.memo[key]
        if key in self.active or frame.depth > self.MAX_DEPTH:
            return UNKNOWN
        self.steps += 1
        if self.steps > 4000:
            return UNKNOWN
        if len(self.active) > self.MAX_NESTING:
            return UNKNOWN  # a very long chain of rebindings: stay well inside Python's recursion limit
        self.active.add(key)
        try:
            flow = self._binding(binding, frame)
        finally:
            self.active.discard(key)
        if not frame.fixed:
            self.memo[key] = flow
        return flow

    def _binding(self, binding: Binding, frame: Frame) -> Flow:
        value = binding.value
        if value is None:
            loop_iter = self.f.loop_bindings.get(id(binding))
            if loop_iter is not None:
                return self.expr(loop_iter, frame, binding.order)
            return UNKNOWN  # `with ... as name`
        if binding.augmented:
            before = self.name(binding.target, frame, binding.order)
            return combine([before, self.expr(value, frame, binding.order)])
        if binding.index is not None:
            if isinstance(value, (cst.Tuple, cst.List)):
                elements = value.elements
                if binding.index < len(elements) and not any(isinstance(e, cst.StarredElement) for e in elements):
                    return self.expr(elements[binding.index].value, frame, binding.order)
            if isinstance(value, cst.Call):
                helper = self._helper(value, frame)
                if helper is not None:
                    return self._returns(helper[0], helper[1], binding.index)
        flow = self.expr(value, frame, binding.order)
        if type(value) is cst.List or type(value) is cst.Tuple:
            flow = combine([flow, *self._appended(binding)])
        return flow

    def _appended(self, binding: Binding) -> list[Flow]:
        """`xs = []` followed by `xs.append(value)` in the same function."""
        flows = []
        for site in self.f.calls_to(f"{binding.target}.append") + self.f.calls_to(f"{binding.target}.extend"):
            if site.scope is binding.scope and site.order > binding.order:
                item = arg_value(site.node, 0)
                if item is not None:
                    flows.append(self.expr(item, self.frame_for(site.scope, 1), site.order))
        return flows

    # ----- expressions
    def expr(self, expr: cst.BaseExpression | None, frame: Frame, order: int) -> Flow:
        if expr is None:
            return NONE
        if type(expr) is cst.Name:
            if expr.value in ("True", "False", "None"):
                return NONE
            return self.name(expr.value, frame, order)
        if type(expr) is cst.Attribute:
            return self._attribute(expr, frame, order)
        if type(expr) in _LITERAL_TYPES:  # (exact types: a failed isinstance costs an ABC check)
            return NONE
        if isinstance(expr, cst.BinaryOperation):
            return combine([self.expr(expr.left, frame, order), self.expr(expr.right, frame, order)])
        if isinstance(expr, cst.UnaryOperation):
            inner = self.expr(expr.expression, frame, order)
            if isinstance(expr.operator, cst.Not):
                return self._cut(inner, expr, "`not`", expr.expression)
            return inner
        if isinstance(expr, cst.Comparison):
            parts = [self.expr(expr.left, frame, order)]
            parts += [self.expr(c.comparator, frame, order) for c in expr.comparisons]
            flow = combine(parts)
            return self._cut(flow, expr, f"the comparison `{render(expr)}`", expr.left)
        if isinstance(expr, cst.BooleanOperation):
            return combine([self.expr(expr.left, frame, order), self.expr(expr.right, frame, order)])
        if isinstance(expr, cst.IfExp):
            return combine([self.expr(expr.body, frame, order), self.expr(expr.orelse, frame, order)])
        if isinstance(expr, cst.Subscript):
            # An index carries no gradient: `labels[order]` with `order` computed from the model's
            # output depends on the weights only through a cut.
            indices = [self.expr(e.slice.value, frame, order) for e in expr.slice
                       if isinstance(e.slice, cst.Index)]
            index = combine(indices)
            if index.state == State.CONNECTED:
                first = expr.slice[0].slice
                index = self._cut(index, expr, f"the index `{render(first)}`",
                                  first.value if isinstance(first, cst.Index) else None)
            if index.state == State.CUT:
                return combine([self.expr(expr.value, frame, order), index])
            return self.expr(expr.value, frame, order)
        if type(expr) is cst.List or type(expr) is cst.Tuple or type(expr) is cst.Set:
            return combine([self.expr(e.value, frame, order) for e in expr.elements])
        if type(expr) is cst.Dict:
            return combine([self.expr(e.value, frame, order) for e in expr.elements])
        if type(expr) is cst.ListComp or type(expr) is cst.GeneratorExp or type(expr) is cst.SetComp:
            return self._comprehension(expr.for_in, [expr.elt], frame, order)
        if isinstance(expr, cst.DictComp):
            return self._comprehension(expr.for_in, [expr.value], frame, order)
        if isinstance(expr, cst.NamedExpr):
            return self.expr(expr.value, frame, order)
        if isinstance(expr, cst.Call):
            return self.call(expr, frame, order)
        return UNKNOWN

    def _comprehension(self, for_in: cst.CompFor, elts: list[cst.BaseExpression], frame: Frame, order: int) -> Flow:
        fixed = dict(frame.fixed)
        current: cst.CompFor | None = for_in
        iters = []
        while current is not None:
            flow = self.expr(current.iter, Frame(frame.scope, frame.args, fixed, frame.depth), order)
            iters.append(flow)
            for target in _names(current.target):
                fixed[target] = flow
            current = current.inner_for_in
        inner = Frame(frame.scope, frame.args, fixed, frame.depth)
        return combine([self.expr(e, inner, order) for e in elts])

    def _attribute(self, expr: cst.Attribute, frame: Frame, order: int) -> Flow:
        name = dotted(expr)
        if expr.attr.value in NO_GRADIENT_ATTRIBUTES:
            return NONE
        if expr.attr.value in WEIGHT_ATTRIBUTES:
            return CONNECTED
        if name is not None:
            if frame.depth == 0 and name in self.connected:
                return CONNECTED
            if self.f.resolve(expr) is not None:
                return NONE  # a module constant: tf.float32, np.pi
            if self.f.visible_bindings(name, frame.scope):
                return self.name(name, frame, order)
            if name.startswith("self."):
                return UNKNOWN
        return self.expr(expr.value, frame, order)

    @staticmethod
    def _cut(flow: Flow, node: cst.CSTNode, op: str, value: cst.CSTNode | None) -> Flow:
        if flow.state == State.CONNECTED:
            return Flow(State.CUT, node, op, value)
        return flow

    def _args(self, call: cst.Call, frame: Frame, order: int) -> Flow:
        flows = []
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in INDEX_KEYWORDS:
                continue
            flows.append(self.expr(arg.value, frame, order))
        return combine(flows)

    # ----- calls
    def call(self, call: cst.Call, frame: Frame, order: int) -> Flow:
        f = self.f
        func = call.func
        if isinstance(func, cst.Call):
            return CONNECTED  # `Dense(8)(x)`, `Model(...)(x)`: a layer with weights
        qualified = f.resolve(func)
        if qualified is not None and not self._shadowed(func, frame, order):
            return self._library_call(call, qualified, frame, order)
        name = dotted(func)
        if isinstance(func, cst.Name) and name is not None:
            return self._name_call(call, name, frame, order)
        if isinstance(func, cst.Attribute):
            return self._method_call(call, func, frame, order)
        return UNKNOWN

    def _shadowed(self, func: cst.BaseExpression, frame: Frame, order: int) -> bool:
        head = (dotted(func) or "").split(".")[0]
        return bool(head) and bool(self.f.visible_bindings(head, frame.scope)) or self.f.is_param(head, frame.scope)

    def _library_call(self, call: cst.Call, qualified: str, frame: Frame, order: int) -> Flow:
        if qualified in CUT_OPS:
            first = arg_value(call, 0)
            args = self._args(call, frame, order)
            return self._cut(args, call, f"`{CUT_OPS[qualified]}`", first)
        if qualified in NO_GRAD_OPS:
            return NONE
        if qualified in CAST_OPS:
            dtype = integer_dtype(self.f, arg_value(call, 1, "dtype"))
            first = arg_value(call, 0, "x")
            flow = self.expr(first, frame, order)
            if dtype is not None:
                return self._cut(flow, call, f"`{qualified.replace('tensorflow.', 'tf.')}` to `{dtype}`", first)
            return flow
        if qualified.startswith(("numpy.", "math.", "scipy.", "pandas.")):
            first = arg_value(call, 0)
            return self._cut(self._args(call, frame, order), call, f"`{render(call.func)}`", first)
        if qualified in ("tensorflow.Variable", "keras.Variable", "keras.backend.variable"):
            return CONNECTED
        if qualified.startswith(("tensorflow.", "keras.")):
            if qualified.startswith(("keras.layers.", "keras.applications.", "keras.models.")) \
                    or qualified in MODEL_CLASSES:
                return NONE  # constructing an object; calling it is what carries weights
            return self._args(call, frame, order)
        return UNKNOWN

    def _name_call(self, call: cst.Call, name: str, frame: Frame, order: int) -> Flow:
        f = self.f
        bound = f.visible_bindings(name, frame.scope) or f.is_param(name, frame.scope)
        if not bound and name in frame.fixed:
            bound = True
        if not bound:
            if name in BUILTIN_CUTS:
                first = arg_value(call, 0)
                return self._cut(self._args(call, frame, order), call, f"`{name}()`", first)
            if name in BUILTIN_COMBINE:
                return self._args(call, frame, order)
            if name in BUILTIN_NONE:
                return NONE
            if name in f.functions:
                return self._returns(*self._enter(f.functions[name], call, frame, order))
            if name in f.classes:
                return NONE  # constructing an object
            return UNKNOWN
        binding = last_assignment(f, name, frame.scope, order)
        if binding is not None and isinstance(binding.value, cst.Call) and binding.index is None:
            qualified = f.resolve(binding.value.func)
            if qualified and qualified.startswith(("keras.losses.", "keras.metrics.")):
                return self._args(call, frame, order)
        if binding is not None and binding.index is None and binding.value is not None:
            qualified = f.resolve(binding.value)
            if qualified and qualified.startswith(("keras.losses.", "keras.metrics.", "tensorflow.")):
                return self._args(call, frame, order)
            alias = dotted(binding.value)
            if alias in f.functions and not f.visible_bindings(alias, binding.scope):
                return self._returns(*self._enter(f.functions[alias], call, frame, order))
        if self.others is not None and self.others(call.func, frame.scope, order):
            return self._args(call, frame, order)
        return CONNECTED  # a model, a layer, or a callable we cannot see into

    def _method_call(self, call: cst.Call, func: cst.Attribute, frame: Frame, order: int) -> Flow:
        f = self.f
        method = func.attr.value
        receiver = func.value
        if method in TENSOR_EXITS and not call.args:
            return self._cut(self.expr(receiver, frame, order), call, f"`.{method}()`", receiver)
        if method in PREDICT_METHODS and not self._plain_object(receiver, frame, order):
            return Flow(State.CUT, call, f"`{render(func)}()`", receiver)
        if isinstance(receiver, cst.Name) and receiver.value == "self" and frame.scope.class_name:
            cls = f.classes.get(frame.scope.class_name)
            if method == "call":
                return CONNECTED
            if cls is not None and method in cls.methods:
                return self._returns(*self._enter(cls.methods[method], call, frame, order))
            if method in LOSS_METHODS:
                return self._args(call, frame, order)
        name = dotted(func)
        if name is not None and f.visible_bindings(name, frame.scope):
            binding = last_assignment(f, name, frame.scope, order)
            if binding is not None and isinstance(binding.value, cst.Call) and binding.index is None:
                qualified = f.resolve(binding.value.func)
                if qualified and qualified.startswith(("keras.losses.", "keras.metrics.")):
                    return self._args(call, frame, order)
            if binding is not None and binding.value is not None and binding.index is None:
                qualified = f.resolve(binding.value)
                if qualified and qualified.startswith(("keras.losses.", "keras.metrics.")):
                    return self._args(call, frame, order)
            if self.others is not None and self.others(func, frame.scope, order):
                return self._args(call, frame, order)
            return CONNECTED
        if isinstance(receiver, cst.Name) and receiver.value == "self":
            return CONNECTED  # `self.encoder(x)`: a sub-layer
        base = self.expr(receiver, frame, order)
        if base.state == State.CUT:
            return base  # a method of a NumPy value
        if base.state == State.CONNECTED:
            return CONNECTED
        return UNKNOWN

    # ----- helpers of the module
    def _helper(self, call: cst.Call, frame: Frame) -> tuple[Scope, Frame] | None:
        func = call.func
        if isinstance(func, cst.Name) and func.value in self.f.functions and not (
            self.f.visible_bindings(func.value, frame.scope) or self.f.is_param(func.value, frame.scope)
        ):
            return self.f.functions[func.value], frame
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                and frame.scope.class_name):
            cls = self.f.classes.get(frame.scope.class_name)
            if cls is not None and func.attr.value in cls.methods:
                return cls.methods[func.attr.value], frame
        return None

    def _enter(self, scope: Scope, call: cst.Call, frame: Frame, order: int) -> tuple[Scope, Frame]:
        params = list(scope.params)
        if scope.class_name is not None and params and params[0] in ("self", "cls"):
            params = params[1:]
        args: dict[str, tuple[cst.BaseExpression, Frame, int]] = {}
        for param in params:
            value = arg_value(call, params.index(param), param)
            if value is not None:
                args[param] = (value, frame, order)
        return scope, Frame(scope, args, {}, frame.depth + 1)

    def _returns(self, scope: Scope, frame: Frame, index: int | None = None) -> Flow:
        if frame.depth > 12:
            return UNKNOWN
        if frame.scope is not scope:
            frame = self.frame_for(scope, frame.depth + 1)
        flows = []
        for ret in self.f.returns_of(scope):
            value = ret.value
            if index is not None and isinstance(value, (cst.Tuple, cst.List)):
                if index < len(value.elements):
                    flows.append(self.expr(value.elements[index].value, frame, ret.order))
                    continue
            flows.append(self.expr(value, frame, ret.order))
        if scope.node is not None and any(isinstance(node, (cst.Yield,)) for node in iter_nodes(scope.node)):
            return UNKNOWN
        return combine(flows)



    def _plain_object(self, receiver: cst.BaseExpression, frame: Frame, order: int) -> bool:
        """Is the receiver an object of a class of this module that is not a Keras model (its own
        `predict` is ordinary, differentiable code)?"""
        found = values_of(self.f, receiver, frame.scope, order)
        return bool(found) and all(v.kind is Kind.INSTANCE for v in found)


def _names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        found = []
        for element in target.elements:
            found.extend(_names(element.value))
        return found
    return []


def gradient_flow(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int,
                  connected: frozenset[str] = frozenset(), others: Callable[..., bool] | None = None) -> Flow:
    """The gradient state of `expr` read at `order` in `scope`. Names in `connected` (watched tensors,
    the gradient's own sources) count as differentiable leaves; calls of models that `others` accepts
    pass their input's gradient but are no leaves."""
    flow = _Flow(facts, connected, others)
    try:
        flow.warm_up(scope, order, names_in(expr))
        return flow.expr(expr, flow.frame_for(scope, 0), order)
    except RecursionError:
        return UNKNOWN


def flow_of_binding(facts: Facts, binding: Binding, connected: frozenset[str] = frozenset(),
                    others: Callable[..., bool] | None = None) -> Flow:
    flow = _Flow(facts, connected, others)
    try:
        read = binding.value if binding.value is not None else facts.loop_bindings.get(id(binding))
        flow.warm_up(binding.scope, binding.order, [*names_in(read), binding.target])
        return flow.binding(binding, flow.frame_for(binding.scope, 0))
    except RecursionError:
        return UNKNOWN


def _prefixes(name: str) -> list[str]:
    """`a.b.c` -> `a.b.c`, `a.b`, `a`: a read of an attribute reads what its owner is bound to."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def names_in(expr: cst.CSTNode | None) -> set[str]:
    """Dotted names read by an expression (not attribute tails, not keyword names)."""
    return set(names_in_order(expr))


def names_in_order(expr: cst.CSTNode | None) -> list[str]:
    """`names_in`, in the order the source reads them, so that a message naming one of them is the same
    on every run (a set's order changes with the hash seed)."""
    found: dict[str, None] = {}
    if expr is None:
        return []
    # An explicit stack, children pushed last-first, reads them in source order. (A recursive inner
    # function would be a reference cycle that keeps the tree alive until the cyclic collector runs.)
    # Exact type tests (these libcst classes have no subclasses): a failed `isinstance` against a libcst
    # class goes through ABCMeta, four times for every node of every expression asked about.
    pending: list[cst.CSTNode] = [expr]
    while pending:
        node = pending.pop()
        kind = type(node)
        if type(node) is cst.Attribute:
            name = dotted(node)
            if name is not None:
                found[name] = None
                found[name.split(".")[0]] = None
            else:
                pending.append(node.value)
        elif kind is cst.Name:
            found[node.value] = None  # type: ignore[attr-defined]
        elif kind is cst.Arg:
            pending.append(node.value)  # type: ignore[attr-defined]
        elif kind is not cst.Lambda:
            pending.extend(reversed(child_nodes(node)))
    return list(found)


def contains(tree: cst.CSTNode | None, node: cst.CSTNode) -> bool:
    return tree is not None and walk_contains(tree, node)

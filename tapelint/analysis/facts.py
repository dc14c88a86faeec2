"""One traversal that records what rules ask about a file: scopes, bindings, calls, tapes, returns.

Rules never walk the tree for these questions themselves; they query `Facts`, computed once per
file. Document order (`order`) lets rules say "before" and "after" without positions.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Hashable, Iterator, TypeVar, cast

import libcst as cst

from tapelint.analysis.names import ImportMap, dotted
from tapelint.analysis.vocabulary import TAPE_CLASSES
from tapelint.analysis.walk import reversed_field_names, walk_tables, wanted

GRADIENT_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian"})
TF_FUNCTION = frozenset({"tensorflow.function", "tensorflow.compat.v1.function"})
T = TypeVar("T")

SPAN_NODES = (cst.For, cst.While, cst.If, cst.IndentedBlock, cst.Else, cst.SimpleStatementSuite, cst.Return,
              cst.Raise, cst.Break, cst.Continue, cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Try)


@dataclass(eq=False)
class Scope:
    """A function body, or the module (node is None)."""

    node: cst.FunctionDef | None
    name: str
    class_name: str | None
    parent: "Scope | None"
    params: list[str] = field(default_factory=list)
    decorators: list[str] = field(default_factory=list)
    is_tf_function: bool = False
    order: int = 0
    end_order: int = 1 << 60
    # Where the body begins: decorators, defaults and annotations (between `order` and here) belong to the
    # enclosing scope.
    body_order: int = 0

    @property
    def is_module(self) -> bool:
        return self.node is None

    @property
    def simple_name(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    def chain(self) -> Iterator["Scope"]:
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent

    def contains(self, other: "Scope") -> bool:
        scope: Scope | None = other
        while scope is not None:
            if scope is self:
                return True
            scope = scope.parent
        return False

    @cached_property
    def declared_outside(self) -> frozenset[str]:
        """Names the function declares `global` or `nonlocal` at the top level of its body."""
        node = self.node
        if node is None or not isinstance(node.body, cst.IndentedBlock):
            return frozenset()
        names: set[str] = set()
        for statement in node.body.body:
            if type(statement) is cst.SimpleStatementLine:
                for small in statement.body:
                    if type(small) is cst.Global or type(small) is cst.Nonlocal:
                        names.update(n.name.value for n in small.names)
        return frozenset(names)


@dataclass(eq=False)
class TapeBlock:
    name: str | None
    persistent: bool
    node: cst.With
    call: cst.Call
    scope: Scope
    order: int
    end_order: int = 1 << 60
    loop_depth: int = 0

    def encloses(self, order: int) -> bool:
        return self.order < order < self.end_order


@dataclass(eq=False, slots=True)
class Binding:
    target: str
    value: cst.BaseExpression | None
    index: int | None
    scope: Scope
    order: int
    node: cst.CSTNode
    target_node: cst.BaseExpression
    loop_depth: int = 0
    in_tapes: tuple[TapeBlock, ...] = ()
    augmented: bool = False
    # Set for a name bound directly in a class body: a class attribute, not a variable of `scope`.
    class_body: str | None = None
    # Set for a comprehension's `for` target: [order, end order] of the comprehension, the only
    # place where that name is visible.
    comprehension: list[int] | None = None

    # Where the bound value comes from when unpacked: indices into `source` (or the loop's items).
    path: tuple[int, ...] = ()
    source: cst.BaseExpression | None = None
    # The order after the whole statement: reads in its own right-hand side (`x = f(x)`) come before.
    ready: int = -1

    def __post_init__(self) -> None:
        if self.ready < 0:
            self.ready = self.order

    def visible_at(self, order: int) -> bool:
        return self.comprehension is None or self.comprehension[0] < order <= self.comprehension[1]


@dataclass(eq=False, slots=True)
class Store:
    """A value assigned to a target that is not a name or attribute chain (`d["gen"] = opt`)."""

    target: cst.BaseExpression
    value: cst.BaseExpression
    path: tuple[int, ...]
    scope: "Scope"
    order: int
    # Set for an augmented store (`acc[i] += g`): its operator (`cst.AddAssign`, ...).
    operator: cst.BaseAugOp | None = None


@dataclass(eq=False, slots=True)
class CallSite:
    node: cst.Call
    scope: Scope
    order: int
    func: str | None
    qualified: str | None
    tapes: tuple[TapeBlock, ...]
    loop_depth: int
    # `opt.apply_gradients(...)`: "apply_gradients" and "opt" (None when the callee is no attribute, or its
    # object is no plain name chain). Set by the collector, which has already spelled the callee out.
    method: str | None = None
    receiver: str | None = None


@dataclass(eq=False, slots=True)
class ImportSite:
    """One `import ...` or `from ... import ...` statement, where it runs."""

    node: cst.Import | cst.ImportFrom
    scope: "Scope"
    order: int


@dataclass(eq=False, slots=True)
class ReturnSite:
    value: cst.BaseExpression | None
    scope: Scope
    order: int


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    name: str
    bases: list[str]
    methods: dict[str, Scope] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class NameUse:
    name: str
    scope: Scope
    order: int
    node: cst.BaseExpression  # a Name, an Attribute, or an annotated assignment's target


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def arg_value(call: cst.Call, position: int | None, keyword: str | None = None) -> cst.BaseExpression | None:
    """The expression passed by keyword, else at `position` among positional arguments."""
    if keyword is not None:
        kw = _keyword(call, keyword)
        if kw is not None:
            return kw.value
    if position is None:
        return None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position < len(positional):
        return positional[position].value
    return None


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    return _keyword(call, name)


# Exact node types (SPAN_NODES are concrete classes), for a set lookup instead of isinstance per node.
_SPAN_TYPES = frozenset(SPAN_NODES)
# The nodes that open a scope of their own, for walks that stay in one body (tested by exact type).
DEFINITION_TYPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})
_METHODS: dict[tuple[type, type, str], str | None] = {}
_UNSEEN = object()
# A visitor's `visit_<Type>` or `leave_<Type>`, bound; None: it has none worth calling.
_Method = Callable[[cst.CSTNode], object]


def _not_looked_up(node: cst.CSTNode) -> object:
    """Stands in a table of methods for one not looked up yet (a sentinel of the methods' type)."""
    raise AssertionError("a method that was never looked up")


def _dispatch(visitor: object, cls: type, prefix: str) -> _Method | None:
    """The visitor's `visit_<Type>`/`leave_<Type>` method, looked up once per node type, not per node."""
    key = (type(visitor), cls, prefix)
    name = _METHODS.get(key, "")
    if name == "":
        candidate = prefix + cls.__name__
        func = getattr(type(visitor), candidate, None)
        useful = callable(func) and not getattr(func, "_is_no_op", False)
        name = _METHODS[key] = candidate if useful else None
    return getattr(visitor, name) if name else None


class _Collector(cst.CSTVisitor):
    def __init__(self, facts: "Facts") -> None:
        super().__init__()
        self.f = facts
        self.order = 0
        self.scopes: list[Scope] = [facts.module_scope]
        self.tapes: list[TapeBlock] = []
        self.loop_depth: list[int] = [0]
        self.class_stack: list[ClassInfo] = []
        self.skip_names: set[int] = set()
        self.open_withs: dict[int, list[TapeBlock]] = {}
        self.containers: list[str] = []
        self.comprehensions: list[list[int]] = []
        self.element_ends: dict[int, list[int]] = {}  # id(first CompFor) -> its comprehension's element part
        self.pending: list[int] = []
        self.right_operands: dict[int, list[int]] = {}
        # id(attribute) -> its dotted spelling (or None), spelled by the call or attribute just outside it,
        # which the walk visits first: `a.b.c` is spelled once, not once per attribute of the chain.
        self.chains: dict[int, str | None] = {}
        self.open_ands: dict[int, list[int]] = {}
        self.bodies: dict[int, Scope] = {}  # id(a function's body) -> the scope it opens
        self.top_statement = facts.top_statement
        self.spans = facts.spans

    def run(self, root: cst.CSTNode) -> None:
        """Depth-first in source order, like `walk(root, visitor)` with the visitor's `on_visit`/`on_leave`
        written into the loop (it runs for every node of every analysed file; two method calls per node
        were a tenth of it). Every node gets an order number, so "before"/"after" questions are cheap, and
        the index of the top-level statement that holds it, for positions computed one statement at a time."""
        # Local tables of bound methods: kept on the collector they would make it a reference cycle, which
        # keeps the whole tree alive after the lint until the cyclic collector happens to run.
        visitors: dict[type, _Method | None] = {}
        leavers: dict[type, _Method | None] = {}
        if type(root) is not cst.Module:
            self._run(root, -1, visitors, leavers)
            return
        # The module itself (it has no visit or leave method, and is no span), then each top-level
        # statement as a root of its own: its index is the `top_statement` of every node in it.
        self.order += 1
        self.top_statement[id(root)] = -1
        for index, statement in enumerate(root.body):
            self._run(statement, index, visitors, leavers)

    def _run(self, root: cst.CSTNode, top: int, visitors: dict[type, _Method | None],
             leavers: dict[type, _Method | None]) -> None:
        stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
        pop, push = stack.pop, stack.append
        top_statement, spans = self.top_statement, self.spans
        span_types = _SPAN_TYPES
        fields, wanted_types = walk_tables()
        right_operands = self.right_operands
        # The order counter lives in a local; `self.order` is brought up to date before a visit or leave
        # method runs, since those record it.
        order = self.order
        while stack:
            node, leaving = pop()
            cls = type(node)
            if not leaving:
                order += 1
                key = id(node)
                top_statement[key] = top
                if right_operands:
                    entry = right_operands.pop(key, None)
                    if entry is not None:
                        entry[2] = order - 1
                if cls in span_types:
                    spans[key] = [node, order, order]
                visit = visitors.get(cls, _not_looked_up)
                if visit is _not_looked_up:
                    visit = visitors[cls] = _dispatch(self, cls, "visit_")
                    leavers[cls] = _dispatch(self, cls, "leave_")
                if visit is not None:
                    self.order = order
                if visit is None or visit(node) is not False:
                    # A node is met again on the way back only when it has a leave method or a span to
                    # close (most have neither).
                    if cls in span_types or leavers[cls] is not None:
                        push((node, True))
                    # The children, last first, pushed straight from the fields (`child_nodes` inlined).
                    names = fields.get(cls)
                    if names is None:
                        names = reversed_field_names(cls)
                    for name in names:
                        value = getattr(node, name)
                        value_cls = type(value)
                        if value_cls is tuple or value_cls is list:
                            for item in reversed(value):
                                enter = wanted_types.get(type(item))
                                if enter is None:
                                    enter = wanted(type(item))
                                if enter:
                                    push((item, False))
                        else:
                            enter = wanted_types.get(value_cls)
                            if enter is None:
                                enter = wanted(value_cls)
                            if enter:
                                push((value, False))
                    continue
            # leaving (a visit skipped the children, or the node's children are done)
            if cls in span_types:
                span = spans.get(id(node))
                if span is not None:
                    span[2] = order
            leave = leavers[cls]
            if leave is not None:
                self.order = order
                leave(node)
        self.order = order

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    # ----- imports
    # Imports hold no reads or calls: do not descend into them.
    def visit_Import(self, node: cst.Import) -> bool:
        self.f.imports.add_import(node)
        self.f.import_sites.append(ImportSite(node, self.scope, self.order))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        self.f.imports.add_import_from(node)
        self.f.import_sites.append(ImportSite(node, self.scope, self.order))
        return False

    # ----- scopes
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.skip_names.add(id(node.name))
        bases = []
        for arg in node.bases:
            resolved = self.f.imports.resolve(arg.value) or dotted(arg.value) or ""
            bases.append(resolved)
        info = ClassInfo(node, node.name.value, bases)
        self.f.classes[node.name.value] = info
        self.class_stack.append(info)
        self.containers.append("class")

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.class_stack.pop()
        self.containers.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.skip_names.add(id(node.name))
        parent = self.scope
        cls = self.class_stack[-1] if self.containers and self.containers[-1] == "class" else None
        qual = f"{cls.name}.{node.name.value}" if cls else (
            node.name.value if parent.is_module else f"{parent.name}.{node.name.value}"
        )
        params = []
        for p in [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]:
            params.append(p.name.value)
            self.skip_names.add(id(p.name))
        for star in (node.params.star_arg, node.params.star_kwarg):
            if type(star) is cst.Param:
                self.skip_names.add(id(star.name))
        decorators = []
        for dec in node.decorators:
            expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
            decorators.append(self.f.imports.resolve(expr) or dotted(expr) or "")
        scope = Scope(
            node=node,
            name=qual,
            class_name=cls.name if cls else None,
            parent=parent,
            params=params,
            decorators=decorators,
            is_tf_function=any(d in TF_FUNCTION for d in decorators),
            order=self.order,
        )
        self.f.scopes.append(scope)
        if cls is not None:
            cls.methods[node.name.value] = scope
        elif parent.is_module:
            self.f.functions[node.name.value] = scope
            self.f.definitions.setdefault(node.name.value, []).append(scope)
        # Decorators, default values and annotations run once, when `def` runs, in the enclosing scope:
        # the function's own scope opens with its body.
        self.bodies[id(node.body)] = scope

    def _open_body(self, node: cst.BaseSuite) -> None:
        scope = self.bodies.pop(id(node), None)
        if scope is not None:
            scope.body_order = self.order
            self.scopes.append(scope)
            self.loop_depth.append(0)
            self.containers.append("function")

    visit_IndentedBlock = visit_SimpleStatementSuite = _open_body

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scope.end_order = self.order
        self.scopes.pop()
        self.loop_depth.pop()
        self.containers.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        for p in node.params.params:
            self.skip_names.add(id(p.name))

    # ----- expression statements: `f(x)` whose value nobody keeps
    def visit_Expr(self, node: cst.Expr) -> None:
        self.f.statement_values.add(id(node.value))

    # ----- `a and b`: [order, end order, last order of the left operand]
    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if isinstance(node.operator, cst.And):
            entry = [self.order, 1 << 60, 1 << 60]
            self.f.boolean_ands.append(entry)
            self.right_operands[id(node.right)] = entry
            self.open_ands[id(node)] = entry

    def leave_BooleanOperation(self, original_node: cst.BooleanOperation) -> None:
        entry = self.open_ands.pop(id(original_node), None)
        if entry is not None:
            entry[1] = self.order

    # ----- loops
    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, None, node, from_loop=node.iter)
        self.loop_depth[-1] += 1

    def leave_For(self, original_node: cst.For) -> None:
        self.loop_depth[-1] -= 1

    def visit_While(self, node: cst.While) -> None:
        self.loop_depth[-1] += 1

    def leave_While(self, original_node: cst.While) -> None:
        self.loop_depth[-1] -= 1

    def visit_CompFor(self, node: cst.CompFor) -> None:
        part = self.element_ends.pop(id(node), None)
        if part is not None:
            part[1] = self.order - 1  # the comprehension's element ends where its first `for` begins
        self._bind_target(node.target, None, node, from_loop=node.iter)

    # Comprehension targets live in the comprehension's own scope (Python 3).
    def _open_comprehension(self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp) -> None:
        element = getattr(node, "elt", None)
        if element is not None:
            self.f.comprehension_of_element[id(element)] = node
        span = [self.order, 1 << 60]
        self.comprehensions.append(span)
        self.f.comprehension_spans[id(node)] = span
        part = [self.order, 1 << 60]
        self.f.comprehension_elements.append(part)
        self.element_ends[id(node.for_in)] = part

    def _close_comprehension(
            self, original_node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp) -> None:
        self.comprehensions.pop()[1] = self.order

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _open_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _close_comprehension

    # ----- with GradientTape
    def visit_With(self, node: cst.With) -> None:
        blocks: list[TapeBlock] = []
        for item in node.items:
            entered = None
            if isinstance(item.item, cst.Call):
                call = item.item
            else:
                # `tape = tf.GradientTape(persistent=True)` ... `with tape:`
                entered = dotted(item.item)
                bound = self._tape_bound_to(entered) if entered else None
                if bound is None:
                    continue
                call = bound
            qualified = self.f.imports.resolve(call.func)
            if qualified not in TAPE_CLASSES:
                continue
            name = entered
            if item.asname is not None:
                name = dotted(item.asname.name)
                if isinstance(item.asname.name, cst.Name):
                    self.skip_names.add(id(item.asname.name))
            persistent_arg = arg_value(call, 0, "persistent")
            persistent = isinstance(persistent_arg, cst.Name) and persistent_arg.value == "True"
            block = TapeBlock(
                name=name,
                persistent=persistent,
                node=node,
                call=call,
                scope=self.scope,
                order=self.order,
                loop_depth=self.loop_depth[-1],
            )
            blocks.append(block)
            self.f.tapes.append(block)
            if name is not None and item.asname is not None:
                self.f.bindings.append(
                    Binding(name, call, None, self.scope, self.order, node, item.asname.name, self.loop_depth[-1])
                )
        if blocks:
            self.open_withs[id(node)] = blocks
            self.tapes.extend(blocks)

    def _tape_bound_to(self, name: str) -> cst.Call | None:
        scopes = list(self.scope.chain())
        for binding in reversed(self.f.bindings):
            if binding.target == name and binding.index is None and any(binding.scope is s for s in scopes):
                value = binding.value
                if isinstance(value, cst.Call) and self.f.imports.resolve(value.func) in TAPE_CLASSES:
                    return value
                return None
        return None

    def leave_With(self, original_node: cst.With) -> None:
        blocks = self.open_withs.pop(id(original_node), None)
        if blocks:
            for block in blocks:
                block.end_order = self.order
                self.tapes.pop()

    # ----- bindings
    def visit_Assign(self, node: cst.Assign) -> None:
        self.pending.append(len(self.f.bindings))
        for target in node.targets:
            self._bind_target(target.target, node.value, node)

    def _ready(self, original_node: cst.CSTNode) -> None:
        for binding in self.f.bindings[self.pending.pop():]:
            if binding.node is original_node:
                binding.ready = self.order

    leave_Assign = _ready

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.pending.append(len(self.f.bindings))
        if node.value is not None:
            self._bind_target(node.target, node.value, node)

    leave_AnnAssign = _ready

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.pending.append(len(self.f.bindings))
        name = dotted(node.target)
        if name is not None:
            self.f.bindings.append(
                Binding(name, node.value, None, self.scope, self.order, node, node.target,
                        self.loop_depth[-1], tuple(self.tapes), augmented=True)
            )
            self.f.name_uses.append(NameUse(name, self.scope, self.order, node.target))
        else:
            # `acc[i] += g`: kept apart from `stores`, which hold plain assignments only.
            self.f.augmented_stores.append(
                Store(node.target, node.value, (), self.scope, self.order, operator=node.operator))

    leave_AugAssign = _ready

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node.value, node)

    def _bind_target(self, target: cst.BaseExpression, value: cst.BaseExpression | None,
                     stmt: cst.CSTNode, from_loop: cst.BaseExpression | None = None) -> None:
        if type(target) is cst.Tuple or type(target) is cst.List:
            self._unpack(target, value, (), stmt, from_loop)
        else:
            self._record(target, value, None, stmt, from_loop, (), value)

    def _unpack(self, target: cst.Tuple | cst.List, value: cst.BaseExpression | None, path: tuple[int, ...],
                stmt: cst.CSTNode, from_loop: cst.BaseExpression | None) -> None:
        starred = False
        for index, element in enumerate(target.elements):
            inner = element.value
            if type(element) is cst.StarredElement:
                starred = True
            if type(inner) is cst.Tuple or type(inner) is cst.List:
                self._unpack(inner, value, (*path, index), stmt, from_loop)
                continue
            # Positions after a starred target are not known from the left.
            where = (*path, -1 if starred else index)
            # `index`/`value` keep their one-level meaning; `path`/`source` describe nested unpacking.
            self._record(inner, value if not path else None, index if not path else None, stmt, from_loop,
                         where, value)

    def _record(self, target: cst.BaseExpression, value: cst.BaseExpression | None, index: int | None,
                stmt: cst.CSTNode, from_loop: cst.BaseExpression | None, path: tuple[int, ...] = (),
                source: cst.BaseExpression | None = None) -> None:
        name = dotted(target)
        if name is None:
            # `d[key] = value`, `obj.items[0] = value`: the value is stored where names cannot follow.
            if source is not None:
                self.f.stores.append(Store(target, source, path, self.scope, self.order))
            return
        if type(target) is cst.Name:
            self.skip_names.add(id(target))
        binding = Binding(
            name, value, index, self.scopes[-1], self.order, stmt, target, self.loop_depth[-1], tuple(self.tapes)
        )
        binding.path = path
        binding.source = source
        if type(stmt) is cst.CompFor and self.comprehensions:
            binding.comprehension = self.comprehensions[-1]
        elif self.containers and self.containers[-1] == "class" and "." not in name:
            binding.class_body = self.class_stack[-1].name
        if from_loop is not None:
            self.f.loop_bindings[id(binding)] = from_loop
        self.f.bindings.append(binding)

    # ----- uses
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.skip_names.add(id(node.attr))
        # The chain's spelling, when the call or the attribute around it has spelled it already.
        spelled = self.chains.pop(id(node), _UNSEEN)
        name = dotted(node) if spelled is _UNSEEN else cast("str | None", spelled)
        if name is not None:
            self.f.name_uses.append(NameUse(name, self.scopes[-1], self.order, node))
            if type(node.value) is cst.Attribute:
                self.chains[id(node.value)] = name.rpartition(".")[0]

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.skip_names.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) in self.skip_names:
            return
        self.f.name_uses.append(NameUse(node.value, self.scopes[-1], self.order, node))

    def visit_Call(self, node: cst.Call) -> None:
        callee = node.func
        func = dotted(callee)
        site = CallSite(
            node,
            self.scopes[-1],
            self.order,
            func,
            self.f.imports.resolve_dotted(func) if func is not None else None,
            tuple(self.tapes),
            self.loop_depth[-1],
        )
        if type(callee) is cst.Attribute:
            self.chains[id(callee)] = func
            site.method = callee.attr.value
            # `a.b.m`: the receiver is the chain before the method; `f().m`: no chain, no receiver.
            site.receiver = func.rpartition(".")[0] if func is not None else None
        self.f.calls.append(site)
        self.f.call_by_node[id(node)] = site

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.f.binary_operations.append((self.order, node))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.f.comparisons.append((self.order, self.scopes[-1], node))

    def visit_Return(self, node: cst.Return) -> None:
        self.f.returns.append(ReturnSite(node.value, self.scope, self.order))


class Facts:
    """Everything recorded about one module, plus the lookups rules share."""

    def __init__(self, module: cst.Module, source: str | None = None) -> None:
        self.module = module
        self._source = source  # the text `module` was parsed from, when the caller has it
        self.imports = ImportMap()
        self.module_scope = Scope(node=None, name="<module>", class_name=None, parent=None)
        self.scopes: list[Scope] = [self.module_scope]
        self.functions: dict[str, Scope] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.bindings: list[Binding] = []
        self.loop_bindings: dict[int, cst.BaseExpression] = {}
        self.calls: list[CallSite] = []
        self.call_by_node: dict[int, CallSite] = {}
        # Control-flow nodes -> [node, order, end order], read by analysis/blocks.py.
        self.spans: dict[int, list] = {}
        self.tapes: list[TapeBlock] = []
        self.returns: list[ReturnSite] = []
        # (order, node) of every `a + b`, `a * b`, ... in document order
        self.binary_operations: list[tuple[int, cst.BinaryOperation]] = []
        # (order, scope, node) of every `a in b`, `a == b`, ... in document order
        self.comparisons: list[tuple[int, Scope, cst.Comparison]] = []
        # Every import statement, in document order, with the scope it runs in
        self.import_sites: list[ImportSite] = []
        self.stores: list[Store] = []
        self.augmented_stores: list[Store] = []  # `acc[i] += g`, `self.sums[k] *= 0`
        self.comprehension_spans: dict[int, list[int]] = {}
        # [order, last order] of each comprehension's element (`elt`, or a dict comprehension's key and
        # value): the orders of the nodes inside it, the comprehension's own order excluded.
        self.comprehension_elements: list[list[int]] = []
        self.boolean_ands: list[list[int]] = []
        self.statement_values: set[int] = set()  # ids of expressions evaluated as statements
        self.comprehension_of_element: dict[int, cst.CSTNode] = {}  # id(elt) -> its comprehension
        # Module-level functions by name, in document order: a notebook may define `train_step` twice.
        self.definitions: dict[str, list[Scope]] = {}
        self.name_uses: list[NameUse] = []
        # id(node) -> index in `module.body` of the top-level statement that holds it (-1: the module).
        self.top_statement: dict[int, int] = {}
        # Imports are usually at the top, but a late `import tensorflow as tf` inside a function must
        # still resolve calls made before it in document order: collect imports first.
        for stmt in module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if type(small) is cst.Import:
                        self.imports.add_import(small)
                    elif type(small) is cst.ImportFrom:
                        self.imports.add_import_from(small)
        _Collector(self).run(module)
        self._bindings_by_target: dict[str, list[Binding]] = {}
        for binding in self.bindings:
            self._bindings_by_target.setdefault(binding.target, []).append(binding)
        self._calls_by_func: dict[str, list[CallSite]] = {}
        for call in self.calls:
            if call.func is not None:
                self._calls_by_func.setdefault(call.func, []).append(call)
        self._cache: dict[Hashable, object] = {}
        # What other modules of the project import from this one, asked lazily (tapelint.project.imported_names,
        # handed in by the engine); unset for code that no module can import.
        self.importers: Callable[[], frozenset[str] | None] | None = None
        self._resolved: dict[int, tuple[object, str | None]] = {}
        # Scopes live as long as these facts, so their ids are stable keys.
        self._visible: dict[tuple[str, int], list[Binding]] = {}
        self._before: dict[tuple[str, int, int], Binding | None] = {}

    def imported_elsewhere(self) -> frozenset[str] | None:
        """The names of this module that other modules of its project import (`*`: the module itself, so any
        of them); empty when none does; None when that cannot be known (the project is too large to read)."""
        if self.importers is None:
            return frozenset()
        return self.cached("imported_elsewhere", self.importers)

    @property
    def code(self) -> str:
        """The module's text (generating it from the tree costs a quarter of the parse)."""
        if self._source is None:
            self._source = self.module.code
        return self._source

    # ----- name resolution
    def resolve(self, node: cst.BaseExpression | None) -> str | None:
        # Analyses ask again and again about the same callees (every layer, loss and metric question
        # resolves `call.func`): one answer per node. The imports are complete once the walk is done.
        # The node is kept with its answer: a node made on the fly and freed cannot pass its id on.
        entry = self._resolved.get(id(node))
        if entry is None or entry[0] is not node:
            entry = self._resolved[id(node)] = (node, self.imports.resolve(node))
        return entry[1]

    def call_site(self, node: cst.Call) -> CallSite | None:
        return self.call_by_node.get(id(node))

    def calls_to(self, func: str) -> list[CallSite]:
        return self._calls_by_func.get(func, [])

    def bindings_of(self, target: str) -> list[Binding]:
        return self._bindings_by_target.get(target, [])

    def _index(self, key: Hashable, build: Callable[[], T]) -> T:
        """`cached`, for an answer that is never None (an index): one look-up when it is there."""
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = build()
        return cast(T, found)

    def method_calls(self, receiver: str | None, method: str) -> list[CallSite]:
        """Calls `receiver.method(...)` in document order (`receiver` as `CallSite.receiver` spells it)."""

        def build() -> dict[tuple[str | None, str], list[CallSite]]:
            index: dict[tuple[str | None, str], list[CallSite]] = {}
            for call in self.calls:
                if call.method is not None:
                    index.setdefault((call.receiver, call.method), []).append(call)
            return index

        return self._index("calls_by_receiver_method", build).get((receiver, method), [])

    def calls_within(self, order: int, end_order: int) -> list[CallSite]:
        """Calls strictly between two orders (a block's inside), in document order."""
        orders = self._index("call_orders", lambda: [c.order for c in self.calls])
        return self.calls[bisect_right(orders, order):bisect_left(orders, end_order)]

    def bindings_in_scope(self, scope: Scope) -> list[Binding]:
        """The bindings made in `scope` (not in functions nested in it), in document order."""

        def build() -> dict[int, list[Binding]]:
            index: dict[int, list[Binding]] = {}
            for binding in self.bindings:
                index.setdefault(id(binding.scope), []).append(binding)
            return index

        return self._index("bindings_by_scope", build).get(id(scope), [])

    def bindings_in_class(self, class_name: str | None) -> list[Binding]:
        """The bindings made in the methods (and body) of classes named `class_name`, in document order."""

        def build() -> dict[str | None, list[Binding]]:
            index: dict[str | None, list[Binding]] = {}
            for binding in self.bindings:
                index.setdefault(binding.scope.class_name, []).append(binding)
            return index

        return self._index("bindings_by_class", build).get(class_name, [])

    def _bindings_by_target_class(self) -> dict[tuple[str, str | None], list[Binding]]:
        index: dict[tuple[str, str | None], list[Binding]] = {}
        for binding in self.bindings:
            index.setdefault((binding.target, binding.scope.class_name), []).append(binding)
        return index

    def bindings_here(self, target: str, scope: Scope) -> list[Binding]:
        """Bindings of `target` made in `scope` itself, in document order."""

        def build() -> dict[tuple[str, int], list[Binding]]:
            index: dict[tuple[str, int], list[Binding]] = {}
            for binding in self.bindings:
                index.setdefault((binding.target, id(binding.scope)), []).append(binding)
            return index

        return self._index("bindings_by_target_scope", build).get((target, id(scope)), [])

    def bindings_of_value(self, node: cst.CSTNode) -> list[Binding]:
        """The bindings whose right-hand side is exactly `node` (`x = node`, `a, b = node`)."""
        return self._index("bindings_by_value", self._bindings_by_value).get(id(node), [])

    def _bindings_by_value(self) -> dict[int, list[Binding]]:
        index: dict[int, list[Binding]] = {}
        for binding in self.bindings:
            if binding.value is not None:
                index.setdefault(id(binding.value), []).append(binding)
        return index

    def visible_bindings(self, target: str, scope: Scope) -> list[Binding]:
        """Bindings of `target` that a read in `scope` may see: the innermost scope that binds it.
        One answer per name and scope, kept (a read of a common name is asked about again and again): the
        list is shared, callers do not change it."""
        key = (target, id(scope))
        found = self._visible.get(key)
        if found is None:
            found = self._visible[key] = self._visible_bindings(target, scope)
        return found

    def _visible_bindings(self, target: str, scope: Scope) -> list[Binding]:
        if not self.bindings_of(target):
            return []
        # A class body's names are class attributes: plain reads elsewhere never see them.
        if target.startswith("self.") and scope.class_name is not None:
            # Classes often share attribute names (`self.dense`): an index per (name, class).
            by_class = self._index("bindings_by_target_class", self._bindings_by_target_class)
            return [b for b in by_class.get((target, scope.class_name), ()) if b.class_body is None]
        # Scope by scope, from the inside out (an index per scope: a common name has many bindings).
        for current in scope.chain():
            found = [b for b in self.bindings_here(target, current) if b.class_body is None]
            if found:
                return found
            if target.split(".")[0] in current.params:
                return []
        return []

    def binding_before(self, target: str, scope: Scope, order: int) -> Binding | None:
        """The binding of `target` a read at `order` in `scope` sees (last one before it). Kept per
        read: the same read is asked about by several analyses."""
        key = (target, id(scope), order)
        found = self._before.get(key, _UNSEEN)
        if found is _UNSEEN:
            found = self._before[key] = self._binding_before(target, scope, order)
        return cast("Binding | None", found)

    def _binding_before(self, target: str, scope: Scope, order: int) -> Binding | None:
        visible = [b for b in self.visible_bindings(target, scope) if b.visible_at(order)]
        if not visible:
            return None
        # Inside a comprehension its own target wins, wherever the read sits in it.
        own = [b for b in visible if b.comprehension is not None and b.scope is scope]
        if own:
            return own[-1]
        same_scope = [b for b in visible if b.scope is scope]
        if same_scope:
            before = [b for b in same_scope if b.ready < order]
            return before[-1] if before else None
        # A read from an inner function sees the enclosing scope's value when the function runs
        # (in a notebook, `model` may be rebound in a later cell for another experiment).
        outer = visible[-1].scope
        runs = self.runs_at(scope, outer)
        if runs:
            before = [b for b in visible if b.scope is outer and b.ready < runs[-1]]
            if before:
                return before[-1]
        return visible[-1]

    def runs_at(self, inner: Scope, outer: Scope) -> list[int]:
        """The orders in `outer` at which `inner` (a function nested in it) runs, when known: its
        call sites in `outer`, or those of the functions that call it. Empty when none is seen."""
        return self._index(("runs_at", id(inner), id(outer)), lambda: self._runs_at(inner, outer))

    def _runs_at(self, inner: Scope, outer: Scope) -> list[int]:
        function = inner
        while function.parent is not None and function.parent is not outer:
            function = function.parent
        orders: set[int] = set()
        pending, seen = [function], set[int]()
        while pending and len(seen) < 16:
            current = pending.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            for site in self.call_sites_of_scope(current):
                if site.scope is outer:
                    orders.add(site.order)
                elif not site.scope.is_module and site.scope.parent is outer:
                    pending.append(site.scope)
        return sorted(orders)

    def is_param(self, name: str, scope: Scope) -> bool:
        for current in scope.chain():
            if self.bindings_here(name, current):
                return False
            if name in current.params:
                return True
        return False

    def param_scope(self, name: str, scope: Scope) -> Scope | None:
        for current in scope.chain():
            if name in current.params:
                return current
        return None

    def call_sites_of_scope(self, scope: Scope) -> list[CallSite]:
        """Calls in this module that invoke the function or method `scope`."""
        if scope.is_module or scope.node is None:
            return []
        name = scope.simple_name
        if scope.class_name is not None:
            found = [c for c in self.calls_to(f"self.{name}") if c.scope.class_name == scope.class_name]
            if name == "__init__":
                found += self.calls_to(scope.class_name)  # `Trainer(model, opt)` runs `__init__`
            return found
        calls = self.calls_to(name)
        if not scope.parent or not scope.parent.is_module or len(self.definitions.get(name, ())) < 2:
            return list(calls)
        # Redefined (notebook cells): a call runs the definition last made before it.
        return [c for c in calls if self.function_at(name, c.order) is scope]

    def function_at(self, name: str, order: int) -> Scope | None:
        """The module-level function `name` in effect at `order` (the last `def` before it, else the
        first one: a function body may call one defined further down)."""
        defs = self.definitions.get(name)
        if not defs:
            return None
        before = [d for d in defs if d.order < order]
        return before[-1] if before else defs[0]

    def argument_for_param(self, call: cst.Call, scope: Scope, param: str) -> cst.BaseExpression | None:
        params = list(scope.params)
        if scope.class_name is not None and params and params[0] in ("self", "cls"):
            params = params[1:]
        if param not in params:
            return None
        return arg_value(call, params.index(param), param)

    def uses_after(self, name: str, scope: Scope, order: int) -> list[NameUse]:
        """Uses of `name` or of an attribute of it (`name.x`) after `order`, in `scope` or nested in it."""
        entry = self._index("uses_by_prefix", self._uses_by_prefix).get(name)
        if entry is None:
            return []
        orders, candidates = entry
        # A use in `scope` or in a function nested in it was recorded while `scope` was open: its order
        # lies in the scope's span, which bounds the candidates.
        end = bisect_right(orders, scope.end_order)
        return [use for use in candidates[bisect_right(orders, order):end]
                if use.scope is scope or scope.contains(use.scope)]

    def _uses_by_prefix(self) -> dict[str, tuple[list[int], list[NameUse]]]:
        """Each use under its name and every dotted prefix of it (`a.b.c` under `a`, `a.b`, `a.b.c`), in
        document order with the orders alongside for bisecting."""
        built: dict[str, tuple[list[int], list[NameUse]]] = {}
        for use in self.name_uses:
            prefix = use.name
            while True:
                entry = built.get(prefix)
                if entry is None:
                    entry = built[prefix] = ([], [])
                entry[0].append(use.order)
                entry[1].append(use)
                cut = prefix.rfind(".")
                if cut < 0:
                    break
                prefix = prefix[:cut]
        return built

    def uses_in_scope(self, scope: Scope) -> list[NameUse]:
        """The uses recorded in `scope` itself (not in functions nested in it), in document order."""

        def build() -> dict[int, list[NameUse]]:
            index: dict[int, list[NameUse]] = {}
            for use in self.name_uses:
                index.setdefault(id(use.scope), []).append(use)
            return index

        return self._index("uses_by_scope", build).get(id(scope), [])

    @cached_property
    def attribute_uses(self) -> list[NameUse]:
        """The uses that are attribute chains (`a.b`, `a.b.c` and its `a.b`), in document order."""
        return [use for use in self.name_uses if type(use.node) is cst.Attribute]

    def returns_of(self, scope: Scope) -> list[ReturnSite]:
        def build() -> dict[int, list[ReturnSite]]:
            index: dict[int, list[ReturnSite]] = {}
            for site in self.returns:
                index.setdefault(id(site.scope), []).append(site)
            return index

        return list(self._index("returns_by_scope", build).get(id(scope), ()))

    def gradient_calls(self) -> list[CallSite]:
        """`tape.gradient(...)`-style calls whose receiver is a GradientTape bound by a `with`."""
        def compute() -> list[CallSite]:
            tape_names = {t.name for t in self.tapes if t.name}
            return [c for c in self.calls if c.method in GRADIENT_METHODS and c.receiver in tape_names]

        return self.cached("gradient_calls", compute)

    def tape_for_call(self, call: CallSite) -> TapeBlock | None:
        """The tape block a `tape.gradient` call refers to: the last one of that name before it."""
        def build() -> dict[str | None, list[TapeBlock]]:
            index: dict[str | None, list[TapeBlock]] = {}
            for tape in self.tapes:
                index.setdefault(tape.name, []).append(tape)
            return index

        candidates = [t for t in self._index("tapes_by_name", build).get(call.receiver, ()) if t.order < call.order]
        same_scope = [t for t in candidates if t.scope is call.scope or t.scope.contains(call.scope)]
        pool = same_scope or candidates
        return pool[-1] if pool else None

    @property
    def uses_gradient_tape(self) -> bool:
        return bool(self.tapes)

    def release(self) -> None:
        """Forget the cached analyses (they refer back to these facts), once nothing will ask again."""
        self._cache.clear()

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()`, computed once for these facts: later askers with the same key get the same answer.
        A key names one question, so one type of answer (the cache itself holds answers of every type)."""
        cache = self._cache
        if key not in cache:
            cache[key] = compute()
        return cast(T, cache[key])

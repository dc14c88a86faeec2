"""Control-flow spans in `Facts` document order: loops, if/else branches and return statements.

`Facts` records the order span of each control-flow node during its one traversal, so these spans
compare directly with `CallSite.order`, `Binding.order` and `TapeBlock.order`. Rules use it to
ask "which loop encloses this call", "are these two calls in exclusive branches", "does this call
leave the function".
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import DEFINITION_TYPES, Facts
from tapelint.analysis.names import dotted

_EXIT_TYPES = frozenset({cst.Return, cst.Raise, cst.Break, cst.Continue})


@dataclass(eq=False)
class Span:
    node: cst.CSTNode
    order: int
    end_order: int = 1 << 60

    def encloses(self, order: int) -> bool:
        return self.order < order <= self.end_order


@dataclass(eq=False)
class Branch:
    """An `if` statement: the test, the body and the `else`/`elif` part as order spans."""

    node: cst.If
    order: int
    test: cst.BaseExpression
    body: Span
    orelse: Span | None = None
    end_order: int = 1 << 60


class Blocks:
    def __init__(self, facts: Facts) -> None:
        self.loops: list[Span] = []
        self.branches: list[Branch] = []
        self.exits: list[Span] = []
        self.definitions: list[Span] = []
        # `try` bodies with the exception names their handlers catch ("" for a bare `except:`).
        self.tries: list[tuple[Span, frozenset[str]]] = []
        spans = facts.spans

        def span_of(node: cst.CSTNode | None) -> Span | None:
            entry = spans.get(id(node)) if node is not None else None
            return Span(entry[0], entry[1], entry[2]) if entry is not None else None

        for node, order, end_order in sorted(spans.values(), key=lambda e: e[1]):
            # Exact types: parsed nodes are of these classes, and a failed isinstance against a libcst
            # class costs an ABC check (tests/test_parsing.py pins that they have no subclasses).
            kind = type(node)
            if kind is cst.For:
                # Only the body repeats: `for g, w in zip(tape.gradient(...), ws)` computes its iterable
                # once, and the `else:` part runs once after the last iteration.
                body = span_of(node.body)
                if body is None:
                    self.loops.append(Span(node, order, end_order))
                else:
                    self.loops.append(Span(node, body.order, body.end_order if node.orelse is not None else end_order))
            elif kind is cst.While:
                self.loops.append(Span(node, order, end_order))
            elif kind is cst.If:
                body = span_of(node.body) or Span(node.body, order, end_order)
                orelse = None
                if node.orelse is not None:
                    orelse = span_of(node.orelse)
                    if orelse is not None and isinstance(node.orelse, cst.If):
                        orelse.order -= 1  # an `elif`: its own order belongs to the else part
                self.branches.append(Branch(node, order, node.test, body, orelse, end_order))
            elif kind in _EXIT_TYPES:
                self.exits.append(Span(node, order, end_order))
            elif kind in DEFINITION_TYPES:
                # A function's decorators and defaults run where its `def` runs: its own code is its body.
                body = span_of(node.body) if kind is cst.FunctionDef else None
                self.definitions.append(Span(node, body.order, body.end_order) if body is not None
                                        else Span(node, order, end_order))
            elif kind is cst.Try:
                body = span_of(node.body)
                if body is not None:
                    caught: set[str] = set()
                    for handler in node.handlers:
                        kinds = handler.type
                        names = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
                        for name in names:
                            caught.add((dotted(name) or "?").rsplit(".", 1)[-1] if name is not None else "")
                    self.tries.append((body, frozenset(caught)))

        self._definition_index = _Enclosing([(d.order, d.end_order) for d in self.definitions])
        self._loop_index = _Enclosing([(loop.order, loop.end_order) for loop in self.loops])
        self._try_index = _Enclosing([(body.order, body.end_order) for body, _ in self.tries])
        self._exit_index = _Enclosing([(e.order, e.end_order) for e in self.exits])
        # A branch's body and else part as two spans each: index 2*i is the body of branch i, 2*i+1 its else.
        parts: list[tuple[int, int]] = []
        for branch in self.branches:
            parts.append((branch.body.order, branch.body.end_order))
            parts.append((branch.orelse.order, branch.orelse.end_order) if branch.orelse is not None else (0, 0))
        self._branch_index = _Enclosing(parts)
        self._innermost_definition: dict[int, int] = {}

    def _definition_around(self, order: int) -> int:
        """The order of the innermost function/lambda/class definition around `order`, -1 if none."""
        found = self._innermost_definition.get(order)
        if found is None:
            inside = self._definition_index.enclosing(order)
            found = self._innermost_definition[order] = max(
                (self.definitions[i].order for i in inside), default=-1)
        return found

    def _same_function(self, outer: int, inner: int) -> bool:
        """No function/lambda/class definition between the two orders (inner is inside outer)."""
        # Definitions nest, so one strictly after `outer` around `inner` exists exactly when the innermost
        # one around `inner` starts after `outer`.
        return self._definition_around(inner) <= outer

    def loops_enclosing(self, order: int) -> list[Span]:
        """Loops around `order` in the same function, outermost first."""
        return [self.loops[i] for i in self._loop_index.enclosing(order)
                if self._same_function(self.loops[i].order, order)]

    def innermost_loop(self, order: int) -> Span | None:
        loops = self.loops_enclosing(order)
        return loops[-1] if loops else None

    def exclusive(self, first: int, second: int) -> bool:
        """True when two points can never both run in one pass: opposite branches of one `if`,
        or the first is part of a statement that leaves the block (`return`, `raise`)."""
        around_first = set(self._branch_index.enclosing(first))
        around_second = set(self._branch_index.enclosing(second))
        for part in around_first:
            # Body of one branch and else part of the same branch (index ^ 1), either way round.
            if part ^ 1 in around_second and self.branches[part // 2].orelse is not None:
                return True
        for i in self._exit_index.enclosing(first):
            if isinstance(self.exits[i].node, (cst.Return, cst.Raise)):
                return True
        return False

    def caught(self, order: int, *exceptions: str) -> bool:
        """Is `order` inside a `try` body (same function) whose handlers catch one of `exceptions`,
        `Exception`, `BaseException` or everything?"""
        wanted = {*exceptions, "Exception", "BaseException", ""}
        for i in self._try_index.enclosing(order):
            body, caught = self.tries[i]
            if self._same_function(body.order, order) and caught & wanted:
                return True
        return False

    def guards(self, order: int) -> list[Branch]:
        """`if` statements whose body or else part contains `order` (same function)."""
        found = sorted({part // 2 for part in self._branch_index.enclosing(order)})
        return [self.branches[i] for i in found if self._same_function(self.branches[i].order, order)]


class _Enclosing:
    """Which of a list of spans `(start, end]` contain a point, without scanning them all.

    The spans come from nodes of one tree, so any two are nested or disjoint: the spans around a point
    are the chain of ancestors of the last span that starts before it. Spans that do not nest (never
    seen, but not assumed) are answered by a plain scan."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.spans = spans
        order = sorted((i for i, (start, end) in enumerate(spans) if end > start),
                       key=lambda i: (spans[i][0], -spans[i][1]))
        self.order = order
        self.starts = [spans[i][0] for i in order]
        self.ends = [spans[i][1] for i in order]
        self.parent: list[int] = []
        self.nested = True
        stack: list[int] = []
        for position, i in enumerate(order):
            start, end = spans[i]
            while stack and self.ends[stack[-1]] <= start:
                stack.pop()
            if stack and end > self.ends[stack[-1]]:
                self.nested = False
                break
            self.parent.append(stack[-1] if stack else -1)
            stack.append(position)

    def enclosing(self, point: int) -> list[int]:
        """Indices (into the spans given) of the spans containing `point`, in the order given."""
        if not self.nested:
            return [i for i, (start, end) in enumerate(self.spans) if start < point <= end]
        position = bisect_left(self.starts, point) - 1
        found = []
        while position >= 0:
            if self.ends[position] >= point:
                found.append(self.order[position])
            position = self.parent[position]
        found.sort()
        return found


def blocks(facts: Facts) -> Blocks:
    return facts.cached("blocks", lambda: Blocks(facts))


def positions(shared: dict, module: cst.Module):  # type: ignore[no-untyped-def]
    """libcst positions of `module` (a map with `get(node)`), computed only where a rule needs them
    (a message that cites a line, a fix that needs an indentation). The engine puts a lazy map in
    `shared` up front; this makes one when a context was built elsewhere."""
    if "positions" not in shared:
        from tapelint.analysis.positions import full_positions

        shared["positions"] = full_positions(module)
    return shared["positions"]

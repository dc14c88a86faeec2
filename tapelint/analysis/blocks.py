"""Control-flow spans in `Facts` document order: loops, if/else branches and return statements.

`Facts` records the order span of each control-flow node during its one traversal, so these spans
compare directly with `CallSite.order`, `Binding.order` and `TapeBlock.order`. Rules use it to
ask "which loop encloses this call", "are these two calls in exclusive branches", "does this call
leave the function".
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.names import dotted


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
            if isinstance(node, cst.For):
                # Only the body repeats: `for g, w in zip(tape.gradient(...), ws)` computes its iterable
                # once, and the `else:` part runs once after the last iteration.
                body = span_of(node.body)
                if body is None:
                    self.loops.append(Span(node, order, end_order))
                else:
                    self.loops.append(Span(node, body.order, body.end_order if node.orelse is not None else end_order))
            elif isinstance(node, cst.While):
                self.loops.append(Span(node, order, end_order))
            elif isinstance(node, cst.If):
                body = span_of(node.body) or Span(node.body, order, end_order)
                orelse = None
                if node.orelse is not None:
                    orelse = span_of(node.orelse)
                    if orelse is not None and isinstance(node.orelse, cst.If):
                        orelse.order -= 1  # an `elif`: its own order belongs to the else part
                self.branches.append(Branch(node, order, node.test, body, orelse, end_order))
            elif isinstance(node, (cst.Return, cst.Raise, cst.Break, cst.Continue)):
                self.exits.append(Span(node, order, end_order))
            elif isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                self.definitions.append(Span(node, order, end_order))
            elif isinstance(node, cst.Try):
                body = span_of(node.body)
                if body is not None:
                    caught: set[str] = set()
                    for handler in node.handlers:
                        kinds = handler.type
                        names = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
                        for name in names:
                            caught.add((dotted(name) or "?").rsplit(".", 1)[-1] if name is not None else "")
                    self.tries.append((body, frozenset(caught)))

    def _same_function(self, outer: int, inner: int) -> bool:
        """No function/lambda/class definition between the two orders (inner is inside outer)."""
        return not any(d.order > outer and d.encloses(inner) for d in self.definitions)

    def loops_enclosing(self, order: int) -> list[Span]:
        """Loops around `order` in the same function, outermost first."""
        return [loop for loop in self.loops if loop.encloses(order) and self._same_function(loop.order, order)]

    def innermost_loop(self, order: int) -> Span | None:
        loops = self.loops_enclosing(order)
        return loops[-1] if loops else None

    def exclusive(self, first: int, second: int) -> bool:
        """True when two points can never both run in one pass: opposite branches of one `if`,
        or the first is part of a statement that leaves the block (`return`, `raise`)."""
        for branch in self.branches:
            if branch.orelse is None:
                continue
            in_body = (branch.body.encloses(first), branch.body.encloses(second))
            in_else = (branch.orelse.encloses(first), branch.orelse.encloses(second))
            if (in_body[0] and in_else[1]) or (in_else[0] and in_body[1]):
                return True
        for exit_span in self.exits:
            if exit_span.encloses(first) and isinstance(exit_span.node, (cst.Return, cst.Raise)):
                return True
        return False

    def caught(self, order: int, *exceptions: str) -> bool:
        """Is `order` inside a `try` body (same function) whose handlers catch one of `exceptions`,
        `Exception`, `BaseException` or everything?"""
        wanted = {*exceptions, "Exception", "BaseException", ""}
        return any(
            body.encloses(order) and self._same_function(body.order, order) and caught & wanted
            for body, caught in self.tries
        )

    def guards(self, order: int) -> list[Branch]:
        """`if` statements whose body or else part contains `order` (same function)."""
        return [
            b for b in self.branches
            if (b.body.encloses(order) or (b.orelse is not None and b.orelse.encloses(order)))
            and self._same_function(b.order, order)
        ]


def blocks(facts: Facts) -> Blocks:
    return facts.cached("blocks", lambda: Blocks(facts))  # type: ignore[return-value]


def positions(shared: dict, module: cst.Module):  # type: ignore[no-untyped-def]
    """libcst positions of `module`, computed once per file and only when a rule needs them
    (a message that cites a line, a fix that needs an indentation)."""
    if "positions" not in shared:
        from libcst.metadata import MetadataWrapper, PositionProvider

        shared["positions"] = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return shared["positions"]

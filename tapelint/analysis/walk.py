"""A read-only traversal that is several times cheaper than `CSTNode.visit`.

libcst's `visit` rebuilds (and re-validates) every node on the way back up, even for visitors that
change nothing, and `node.children` does the same. Analysis passes only read, so they walk the
dataclass fields directly. Visitors keep the libcst interface: `on_visit(node) -> bool` (False skips
the children) and `on_leave(node)`, which `CSTVisitor` dispatches to `visit_<Type>`/`leave_<Type>`.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Iterator

import libcst as cst

# Leaves and formatting that never hold code the analysis cares about.
_SKIP_TYPES: tuple[type, ...] = (
    cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline,
    cst.Comment, cst.Comma, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Semicolon, cst.Colon, cst.Dot, cst.AssignEqual,
    cst.ImportStar, cst.MaybeSentinel,
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _never_a_node(annotation: object) -> bool:
    """Can a field declared with this type only hold text, a flag, a sentinel or formatting (`Name.value: str`,
    `Arg.comma: Comma | MaybeSentinel`, `Arg.star: Literal["", "*", "**"]`)? Such fields are not read at all."""
    if isinstance(annotation, type):
        return issubclass(annotation, (str, int, cst.MaybeSentinel, *_SKIP_TYPES)) or annotation is type(None)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin is typing.Union:
        return all(_never_a_node(member) for member in typing.get_args(annotation))
    return False  # a sequence, a forward reference: read it


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if not f.name.startswith("whitespace")
                      and f.name not in ("lpar", "rpar", "header", "footer", "leading_lines",
                                         "lines_after_decorators", "trailing_whitespace")
                      and not _never_a_node(f.type))
        # libcst declares a few fields out of source order; put decorators first like the source.
        if "decorators" in names:
            names = ("decorators", *[n for n in names if n != "decorators"])
        _FIELDS[cls] = names
    return names


# The same names last to first, for traversals that push children on a stack.
_REVERSED_FIELDS: dict[type, tuple[str, ...]] = {}


def reversed_field_names(cls: type) -> tuple[str, ...]:
    names = _REVERSED_FIELDS.get(cls)
    if names is None:
        names = _REVERSED_FIELDS[cls] = tuple(reversed(_field_names(cls)))
    return names


_WANTED: dict[type, bool] = {}


def wanted(cls: type) -> bool:
    """Is a value of this type a node that traversals enter (not formatting, not a plain value)?"""
    enter = _WANTED.get(cls)
    if enter is None:
        enter = _WANTED[cls] = issubclass(cls, cst.CSTNode) and not issubclass(cls, _SKIP_TYPES)
    return enter


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    # Runs for every node of every file: the per-type tables are read inline.
    cls = type(node)
    names = _FIELDS.get(cls)
    if names is None:
        names = _field_names(cls)
    children: list[cst.CSTNode] = []
    for name in names:
        value: Any = getattr(node, name)
        value_cls = type(value)
        if value_cls is tuple or value_cls is list:
            for item in value:
                enter = _WANTED.get(type(item))
                if enter is None:
                    enter = wanted(type(item))
                if enter:
                    children.append(item)
        else:
            enter = _WANTED.get(value_cls)
            if enter is None:
                enter = wanted(value_cls)
            if enter:
                children.append(value)
    return children


def walk(node: cst.CSTNode, visitor: Any) -> None:
    """Depth-first, source-ordered traversal calling `visitor.on_visit` / `visitor.on_leave`."""
    on_visit, on_leave = visitor.on_visit, visitor.on_leave
    stack: list[tuple[cst.CSTNode, bool]] = [(node, False)]
    pop, push = stack.pop, stack.append
    while stack:
        current, leaving = pop()
        if leaving:
            on_leave(current)
            continue
        if on_visit(current) is False:
            on_leave(current)
            continue
        push((current, True))
        for child in reversed(child_nodes(current)):
            push((child, False))


def iter_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below (and including) `node`, cheaply."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child_nodes(current))


def contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(current is node for current in iter_nodes(tree))


def walk_tables() -> tuple[dict[type, tuple[str, ...]], dict[type, bool]]:
    """The per-type tables behind `reversed_field_names` and `wanted`, for loops that read them inline."""
    return _REVERSED_FIELDS, _WANTED

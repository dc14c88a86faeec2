"""`libcst.parse_module`, building the same tree with less work per node.

libcst's native parser builds each node through its dataclass constructor. Two parts of that constructor
are there for trees built by hand, and tapelint's parse skips them while the parser runs:

- **Validation.** `CSTNode.__post_init__` runs the node's `_validate()`: checks that a hand-built tree is
  well formed (balanced parentheses, required whitespace, non-empty names). The parser's output satisfies
  them by construction, and libcst says as much next to that call ("avoid validating the tree when
  parsing a file").
- **The frozen dataclass's field stores.** A frozen dataclass's `__init__` stores each field through
  `object.__setattr__(self, name, value)`, which looks the field up on the class every time. For a text
  long enough to pay for building them, or once a process has parsed several files, each of the node
  classes the parser builds most gets a stand-in `__init__` for the duration of the parse: the same
  parameters and defaults, each field stored through its slot's own setter, and no `__post_init__`. A
  class whose fields are not all plain slots, or whose constructor takes something else, keeps libcst's
  constructor.

Instructions per parse of the size series' 1k-line file (callgrind): libcst's own 621 M, without the
validation 562 M, with the stand-in constructors too 519 M (530 M in a process that builds them for it).
Of keras-io's wgan-graphs.py, alone in a process: 183 M without them, 178 M building them. The tree is
the same either way (`deep_equals`, tested). Nodes built after the parse (the rules' fixes) get libcst's
constructors and their checks.

Both hooks touch libcst's private details (`CSTNode.__post_init__`, the dataclass layout): the libcst
version is bounded in pyproject.toml, and the tests parse with and without them and compare the trees.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import threading
import types
from typing import Sequence

import libcst as cst
from libcst._nodes.base import CSTNode

_validating_post_init = CSTNode.__dict__["__post_init__"]
_lock = threading.Lock()
_parsing = 0

# Building the stand-in constructors costs about as many instructions as they save on a parse of 7,000
# characters of real training code (4 M; they save about 0.6 M per thousand characters of it, 1.4 M of
# the size series' denser generated code). They are built, once per process, for a text long enough to pay
# for them alone, or once a process has parsed enough to be a run of many files. Pre-commit's check of one
# short file never builds them.
_FAST_FOR = 10_000
_FAST_AFTER = 30_000
_parsed = 0
_fast: dict[type, tuple[object, object]] | None = None


def _no_validation(self: CSTNode) -> None:
    return None


def _switch(parsing: bool) -> None:
    """Put the parse's constructors in place (`parsing`), or libcst's back. Called with `_lock` held."""
    CSTNode.__post_init__ = _no_validation if parsing else _validating_post_init  # type: ignore[method-assign]
    for cls, (original, fast) in _fast.items() if _fast else ():
        type.__setattr__(cls, "__init__", fast if parsing else original)


def _after_fork_in_child() -> None:
    """A fork made while another thread was parsing: no parse runs in the child, so libcst's constructors and
    validation come back there (they would stay swapped out for good otherwise). The lock was held across
    the fork (`os.register_at_fork` below), so no switch was half done."""
    global _parsing
    if _parsing:
        _parsing = 0
        _switch(False)
    _lock.release()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release, after_in_child=_after_fork_in_child)


def parse_module(source: str) -> cst.Module:
    """`cst.parse_module(source)`, with the per-node validation off and, for a long text or once enough
    has been parsed in this process, the stand-in constructors in place while the parser builds the tree.

    Another thread building nodes by hand at the same moment gets them too; nothing in tapelint does
    (every lint runs on one worker thread), and the nodes it would build are the same nodes."""
    global _parsing, _parsed, _fast
    with _lock:
        _parsed += len(source)
        if _fast is None and (len(source) >= _FAST_FOR or _parsed >= _FAST_AFTER):
            _fast = _stand_in_constructors()
        if _parsing == 0:
            _switch(True)
        _parsing += 1
    try:
        return cst.parse_module(source)
    finally:
        with _lock:
            _parsing -= 1
            if _parsing == 0:
                _switch(False)


# The node classes the parser builds most, most first: over the real-world training files of tests/, these
# 34 make 97% of the nodes (SimpleWhitespace alone 41%, Name 12%). Each stand-in costs its build and a
# swap per parse, so the rare classes keep libcst's constructor.
_COMMON_NODES = (
    "SimpleWhitespace", "Name", "Newline", "TrailingWhitespace", "Arg", "Attribute", "Dot", "Comma",
    "SimpleStatementLine", "Call", "EmptyLine", "AssignTarget", "Assign", "Element", "Integer", "AssignEqual",
    "ParenthesizedWhitespace", "SimpleString", "Comment", "Expr", "RightSquareBracket", "LeftSquareBracket",
    "Param", "IndentedBlock", "SubscriptElement", "BinaryOperation", "Tuple", "RightParen", "LeftParen",
    "Subscript", "Float", "Index", "List", "Parameters",
)


def _stand_in_constructors() -> dict[type, tuple[object, object]]:
    """For each node class whose constructor can be written as slot stores: (libcst's `__init__`, the
    stand-in). A stand-in is one of a few shared bodies (one per number of fields, compiled once) given
    the class's field names as its parameters, its defaults, and its fields' setters."""
    bodies: dict[int, types.CodeType] = {}
    made: dict[type, tuple[object, object]] = {}
    for name in _COMMON_NODES:
        cls = getattr(cst, name, None)
        if not isinstance(cls, type):
            continue
        fast = _stand_in(cls, bodies)
        if fast is not None:
            made[cls] = (cls.__dict__["__init__"], fast)
    return made


def _stand_in(cls: type, bodies: dict[int, types.CodeType]) -> types.FunctionType | None:
    """A constructor for `cls` that stores each field through its slot's setter, or None when `cls` is not
    a frozen dataclass of plain slots whose own constructor takes exactly its fields."""
    own = cls.__dict__
    if "__slots__" not in own or "__dataclass_fields__" not in own:
        return None
    original = own.get("__init__")
    params = getattr(cls, "__dataclass_params__", None)
    if type(original) is not types.FunctionType or params is None or not params.frozen or inspect.isabstract(cls):
        return None
    fields = dataclasses.fields(cls)
    names = tuple(field.name for field in fields)
    code = original.__code__
    if code.co_varnames[:code.co_argcount] != ("self", *names) or code.co_kwonlyargcount \
            or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    scope: dict[str, object] = {"_MISSING": dataclasses.MISSING, "__builtins__": __builtins__}
    defaults: list[object] = []
    for number, field in enumerate(fields):
        slot = own.get(field.name)
        if slot is None:
            slot = next((klass.__dict__[field.name] for klass in cls.__mro__ if field.name in klass.__dict__), None)
        if not field.init or getattr(field, "kw_only", False) or type(slot) is not types.MemberDescriptorType:
            return None
        setter, maker = _NAMES[number] if number < len(_NAMES) else (f"_set{number}", f"_make{number}")
        scope[setter] = slot.__set__
        scope[maker] = None
        if field.default is not dataclasses.MISSING:
            defaults.append(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            scope[maker] = field.default_factory
            defaults.append(dataclasses.MISSING)
        elif defaults:
            return None  # a required field after a defaulted one: not a signature Python allows
    body = bodies.get(len(names))
    if body is None:
        body = bodies[len(names)] = _body(len(names))
    function = types.FunctionType(body.replace(co_varnames=("self", *names)), scope, "__init__",
                                  tuple(defaults) or None)
    function.__qualname__ = f"{cls.__qualname__}.__init__"
    return function


_NAMES = [(f"_set{number}", f"_make{number}") for number in range(16)]


def _body(count: int) -> types.CodeType:
    """`def __init__(self, a0, a1, ...)` storing each `a<i>` through `_set<i>`, or `_make<i>()` when the
    caller left out a field whose default is made per node."""
    lines = [f"    _set{i}(self, _make{i}() if a{i} is _MISSING else a{i})" for i in range(count)]
    text = f"def __init__(self{''.join(f', a{i}' for i in range(count))}):\n" + ("\n".join(lines) or "    pass")
    scope: dict[str, object] = {}
    exec(text, scope)  # noqa: S102 - our own generated code
    init = scope["__init__"]
    assert isinstance(init, types.FunctionType)
    return init.__code__


# libcst's native parser holds about 4 KB per token while it parses a module, and frees it only when the
# parse ends: 100,000 lines of `x` peak at 820 MB, a million at 8 GB, although the finished tree takes a
# tenth of that. A long text is therefore parsed in pieces of whole top-level statements, each piece
# as a module of its own, and the pieces' statements are spliced into one module: the parser's memory is
# then that of one piece, and the tree is the one a parse of the whole text gives. The argument is
# tapelint.incremental's: a piece cut just before a line that starts a statement at column 0 ends, when it
# parses alone, in a clean state (no open bracket, string or continuation; indentation 0), so a full parse
# would start a new top-level statement there too. What libcst decides for the whole text is checked, and
# anything uncertain (a cut that does not parse alone, an indented comment at a piece's end, pieces that
# infer another newline or indentation) falls back to one parse of the whole text.
PIECE_CHARS = 50_000
_PIECES_FOR = 2 * PIECE_CHARS
_NOT_A_START = ("else", "elif", "except", "finally")


def _cuts(source: str) -> list[int]:
    """Offsets of the lines where a piece of about PIECE_CHARS may end: a line at column 0 that may start
    a statement (not a comment, a closing bracket or a clause of the statement before it), after a line
    that is neither a decorator nor continued by a backslash."""
    cuts = []
    at = PIECE_CHARS
    while at < len(source):
        start = source.find("\n", at)
        while start != -1 and start + 1 < len(source):
            line = start + 1
            first = source[line]
            previous = source.rfind("\n", 0, start) + 1
            if (not first.isspace() and first not in "#)]}@\\"
                    and not source.startswith(_NOT_A_START, line)
                    and not source[previous:start].rstrip("\r").endswith("\\")
                    and not source.startswith("@", previous)):
                break
            start = source.find("\n", line)
        if start == -1 or start + 1 >= len(source):
            break
        cuts.append(start + 1)
        at = start + 1 + PIECE_CHARS
    return cuts


def _clean(lines: Sequence[cst.CSTNode]) -> bool:
    return all(isinstance(line, cst.EmptyLine) and not line.whitespace.value for line in lines)


_CLAUSES = ("body", "orelse", "handlers", "finalbody")


def opens_block(node: cst.CSTNode) -> bool:
    """Whether a statement holds an indented block (an INDENT token) anywhere in its clauses."""
    if isinstance(node, (cst.IndentedBlock, cst.Match)):
        return True
    if isinstance(node, cst.SimpleStatementLine) or not isinstance(node, cst.CSTNode):
        return False
    for name in _CLAUSES:
        value = getattr(node, name, None)
        if value is None:
            continue
        for part in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(part, cst.CSTNode) and not isinstance(part, cst.SimpleStatementSuite) and opens_block(part):
                return True
    return False


def parse_in_pieces(source: str) -> cst.Module:
    """`parse_module(source)`, for a long text parsed piece by piece (see above). Raises what a parse of
    the whole text raises."""
    cuts = _cuts(source) if len(source) >= _PIECES_FOR and not source.startswith("\ufeff") else []
    if not cuts:
        return parse_module(source)
    modules: list[cst.Module] = []
    start = 0
    for end in (*cuts, len(source)):
        try:
            module = parse_module(source[start:end])
        except (cst.ParserSyntaxError, RecursionError):
            return parse_module(source)
        if (not module.body or (modules and not _clean(module.header))
                or (end < len(source) and not _clean(module.footer))):
            return parse_module(source)
        modules.append(module)
        start = end
    first = modules[0]
    if any(m.default_newline != first.default_newline for m in modules):
        return parse_module(source)
    indents = {m.default_indent for m in modules if any(opens_block(s) for s in m.body)}
    if len(indents) > 1:
        return parse_module(source)
    body: list = list(first.body)
    for before, module in zip(modules, modules[1:]):
        statements = list(module.body)
        lead = (*before.footer, *module.header, *statements[0].leading_lines)
        if len(lead) != len(statements[0].leading_lines):
            statements[0] = statements[0].with_changes(leading_lines=lead)
        body.extend(statements)
    last = modules[-1]
    return cst.Module(body=body, header=first.header, footer=last.footer, encoding=first.encoding,
                      default_indent=indents.pop() if indents else first.default_indent,
                      default_newline=first.default_newline, has_trailing_newline=last.has_trailing_newline)

"""`libcst.parse_module` without re-validating every node the parser builds.

libcst's native parser builds each node through its dataclass constructor, and `CSTNode.__post_init__`
runs the node's `_validate()`: checks that a tree built by hand is well formed (balanced parentheses,
required whitespace, non-empty names). The parser's output satisfies them by construction, and libcst
says as much next to that call ("avoid validating the tree when parsing a file"). Measured on the size
series' 8.8k-line file: 0.94 s without the checks against 1.74 s with them, the same tree either way
(`deep_equals`). Nodes built after the parse (the rules' fixes) are validated as usual.

The hook is libcst's `CSTNode.__post_init__` (a private detail): the libcst version is pinned in
pyproject.toml, and a test parses with and without it and compares the trees.
"""

from __future__ import annotations

import threading

import libcst as cst
from libcst._nodes.base import CSTNode

_validating_post_init = CSTNode.__dict__["__post_init__"]
_lock = threading.Lock()
_parsing = 0


def _no_validation(self: CSTNode) -> None:
    return None


def parse_module(source: str) -> cst.Module:
    """`cst.parse_module(source)`, with the per-node validation off while the parser builds the tree.

    Another thread building nodes by hand at the same moment skips validation too; nothing in tapelint
    does (every lint runs on one worker thread), and the nodes it would skip it for are not wrong."""
    global _parsing
    with _lock:
        if _parsing == 0:
            CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
        _parsing += 1
    try:
        return cst.parse_module(source)
    finally:
        with _lock:
            _parsing -= 1
            if _parsing == 0:
                CSTNode.__post_init__ = _validating_post_init  # type: ignore[method-assign]

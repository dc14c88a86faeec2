"""What keeps one file's lint from taking the process down with it.

A lint runs libcst's parser and the rules' recursive passes over code of any shape. Four guards make a
file nested too deeply for them one finding (TL000) instead of a crashed or hung run:
  - `nested_too_deeply`: text too complex to analyse (nested deeper than Python accepts, long runs of
    unary operators, a chain of hundreds of calls), refused before it is parsed, in a moment;
  - a worker thread with a large stack, where libcst's native parser cannot overflow the process's own
    (a SIGSEGV, which no `except` catches);
  - a raised recursion limit while a file is linted, so that deep but ordinary code is still analysed and
    what is deeper still is a RecursionError the engine reports;
  - the cyclic garbage collector paused while any lint runs (not a guard against failure, but it keeps
    a large file's lint from spending a quarter of its time, and most of its run-to-run noise, in the
    collector).
`guarded` runs a function under the last three. A crash of one rule is caught where rules run
(tapelint.rule: `Rule.crash`); the engine turns it into an internal-error finding.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import sys
import threading
from typing import Callable

import libcst as cst


# Deeply nested code (a 400-term `and`, hundreds of `elif`s) goes deeper than Python's default limit in
# libcst's recursive passes. Pure-Python frames cost little native stack on 3.11+, so the limit is raised
# while a file is linted; what is deeper still becomes one TL000 for that file, never a crashed run.
_RECURSION_LIMIT = 12000


@contextlib.contextmanager
def _deep_recursion():  # type: ignore[no-untyped-def]
    old = sys.getrecursionlimit()
    if old < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


# A lint allocates millions of small objects that live until it ends (the tree, its metadata, the facts),
# so the cyclic collector finds almost nothing to free while it runs: its young-generation passes (every
# 700 allocations by default) rescan survivors again and again, and the full passes it triggers walk the
# whole tree, 10-25% of a large file's lint in all, and the main source of its run-to-run noise. While any
# lint runs, the collector is paused (reference counting still frees everything that is not a cycle; the
# few cycles a lint leaves are collected by the next pass after it), then restored as it was.
_gc_lock = threading.Lock()
_gc_users = 0
_gc_was_enabled = False


@contextlib.contextmanager
def _collector_paused():  # type: ignore[no-untyped-def]
    global _gc_users, _gc_was_enabled
    with _gc_lock:
        if _gc_users == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_users += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_users -= 1
            if _gc_users == 0 and _gc_was_enabled:
                gc.enable()


def _forget_collections_in_child() -> None:
    """A forked worker starts with no lint running (the parent's lock may have been held mid-lint)."""
    global _gc_lock, _gc_users
    _gc_lock = threading.Lock()
    _gc_users = 0


os.register_at_fork(after_in_child=_forget_collections_in_child)


# libcst's native parser recurses on the thread's own stack and crashes the whole process (SIGSEGV) past
# about 1,300 nested brackets or 9,000 nested unary operators on a main thread's 8 MB. Linting runs on one
# worker thread with a large stack (reserved, not committed: pages are touched only as deep as a file goes).
# Long before that, its time and memory grow with the square (or the cube) of the nesting of one statement:
# 10,000 unary minus signs (10 KB) take 190 s and 5.5 GB, 1,000 nested lists 4 s and 830 MB, 2,000 of
# them 20 s and 3.2 GB. So text nested beyond what Python itself accepts is refused before it is parsed,
# as too complex to analyse:
#   - brackets: CPython refuses more than 200 nested ("too many nested parentheses"); text whose brackets
#     (strings and comments included) nest that deep is refused when CPython refuses it too;
#   - a run of 1,000 prefix operators (`-`, `+`, `~`, `not`, `await`, `lambda ...:`): 0.2 s and 80 MB in
#     libcst, growing with the square; CPython refuses a few thousand;
#   - 500 conditional expressions or `**` in one line (`1 if a else 1 if a else ...`): each nests the rest;
#   - a chain of 500 calls, attributes or subscripts, whose parse grows with the cube of its length
#     (`f(1)(1)...`: 1,000 links 1.3 s, 2,000 8 s, 4,000 50 s); hand-written chains have tens of links.
# The limits are documented in the README ("Limits").
_STACK_BYTES = 512 * 1024 * 1024
_MAX_BRACKET_DEPTH = 200
_MAX_PREFIX_RUN = 1000
_PREFIX_RUN = re.compile(r"(?:(?:[-+~]|\bnot\b|\bawait\b|\blambda\b[^:\n]*:)\s*){%d,}" % _MAX_PREFIX_RUN)
_BRACKETS = re.compile(r"[\[\](){}]")
_MAX_CHAINED = 500
_MAX_TRAILERS = 500
_TRAILER_RUN = re.compile(r"(?:\s*(?:\.\s*\w+|\([^()]{0,200}\)|\[[^\[\]]{0,200}\])){%d}" % _MAX_TRAILERS)
_deep_worker: list = []  # [executor, thread ident], made on first use
_deep_lock = threading.Lock()


def _forget_deep_worker() -> None:
    # A forked child (a ProcessPoolExecutor worker) inherits the executor but not its thread: work handed
    # to it would wait forever. The child makes its own on first use.
    global _deep_lock
    _deep_worker.clear()
    _deep_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_deep_worker)


def nested_too_deeply(source: str) -> str | None:
    """Why the text is too complex for the parser (the limits above), or None. Cheap: counts first, and
    the scans only where the counts reach a limit."""
    if source.count("(") + source.count("[") + source.count("{") >= _MAX_BRACKET_DEPTH:
        depth = deepest = 0
        for match in _BRACKETS.finditer(source):
            depth += 1 if match.group() in "([{" else -1
            if depth > deepest:
                deepest = depth
        if deepest > _MAX_BRACKET_DEPTH and _python_refuses(source):
            return f"{deepest} nested brackets; Python accepts at most {_MAX_BRACKET_DEPTH}"
    operators = sum(source.count(word) for word in ("-", "+", "~", "not", "await", "lambda"))
    if operators >= _MAX_PREFIX_RUN and _PREFIX_RUN.search(source):  # counting is cheap; the search is not
        return f"a run of over {_MAX_PREFIX_RUN} nested unary operators"
    if len(source) >= 2 * _MAX_CHAINED:
        long_lines = [line for line in source.splitlines() if len(line) >= 2 * _MAX_CHAINED]
        for line in long_lines:
            if line.count(" else ") >= _MAX_CHAINED and line.count(" if ") >= _MAX_CHAINED:
                return f"over {_MAX_CHAINED} conditional expressions in one line"
            if line.count("**") >= _MAX_CHAINED:
                return f"over {_MAX_CHAINED} chained powers in one line"
            if len(line) >= 2 * _MAX_TRAILERS and _TRAILER_RUN.search(line):
                return f"a chain of over {_MAX_TRAILERS} calls, attributes or subscripts"
    return None


def _python_refuses(source: str) -> bool:
    """Whether CPython's own parser refuses the text as nested too deeply (brackets inside strings or
    comments do not count there)."""
    try:
        compile(source, "<tapelint>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError as error:
        return "too many nested" in str(error)
    except (RecursionError, MemoryError):
        return True
    except ValueError:
        return False
    return False


def _on_big_stack(function, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Run `function` on the large-stack lint thread (directly when already on it, or when the platform
    refuses such a thread)."""
    if _deep_worker and threading.get_ident() == _deep_worker[1]:
        return function(*args, **kwargs)
    with _deep_lock:
        if not _deep_worker:
            from concurrent.futures import ThreadPoolExecutor

            try:
                old = threading.stack_size(_STACK_BYTES)
            except (ValueError, RuntimeError):
                return function(*args, **kwargs)
            try:
                executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tapelint-lint-stack")
                ident = executor.submit(threading.get_ident).result()  # the thread is made now, with the stack
            finally:
                threading.stack_size(old)
            _deep_worker[:] = [executor, ident]
    return _deep_worker[0].submit(function, *args, **kwargs).result()


def parse_like_a_lint(parse: Callable[[str], cst.Module], source: str) -> bool:
    """Parse `source` with `parse` as a lint would (refused when nested too deeply for the parser, and on
    the large-stack thread, with the collector paused): whether it parsed. For the daemon, which parses
    the files of its checks ahead of the next one (tapelint.incremental.parse_ahead)."""
    if nested_too_deeply(source) is not None:
        return False
    try:
        guarded(parse, source)
    except (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError):
        return False
    return True


def guarded(function, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Run `function` as the parser needs: on the large-stack thread, with a high recursion limit and the
    cyclic collector paused."""
    with _collector_paused():
        return _on_big_stack(_with_deep_recursion, function, *args, **kwargs)


def _with_deep_recursion(function, *args, **kwargs):  # type: ignore[no-untyped-def]
    with _deep_recursion():
        return function(*args, **kwargs)

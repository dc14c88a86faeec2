"""What the editor server writes to its log (the editor's output panel): one line per event, no traceback,
even for the messages pygls could not read, which it logs with a whole traceback."""

from __future__ import annotations

import logging
import sys

import pytest

pytest.importorskip("pygls")

from tapelint.lsp import OneLineFormatter  # noqa: E402


def _record(message: str, args: tuple = (), exc_info=None) -> logging.LogRecord:  # type: ignore[no-untyped-def]
    return logging.LogRecord("pygls.protocol", logging.ERROR, __file__, 1, message, args, exc_info)


# What pygls logged for a didChange whose version was null (cattrs raises an exception group).
GROUP_TRACEBACK = """  + Exception Group Traceback (most recent call last):
  |   File "pygls/protocol/json_rpc.py", line 480, in structure_message
  |     return self._converter.structure(data, notification_type)
  |   File "<cattrs generated structure>", line 25, in structure_DidChangeTextDocumentNotification
  |     if errors: raise __c_cve('While structuring ' + 'DidChangeTextDocumentNotification', errors, __cl)
  | cattrs.errors.ClassValidationError: While structuring DidChangeTextDocumentNotification (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "<cattrs generated structure>", line 5, in structure_VersionedTextDocumentIdentifier
    | TypeError: an int is needed for 'version'
    +------------------------------------
"""


def test_a_message_pygls_could_not_read_is_one_line_with_its_innermost_error():
    record = _record("Unable to deserialize message\n%s", (GROUP_TRACEBACK,))
    line = OneLineFormatter().format(record)
    assert line == "tapelint server: Unable to deserialize message: TypeError: an int is needed for 'version'"


def test_a_logged_exception_is_one_line():
    try:
        [].jsonrpc  # type: ignore[attr-defined]
    except AttributeError:
        record = _record("Unable to handle message", exc_info=sys.exc_info())
    line = OneLineFormatter().format(record)
    assert line == "tapelint server: Unable to handle message: AttributeError: 'list' object has no attribute 'jsonrpc'"
    assert "\n" not in OneLineFormatter().format(_record("first\nsecond"))

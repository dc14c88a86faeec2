"""What reports print is made safe for where it goes. File names and string literals are the user's (or an
attacker's): a name may hold bytes that are not UTF-8 (kept by Python as lone surrogates), control
characters, ESC sequences that move a terminal's cursor, or a newline that would split a finding in two."""

from __future__ import annotations

import unicodedata
from typing import Any

# Control, format (bidi overrides, zero-width), surrogate, line and paragraph separator characters.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # a byte of a file name that is not UTF-8 (surrogateescape)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` for a terminal or a log: control and format characters and undecodable bytes shown as
    visible escapes (`\\x1b`, `\\n`, `\\xff`, `\\u202e`), so that nothing in it moves the cursor,
    recolours the screen or starts a new line."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(c) if unicodedata.category(c) in _HIDDEN else c for c in text)


def _xml_legal(code: int) -> bool:
    return (code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
            or 0x10000 <= code <= 0x10FFFF)


def xml_text(text: str) -> str:
    """`text` with only characters XML 1.0 allows (the others, C0 controls and lone surrogates among them,
    as visible escapes); ElementTree escapes `<`, `&` and quotes but writes these as they are."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(c if _xml_legal(ord(c)) else _escape(c) for c in text)


def unicode_text(text: str) -> str:
    """`text` as valid Unicode for JSON readers (strict ones refuse a lone surrogate): the bytes of a
    non-UTF-8 file name as `\\xff` escapes, any other lone surrogate as `\\udXXX`."""
    if text.isascii():
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no byte stands for
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def unicode_strings(data: Any) -> Any:
    """Every string in a JSON-shaped value passed through `unicode_text`."""
    if isinstance(data, str):
        return unicode_text(data)
    if isinstance(data, dict):
        return {unicode_text(k) if isinstance(k, str) else k: unicode_strings(v) for k, v in data.items()}
    if isinstance(data, list):
        return [unicode_strings(v) for v in data]
    return data

"""File names and string literals in reports: a name that is not UTF-8 (bytes kept as lone surrogates), ESC
sequences, other control characters and newlines. Machine formats stay parseable, terminal formats show
visible escapes and keep one finding on one line."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tapelint.diagnostic import Diagnostic, ProbeVerdict, Severity
from tapelint.reporters import reporter
from tapelint.reporters.statistics import render_statistics
from tapelint.reporters.terminal import Paint, render_entry

NAMES = [
    "a/bad\udcff.py",              # the byte 0xff of a name that is not UTF-8
    "b/esc\x1b[2Kx.py",            # erases the terminal line
    "b/new\nline.py",
    "c/ctl\x01\x7f\u202e.py",      # C0, DEL and a right-to-left override
]
MESSAGE = 'saves to `"./w\x1b[2K\x1b[1Gx\x01"`'
HIDDEN = ("\x1b", "\x01", "\x7f", "\u202e", "\udcff")


def _findings() -> list[Diagnostic]:
    return [Diagnostic(name, 2, 4, 2, 9, "TL502", "removed-keras-api", MESSAGE, Severity.ERROR,
                       probe=ProbeVerdict("confirmed", "bell\x07")) for name in NAMES]


def test_json_report_parses_and_holds_only_valid_unicode():
    text = reporter("json")(_findings(), files_checked=4)
    text.encode("utf-8")  # no lone surrogate in the output
    paths = [d["path"] for d in json.loads(text)["diagnostics"]]
    assert paths[0] == "a/bad\\xff.py"
    assert paths[1:] == NAMES[1:]  # control characters are JSON escapes: the exact name comes back
    assert all(not 0xD800 <= ord(c) <= 0xDFFF for path in paths for c in path)


def test_sarif_report_parses_and_keeps_the_bytes_of_a_non_utf8_name_in_its_uri():
    text = reporter("sarif")(_findings(), files_checked=4)
    text.encode("utf-8")
    results = json.loads(text)["runs"][0]["results"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert uris[0] == "a/bad%FF.py" and uris[1] == "b/esc%1B%5B2Kx.py" and uris[2] == "b/new%0Aline.py"
    assert results[1]["message"]["text"] == MESSAGE


def test_junit_report_is_well_formed_xml_with_visible_escapes():
    text = reporter("junit")(_findings(), files_checked=4)
    root = ET.fromstring(text.encode("utf-8"))
    suites = [suite.get("name") for suite in root.iter("testsuite")]
    assert suites == ["a/bad\\xff.py", "b/esc\\x1b[2Kx.py", "b/new\nline.py", "c/ctl\\x01\x7f\u202e.py"]
    failure = next(root.iter("failure"))
    assert failure.get("message") == 'saves to `"./w\\x1b[2K\\x1b[1Gx\\x01"`'


@pytest.mark.parametrize("text_format", ["concise", "full"])
def test_text_report_shows_control_characters_as_escapes_one_finding_a_line(text_format: str):
    findings = _findings()
    if text_format == "concise":
        text = reporter("text")(findings, files_checked=4, quiet=True)
    else:
        text = "".join(render_entry(d, "full", Paint(False), None) for d in findings)
    text.encode("utf-8")
    for hidden in HIDDEN:
        assert hidden not in text, repr(hidden)
    headers = [line for line in text.splitlines() if ": TL502 " in line]
    assert len(headers) == 4 and headers[2].startswith("b/new\\nline.py:2:5: TL502")
    assert "a/bad\\xff.py" in headers[0] and "esc\\x1b[2Kx.py" in headers[1] and "\\u202e" in headers[3]
    assert 'saves to `"./w\\x1b[2K\\x1b[1Gx\\x01"`' in headers[0]
    assert "probe: confirmed: bell\\x07" in text


def test_github_annotations_are_one_line_each_without_control_characters():
    text = reporter("github")(_findings(), files_checked=4)
    text.encode("utf-8")
    lines = text.splitlines()
    assert len(lines) == 4 and all(line.startswith("::error file=") for line in lines)
    assert "file=b/new%0Aline.py" in lines[2]
    for hidden in HIDDEN:
        assert hidden not in text, repr(hidden)


def test_statistics_name_only_rules():
    # Counts per rule carry no file name or message: nothing of the user's reaches them.
    assert render_statistics(_findings()) == "4\tTL502\t[ ] removed-keras-api\n"

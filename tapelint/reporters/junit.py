"""JUnit XML: one test suite per file with findings, one failed test case per finding."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from tapelint.diagnostic import Diagnostic
from tapelint.escape import xml_text
from tapelint.reporters.text import location


def render_junit(diagnostics: list[Diagnostic], files_checked: int = 0, **_: object) -> str:
    root = ET.Element("testsuites", name="tapelint", tests=str(max(len(diagnostics), 1)),
                      failures=str(len(diagnostics)), errors="0")
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name="tapelint", tests="1", failures="0", errors="0",
                              skipped="0")
        ET.SubElement(suite, "testcase", name=f"no findings ({files_checked} files checked)", classname="tapelint")
    for path, group in groupby(sorted(diagnostics, key=Diagnostic.sort_key), key=lambda d: d.path):
        found = list(group)
        name = xml_text(path)
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(found)), failures=str(len(found)),
                              errors="0", skipped="0")
        for d in found:
            where = f"cell {d.cell}:{d.line}:{d.column + 1}" if d.cell is not None else f"{d.line}:{d.column + 1}"
            case = ET.SubElement(suite, "testcase", name=f"{d.code} {d.name} at {where}", classname=name,
                                 file=name, line=str(d.line))
            failure = ET.SubElement(case, "failure", message=xml_text(d.message), type=d.code)
            # The path as `location` prints it (its control characters already escaped).
            failure.text = xml_text(f"{location(d)}: {d.code} {d.message} [{d.name}] ({d.severity.value})")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

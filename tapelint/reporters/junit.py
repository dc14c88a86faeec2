"""JUnit XML: one test suite per file with findings, one test case per finding. A finding that fails the run
(at or above `--fail-on`, not refuted by the probe) is a failed case; any other is a passing case that
carries the finding in its `system-out`, so that the report and the exit status agree (Jenkins and GitLab
count those cases as passed and show the text on the case)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from tapelint.diagnostic import Diagnostic, Severity
from tapelint.escape import xml_text
from tapelint.reporters.text import location
from tapelint.reporters.related import related_suffix


def fails(d: Diagnostic, fail_on: str) -> bool:
    """Whether this finding makes the run exit 1 (tapelint.commands.exit_code decides the same way)."""
    refuted = d.probe is not None and d.probe.status == "refuted"
    return not refuted and d.severity.rank >= Severity(fail_on).rank


def render_junit(diagnostics: list[Diagnostic], files_checked: int = 0, *, fail_on: str = "warning",
                 **_: object) -> str:
    failing = sum(1 for d in diagnostics if fails(d, fail_on))
    root = ET.Element("testsuites", name="tapelint", tests=str(max(len(diagnostics), 1)),
                      failures=str(failing), errors="0")
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name="tapelint", tests="1", failures="0", errors="0",
                              skipped="0")
        ET.SubElement(suite, "testcase", name=f"no findings ({files_checked} files checked)", classname="tapelint")
    for path, group in groupby(sorted(diagnostics, key=Diagnostic.sort_key), key=lambda d: d.path):
        found = list(group)
        name = xml_text(path)
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(found)),
                              failures=str(sum(1 for d in found if fails(d, fail_on))), errors="0", skipped="0")
        for d in found:
            where = f"cell {d.cell}:{d.line}:{d.column + 1}" if d.cell is not None else f"{d.line}:{d.column + 1}"
            case = ET.SubElement(suite, "testcase", name=f"{d.code} {d.name} at {where}", classname=name,
                                 file=name, line=str(d.line))
            # The path as `location` prints it (its control characters already escaped).
            text = xml_text(f"{location(d)}: {d.code} {d.message}{related_suffix(d)} [{d.name}] ({d.severity.value})")
            if fails(d, fail_on):
                failure = ET.SubElement(case, "failure", message=xml_text(d.message), type=d.code)
                failure.text = text
            else:
                ET.SubElement(case, "system-out").text = text
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

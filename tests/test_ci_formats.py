"""The CI report formats as the services read them: GitLab Code Quality (parsed, fingerprints stable when code
moves), Azure Pipelines logging commands (escaped as the agent reads them) and JUnit following `--fail-on`."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tapelint import cli
from tapelint.diagnostic import Diagnostic, ProbeVerdict, Severity
from tapelint.reporters import reporter

TRAIN = """\
import tensorflow as tf

metric = tf.keras.metrics.Mean()


def build_optimizer():
    return tf.keras.optimizers.Adam(lr=0.001, decay=0.1)


def evaluate():
    metric.reset_states()
    metric.reset_states()
"""


def _tapelint(argv: list[str], capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setenv("TAPELINT_NO_DAEMON", "1")
    monkeypatch.setattr(sys, "argv", ["tapelint", *argv])
    with pytest.raises(SystemExit) as done:
        cli.main()
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.tapelint]\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(TRAIN, encoding="utf-8")
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _gitlab(capsys, monkeypatch, *args: str) -> list[dict]:
    code, out, _ = _tapelint(["--format", "gitlab", *args], capsys, monkeypatch)
    assert code == 1
    return json.loads(out)


def test_gitlab_report_has_the_code_quality_fields(project, capsys, monkeypatch):
    issues = _gitlab(capsys, monkeypatch, "src")
    assert len(issues) == 4
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["path"] == "src/train.py"
        assert isinstance(issue["location"]["lines"]["begin"], int)
        assert re.fullmatch(r"[0-9a-f]{64}", issue["fingerprint"])
    assert len({i["fingerprint"] for i in issues}) == 4  # two identical findings still get two fingerprints
    by_line = {i["location"]["lines"]["begin"]: i for i in issues}
    assert by_line[12]["check_name"] == "TL502 removed-keras-api" and by_line[12]["severity"] == "critical"
    assert by_line[12]["description"].startswith("TL502 `metric.reset_states()` was removed")


def test_gitlab_fingerprints_survive_code_moving(project, capsys, monkeypatch):
    before = {i["fingerprint"]: i["location"]["lines"]["begin"] for i in _gitlab(capsys, monkeypatch, "src")}
    (project / "src" / "train.py").write_text("# header\n\n\n" + TRAIN, encoding="utf-8")
    after = {i["fingerprint"]: i["location"]["lines"]["begin"] for i in _gitlab(capsys, monkeypatch, "src")}
    assert set(after) == set(before)
    assert all(after[f] == before[f] + 3 for f in before)


def test_gitlab_paths_are_relative_to_the_ci_project_dir(project, capsys, monkeypatch):
    monkeypatch.setenv("CI_PROJECT_DIR", str(project))
    monkeypatch.chdir(project / "src")
    issues = _gitlab(capsys, monkeypatch, "train.py")
    assert {i["location"]["path"] for i in issues} == {"src/train.py"}


def _finding(path: str, message: str = "m", severity: Severity = Severity.ERROR, cell: int | None = None,
             code: str = "TL502") -> Diagnostic:
    return Diagnostic(path, 3, 4, 3, 9, code, "removed-keras-api", message, severity, cell=cell)


def test_azure_logging_commands_follow_the_documented_format(project, capsys, monkeypatch):
    code, out, _ = _tapelint(["--format", "azure", "src"], capsys, monkeypatch)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("##vso[task.logissue type=error;sourcepath=src/train.py;linenumber=7;"
                               "columnnumber=37;code=TL501]`lr=` on `Adam`")
    assert lines[1].startswith("##vso[task.logissue type=warning;sourcepath=src/train.py;linenumber=7;"
                               "columnnumber=47;code=TL501]`decay=` on `Adam`")
    assert lines[2].startswith("##vso[task.logissue type=error;sourcepath=src/train.py;linenumber=11;"
                               "columnnumber=12;code=TL502]`metric.reset_states()` was removed")


def test_azure_escapes_hostile_names_and_messages():
    text = reporter("azure")([_finding("a;b]c\nd%e.py", "100% wrong;\r\nnext] line", Severity.INFO),
                              _finding("nb.ipynb", cell=2)])
    lines = text.splitlines()
    assert len(lines) == 2  # nothing in a name or a message starts a new log line
    assert lines[0] == ("##vso[task.logissue type=warning;sourcepath=a%3Bb%5Dc%0Ad%AZP25e.py;linenumber=3;"
                        "columnnumber=5;code=TL502]100%AZP25 wrong;%0D%0Anext] line [removed-keras-api]")
    properties = lines[0][len("##vso[task.logissue "):lines[0].index("]")].split(";")
    assert [p.split("=")[0] for p in properties] == ["type", "sourcepath", "linenumber", "columnnumber", "code"]
    assert lines[1] == ("##vso[task.logissue type=error;sourcepath=nb.ipynb;code=TL502]"
                        "cell 2, line 3, column 5: m [removed-keras-api]")
    assert "\x1b" not in reporter("azure")([_finding("x\x1b[2J.py")])


def _cases(xml: str) -> dict[str, str]:
    """Each test case's name -> "failure" or "passed"."""
    root = ET.fromstring(xml)
    return {case.get("name", ""): "failure" if case.find("failure") is not None else "passed"
            for case in root.iter("testcase")}


def test_junit_marks_only_findings_that_fail_the_run_as_failures():
    found = [_finding("a.py", severity=Severity.ERROR), _finding("a.py", code="TL501", severity=Severity.WARNING),
             _finding("b.py", code="TL900", severity=Severity.INFO),
             Diagnostic("b.py", 9, 0, 9, 1, "TL001", "x", "refuted", Severity.ERROR,
                        probe=ProbeVerdict("refuted", "the gradient flows"))]
    xml = reporter("junit")(found, 2, fail_on="warning")
    root = ET.fromstring(xml)
    assert root.get("failures") == "2" and root.get("tests") == "4"
    assert sorted(_cases(xml).values()) == ["failure", "failure", "passed", "passed"]
    passed = [case for case in root.iter("testcase") if case.find("failure") is None]
    assert all("b.py:" in (case.findtext("system-out") or "") for case in passed)
    xml = reporter("junit")(found, 2, fail_on="error")
    assert ET.fromstring(xml).get("failures") == "1"
    assert [s.get("failures") for s in ET.fromstring(xml).iter("testsuite")] == ["1", "0"]
    assert ET.fromstring(reporter("junit")(found, 2, fail_on="info")).get("failures") == "3"


def test_junit_from_the_command_line_agrees_with_the_exit_status(project, capsys, monkeypatch):
    code, out, _ = _tapelint(["--format", "junit", "--fail-on", "error", "src"], capsys, monkeypatch)
    cases = _cases(out)
    assert code == 1 and list(cases.values()).count("failure") == 3 and list(cases.values()).count("passed") == 1
    assert cases["TL501 removed-optimizer-argument at 7:47"] == "passed"  # a warning, below --fail-on error
    (project / "warn.py").write_text("import tensorflow as tf\n\nopt = tf.keras.optimizers.Adam(decay=0.1)\n",
                                     encoding="utf-8")
    code, out, _ = _tapelint(["--format", "junit", "--fail-on", "error", "warn.py"], capsys, monkeypatch)
    assert code == 0 and ET.fromstring(out).get("failures") == "0" and list(_cases(out).values()) == ["passed"]
    assert "TL501" in out


def test_gitlab_report_of_hostile_names_parses_as_valid_unicode(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    names = ["a/bad\udcff.py", "b/esc\x1b[2Kx.py", "b/new\nline.py"]
    text = reporter("gitlab")([_finding(name, 'saves to `"./w\x1b[2K"`') for name in names])
    text.encode("utf-8")  # no lone surrogate
    issues = json.loads(text)
    assert [i["location"]["path"] for i in issues] == ["a/bad\\xff.py", *names[1:]]
    assert len({i["fingerprint"] for i in issues}) == 3
    assert "\udcff" not in reporter("azure")([_finding(names[0])])

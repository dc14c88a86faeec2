"""`tapelint probe`'s run limits: `--timeout` / `probe.timeout` and `--memory-limit` / `probe.memory-limit` refuse
NaN, infinity, zero, negative and absurd values with one line and exit 2, before anything runs (no TensorFlow
needed). `--timeout nan` once turned the time limit off, and a huge `--memory-limit` was an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tapelint.cli import app
from tapelint.config import parse
from tapelint.errors import ConfigError, InputError
from tapelint.probe import run_probe


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("import time\ntime.sleep(1000)\n", encoding="utf-8")
    return path


def _refused(arguments: list[str]) -> str:
    result = CliRunner().invoke(app, ["probe", *arguments], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tapelint: error: "), result.output
    return lines[0]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5", "604801", "1e300"])
def test_a_timeout_that_is_not_a_sane_number_of_seconds_is_a_usage_error(script: Path, value: str):
    line = _refused([str(script), "--timeout", value])
    assert "--timeout must be a number of seconds above 0 and at most 604800 (a week)" in line


@pytest.mark.parametrize("value", ["1", "0", "-1", "255", "99999999999999999999", str(2 ** 44 + 1)])
def test_a_memory_limit_out_of_range_is_a_usage_error(script: Path, value: str):
    line = _refused([str(script), "--memory-limit", value])
    assert "--memory-limit must be a whole number of megabytes from 256" in line and value in line


@pytest.mark.parametrize(("key", "value"), [("timeout", "nan"), ("timeout", "inf"), ("timeout", "1e9"),
                                            ("memory-limit", "1"), ("memory-limit", "99999999999999999999"),
                                            ("memory-limit", "512.0")])
def test_the_same_values_in_the_config_are_refused_too(script: Path, key: str, value: str):
    (script.parent / "pyproject.toml").write_text(f"[tool.tapelint.probe]\n{key} = {value}\n", encoding="utf-8")
    line = _refused([str(script)])
    assert f"pyproject.toml: `probe.{key}`" in line


def test_the_library_refuses_them_before_starting_anything(script: Path):
    with pytest.raises(InputError, match="--timeout must be"):
        run_probe(script, timeout=float("nan"))
    with pytest.raises(InputError, match="--memory-limit must be"):
        run_probe(script, memory_limit_mb=10 ** 20)


def test_good_limits_are_read_from_the_config():
    config = parse({"probe": {"timeout": 600, "memory-limit": 4096}}, "/p/pyproject.toml", "/p")
    assert dict(config.probe) == {"timeout": 600.0, "memory-limit": 4096}
    with pytest.raises(ConfigError, match="`probe.memory-limit` must be int"):
        parse({"probe": {"memory-limit": True}}, "/p/pyproject.toml", "/p")

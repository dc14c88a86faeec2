"""Every number in the settings is checked: TOML has `nan` and `inf`, and a `nan` limit once passed the
"must be positive" test and silently turned its rule off."""

from __future__ import annotations

import math

import pytest

from tapelint import registry
from tapelint.config import parse
from tapelint.errors import ConfigError
from tapelint.probe_settings import PROBE_DEFAULTS

# (table, key, type name) for every numeric setting: each rule's options, and the probe's.
NUMERIC = [(rule.name, key, kind) for rule in registry.index() for key, kind in rule.options
           if kind in ("int", "float")] + [("probe", key, kind.__name__) for key, (_, kind, _) in PROBE_DEFAULTS.items()
                                           if kind in (int, float)]


def _table(section: str, key: str, value: object) -> dict:
    return {section: {key: value}}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 0.0, -1.0])
def test_every_numeric_option_must_be_a_finite_number_above_zero(value: float):
    assert any(section == "probe" for section, _, _ in NUMERIC) and any(s != "probe" for s, _, _ in NUMERIC)
    for section, key, kind in NUMERIC:
        if kind == "int" and not math.isfinite(value):
            continue  # TOML has no infinite or nan integers; a float there is refused by its type
        number = int(value) if kind == "int" else value
        with pytest.raises(ConfigError) as raised:
            parse(_table(section, key, number), "/p/pyproject.toml", "/p")
        message = str(raised.value)
        assert message.startswith("/p/pyproject.toml: ") and f"`{section}.{key}`" in message, message
        assert "\n" not in message


def test_fractions_are_at_most_one_and_good_numbers_pass():
    with pytest.raises(ConfigError, match="at most 1"):
        parse({"probe": {"dead-relu-fraction": 1.5}}, "/p/pyproject.toml", "/p")
    config = parse({"probe": {"dead-relu-fraction": 1.0, "timeout": 60},
                    "learning-rate-too-high": {"adaptive-max": 0.2, "accumulating-max": 10}},
                   "/p/pyproject.toml", "/p")
    assert dict(config.probe)["timeout"] == 60.0
    assert config.options_for("learning-rate-too-high") == {"adaptive-max": 0.2, "accumulating-max": 10.0}

"""The probe's thresholds and their validation. Light on purpose: config loading imports it, and the
static pass must not import tensorflow."""

from __future__ import annotations

from typing import Any

from tapelint.errors import ConfigError

# key -> (default, type, where the default comes from)
PROBE_DEFAULTS: dict[str, tuple[Any, type, str]] = {}


def validate_probe_settings(table: dict[str, Any], where: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for key, value in table.items():
        if key not in PROBE_DEFAULTS:
            known = ", ".join(sorted(PROBE_DEFAULTS)) or "none"
            raise ConfigError(f"{where}: unknown key `{key}` in [tool.tapelint.probe] (known: {known})")
        default, expected, _ = PROBE_DEFAULTS[key]
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
            raise ConfigError(f"{where}: `probe.{key}` must be {expected.__name__}, not {type(value).__name__}")
        settings[key] = value
    return settings


def probe_settings(overrides: dict[str, Any] | tuple[tuple[str, Any], ...] = ()) -> dict[str, Any]:
    values = {key: spec[0] for key, spec in PROBE_DEFAULTS.items()}
    values.update(dict(overrides))
    return values

"""The probe's thresholds and their validation. Light on purpose: config loading imports it, and the
static pass must not import tensorflow."""

from __future__ import annotations

from typing import Any

import math

from tapelint.errors import ConfigError

# Bounds of the run limits (`--timeout` / `probe.timeout`, `--memory-limit` / `probe.memory-limit`). A week is
# far past any probe of a few steps; past it a number is a typo. 256 MB: TensorFlow cannot even be imported
# under less (measured: its libraries fail to map at 200 MB). 2**44 MB (16 EiB) is what setrlimit takes in
# bytes on a 64-bit system.
TIMEOUT_MAX_S = 7 * 24 * 3600.0
MEMORY_LIMIT_MIN_MB = 256
MEMORY_LIMIT_MAX_MB = 2 ** 44

# key -> (default, type, where the default comes from)
PROBE_DEFAULTS: dict[str, tuple[Any, type, str]] = {
    "steps": (1, int, "Training steps to run before the probe stops the script. One step shows None, zero and NaN "
                      "gradients and the first update; a few more show dead units growing."),
    "timeout": (300.0, float, "Seconds before the child process is killed. A first step of a VGG-sized model on CPU "
                              "plus the TensorFlow import fits well inside five minutes."),
    "memory-limit": (None, int, "Megabytes of heap the child may use (RLIMIT_DATA); none by default. At least 256 "
                                "(TensorFlow does not import under that), at most 2**44."),
    "dead-relu-fraction": (0.7, float, "AUTOTRAINER's dying-ReLU threshold (gamma = 0.7) and DeepDiagnosis's dead-node "
                                       "threshold (70%); TheDeepChecker's 50% is for activations, not gradients. A healthy "
                                       "ReLU layer has almost no units that are silent for a whole batch."),
    "dead-relu-min-batch": (8, int, "Below 8 samples a unit can be silent for the whole batch by chance (0.5**8 = 0.4% "
                                    "per healthy unit at 8), so smaller batches are not judged."),
    "vanishing-ratio": (1e-3, float, "AUTOTRAINER's beta1: the first kernel's mean |gradient| below 1/1000 of the last "
                                     "kernel's."),
    "vanishing-floor": (1e-4, float, "AUTOTRAINER's beta2: and the first kernel's mean |gradient| itself below 1e-4. "
                                     "TheDeepChecker's 1e-6 floor alone misses deep sigmoid stacks of moderate depth; "
                                     "combined with the ratio, 1e-4 does not flag healthy nets."),
    "exploding-ratio": (70.0, float, "AUTOTRAINER's beta3: the first kernel's mean |gradient| above 70 times the last "
                                     "kernel's."),
    "exploding-floor": (1.0, float, "And the first kernel's mean |gradient| above 1.0 (a healthy kernel's is 1e-4 to "
                                    "1e-2). Keeps the ratio test from firing on small, well-scaled gradients; "
                                    "TheDeepChecker's absolute 1e6 is for gradients that already overflow."),
    "update-ratio-max": (0.1, float, "TheDeepChecker's upper bound on log10(|dw|/|w|) is -1: one update larger than a "
                                     "tenth of the weights. Adam at 0.01 moves a Dense(64) kernel on 512 inputs by about "
                                     "0.17 of its norm in the first step; Adam at 0.001 by about 0.02."),
    "input-max": (10.0, float, "Non-negative inputs above this are raw intensities or counts (0..255 images). UMLAUT "
                               "and DeepDiagnosis flag anything outside [-1, 1], which also flags standardized data; "
                               "10 leaves room for z-scores and [0, 1] or [-1, 1] images."),
    "initial-loss-ratio": (1.0, float, "TheDeepChecker's dev_ratio: the first loss of a classifier more than "
                                       "ratio * ln(classes) away from ln(classes), the loss of a uniform guess."),
    "saturated-fraction": (0.5, float, "DeepDiagnosis flags saturation when more than 50% of outputs are saturated. Here "
                                       "a sample is saturated when the loss clips its probability (0 or 1 in float32, "
                                       "on either side), so the clipped loss passes no gradient for it."),
    "synthetic-data": ("off", str, "`true` or \"missing\": synthetic data and random weights stand in for data sources "
                                   "and pretrained weights that are not on this machine; \"always\": for every data "
                                   "source; `false` or \"off\": never (as `--synthetic-data`)."),
}

SYNTHETIC_DATA_MODES = {True: "missing", False: "off", "missing": "missing", "always": "always", "off": "off"}


def validate_probe_settings(table: dict[str, Any], where: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for key, value in table.items():
        if key not in PROBE_DEFAULTS:
            known = ", ".join(sorted(PROBE_DEFAULTS)) or "none"
            raise ConfigError(f"{where}: unknown key `{key}` in [tool.tapelint.probe] (known: {known})")
        default, expected, _ = PROBE_DEFAULTS[key]
        if key == "synthetic-data" and (isinstance(value, bool)
                                        or (isinstance(value, str) and value in SYNTHETIC_DATA_MODES)):
            value = SYNTHETIC_DATA_MODES[value]
        elif key == "synthetic-data":
            raise ConfigError(f"{where}: `probe.synthetic-data` must be true, false, \"missing\" or \"always\", "
                              f"not {value!r}")
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
            raise ConfigError(f"{where}: `probe.{key}` must be {expected.__name__}, not {type(value).__name__}")
        problem = run_limit_problem(key, value)
        if problem:
            raise ConfigError(f"{where}: `probe.{key}` {problem}")
        if not isinstance(value, bool) and isinstance(value, (int, float)) and (value <= 0 or not math.isfinite(value)):
            raise ConfigError(f"{where}: `probe.{key}` must be a finite number above 0, not {value!r}")
        settings[key] = value
    return settings


def run_limit_problem(key: str, value: Any) -> str | None:
    """What is wrong with a value of `timeout` or `memory-limit` (as the rest of a one-line message), or None.
    NaN passed every `<= 0` test and turned the time limit off; a huge memory limit overflowed setrlimit."""
    if key == "timeout":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 0 < value <= TIMEOUT_MAX_S:
            return f"must be a number of seconds above 0 and at most {TIMEOUT_MAX_S:g} (a week), not {value!r}"
    elif key == "memory-limit" and value is not None:
        if isinstance(value, bool) or not isinstance(value, int) or \
                not MEMORY_LIMIT_MIN_MB <= value <= MEMORY_LIMIT_MAX_MB:
            return (f"must be a whole number of megabytes from {MEMORY_LIMIT_MIN_MB} (TensorFlow does not start "
                    f"under that) to 2**44, not {value!r}")
    return None


def probe_settings(overrides: dict[str, Any] | tuple[tuple[str, Any], ...] = ()) -> dict[str, Any]:
    values = {key: spec[0] for key, spec in PROBE_DEFAULTS.items()}
    values.update(dict(overrides))
    return values

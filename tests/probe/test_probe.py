"""The runtime probe, end to end: real TensorFlow, small models, synthetic data. Each child run costs a
TensorFlow import, so the runs are module-scoped fixtures shared by the assertions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tensorflow")

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path("tests/probe/scripts")


def tapelint(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tapelint", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def script(name: str) -> str:
    return str(SCRIPTS / f"{name}.py")


def probe_json(name: str, *options: str) -> tuple[int, dict]:
    done = tapelint("probe", script(name), "--format", "json", *options)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def by_code(diagnostics: list[dict], code: str) -> list[dict]:
    return [d for d in diagnostics if d["code"] == code]


# ---------------------------------------------------------------------------------------------------
# Seed 1: no optimizer step; then the step added, with Adam at 0.01 on 0..255 images


@pytest.fixture(scope="module")
def seed1_no_step(tmp_path_factory) -> tuple[int, dict]:
    config = tmp_path_factory.mktemp("cfg") / "pyproject.toml"
    # The frozen backbone lives in _seed1_model.py, which the static pass of this file does not see,
    # so give TL201 the transfer-learning limit that seed 1 itself (one file) gets on its own.
    config.write_text("[tool.tapelint.learning-rate-too-high]\nadaptive-max = 0.005\n")
    done = tapelint(script("seed1_no_step"), "--probe", script("seed1_no_step"), "--format", "json",
                    "--config", str(config))
    return done.returncode, json.loads(done.stdout)


def test_missing_optimizer_step_confirms_optimizer_never_applied(seed1_no_step):
    code, report = seed1_no_step
    assert code == 1
    (tl001,) = by_code(report["diagnostics"], "TL001")
    assert tl001["probe"]["status"] == "confirmed"
    assert "0 of 4 trainable variables" in tl001["probe"]["evidence"]


def test_missing_optimizer_step_is_a_runtime_finding_at_the_optimizer(seed1_no_step):
    _, report = seed1_no_step
    (tl807,) = by_code(report["diagnostics"], "TL807")
    assert tl807["name"] == "weights-not-updated"
    assert (tl807["path"], tl807["line"]) == (script("seed1_no_step"), 8)  # `optimizer = ...Adam(0.01)`
    assert "never applied" in tl807["message"]


def test_learning_rate_is_not_judged_when_no_update_ran(seed1_no_step):
    _, report = seed1_no_step
    (tl201,) = by_code(report["diagnostics"], "TL201")
    assert tl201["probe"]["status"] == "not-checked"


@pytest.fixture(scope="module")
def seed1_with_step(tmp_path_factory) -> tuple[int, dict]:
    config = tmp_path_factory.mktemp("cfg") / "pyproject.toml"
    # Five steps, and a looser update limit, so that TL201 has to be confirmed by the dead units alone.
    config.write_text("[tool.tapelint.probe]\nsteps = 5\nupdate-ratio-max = 0.5\n\n"
                      "[tool.tapelint.learning-rate-too-high]\nadaptive-max = 0.005\n")
    done = tapelint(script("seed1_with_step"), "--probe", script("seed1_with_step"), "--format", "json",
                    "--config", str(config))
    return done.returncode, json.loads(done.stdout)


def test_adam_at_high_rate_on_raw_images_kills_relu_units(seed1_with_step):
    _, report = seed1_with_step
    (tl804,) = by_code(report["diagnostics"], "TL804")
    assert "`dense`" in tl804["message"] and "64 units" in tl804["message"]
    assert tl804["path"].endswith("_seed1_model.py") and tl804["line"] == 21  # the Dense(64, relu) creation
    shares = [int(p.rstrip("%")) for p in tl804["message"].split("per step: ")[1].split(";")[0].split(" -> ")]
    assert len(shares) >= 5 and shares[-1] >= 90 and shares[-1] > shares[0]


def test_dead_units_after_the_update_confirm_learning_rate_too_high(seed1_with_step):
    _, report = seed1_with_step
    (tl201,) = by_code(report["diagnostics"], "TL201")
    assert tl201["probe"]["status"] == "confirmed"
    assert "dead units appear after the first update" in tl201["probe"]["evidence"]


def test_probe_thresholds_come_from_the_config(seed1_with_step):
    _, report = seed1_with_step
    assert not by_code(report["diagnostics"], "TL808")  # update-ratio-max = 0.5 in the config


def test_unnormalized_images_are_reported(seed1_with_step):
    _, report = seed1_with_step
    (tl809,) = by_code(report["diagnostics"], "TL809")
    assert "..255" in tl809["message"]


def test_reused_tape_finding_is_refuted_by_a_loop_that_creates_a_new_tape(seed1_with_step):
    _, report = seed1_with_step
    for d in by_code(report["diagnostics"], "TL005"):
        assert d["probe"]["status"] == "refuted"


def test_first_adam_step_at_high_rate_is_too_large():
    _, report = probe_json("seed1_with_step")
    (tl808,) = by_code(report["diagnostics"], "TL808")
    assert "learning_rate=0.01" in tl808["message"]
    assert report["probe"]["steps"] == 1


# ---------------------------------------------------------------------------------------------------
# Seed 2 kept small, and one script per runtime finding


def test_seed2_loop_without_training_flag_is_reported_and_its_gradients_are_healthy():
    code, report = probe_json("seed2_small", "--steps", "2")
    assert report["probe"]["status"] == "stopped" and report["probe"]["steps"] == 2
    codes = {d["code"] for d in report["diagnostics"]}
    assert codes == {"TL812"}, report["diagnostics"]
    assert by_code(report["diagnostics"], "TL812")[0]["line"] == 35
    first = report["probe"]["measurements"][0]
    assert len(first["variables"]) == 12
    assert not any(v["none"] or v["zero"] for v in first["variables"])


def test_disconnected_head_gets_none_gradients():
    _, report = probe_json("disconnected")
    (tl801,) = by_code(report["diagnostics"], "TL801")
    assert tl801["line"] == 22 and "2 of 6" in tl801["message"] and "dense_2/kernel" in tl801["message"]


def test_log_of_zero_gives_nan_gradients():
    _, report = probe_json("nan_loss")
    (tl803,) = by_code(report["diagnostics"], "TL803")
    assert "loss nan" in tl803["message"]


def test_deep_sigmoid_stack_has_vanishing_gradients():
    _, report = probe_json("deep_sigmoid")
    (tl805,) = by_code(report["diagnostics"], "TL805")
    assert tl805["line"] == 10  # the layers' creation
    assert not by_code(report["diagnostics"], "TL806")
    assert not by_code(report["diagnostics"], "TL807")  # tiny SGD updates are not "no update"


def test_raw_softmax_saturated_by_one_adam_step_passes_no_gradient():
    _, report = probe_json("saturated_softmax")
    (tl813,) = by_code(report["diagnostics"], "TL813")
    assert tl813["line"] == 18 and "after 1 update" in tl813["message"]
    assert "4 of 4 gradients are exactly zero" in tl813["message"]
    (tl802,) = by_code(report["diagnostics"], "TL802")
    assert "all 4 trainable variables" in tl802["message"]
    assert not by_code(report["diagnostics"], "TL804")  # an all-zero gradient is not a dead unit


def test_targets_that_broadcast_against_predictions_are_reported():
    _, report = probe_json("broadcast_targets")
    (tl814,) = by_code(report["diagnostics"], "TL814")
    assert tl814["line"] == 21 and "(16,)" in tl814["message"] and "(16, 16)" in tl814["message"]


@pytest.fixture(scope="module")
def softmax_from_logits() -> tuple[int, dict]:
    done = tapelint(script("softmax_from_logits"), "--probe", script("softmax_from_logits"), "--format", "json")
    return done.returncode, json.loads(done.stdout)


def test_softmax_into_from_logits_loss_is_reported_at_the_loss(softmax_from_logits):
    _, report = softmax_from_logits
    (tl811,) = by_code(report["diagnostics"], "TL811")
    assert tl811["line"] == 10 and "every row sums to 1" in tl811["message"]


def test_softmax_into_from_logits_confirms_the_static_finding(softmax_from_logits):
    _, report = softmax_from_logits
    (tl101,) = by_code(report["diagnostics"], "TL101")
    assert tl101["probe"]["status"] == "confirmed"


def test_correct_loop_has_no_runtime_findings_and_names_the_device():
    code, report = probe_json("correct_loop", "--device", "cpu")
    assert code == 0
    assert report["diagnostics"] == []
    assert report["probe"]["status"] == "stopped" and report["probe"]["ok"]
    assert report["probe"]["device"] == "CPU:0"


# ---------------------------------------------------------------------------------------------------
# Scripts that hang, raise, exit or never train


def test_hanging_script_is_killed_with_everything_it_started(tmp_path):
    pid_file = tmp_path / "helper.pid"
    done = tapelint("probe", script("hangs"), "--timeout", "25", "--", str(pid_file))
    assert done.returncode == 1
    assert "timed out" in done.stdout and "25 s timeout" in done.stdout
    helper = int(pid_file.read_text())
    assert not _running(helper)


def _running(pid: int) -> bool:
    """True for a live process; a killed one may linger as a zombie where PID 1 does not reap."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not status.is_file() or "State:\tZ" not in status.read_text()


def test_script_error_is_reported_at_the_users_line_without_traceback():
    done = tapelint(script("raises"), "--probe", script("raises"))
    assert done.returncode == 1
    assert f"tapelint: probe: {script('raises')}:7: IndexError: index 7 is out of bounds" in done.stderr
    assert "the script's own error" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_sys_exit_is_reported_with_its_status():
    done = tapelint("probe", script("exits"))
    assert done.returncode == 1
    assert "sys.exit(3)" in done.stdout and "config missing" in done.stdout


def test_script_without_gradient_is_not_a_pass():
    done = tapelint("probe", script("no_gradient"))
    assert done.returncode == 1
    assert "never called `tape.gradient`" in done.stdout


def test_memory_limit_stops_a_script_that_allocates_too_much():
    done = tapelint("probe", script("memory_hog"), "--memory-limit", "2500")
    assert done.returncode == 1
    assert "MemoryError" in done.stdout and "memory_hog.py:4" in done.stdout


def test_device_gpu_needs_a_gpu():
    done = tapelint("probe", script("correct_loop"), "--device", "gpu", "--format", "json")
    if done.returncode == 2:
        assert done.stderr.strip() == ("tapelint: error: --device gpu was given, but TensorFlow sees no GPU on this "
                                       "machine")
    else:
        assert done.returncode == 0 and json.loads(done.stdout)["probe"]["device"].startswith("GPU")


# ---------------------------------------------------------------------------------------------------
# Usage errors (no TensorFlow run)


def test_missing_script_is_a_usage_error():
    done = tapelint("probe", "no/such/script.py")
    assert done.returncode == 2
    assert done.stderr.strip() == "tapelint: error: no/such/script.py: no such file"


def test_unknown_probe_setting_is_a_config_error(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.tapelint.probe]\ndead-relu = 0.5\n")
    done = tapelint("probe", script("correct_loop"), "--config", str(config))
    assert done.returncode == 2
    assert "unknown key `dead-relu` in [tool.tapelint.probe]" in done.stderr


def test_probe_findings_are_listed_and_explained():
    done = tapelint("rule", "TL813")
    assert done.returncode == 0
    assert "# TL813 saturated-output" in done.stdout and "`saturated-fraction`" in done.stdout


# ---------------------------------------------------------------------------------------------------
# The Python API and the shipped seed-1 example


def test_probe_step_reports_probabilities_fed_to_from_logits_and_passes_a_correct_setup():
    import numpy as np
    from tensorflow import keras

    from tapelint.probe import probe_step

    keras.utils.set_random_seed(7)
    x = np.random.default_rng(7).normal(size=(32, 6)).astype("float32")
    y = np.eye(4, dtype="float32")[np.arange(32) % 4]
    softmax_model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4, activation="softmax")])
    before = [w.numpy().copy() for w in softmax_model.weights]
    report = probe_step(softmax_model, x, y, keras.losses.CategoricalCrossentropy(from_logits=True),
                        keras.optimizers.Adam(1e-3))
    assert [d.code for d in report.findings] == ["TL811"]
    assert all((w.numpy() == b).all() for w, b in zip(softmax_model.weights, before))

    logits_model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4)])
    report = probe_step(logits_model, x, y, keras.losses.CategoricalCrossentropy(from_logits=True),
                        keras.optimizers.Adam(1e-3), steps=2)
    assert not report.findings, report.render()
    assert report.ok and report.steps == 2


def test_shipped_seed1_example_confirms_its_findings_with_numbers():
    example = ROOT / "examples" / "seed1_frozen_vgg_head.py"
    if not example.is_file():
        pytest.skip("examples/seed1_frozen_vgg_head.py is not there yet")
    done = tapelint("examples/", "--probe", "examples/seed1_frozen_vgg_head.py")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    # The probed script's TL001 (the folder-reading copy of seed 1 has one too, which the probe does not run).
    tl001 = next(i for i, line in enumerate(lines) if line.startswith("examples/seed1_") and " TL001 " in line)
    assert lines[tl001 + 1].startswith("    probe: confirmed: no weights changed")
    assert any(" TL807 " in line for line in lines)
    assert "stopped by the probe after 1 step" in done.stderr

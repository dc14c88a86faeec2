"""What the probe concludes on the programs written after issue 12: the misses it now catches, and the correct
loops it must leave alone. Every program is probed once at --steps 3 (the harder case for pooling and accumulated
updates), two at a time, in one module-scoped fixture; tests/probe/score.py scores them at --steps 3 and 10."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = "tests/probe/scripts"

MISSES = ["seed1_batch1", "broadcast_handwritten_loss", "broadcast_handwritten_loss_tf_function",
          "saturated_softmax_batch1", "saturated_softmax_right_side", "plain_variables_bias_not_applied",
          "plain_variables_bias_not_applied_reversed", "no_update_tf_function"]
CORRECT = ["persistent_two_gradients", "persistent_two_gradients_tf_function", "gradient_accumulation", "gradient_accumulation_tf_function",
           "plain_variables_correct", "large_embedding",
           "gan_two_tapes", "pairwise_ranknet", "pairwise_ranknet_tf_function", "loss_scale_skip",
           "loss_scale_skip_tf_function", "small_batch_relu_correct"]


def _probe(name: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "tapelint", "probe", f"{SCRIPTS}/{name}.py", "--steps", "3",
                           "--format", "json"], cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    names = MISSES + CORRECT
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(names, pool.map(_probe, names)))


def found(report: dict, code: str) -> list[dict]:
    return [d for d in report["diagnostics"] if d["code"] == code]


# ---------------------------------------------------------------------------------------------------------------
# Misses, now caught


def test_dead_relu_units_at_batch_one_are_found_by_pooling_samples_over_steps(reports):
    report = reports["seed1_batch1"]
    (tl804,) = found(report, "TL804")
    assert tl804["path"].endswith("_seed1_model.py") and tl804["line"] == 21  # the Dense(64, relu)
    assert "pooled over steps" in tl804["message"] and "batches of 1" in tl804["message"]
    assert int(tl804["message"].split("%")[0]) >= 90
    assert any("ran past --steps" in note for note in report["probe"]["notes"])


@pytest.mark.parametrize(("name", "line"), [("broadcast_handwritten_loss", 23),
                                            ("broadcast_handwritten_loss_tf_function", 21)])
def test_a_hand_written_loss_that_broadcasts_targets_against_predictions_is_reported(reports, name, line):
    (tl814,) = found(reports[name], "TL814")
    assert tl814["path"] == f"{SCRIPTS}/{name}.py" and tl814["line"] == line  # tf.reduce_mean(tf.square(yb - pred))
    assert "(32,) against (32, 1) into (32, 32)" in tl814["message"]


def test_a_softmax_saturated_one_sample_at_a_time_is_reported_over_pooled_samples(reports):
    (tl813,) = found(reports["saturated_softmax_batch1"], "TL813")
    assert tl813["line"] == 23 and "samples pooled over steps" in tl813["message"]


def test_probabilities_clipped_on_both_sides_count_as_saturated(reports):
    (tl813,) = found(reports["saturated_softmax_right_side"], "TL813")
    # Reported at the first step where it occurs (31 of 32 samples clipped after one update); counting only the
    # wrong side would give 12 of 32 (38%).
    share = int(tl813["message"].split("%", 1)[0])
    assert "% of the 32 samples of the batch" in tl813["message"]
    assert share >= 90, tl813["message"]


@pytest.mark.parametrize("name", ["plain_variables_bias_not_applied", "plain_variables_bias_not_applied_reversed"])
def test_an_unapplied_plain_variable_is_reported_by_its_own_name_in_either_order(reports, name):
    (tl807,) = found(reports[name], "TL807")
    assert "(`b`)" in tl807["message"] and "1 of 2" in tl807["message"]


def test_a_traced_step_that_never_applies_its_gradients_is_still_reported(reports):
    report = reports["no_update_tf_function"]
    (tl807,) = found(report, "TL807")
    assert "never applied" in tl807["message"] and tl807["line"] == 15
    assert report["probe"]["steps"] == 3  # one run of the traced step is one step, though its tape is reused


# ---------------------------------------------------------------------------------------------------------------
# Correct loops, left alone


@pytest.mark.parametrize("name", CORRECT)
def test_a_correct_loop_gets_nothing_above_info(reports, name):
    report = reports[name]
    assert report["probe"]["ok"], report["probe"]["failure"]
    assert [d for d in report["diagnostics"] if d["severity"] != "info"] == []


def test_plain_variables_are_shown_by_the_names_the_script_gives_them(reports):
    first = reports["plain_variables_correct"]["probe"]["measurements"][0]
    assert [v["name"] for v in first["variables"]] == ["w", "b"]
    assert set(first["updates"]) == {"w", "b"}


@pytest.mark.parametrize("name", ["gradient_accumulation", "gradient_accumulation_tf_function"])
def test_gradient_accumulation_is_probed_until_its_update(reports, name):
    report = reports[name]
    assert report["probe"]["steps"] >= 4  # four micro-batches per update, asked for three steps
    assert any("accumulated" in note for note in report["probe"]["notes"])


@pytest.mark.parametrize("name", ["loss_scale_skip", "loss_scale_skip_tf_function"])
def test_a_loss_scale_optimizer_skipping_overflowing_steps_is_explained(reports, name):
    notes = reports[name]["probe"]["notes"]
    assert any("update skipped: gradients not finite" in note for note in notes)


@pytest.mark.parametrize("name", ["persistent_two_gradients", "persistent_two_gradients_tf_function"])
def test_two_gradients_from_one_persistent_tape_are_one_step(reports, name):
    steps = reports[name]["probe"]["measurements"]
    assert [s["gradient_calls"] for s in steps if not s["observation"]] == [2, 2, 2]


def test_an_embedding_gradient_is_measured_over_the_rows_it_touched(reports):
    embedding = reports["large_embedding"]["probe"]["measurements"][0]["variables"][0]
    assert embedding["shape"] == [300_000, 16] and 1_000 <= embedding["touched_rows"] <= 1_280


# ---------------------------------------------------------------------------------------------------------------
# A crash that a static finding predicted


@pytest.fixture(scope="module")
def reused_tape_crash() -> dict:
    script = f"{SCRIPTS}/reused_tape_crash.py"
    done = subprocess.run([sys.executable, "-m", "tapelint", script, "--probe", script, "--format", "json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=400)
    return json.loads(done.stdout)


def test_the_runtime_error_a_static_finding_predicts_confirms_it(reused_tape_crash):
    (tl005,) = [d for d in reused_tape_crash["diagnostics"] if d["code"] == "TL005"]
    assert tl005["probe"]["status"] == "confirmed"
    assert "A non-persistent GradientTape can only be used to compute one set of gradients" in \
        tl005["probe"]["evidence"]


def test_a_crash_adds_no_missing_update_finding(reused_tape_crash):
    assert not [d for d in reused_tape_crash["diagnostics"] if d["code"] == "TL807"]

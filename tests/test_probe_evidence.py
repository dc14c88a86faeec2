"""The probe's typed evidence and the findings and confirmations drawn from it, without TensorFlow: each case is
the evidence a real probe run records (the programs in tests/probe/scripts/), built by hand."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tapelint.diagnostic import Diagnostic, Severity
from tapelint.probe.confirm import verdict_for
from tapelint.probe.evidence import (ApplyEvidence, BroadcastEvidence, Evidence, LossCall, OptimizerEvidence, Site,
                                     StepEvidence, UpdateEvidence, VariableEvidence, read_evidence)
from tapelint.probe.findings import compute_findings, evidence_notes
from tapelint.probe.report import ProbeResult
from tapelint.probe_settings import probe_settings

SETTINGS = probe_settings()
SCRIPT = "/project/train.py"


def site(line: int) -> Site:
    return Site(path=SCRIPT, line=line, end_line=line, column=4, end_column=20, function="<module>")


def var(name: str, shape: list[int], mav: float = 0.01, **kw) -> VariableEvidence:
    return VariableEvidence(name=name, shape=shape, kernel=len(shape) >= 2,
                            units=shape[-1] if len(shape) >= 2 else None, norm=mav * 10, mav=mav, **kw)


def step(index: int, variables: list[VariableEvidence], changed: dict[str, bool] | None = None,
         applies: list[ApplyEvidence] | None = None, observation: bool = False, **kw) -> StepEvidence:
    updates = None if observation else {
        name: UpdateEvidence(changed=moved, ratio=1e-3 if moved else 0.0, kernel=True)
        for name, moved in (changed if changed is not None else {v.name: True for v in variables}).items()}
    return StepEvidence(index=index, observation=observation, site=site(20), variables=variables,
                        applies=applies if applies is not None else
                        ([] if observation else [ApplyEvidence(optimizer=1)]),
                        updates=updates, batch=kw.pop("batch", 32), **kw)


def dense_vars() -> list[VariableEvidence]:
    return [var("dense/kernel", [4, 8], layer="dense"), var("dense/bias", [8], layer="dense"),
            var("dense_1/kernel", [8, 1], layer="dense_1"), var("dense_1/bias", [1], layer="dense_1")]


def evidence(*steps: StepEvidence, status: str = "stopped", **kw) -> Evidence:
    kw.setdefault("optimizers", [OptimizerEvidence(id=1, class_name="Adam", site=site(9), learning_rate=1e-3,
                                                   applies=1)])
    return Evidence(steps=list(steps), steps_completed=len(steps), status=status, **kw)


def codes(found: list[dict]) -> list[str]:
    return [f["code"] for f in found]


# -------------------------------------------------------------------------------------------------------------
# The schema


def test_evidence_reads_back_what_it_writes():
    original = evidence(step(1, dense_vars()), step(2, dense_vars(), observation=True),
                        broadcasts=[BroadcastEvidence(step=1, op="Sub", shapes=[[16], [16, 1]], output_shape=[16, 16],
                                                      site=site(21))])
    data = original.to_dict()
    assert data["optimizers"][0]["class"] == "Adam"  # the JSON key users' tools read
    assert read_evidence(data, "stopped") == original


def test_evidence_written_by_an_older_child_still_reads():
    old = {"device": "CPU:0", "gpus": [], "steps_completed": 1,
           "steps": [{"index": 1, "observation": False, "site": None, "loss": "nan", "target_shape": [],
                      "variables": [{"name": "dense/kernel", "shape": [3, 2], "kernel": True, "none": False,
                                     "zero": False, "nonfinite": True, "norm": "inf", "mav": "inf", "dead": None}],
                      "applies": [], "updates": {"dense/kernel": {"changed": True, "ratio": 0.5, "kernel": True}},
                      "batch": 8, "device": "CPU:0", "ended_by": "the probe"}],
           "optimizers": [{"id": 1, "class": "SGD", "site": None, "learning_rate": 0.1, "applies": 1}],
           "model_calls": [], "loss_calls": [], "an_unknown_key": 1}
    typed = read_evidence(old)
    assert typed.steps[0].variables[0].nonfinite and typed.optimizers[0].class_name == "SGD"
    assert "TL803" in codes(compute_findings(old, SETTINGS))


def test_the_evidence_path_imports_no_tensorflow():
    code = ("import sys, tapelint.probe.evidence, tapelint.probe.findings, tapelint.probe.confirm, "
            "tapelint.probe.report; assert 'tensorflow' not in sys.modules, 'tensorflow imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# -------------------------------------------------------------------------------------------------------------
# TL807: accumulated gradients, crashes, skipped loss-scale steps, plain variables


def unapplied(index: int) -> StepEvidence:
    return step(index, dense_vars(), changed={v.name: False for v in dense_vars()}, applies=[],
                gradients_used=True)


def test_gradients_accumulated_into_a_later_update_are_not_reported():
    found = compute_findings(evidence(unapplied(1), unapplied(2), unapplied(3), step(4, dense_vars())), SETTINGS)
    assert "TL807" not in codes(found)


def test_gradients_that_never_reach_an_optimizer_are_reported():
    found = compute_findings(evidence(unapplied(1), unapplied(2), status="ended",
                                      optimizers=[OptimizerEvidence(id=1, class_name="Adam", site=site(9))]), SETTINGS)
    (tl807,) = [f for f in found if f["code"] == "TL807"]
    assert "never applied" in tl807["message"] and tl807["line"] == 9


def test_a_step_cut_short_by_the_script_s_error_is_not_a_missing_update():
    crashed = step(1, dense_vars(), changed={v.name: False for v in dense_vars()}, applies=[],
                   ended_by="the end of the script")
    assert "TL807" not in codes(compute_findings(evidence(crashed, status="raised"), SETTINGS))
    assert "TL807" in codes(compute_findings(evidence(crashed, status="ended"), SETTINGS))


def lso_step(index: int, skipped: bool) -> StepEvidence:
    variables = [var("dense/kernel", [4, 8], nonfinite=skipped, mav="inf" if skipped else 0.01),
                 var("dense/bias", [8], nonfinite=skipped, mav="inf" if skipped else 0.01)]
    return step(index, variables, changed={v.name: not skipped for v in variables},
                applies=[ApplyEvidence(optimizer=1, nonfinite_gradients=2 if skipped else 0)], loss=1e6)


def test_a_loss_scale_optimizer_skipping_a_non_finite_step_is_not_a_finding():
    skipping = OptimizerEvidence(id=1, class_name="LossScaleOptimizer", skips_nonfinite=True, applies=3)
    run = evidence(lso_step(1, True), lso_step(2, True), lso_step(3, False), optimizers=[skipping])
    assert compute_findings(run, SETTINGS) == []
    notes = evidence_notes(run, SETTINGS)
    assert any("steps 1 and 2: update skipped: gradients not finite" in n for n in notes)


def test_non_finite_gradients_to_a_plain_optimizer_are_still_reported():
    plain = OptimizerEvidence(id=1, class_name="Adam", applies=2)
    run = evidence(lso_step(1, True), lso_step(2, False), optimizers=[plain])
    assert "TL803" in codes(compute_findings(run, SETTINGS))
    assert not any("update skipped" in n for n in evidence_notes(run, SETTINGS))


@pytest.mark.parametrize("order", [["w", "b"], ["b", "w"]])
def test_an_unupdated_plain_variable_is_named_whatever_the_list_order(order):
    variables = {"w": var("w", [3, 1]), "b": var("b", [1])}
    found = compute_findings(evidence(step(1, [variables[n] for n in order], changed={"w": True, "b": False})),
                             SETTINGS)
    (tl807,) = [f for f in found if f["code"] == "TL807"]
    assert "`b`" in tl807["message"] and "`w`" not in tl807["message"]


# -------------------------------------------------------------------------------------------------------------
# TL802, TL805: zero gradients with a visible cause, and comparisons within one tape


def test_a_bias_that_cancels_in_a_pairwise_difference_is_info_with_its_cause():
    variables = dense_vars()
    variables[3].zero, variables[3].mav, variables[3].norm = True, 0.0, 0.0
    found = compute_findings(evidence(step(1, variables, difference_site=site(23))), SETTINGS)
    (tl802,) = [f for f in found if f["code"] == "TL802"]
    assert tl802["severity"] == "info" and "by construction" in tl802["message"]
    assert "difference of two model outputs on line 23" in tl802["message"]


def test_a_zero_gradient_without_a_visible_cause_stays_an_error():
    variables = [var("dense/kernel", [4, 8], layer="dense", zero=True, mav=0.0), var("dense/bias", [8], layer="dense",
                                                                                    zero=True, mav=0.0)]
    (tl802,) = [f for f in compute_findings(evidence(step(1, variables)), SETTINGS) if f["code"] == "TL802"]
    assert "severity" not in tl802 and "all 2 trainable variables" in tl802["message"]
    diagnostics = ProbeResult.from_payload({"status": "stopped", "evidence": evidence(step(1, variables)).to_dict()},
                                           display_script=SCRIPT, settings=None, steps=1).findings
    assert any(d.code == "TL802" and d.severity is Severity.ERROR for d in diagnostics)


def test_kernels_of_two_tapes_are_not_compared_for_vanishing_gradients():
    generator = [var("g/dense/kernel", [4, 32], mav=1e-6, call=0), var("g/dense_1/kernel", [32, 8], mav=1e-6, call=0)]
    discriminator = [var("d/dense/kernel", [8, 32], mav=1e-2, call=1), var("d/dense_1/kernel", [32, 1], mav=1e-2,
                                                                        call=1)]
    assert "TL805" not in codes(compute_findings(evidence(step(1, generator + discriminator)), SETTINGS))
    same_tape = [var("g/dense/kernel", [4, 32], mav=1e-6), var("d/dense_1/kernel", [32, 1], mav=1e-2)]
    assert "TL805" in codes(compute_findings(evidence(step(1, same_tape)), SETTINGS))


def test_a_zero_kernel_gradient_is_not_a_vanishing_one():
    variables = [var("embedding/embeddings", [300_000, 16], mav=0.0, zero=True), var("dense/kernel", [16, 32]),
                 var("dense_1/kernel", [32, 1])]
    assert "TL805" not in codes(compute_findings(evidence(step(1, variables)), SETTINGS))


# -------------------------------------------------------------------------------------------------------------
# TL804 and TL813 on small batches, pooled over steps


def relu_steps(alive_per_step: list[int], units: int = 64) -> list[StepEvidence]:
    out = []
    for i, alive in enumerate(alive_per_step, start=1):
        mask = format((1 << alive) - 1, "x") if alive else "0"
        kernel = var("dense/kernel", [512, units], layer="dense", layer_class="Dense", activation="relu",
                     dead=1 - alive / units, alive=mask, layer_site=site(21))
        out.append(step(i, [kernel], batch=1))
    return out


def test_dead_units_at_batch_one_are_judged_over_pooled_samples():
    # 58% of the units fire for the first images, then only one (the seed-1 loop with one image per step).
    found = compute_findings(evidence(*relu_steps([37, 20, 18, 10] + [1] * 12)), SETTINGS)
    (tl804,) = [f for f in found if f["code"] == "TL804"]
    assert "98% of the 64 units of `dense`" in tl804["message"] and "pooled over steps 9-16" in tl804["message"]
    assert tl804["line"] == 21


def test_healthy_relu_units_at_batch_one_are_not_dead_once_pooled():
    # Each image silences about half the units, different ones each time.
    steps = []
    for i in range(16):
        kernel = var("dense/kernel", [512, 64], layer="dense", activation="relu", dead=0.5,
                     alive=format(int("".join("1" if (u * 7 + i * 3) % 2 else "0" for u in range(64)), 2), "x"))
        steps.append(step(i + 1, [kernel], batch=1))
    assert "TL804" not in codes(compute_findings(evidence(*steps), SETTINGS))


def test_too_few_samples_are_said_to_be_not_judged():
    run = evidence(*relu_steps([37, 1, 1, 1]))
    assert "TL804" not in codes(compute_findings(run, SETTINGS))
    assert any("not judged (batch 1, 4 samples" in n for n in evidence_notes(run, SETTINGS))


def dying_head_steps(silent_steps: set[int], count: int = 16, zero_everywhere: bool = False) -> list[StepEvidence]:
    """The seed's head at batch 1: where every ReLU unit is dead for the sample, the ReLU kernel's gradient is
    exactly zero while the output layer's bias still gets one (the loss passes a gradient back); with
    `zero_everywhere` the loss passes nothing back at all (a clipped probability)."""
    out = []
    for i in range(1, count + 1):
        silent = i in silent_steps
        firing = 26 if i <= 8 else 3  # the units that fire for a live sample: fewer as the head dies
        kernel = var("dense/kernel", [512, 64], layer="dense", layer_class="Dense", activation="relu",
                     dead=1.0 if silent else 1 - firing / 64, alive="0" if silent else format((1 << firing) - 1, "x"),
                     zero=silent, mav=0.0 if silent else 0.01, layer_site=site(21))
        bias = var("dense_1/bias", [2], layer="dense_1", zero=silent and zero_everywhere,
                   mav=0.0 if silent and zero_everywhere else 0.01)
        out.append(step(i, [kernel, bias], batch=1))
    return out


def test_samples_whose_relu_gradient_is_all_zero_are_pooled_as_dead_units():
    # Issue 27: 9 of 16 single-image steps kill every unit; left out, they left "7 samples with a gradient; 8
    # needed", and the dying head was never judged.
    run = evidence(*dying_head_steps({2, 4, 6, 8, 9, 11, 13, 15, 16}))
    (tl804,) = [f for f in compute_findings(run, SETTINGS) if f["code"] == "TL804"]
    assert "got an all-zero gradient from every one of 8 samples pooled over steps 9-16" in tl804["message"]
    assert "(5 of them passed none to any unit of the layer)" in tl804["message"]
    assert not [n for n in evidence_notes(run, SETTINGS) if "not judged" in n]


def test_samples_for_which_the_loss_passed_no_gradient_back_say_nothing_about_units():
    run = evidence(*dying_head_steps({2, 4, 6, 8, 9, 11, 13, 15, 16}, zero_everywhere=True))
    assert "TL804" not in codes(compute_findings(run, SETTINGS))
    (note,) = [n for n in evidence_notes(run, SETTINGS) if "not judged" in n]
    assert "7 samples that passed a gradient back; 8 needed; 9 more passed no gradient back" in note


def softmax_run(clipped_per_step: list[int], batch: int) -> Evidence:
    steps, calls = [], []
    for i, clipped in enumerate(clipped_per_step, start=1):
        zero = clipped == batch
        variables = [var("dense/kernel", [4, 2], zero=zero, mav=0.0 if zero else 0.01),
                     var("dense/bias", [2], zero=zero, mav=0.0 if zero else 0.01)]
        steps.append(step(i, variables, batch=batch))
        calls.append(LossCall(step=i, class_name="CategoricalCrossentropy", site=site(18), probability_loss=True,
                              from_logits=False, in_unit_interval=True, clipped=clipped, samples=batch, batch=batch,
                              pred_max=1.0, value=1e-7))
    return evidence(*steps, loss_calls=calls)


def test_probabilities_clipped_on_the_right_side_are_saturated_too():
    (tl813,) = [f for f in compute_findings(softmax_run([32, 32], 32), SETTINGS) if f["code"] == "TL813"]
    assert tl813["message"].startswith("100% of the 32 samples of the batch")
    assert "2 of 2 gradients are exactly zero" in tl813["message"]


def test_single_samples_are_pooled_before_saturation_is_judged():
    (tl813,) = [f for f in compute_findings(softmax_run([1, 0, 1, 1, 1, 0, 1, 1], 1), SETTINGS)
                if f["code"] == "TL813"]
    assert "75% of the 8 samples pooled over steps 1-8" in tl813["message"]
    assert "TL813" not in codes(compute_findings(softmax_run([1, 0, 0, 1, 0, 0, 1, 0], 1), SETTINGS))


def test_saturation_is_reported_from_the_first_step_where_it_occurs():
    # Small batches: the first clipped sample starts the window, wherever the fixed windows of 8 would fall.
    (tl813,) = [f for f in compute_findings(softmax_run([0] * 5 + [1] * 11, 1), SETTINGS) if f["code"] == "TL813"]
    assert "100% of the 8 samples pooled over steps 6-13" in tl813["message"]
    assert "from step 6, after 5 updates" in tl813["message"] and tl813["data"]["step"] == 6
    # One batch: 62% clipped at step 2 is where it starts; the all-zero gradient comes one step later.
    (tl813,) = [f for f in compute_findings(softmax_run([10, 20, 32], 32), SETTINGS) if f["code"] == "TL813"]
    assert tl813["message"].startswith("62% of the 32 samples of the batch") and tl813["data"]["step"] == 2
    assert "2 of 2 gradients are exactly zero at step 3" in tl813["message"]


def test_a_partly_clipped_batch_that_still_has_gradients_is_not_saturated():
    assert "TL813" not in codes(compute_findings(softmax_run([20, 24], 32), SETTINGS))


def test_a_target_broadcast_seen_by_the_op_watch_is_reported_at_the_loss():
    run = evidence(step(1, dense_vars()), broadcasts=[
        BroadcastEvidence(step=1, op="Sub", shapes=[[32], [32, 1]], output_shape=[32, 32], tainted=1, site=site(23))])
    (tl814,) = [f for f in compute_findings(run, SETTINGS) if f["code"] == "TL814"]
    assert tl814["line"] == 23 and "(32,) against (32, 1) into (32, 32)" in tl814["message"]


# -------------------------------------------------------------------------------------------------------------
# Confirmations


def tl005(line: int) -> Diagnostic:
    return Diagnostic(path=SCRIPT, line=line, column=14, end_line=line, end_column=40, code="TL005",
                      name="non-persistent-tape-reused",
                      message="`tape` is not persistent, but `tape.gradient` runs a second time: this raises "
                              "RuntimeError", severity=Severity.ERROR)


def crashed_result(error_type: str, message: str, line: int) -> ProbeResult:
    payload = {"status": "raised", "evidence": evidence(step(1, dense_vars(), applies=[],
                                                             changed={v.name: False for v in dense_vars()},
                                                             ended_by="the end of the script")).to_dict(),
               "error": {"type": error_type, "message": f"{error_type}: {message}",
                         "frame": {"path": SCRIPT, "line": line, "function": "<module>"}}}
    return ProbeResult.from_payload(payload, display_script=SCRIPT, settings=None, steps=1)


def test_the_error_a_finding_predicts_confirms_it():
    result = crashed_result("RuntimeError", "A non-persistent GradientTape can only be used to compute one set of "
                                            "gradients (or jacobians)", 28)
    assert verdict_for(result, tl005(28)).status == "confirmed"
    assert not any(d.code == "TL807" for d in result.findings)


def test_another_error_on_the_finding_s_line_does_not_confirm_it():
    result = crashed_result("ValueError", "shapes (16, 4) and (3, 8) are incompatible", 28)
    assert verdict_for(result, tl005(28)).status == "not-checked"


def test_the_first_loss_of_a_tiny_batch_is_not_judged():
    def run(batch: int) -> Evidence:
        call = LossCall(step=1, class_name="SparseCategoricalCrossentropy", site=site(18), probability_loss=True,
                        from_logits=True, classes=3, value=2.29, batch=batch)
        return evidence(step(1, dense_vars(), batch=batch), loss_calls=[call])

    assert "TL810" not in codes(compute_findings(run(2), SETTINGS))
    assert "TL810" in codes(compute_findings(run(32), SETTINGS))


def test_the_last_gradient_of_a_loss_scaled_run_may_overflow_again():
    skipping = OptimizerEvidence(id=1, class_name="LossScaleOptimizer", skips_nonfinite=True, applies=2)
    observation = lso_step(3, True)
    observation.observation, observation.applies, observation.updates = True, [], None
    run = evidence(lso_step(1, True), lso_step(2, False), observation, optimizers=[skipping])
    assert compute_findings(run, SETTINGS) == []
    always = evidence(lso_step(1, True), lso_step(2, True), optimizers=[skipping])
    assert "TL803" in codes(compute_findings(always, SETTINGS))

"""The command line as a user meets it: exit codes, formats, config, suppression, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BUGGY = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam(lr=0.001)

for x, y in [(tf.zeros((2, 4)), tf.constant([1, 2]))]:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""

CLEAN = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)
"""


def run(*args: str, cwd: Path | None = None, stdin: str | bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "tapelint", *args], cwd=cwd, input=data,
                          capture_output=True, env=env, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def out(result: subprocess.CompletedProcess) -> str:
    return result.stdout.decode()


def err(result: subprocess.CompletedProcess) -> str:
    return result.stderr.decode()


def test_findings_exit_1_and_print_path_line_column_code(project):
    result = run("train.py", cwd=project)
    assert result.returncode == 1
    assert "train.py:4:11: TL102 " in out(result)
    assert "train.py:5:38: TL501 " in out(result)
    assert "[removed-optimizer-argument]" in out(result)
    assert "Found 2 findings" in out(result)


def test_clean_file_exits_0(project):
    result = run("clean.py", cwd=project)
    assert result.returncode == 0, out(result)
    assert "All checks passed" in out(result)


def test_check_subcommand_is_the_same_as_the_short_form(project):
    assert out(run("check", "train.py", cwd=project)) == out(run("train.py", cwd=project))


def test_folder_is_walked_and_virtualenvs_are_skipped(project):
    venv = project / ".venv" / "lib"
    venv.mkdir(parents=True)
    (venv / "vendored.py").write_text(BUGGY)
    build = project / "build"
    build.mkdir()
    (build / "copy.py").write_text(BUGGY)
    result = run(".", cwd=project)
    assert result.returncode == 1
    assert "vendored.py" not in out(result) and "copy.py" not in out(result)
    assert "train.py" in out(result)


def test_exit_zero_keeps_findings_but_exits_0(project):
    result = run("--exit-zero", "train.py", cwd=project)
    assert result.returncode == 0 and "TL501" in out(result)


def test_quiet_prints_findings_without_summary(project):
    result = run("-q", "train.py", cwd=project)
    assert "Found" not in out(result) and "TL501" in out(result)


def test_select_by_prefix_and_ignore_by_name(project):
    only_keras3 = run("--select", "TL5", "train.py", cwd=project)
    assert "TL501" in out(only_keras3) and "TL102" not in out(only_keras3)
    ignored = run("--ignore", "removed-optimizer-argument", "train.py", cwd=project)
    assert "TL501" not in out(ignored) and "TL102" in out(ignored)


def test_unknown_selector_is_a_usage_error(project):
    result = run("--select", "TL7777", "train.py", cwd=project)
    assert result.returncode == 2
    assert err(result).startswith("tapelint: error:") and "TL7777" in err(result)
    assert "Traceback" not in err(result)


def test_json_output_follows_the_documented_schema(project):
    result = run("--format", "json", "train.py", cwd=project)
    assert result.returncode == 1
    payload = json.loads(out(result))
    assert set(payload) >= {"version", "diagnostics", "summary"}
    first = payload["diagnostics"][0]
    assert set(first) >= {"path", "line", "column", "end_line", "end_column", "code", "name", "severity",
                          "confidence", "message", "fix"}
    codes = {d["code"] for d in payload["diagnostics"]}
    assert codes == {"TL102", "TL501"}
    tl501 = next(d for d in payload["diagnostics"] if d["code"] == "TL501")
    assert (tl501["line"], tl501["column"]) == (5, 38)
    assert tl501["fix"]["applicability"] == "safe"
    assert payload["summary"]["total"] == 2


def test_stdin_is_linted_under_the_given_filename(project):
    result = run("-", "--stdin-filename", "nb/train.py", stdin=BUGGY, cwd=project)
    assert result.returncode == 1
    assert "nb/train.py:5:38: TL501" in out(result)


def test_missing_path_is_one_line_error_exit_2(tmp_path):
    result = run("does_not_exist.py", cwd=tmp_path)
    assert result.returncode == 2
    assert err(result).strip() == "tapelint: error: does_not_exist.py: no such file or directory"


def test_non_utf8_file_is_one_line_error_exit_2_and_others_still_linted(project):
    (project / "latin1.py").write_bytes(b"# caf\xe9\nimport tensorflow as tf\n")
    result = run(".", cwd=project)
    assert result.returncode == 2
    assert "latin1.py: not valid UTF-8" in err(result)
    assert len(err(result).strip().splitlines()) == 1
    assert "TL501" in out(result)


def test_syntax_error_is_a_tl000_finding_and_the_run_goes_on(project):
    (project / "broken.py").write_text("import tensorflow as tf\ndef f(:\n    pass\n")
    result = run(".", cwd=project)
    assert result.returncode == 1
    assert "broken.py:2:" in out(result) and "TL000" in out(result)
    assert "TL501" in out(result)
    assert "Traceback" not in err(result)


def test_noqa_on_the_line_suppresses_by_code(project):
    text = BUGGY.replace("Adam(lr=0.001)", "Adam(lr=0.001)  # noqa: TL501")
    (project / "train.py").write_text(text)
    result = run("train.py", cwd=project)
    assert "TL501" not in out(result) and "TL102" in out(result)


def test_bare_noqa_suppresses_everything_on_its_line(project):
    text = BUGGY.replace("SparseCategoricalCrossentropy()", "SparseCategoricalCrossentropy()  # noqa")
    (project / "train.py").write_text(text)
    assert "TL102" not in out(run("train.py", cwd=project))


def test_noqa_for_another_code_does_not_suppress(project):
    text = BUGGY.replace("Adam(lr=0.001)", "Adam(lr=0.001)  # noqa: TL201")
    (project / "train.py").write_text(text)
    assert "TL501" in out(run("train.py", cwd=project))


def test_file_level_noqa_silences_the_file(project):
    (project / "train.py").write_text("# tapelint: noqa\n" + BUGGY)
    result = run("train.py", cwd=project)
    assert result.returncode == 0


def test_file_level_noqa_with_codes_silences_only_those(project):
    (project / "train.py").write_text("# tapelint: noqa: TL102\n" + BUGGY)
    result = run("train.py", cwd=project)
    assert "TL102" not in out(result) and "TL501" in out(result)


def test_config_ignore_and_per_file_ignores(project):
    (project / "pyproject.toml").write_text(
        '[tool.tapelint]\nignore = ["TL102"]\n\n[tool.tapelint.per-file-ignores]\n"legacy/*" = ["TL5"]\n'
    )
    legacy = project / "legacy"
    legacy.mkdir()
    (legacy / "old.py").write_text(BUGGY)
    result = run(".", cwd=project)
    text = out(result)
    assert "TL102" not in text
    assert "train.py:5:38: TL501" in text
    assert "old.py" not in text


def test_config_is_found_above_the_linted_path(project):
    (project / "pyproject.toml").write_text('[tool.tapelint]\nselect = ["TL102"]\n')
    sub = project / "src"
    sub.mkdir()
    (sub / "train.py").write_text(BUGGY)
    result = run("src/train.py", cwd=project)
    assert "TL102" in out(result) and "TL501" not in out(result)


def test_config_exclude_skips_matching_files(project):
    (project / "pyproject.toml").write_text('[tool.tapelint]\nextend-exclude = ["train.py"]\n')
    result = run(".", cwd=project)
    assert result.returncode == 0


def test_keras_version_2_silences_keras3_rules(project):
    (project / "pyproject.toml").write_text("[tool.tapelint]\nkeras-version = 2\n")
    result = run("train.py", cwd=project)
    assert "TL501" not in out(result) and "TL102" in out(result)


def test_rule_options_change_thresholds(project):
    # A ReLU MLP stepped by Adam at 0.1: above the default limit for adaptive optimizers (0.05).
    (project / "adam.py").write_text(
        "import tensorflow as tf\n"
        "model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation='relu'), tf.keras.layers.Dense(10)])\n"
        "opt = tf.keras.optimizers.Adam(0.1)\n"
        "loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n"
        "for x, y in batches:\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = loss_fn(y, model(x, training=True))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    opt.apply_gradients(zip(grads, model.trainable_variables))\n")
    assert "TL201" in out(run("adam.py", cwd=project))
    (project / "pyproject.toml").write_text("[tool.tapelint.learning-rate-too-high]\nadaptive-max = 0.2\n")
    assert "TL201" not in out(run("adam.py", cwd=project))


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[tool.tapelint]\nselct = ['TL001']\n", "unknown key `selct`"),
        ("[tool.tapelint]\nselect = 'TL001'\n", "`select` must be a list of strings"),
        ("[tool.tapelint]\nselect = ['TL0009']\n", "unknown rule selector 'TL0009'"),
        ("[tool.tapelint]\nkeras-version = 4\n", "`keras-version` must be 2 or 3"),
        ("[tool.tapelint.learning-rate-too-high]\nadaptive-max = 'high'\n", "must be float"),
        ("[tool.tapelint.learning-rate-too-high]\nadaptve-max = 0.1\n", "unknown option `adaptve-max`"),
        ("[tool.tapelint.learning-rate-too-high]\nadaptive-max = nan\n",
         "`learning-rate-too-high.adaptive-max` must be a finite number above 0, not nan"),
        ("[tool.tapelint\nselect = []\n", "invalid TOML"),
    ],
)
def test_broken_config_is_one_line_error_exit_2(project, toml, expected):
    (project / "pyproject.toml").write_text(toml)
    result = run("train.py", cwd=project)
    assert result.returncode == 2, out(result)
    assert expected in err(result)
    assert len(err(result).strip().splitlines()) == 1 and "Traceback" not in err(result)


def test_explicit_config_file_option(project, tmp_path_factory):
    other = tmp_path_factory.mktemp("cfg") / "pyproject.toml"
    other.write_text('[tool.tapelint]\nselect = ["TL501"]\n')
    result = run("--config", str(other), "train.py", cwd=project)
    assert "TL501" in out(result) and "TL102" not in out(result)


def test_rules_lists_every_rule_with_default_state():
    result = run("rules")
    assert result.returncode == 0
    text = out(result)
    for code in ("TL001", "TL101", "TL102", "TL201", "TL301", "TL501", "TL502"):
        assert code in text
    assert "optimizer-never-applied" in text and "error" in text


def test_rule_explains_by_code_and_by_name():
    by_code = run("rule", "TL001")
    by_name = run("rule", "optimizer-never-applied")
    assert by_code.returncode == 0 and out(by_code) == out(by_name)
    assert "## Why is this bad?" in out(by_code) and "## References" in out(by_code)


def test_unknown_rule_explanation_is_an_error():
    result = run("rule", "TL4242")
    assert result.returncode == 2 and "unknown rule" in err(result)


def test_version_flag():
    result = run("--version")
    assert result.returncode == 0 and out(result).startswith("tapelint ")


def test_jobs_gives_the_same_output_as_one_process(tmp_path):
    for index in range(20):
        (tmp_path / f"train_{index:02d}.py").write_text(BUGGY)
    single = run("-j", "1", ".", cwd=tmp_path)
    parallel = run("-j", "2", ".", cwd=tmp_path)
    assert out(single) == out(parallel)
    assert out(single).count("TL501") == 20


def test_examples_report_the_seed_findings_and_nothing_on_correct_loops():
    # --preview: the seed's optimizer that is never applied (TL001) may be a preview rule (tapelint.maturity)
    result = run("--preview", "--format", "json", "examples", cwd=ROOT)
    payload = json.loads(out(result))
    by_file: dict[str, set[str]] = {}
    for d in payload["diagnostics"]:
        by_file.setdefault(Path(d["path"]).name, set()).add(d["code"])
    assert {"TL001", "TL201", "TL301"} <= by_file["seed1_frozen_vgg_head.py"]
    assert {"TL501", "TL502"} <= by_file["seed2_vgg_cifar_loop.py"]
    assert not {name for name in by_file if name.startswith("correct_")}, by_file


def test_force_exclude_applies_exclude_to_named_files(project):
    (project / "pyproject.toml").write_text('[tool.tapelint]\nextend-exclude = ["train.py"]\n')
    assert run("train.py", cwd=project).returncode == 1  # named explicitly: linted
    assert run("--force-exclude", "train.py", cwd=project).returncode == 0


def test_unused_noqa_is_reported_when_selected_and_fixed_away(project):
    text = CLEAN.replace("learning_rate=0.001)", "learning_rate=0.001)  # noqa: TL501")
    (project / "clean.py").write_text(text)
    assert run("clean.py", cwd=project).returncode == 0  # off by default
    result = run("--extend-select", "TL900", "clean.py", cwd=project)
    assert result.returncode == 1 and "TL900 Unused `noqa` for TL501" in out(result)
    fixed = run("--extend-select", "TL900", "--fix", "clean.py", cwd=project)
    assert fixed.returncode == 0, out(fixed)
    assert (project / "clean.py").read_text() == CLEAN


FROZEN_BACKBONE = """import tensorflow as tf

base = tf.keras.applications.MobileNetV2(weights=None, include_top=False, input_shape=(64, 64, 3))
base.trainable = False
model = tf.keras.Sequential([base, tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(3)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-4)

for images, labels in [(tf.zeros((2, 64, 64, 3)), tf.zeros((2,)))]:
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=False))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_info_findings_are_shown_but_do_not_fail_the_run_by_default(tmp_path):
    (tmp_path / "transfer.py").write_text(FROZEN_BACKBONE)
    result = run("transfer.py", cwd=tmp_path)
    assert "TL301" in out(result) and "1 info" in out(result)
    assert result.returncode == 0


def test_fail_on_info_makes_info_findings_fail_and_fail_on_error_lets_warnings_pass(tmp_path, project):
    (tmp_path / "transfer.py").write_text(FROZEN_BACKBONE)
    assert run("--fail-on", "info", "transfer.py", cwd=tmp_path).returncode == 1
    # train.py has errors (TL102, TL501): they fail at every level.
    assert run("--fail-on", "error", "train.py", cwd=project).returncode == 1


def test_fail_on_from_config_and_the_command_line_wins(tmp_path):
    (tmp_path / "transfer.py").write_text(FROZEN_BACKBONE)
    (tmp_path / "pyproject.toml").write_text('[tool.tapelint]\nfail-on = "info"\n')
    assert run("transfer.py", cwd=tmp_path).returncode == 1
    assert run("--fail-on", "warning", "transfer.py", cwd=tmp_path).returncode == 0


def test_bad_fail_on_in_config_is_a_one_line_error(tmp_path):
    (tmp_path / "transfer.py").write_text(FROZEN_BACKBONE)
    (tmp_path / "pyproject.toml").write_text('[tool.tapelint]\nfail-on = "sometimes"\n')
    result = run("transfer.py", cwd=tmp_path)
    assert result.returncode == 2
    assert err(result).strip().count("\n") == 0 and "fail-on" in err(result)


def test_a_missing_path_among_good_ones_is_reported_and_the_rest_is_linted(project):
    result = run("nowhere.py", "train.py", cwd=project)
    assert result.returncode == 2
    assert "TL501" in out(result)  # train.py was still linted
    assert "nowhere.py: no such file or directory" in err(result)
    assert "Traceback" not in err(result)


def test_a_fifo_in_a_walked_folder_is_skipped_and_a_named_one_is_an_error(project):
    fifo = project / "pipe.py"
    os.mkfifo(fifo)
    walked = run(".", cwd=project)
    assert walked.returncode == 1 and "TL501" in out(walked)
    named = run("pipe.py", "train.py", cwd=project)
    assert named.returncode == 2
    assert "pipe.py: not a regular file" in err(named) and "TL501" in out(named)


def test_the_built_in_codes_are_explained_too(tmp_path):
    for key in ("TL000", "syntax-error", "TL999"):
        result = run("rule", key, cwd=tmp_path)
        assert result.returncode == 0 and "unknown rule" not in err(result)
        assert out(result).startswith(("# TL000 syntax-error", "# TL999 internal-error"))


def test_report_file_gets_the_usual_mode_and_odd_option_combinations_are_refused(project):
    old = os.umask(0o022)
    try:
        run("--exit-zero", "-o", "report.txt", "train.py", cwd=project)
    finally:
        os.umask(old)
    assert (project / "report.txt").stat().st_mode & 0o777 == 0o644
    unsafe = run("--unsafe-fixes", "train.py", cwd=project)
    assert unsafe.returncode == 2 and "--unsafe-fixes only applies with --fix or --diff" in err(unsafe)
    diff_json = run("--diff", "--format", "json", "train.py", cwd=project)
    assert diff_json.returncode == 2 and "cannot be combined with --format json" in err(diff_json)

"""Rule maturity, as ruff's preview rules: a rule whose real-world figures do not hold up runs only with
`--preview` or `preview = true`, selecting it by name without preview warns and runs nothing, and the
figures tapelint/maturity.py holds are what the corpus measures now.

The tests below make TL101 (softmax-output-with-from-logits) a preview rule by giving it bad figures, and
every other rule good ones, so that they do not depend on today's figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tapelint import docs, maturity, registry
from tapelint.cache import Cache
from tapelint.cli import app
from tapelint.config import Config, load, parse
from tapelint.errors import ConfigError
from tapelint.maturity import Figures, is_preview
from tapelint.runner import lint_paths

# A small, realistic training loop whose only finding is TL101: softmax probabilities fed to a loss built
# with from_logits=True.
TRAIN = '''import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(3):
    for step in range(100):
        x = tf.random.normal((32, 8))
        y = tf.random.uniform((32,), maxval=10, dtype=tf.int32)
        train_step(x, y)
'''


@pytest.fixture
def tl101_in_preview(monkeypatch: pytest.MonkeyPatch) -> None:
    """TL101 right 2 times and wrong 9 (precision 0.18 on 11 findings); every other rule right 5 times."""
    figures = {info.code: Figures(5, 0, 0) for info in registry.index() if maturity.judged(info.code)}
    figures["TL101"] = Figures(2, 9, 1)
    monkeypatch.setattr(maturity, "FIGURES", figures)
    assert registry.preview_codes() == {"TL101"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    return tmp_path


def check(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["check", "--no-cache", *args])


def reported(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if ": TL" in line]


# --- preview mode ----------------------------------------------------------------------------------------


def test_a_preview_rule_does_not_report_without_preview_and_does_with_the_flag(tl101_in_preview, project):
    plain = check(str(project / "train.py"))
    assert plain.exit_code == 0 and reported(plain) == [] and plain.stderr == ""
    preview = check("--preview", str(project / "train.py"))
    assert preview.exit_code == 1 and reported(preview) == ["TL101"]


def test_a_stable_rule_reports_without_preview(project):
    # Without the fixture: with every rule right and never wrong, nothing is held back.
    figures = {info.code: Figures(5, 0, 0) for info in registry.index() if maturity.judged(info.code)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(maturity, "FIGURES", figures)
        assert reported(check(str(project / "train.py"))) == ["TL101"]


def test_preview_true_in_the_config_runs_it(tl101_in_preview, project):
    (project / "pyproject.toml").write_text("[tool.tapelint]\npreview = true\n", encoding="utf-8")
    assert reported(check(str(project / "train.py"))) == ["TL101"]
    (project / "pyproject.toml").write_text("[tool.tapelint]\npreview = false\n", encoding="utf-8")
    assert reported(check(str(project / "train.py"))) == []


def test_preview_follows_the_nearest_config_of_each_file(tl101_in_preview, project):
    (project / "pyproject.toml").write_text("[tool.tapelint]\n", encoding="utf-8")
    research = project / "research"
    research.mkdir()
    (research / "pyproject.toml").write_text("[tool.tapelint]\npreview = true\n", encoding="utf-8")
    (research / "train.py").write_text(TRAIN, encoding="utf-8")
    result = check(str(project))
    paths = [Path(line.split(":")[0]).relative_to(project).as_posix()
             for line in result.stdout.splitlines() if ": TL101 " in line]
    assert paths == ["research/train.py"]


def test_preview_in_the_config_must_be_a_boolean():
    with pytest.raises(ConfigError, match=r"`preview` must be true or false"):
        parse({"preview": "yes"}, "pyproject.toml", None)


def test_a_bad_preview_value_is_a_one_line_error_on_the_command_line(tl101_in_preview, project):
    (project / "pyproject.toml").write_text('[tool.tapelint]\npreview = "yes"\n', encoding="utf-8")
    result = check(str(project / "train.py"))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"tapelint: error: {project / 'pyproject.toml'}: `preview` must be true or false"]


# --- selecting a preview rule explicitly -----------------------------------------------------------------


@pytest.mark.parametrize("selection", [["--select", "TL101"], ["--select", "softmax-output-with-from-logits"],
                                       ["--extend-select", "TL101"]])
def test_selecting_a_preview_rule_by_name_warns_and_does_not_run_it(tl101_in_preview, project, selection):
    result = check(*selection, str(project / "train.py"))
    assert result.exit_code == 0 and reported(result) == []
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"tapelint: warning: selection `{selection[1]}` has no effect: TL101 "
                               "(softmax-output-with-from-logits) is in preview")
    assert "--preview" in lines[0]


def test_a_preview_rule_selected_in_the_config_warns_once(tl101_in_preview, project):
    (project / "pyproject.toml").write_text('[tool.tapelint]\nextend-select = ["TL101"]\n', encoding="utf-8")
    (project / "eval.py").write_text(TRAIN, encoding="utf-8")
    result = check(str(project))  # two files, one config (read for the run and for each file)
    assert reported(result) == []
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("tapelint: warning: selection `TL101` has no effect: TL101 ")


def test_a_prefix_leaves_preview_rules_out_without_a_warning(tl101_in_preview, project):
    result = check("--select", "TL1", str(project / "train.py"))
    assert reported(result) == [] and result.stderr == ""


def test_with_preview_an_explicit_selection_runs_it_without_a_warning(tl101_in_preview, project):
    result = check("--preview", "--select", "TL101", str(project / "train.py"))
    assert reported(result) == ["TL101"] and result.stderr == ""


def test_no_warning_when_the_selected_preview_rule_is_ignored_anyway(tl101_in_preview, project):
    result = check("--select", "TL101", "--ignore", "TL101", str(project / "train.py"))
    assert result.stderr == ""


def test_the_console_script_reads_preview_itself(tl101_in_preview):
    # The console script (and so the daemon, which runs the same command line) parses a plain check itself.
    from tapelint import launch

    assert launch.quick_check_arguments(["--preview", "train.py"])["preview"] is True
    assert launch.quick_check_arguments(["train.py"])["preview"] is False


# --- the cache and the language server -------------------------------------------------------------------


def test_turning_preview_on_is_not_answered_from_the_cache(tl101_in_preview, project):
    config = Config(cache_dir=str(project / "cache"))
    first = lint_paths([project / "train.py"], config, jobs=1, cache=Cache.for_config(config))
    assert first.diagnostics == [] and first.cached == 0
    with_preview = Config(cache_dir=str(project / "cache"), preview=True)
    second = lint_paths([project / "train.py"], with_preview, jobs=1, cache=Cache.for_config(with_preview))
    assert second.cached == 0 and [d.code for d in second.diagnostics] == ["TL101"]
    again = lint_paths([project / "train.py"], config, jobs=1, cache=Cache.for_config(config))
    assert again.cached == 1 and again.diagnostics == []


def test_the_language_server_runs_preview_rules_only_with_preview_in_the_config(tl101_in_preview, project):
    pytest.importorskip("pygls", reason="the language server needs the `lsp` extra (pygls)")
    from tapelint.lsp import TapelintServer
    from tapelint.runner import lint_document

    uri = (project / "train.py").as_uri()
    (project / "pyproject.toml").write_text("[tool.tapelint]\n", encoding="utf-8")
    server = TapelintServer()
    try:
        config = server.config_for(uri)
        assert [d.code for d in lint_document(TRAIN, str(project / "train.py"), config, None)] == []
        (project / "pyproject.toml").write_text("[tool.tapelint]\npreview = true\n", encoding="utf-8")
        server._configs.clear()  # the server rereads a config whose file changed; mtimes may be equal here
        config = server.config_for(uri)
        assert config.preview
        assert [d.code for d in lint_document(TRAIN, str(project / "train.py"), config, None)] == ["TL101"]
    finally:
        server.executor.shutdown(wait=False)


# --- what `tapelint rules`, `tapelint rule` and the docs show -------------------------------------------


def test_tapelint_rules_marks_the_preview_rule_and_shows_the_figures(tl101_in_preview):
    result = CliRunner().invoke(app, ["rules"])
    assert result.exit_code == 0
    row = next(line for line in result.stdout.splitlines() if line.startswith("TL101 "))
    assert row.split()[3] == "preview" and "2 right / 9 wrong" in row
    stable = next(line for line in result.stdout.splitlines() if line.startswith("TL102 "))
    assert stable.split()[3] == "on" and "5 right / 0 wrong" in stable
    runtime = next(line for line in result.stdout.splitlines() if line.startswith("TL801 "))
    assert runtime.split()[3] == "on"
    listed = {r["code"]: r for r in json.loads(CliRunner().invoke(app, ["rules", "--format", "json"]).stdout)}
    assert listed["TL101"]["preview"] is True and listed["TL101"]["real_world"] == {"right": 2, "wrong": 9, "missed": 1}
    assert listed["TL102"]["preview"] is False and listed["TL801"]["real_world"] is None


def test_sarif_says_a_preview_rule_is_not_enabled_by_default(tl101_in_preview):
    from tapelint.reporters.sarif import _rule_descriptors

    by_code = {d["id"]: d for d in _rule_descriptors()}
    assert by_code["TL101"]["defaultConfiguration"]["enabled"] is False
    assert by_code["TL101"]["properties"]["preview"] is True
    assert by_code["TL102"]["defaultConfiguration"]["enabled"] is True


def test_tapelint_rule_has_a_maturity_section(tl101_in_preview):
    text = CliRunner().invoke(app, ["rule", "TL101"]).stdout
    assert "Preview: runs only with --preview" in text.split("\n\n")[1]
    maturity_section = text.split("## Maturity\n\n", 1)[1]
    assert "2 right / 9 wrong, 1 missed" in maturity_section
    assert maturity.CORPUS in maturity_section
    assert "runs only with `--preview`" in maturity_section and "2 of its 11 findings" in maturity_section
    stable = CliRunner().invoke(app, ["rule", "TL102"]).stdout.split("## Maturity\n\n", 1)[1]
    assert "5 right / 0 wrong" in stable and "--preview" not in stable


def test_the_generated_docs_show_the_figures_and_preview(tl101_in_preview):
    rules = registry.rules_for(("TL101", "TL102"))
    section = docs.rule_section(rules[0])
    assert "- Real world: 2 right / 9 wrong, 1 missed" in section
    assert "- Preview: runs only with `--preview`" in section
    assert "- Preview:" not in docs.rule_section(rules[1])
    assert "| preview |" in docs.rules_table(rules).splitlines()[2]


# --- the policy --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code, claims_absence, figures, preview", [
    ("TL302", False, Figures(9, 1), False),    # precision 0.9 on 10 findings: stable
    ("TL302", False, Figures(8, 3), True),     # 0.73 on 11: preview
    ("TL302", False, Figures(8, 2), True),     # 0.8 on 10: preview
    ("TL302", False, Figures(5, 4), False),    # 0.56, but on 9 findings: too few to tell
    ("TL302", False, Figures(0, 0, 3), False),  # no finding, and it claims no absence: stable
    ("TL001", True, Figures(0, 2), True),      # a claim of absence, never right: preview
    ("TL001", True, Figures(0, 0), True),      # a claim of absence with no finding at all: preview
    ("TL001", True, Figures(1, 0), False),     # right once: stable
    ("TL001", True, Figures(1, 9), True),      # right once, but 0.1 on 10
    ("TL801", False, Figures(0, 20), False),   # the runtime probe's codes are not judged by the corpus
    ("TL900", True, Figures(0, 0), False),     # nor TL9xx
])
def test_the_policy_thresholds(code, claims_absence, figures, preview):
    assert is_preview(code, claims_absence, figures) is preview


def test_the_claims_of_absence_are_the_six_rules():
    assert {info.code for info in registry.index() if info.claims_absence} == {
        "TL001", "TL002", "TL008", "TL011", "TL105", "TL601"}
    assert {rule.code for rule in registry.all_rules() if rule.claims_absence} == {
        "TL001", "TL002", "TL008", "TL011", "TL105", "TL601"}


def test_a_judged_rule_without_figures_counts_as_one_with_no_finding(monkeypatch):
    monkeypatch.setattr(maturity, "FIGURES", {})
    assert maturity.figures_for("TL001") == Figures(0, 0, 0)
    assert maturity.figures_for("TL801") is None
    assert registry.preview_codes() == {"TL001", "TL002", "TL008", "TL011", "TL105", "TL601"}


def test_measuring_runs_every_rule(tl101_in_preview, project):
    with maturity.measuring():
        assert "TL101" in Config().enabled_codes()
        assert [d.code for d in lint_paths([project / "train.py"], Config(), jobs=1).diagnostics] == ["TL101"]
    assert "TL101" not in Config().enabled_codes()


# --- the figures themselves ---------------------------------------------------------------------------------


def test_rewriting_the_figures_as_they_are_changes_nothing(tmp_path, monkeypatch):
    from tests.realworld import maturity as regenerate

    copy = tmp_path / "maturity.py"
    copy.write_text(regenerate.MODULE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(regenerate, "MODULE", copy)
    assert regenerate.write(dict(maturity.FIGURES), maturity.CORPUS) is False
    changed = {**maturity.FIGURES, "TL101": Figures(1, 2, 3)}
    assert regenerate.write(changed, maturity.CORPUS) is True
    namespace: dict = {}
    exec(compile(copy.read_text(encoding="utf-8"), str(copy), "exec"), namespace)
    assert namespace["FIGURES"] == changed and namespace["CORPUS"] == maturity.CORPUS


@pytest.mark.slow  # lints the whole real-world corpus
def test_the_figures_are_what_the_corpus_measures_now():
    from tests.realworld.maturity import describe_corpus, measure

    assert maturity.CORPUS == describe_corpus(), "run `python -m tests.realworld.maturity --write`"
    assert maturity.FIGURES == measure(), "run `python -m tests.realworld.maturity --write`"

"""The console script's quick path (tapelint.launch): a plain `tapelint [check] ... FILE...` runs without
loading typer, and gives exactly what the typer CLI gives; everything else goes to the typer CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from tapelint import cli, launch

ROOT = Path(__file__).resolve().parent.parent

SEED_LOOP = (ROOT / "examples" / "seed2_vgg_cifar_loop.py").read_text(encoding="utf-8")
CORRECT_LOOP = (ROOT / "examples" / "correct_mnist_loop.py").read_text(encoding="utf-8")


def _check_command():  # a click command (typer bundles its own click)
    group = typer.main.get_command(cli.app)
    return group.commands["check"]  # type: ignore[attr-defined]


def _options() -> dict:
    found = {}
    for param in _check_command().params:
        for name in [*param.opts, *param.secondary_opts]:
            if name.startswith("-"):
                found[name] = param
    return found


def test_the_commands_are_the_typer_apps_commands():
    assert launch.COMMANDS == set(typer.main.get_command(cli.app).commands)  # type: ignore[attr-defined]


def test_every_option_the_quick_path_reads_is_the_check_commands_option_of_the_same_kind():
    options = _options()
    for name, (parameter, setting) in launch.FLAGS.items():
        param = options[name]
        assert getattr(param, "is_flag", False), name
        if name == "--no-cache":
            assert param.name == "no_cache" and parameter == "cache" and setting is False
        else:
            assert param.name == parameter, name
            assert (name in param.opts) is setting, name  # --no-respect-gitignore is the secondary (False) form
    for name, parameter in launch.LISTS.items():
        assert options[name].multiple and options[name].name == parameter, name
    for name, (parameter, allowed) in launch.CHOICES.items():
        param = options[name]
        assert param.name == parameter and hasattr(param.type, "choices"), name
        assert set(param.type.choices) == allowed, name
    for table in (launch.PATHS, launch.STRINGS, launch.INTEGERS):
        for name, parameter in table.items():
            assert not options[name].is_flag and not options[name].multiple and options[name].name == parameter


def test_every_check_option_but_help_and_probe_has_a_quick_path():
    read = {*launch.FLAGS, *launch.LISTS, *launch.CHOICES, *launch.PATHS, *launch.STRINGS, *launch.INTEGERS}
    assert set(_options()) - read == {"--probe", "--show-settings", "--show-files", "--watch", "-w"}
    defaults = {param.name: param.default for param in _check_command().params}
    assert launch.DEFAULTS["cache"] is (not defaults["no_cache"])
    for name, value in launch.DEFAULTS.items():
        if name in defaults and name not in ("select", "ignore", "extend_select"):
            default = defaults[name]
            assert (default.value if hasattr(default, "value") else default) == value, name


@pytest.mark.parametrize("argv", [
    ["--help"], ["-h", "src"], ["rules"], ["rule", "TL001"], ["probe", "train.py"], ["clean"], ["server"],
    ["--probe", "train.py", "src"], ["--", "src"], ["-qj2", "src"], ["--no-such", "src"],
    ["--format", "xml", "src"], ["--format"], ["-j", "0", "src"], ["-j", "two", "src"], ["--jobs=", "src"],
    ["--select", "-q", "src"], ["--exit-zero=yes", "src"], ["--version", "src"],
])
def test_command_lines_the_typer_cli_must_read_are_handed_to_it(argv):
    assert launch.quick_check_arguments(argv) is None


def test_a_plain_command_line_becomes_run_checks_arguments():
    kwargs = launch.quick_check_arguments(
        ["check", "--select", "TL1,TL2", "src", "--select=TL301", "-q", "--format=json", "-j", "3",
         "--no-respect-gitignore", "--cache-dir", "build/cache", "-", "--ignore", " TL103 ,", "train.py"])
    assert kwargs is not None
    assert kwargs["paths"] == ["src", "-", "train.py"]
    assert kwargs["select"] == ["TL1", "TL2", "TL301"] and kwargs["ignore"] == ["TL103"]
    assert kwargs["quiet"] is True and kwargs["output_format"] == "json" and kwargs["jobs"] == 3
    assert kwargs["respect_gitignore"] is False and kwargs["cache_dir"] == Path("build/cache")
    assert kwargs["cache"] is True and kwargs["fix"] is False and kwargs["probe_script"] is None
    assert kwargs["daemon"] == "use"
    assert launch.quick_check_arguments(["--daemon", "auto", "train.py"])["daemon"] == "auto"  # type: ignore[index]
    assert launch.quick_check_arguments(["--daemon=off", "train.py"])["daemon"] == "off"  # type: ignore[index]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.tapelint]\n", encoding="utf-8")
    (tmp_path / "train_vgg.py").write_text(SEED_LOOP, encoding="utf-8")
    (tmp_path / "train_mnist.py").write_text(CORRECT_LOOP, encoding="utf-8")
    (tmp_path / "broken.py").write_text("def step(:\n    pass\n", encoding="utf-8")
    return tmp_path


def _run(main, argv: list[str], capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["tapelint", *argv])
    with pytest.raises(SystemExit) as done:
        main()
    out, err = capsys.readouterr()
    return done.value.code, out, err


@pytest.mark.parametrize("argv", [
    ["--no-cache", "train_vgg.py", "train_mnist.py"],
    ["check", "--no-cache", "-q", "."],
    ["--no-cache", "--format", "json", "train_vgg.py"],
    ["--no-cache", "--statistics", "."],
    ["--no-cache", "--select", "TL2", "--exit-zero", "train_vgg.py"],
    ["--no-cache", "--fail-on=error", "train_vgg.py"],
    ["--no-cache", "--diff", "train_vgg.py"],
    ["--no-cache", "no_such_file.py"],
    ["--no-cache", "--config", "missing.toml", "train_vgg.py"],
    ["--no-cache", "--format", "sarif", "--output-format", "full", "train_vgg.py"],
    ["--no-cache"], ["check", "--no-cache", "--fail-on", "error"],
    ["--no-cache", "--format", "gitlab", "train_vgg.py"], ["--no-cache", "--format=azure", "train_vgg.py"],
    ["--no-cache", "--format", "junit", "--fail-on", "error", "train_vgg.py"],
    ["--no-cache", "--baseline", "missing.json", "train_vgg.py"], ["--no-cache", "--show-baseline-stale"],
])
def test_the_quick_path_prints_and_exits_as_the_typer_cli_does(project, argv, capsys, monkeypatch):
    monkeypatch.chdir(project)
    assert launch.quick_check_arguments(argv) is not None
    typer_run = _run(cli.main, argv, capsys, monkeypatch)
    quick_run = _run(launch.main, argv, capsys, monkeypatch)
    assert quick_run == typer_run
    assert typer_run[0] in (0, 1, 2) and (typer_run[1] or typer_run[2])


def test_the_quick_path_reports_findings_and_fixes_files_like_the_typer_cli(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    code, out, _ = _run(launch.main, ["--no-cache", "-q", "train_vgg.py"], capsys, monkeypatch)
    assert code == 1 and "train_vgg.py:" in out and "TL" in out
    copy = project / "copy"
    copy.mkdir()
    shutil.copy(project / "train_vgg.py", copy / "train_vgg.py")
    typer_fix = _run(cli.main, ["--no-cache", "--fix", "train_vgg.py"], capsys, monkeypatch)
    fixed_by_typer = (project / "train_vgg.py").read_text(encoding="utf-8")
    monkeypatch.chdir(copy)
    quick_fix = _run(launch.main, ["--no-cache", "--fix", "train_vgg.py"], capsys, monkeypatch)
    assert (copy / "train_vgg.py").read_text(encoding="utf-8") == fixed_by_typer
    assert quick_fix[0] == typer_fix[0]


def test_errors_inside_a_quick_run_are_one_line(project, capsys, monkeypatch):
    monkeypatch.chdir(project)

    def explode(**_kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr("tapelint.commands.run_check", explode)
    code, out, err = _run(launch.main, ["train_vgg.py"], capsys, monkeypatch)
    assert code == 2 and out == ""
    assert err == "tapelint: internal error: RuntimeError: boom (please report it)\n"

    def interrupted(**_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("tapelint.commands.run_check", interrupted)
    assert _run(launch.main, ["train_vgg.py"], capsys, monkeypatch)[::2] == (130, "tapelint: interrupted\n")


@pytest.mark.slow
def test_the_console_script_reads_a_plain_command_line_without_loading_typer(project):
    code = ("import sys\nfrom tapelint.launch import main\nsys.argv = ['tapelint', *sys.argv[1:]]\n"
            "try:\n    main()\nfinally:\n"
            "    print('TYPER' if 'typer' in sys.modules else 'NO-TYPER', file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code, *args], cwd=project, capture_output=True, text=True,
                              timeout=120, env=env)

    plain = run("check", "--force-exclude", "train_vgg.py", "train_mnist.py")
    assert plain.returncode == 1 and "train_vgg.py:" in plain.stdout
    assert plain.stderr.strip().endswith("NO-TYPER"), plain.stderr
    version = run("--version")
    assert version.stdout.startswith("tapelint ") and version.stderr.strip() == "NO-TYPER"
    helped = run("--help")
    assert helped.returncode == 0 and "Usage" in helped.stdout and helped.stderr.strip().endswith("TYPER")
    assert run("check", "--format", "xml", "train_vgg.py").stderr.startswith("tapelint: error:")

"""Library functions behind the command line, usable from Python too."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from tapelint import config as config_mod
from tapelint import registry
from tapelint.config import Config
from tapelint.diagnostic import Diagnostic, Severity
from tapelint.engine import lint_source
from tapelint.errors import ConfigError, InputError
from tapelint.files import MAX_NOTEBOOK_BYTES, MAX_SOURCE_BYTES, check_size, decode
from tapelint.reporters import REPORTERS
from tapelint.runner import LintResult, lint_paths


def load_config(paths: list[str], config_file: Path | None, stdin_filename: str | None = None) -> Config:
    if config_file is not None:
        if not config_file.is_file():
            what = "is not a file" if config_file.exists() else "does not exist"
            raise ConfigError(f"config file {config_file} {what}")
        return config_mod.load(config_file)
    anchor = next((p for p in paths if p != "-"), None) or stdin_filename or "."
    return config_mod.load(config_mod.find_config_file(Path(anchor)))


def lint(paths: list[str], config: Config, jobs: int | None = None, stdin_filename: str | None = None) -> LintResult:
    """Lint paths (and `-` for standard input) with a resolved config."""
    files = [p for p in paths if p != "-"]
    result = lint_paths([Path(p) for p in files], config, jobs) if files else LintResult()
    if "-" in paths:
        name = stdin_filename or "<stdin>"
        data = sys.stdin.buffer.read()
        notebook = name.endswith(".ipynb")
        check_size(name, len(data), MAX_NOTEBOOK_BYTES if notebook else MAX_SOURCE_BYTES)
        text = decode(data, name, python=not notebook)
        if name.endswith(".ipynb"):
            from tapelint.notebooks import lint_notebook_text

            result.diagnostics.extend(lint_notebook_text(text, name, config, force=True))
        else:
            result.diagnostics.extend(lint_source(text, name, config, force=True))
        result.files_checked += 1
        result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def exit_code(diagnostics: list[Diagnostic], errors: list[str], exit_zero: bool, fail_on: str = "warning") -> int:
    """2 for errors that stopped files from being read, 1 for findings at or above `fail_on`, else 0. A
    finding the probe refuted is still shown, with the evidence, but does not fail the run."""
    if errors:
        return 2
    threshold = Severity(fail_on).rank
    counted = [d for d in diagnostics if d.probe is None or d.probe.status != "refuted"]
    if not exit_zero and any(d.severity.rank >= threshold for d in counted):
        return 1
    return 0


def run_check(*, paths: list[str], select: list[str], ignore: list[str], extend_select: list[str],
              output_format: str, stdin_filename: str | None, config_file: Path | None, jobs: int | None,
              exit_zero: bool, quiet: bool, fix: bool = False, unsafe_fixes: bool = False, diff: bool = False,
              output_file: Path | None = None, probe_script: str | None = None,
              force_exclude: bool = False, fail_on: str | None = None, statistics: bool = False,
              respect_gitignore: bool = True) -> int:
    config = load_config(paths, config_file, stdin_filename)
    config = config.with_cli(select or None, ignore or None, extend_select or None)
    if not respect_gitignore:
        config = dataclasses.replace(config, respect_gitignore=False)
    if force_exclude and not config.force_exclude:
        config = dataclasses.replace(config, force_exclude=True)
    if fail_on is not None:
        config = dataclasses.replace(config, fail_on=fail_on)
    if unsafe_fixes and not (fix or diff):
        raise InputError("--unsafe-fixes only applies with --fix or --diff")
    if statistics and (fix or diff or output_format not in ("text", "json")):
        raise InputError("--statistics prints counts per rule as text or json; it cannot be combined with "
                         + ("--fix or --diff" if fix or diff else f"--format {output_format}"))
    if diff and output_format != "text":
        raise InputError(f"--diff prints a unified diff; it cannot be combined with --format {output_format}")
    if fix or diff:
        if probe_script is not None:
            raise InputError("--probe cannot be combined with --fix or --diff: fix first, then run the probe")
        from tapelint.fixes import run_fix_command

        return run_fix_command(paths=paths, config=config, jobs=jobs, stdin_filename=stdin_filename,
                               output_format=output_format, output_file=output_file, unsafe=unsafe_fixes,
                               diff=diff, exit_zero=exit_zero, quiet=quiet)
    result = lint(paths, config, jobs, stdin_filename)
    probe_failed = False
    if probe_script is not None:
        probe_failed = _probe_and_confirm(result, probe_script, config)
    for error in result.errors:
        print(f"tapelint: error: {error}", file=sys.stderr)
    if result.files_checked == 0 and not result.errors and "-" not in paths:
        print("tapelint: warning: no Python files or notebooks found in the given paths", file=sys.stderr)
    if statistics:
        from tapelint.reporters.statistics import render_statistics

        emit_report(render_statistics(result.diagnostics, output_format), output_file)
    else:
        render = REPORTERS[output_format]
        emit_report(render(result.diagnostics, result.files_checked, quiet=quiet, errors=len(result.errors)),
                    output_file)
    code = exit_code(result.diagnostics, result.errors, exit_zero, config.fail_on)
    return max(code, 1) if probe_failed and not exit_zero else code


def _probe_and_confirm(result: LintResult, script: str, config: Config) -> bool:
    """Run the probe on `script`, mark the static findings and add the runtime ones. Returns True when
    the probe could not do its job (the script failed, timed out or ran no step)."""
    from tapelint.probe import run_probe
    from tapelint.probe.confirm import merge
    from tapelint.probe_settings import probe_settings

    settings = probe_settings(config.probe)
    probe = run_probe(script, steps=settings["steps"], timeout=settings["timeout"], settings=dict(config.probe))
    enabled = {rule.code for rule in config.enabled_rules()}
    result.diagnostics[:] = merge(result.diagnostics, probe, script, lambda d: d.code in enabled)
    print(probe.summary_line(), file=sys.stderr)
    if probe.failure:
        print(f"tapelint: probe: {probe.failure}", file=sys.stderr)
    return not probe.ok


def emit_report(report: str, output_file: Path | None, stream=None) -> None:  # type: ignore[no-untyped-def]
    """Print the report, or write it to `output_file` in one atomic step."""
    if output_file is None:
        (stream or sys.stdout).write(report)
        return
    from tapelint.fixes import write_atomic

    try:
        output_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(output_file, report)
    except OSError as error:
        raise InputError(f"cannot write {output_file}: {error.strerror or error}") from None


def run_probe_command(*, script: str, args: list[str], steps: int | None, timeout: float | None, device: str,
                      memory_limit: int | None, output_format: str, config_file: Path | None,
                      exit_zero: bool) -> int:
    """`tapelint probe`: run the script under the probe and print its report."""
    from tapelint.probe import run_probe
    from tapelint.probe_settings import probe_settings

    if not Path(script).is_file():
        raise InputError(f"{script}: no such file")
    config = load_config([script], config_file)
    settings = probe_settings(config.probe)
    result = run_probe(script, args, steps=steps if steps is not None else settings["steps"],
                       timeout=timeout if timeout is not None else settings["timeout"], device=device,
                       memory_limit_mb=memory_limit, settings=dict(config.probe))
    if result.status == "setup-error":
        raise InputError((result.error or {}).get("message") or "the probe could not start")
    enabled = {rule.code for rule in config.enabled_rules()}
    result.findings = [d for d in result.findings if d.code in enabled]
    sys.stdout.write(result.render(output_format))
    return result.exit_code_for(exit_zero)


def rules_table(output_format: str = "text") -> str:
    rules = registry.all_rules()
    if output_format == "json":
        return json.dumps([
            {"code": r.code, "name": r.name, "severity": r.severity.value, "confidence": r.confidence.value,
             "default": r.default_enabled, "fixable": r.fixable, "summary": summary_line(r)}
            for r in rules
        ], indent=2) + "\n"
    width = max(len(r.name) for r in rules)
    lines = [f"{'code':<6} {'name':<{width}} {'severity':<8} {'default':<7} summary"]
    for r in rules:
        lines.append(f"{r.code:<6} {r.name:<{width}} {r.severity.value:<8} {'on' if r.default_enabled else 'off':<7} "
                     f"{summary_line(r)}")
    return "\n".join(lines) + "\n"


def summary_line(rule) -> str:  # type: ignore[no-untyped-def]
    """The first sentence of the rule's 'What it does' section (the same text as the README table)."""
    from tapelint.docs import summary

    return summary(rule)


# The two codes the engine itself emits: they have no rule class, but users meet them and ask.
_BUILT_IN = {
    registry.SYNTAX_ERROR: (
        "A file (or notebook cell) that Python cannot parse: a syntax error, a file nested too deeply to "
        "analyse. The message gives Python's reason and position. The other files are still checked; fix "
        "the syntax and run again. Suppress with `per-file-ignores` if the file is deliberately invalid "
        "(a template). Severity: error."),
    registry.INTERNAL_ERROR: (
        "A rule crashed on this file: a bug in tapelint, not in your code. The other rules' findings for "
        "the file still appear. Please report it with the file (or a reduced version). Severity: error."),
}


def explain(key: str) -> str:
    for (code, name), text in _BUILT_IN.items():
        if key.upper() == code or key.lower() == name:
            return f"# {code} {name}\n\n{text}\n"
    rule = registry.rule_by_key(key)
    if rule is None:
        raise InputError(f"unknown rule {key!r} (see `tapelint rules`)")
    from tapelint.docs import severity_text

    header = (f"# {rule.code} {rule.name}\n\nSeverity: {severity_text(rule)}. Confidence: {rule.confidence.value}. "
              f"{'On' if rule.default_enabled else 'Off'} by default. "
              f"Fix: {'available' if rule.fixable else 'none'}.\n\n")
    return header + rule.docs()

"""Library functions behind the command line, usable from Python too."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tapelint import config as config_mod
from tapelint import registry
from tapelint.config import Config
from tapelint.diagnostic import Diagnostic
from tapelint.engine import lint_source
from tapelint.errors import ConfigError, InputError
from tapelint.files import decode
from tapelint.reporters import REPORTERS
from tapelint.runner import LintResult, lint_paths


def load_config(paths: list[str], config_file: Path | None, stdin_filename: str | None = None) -> Config:
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"config file {config_file} does not exist")
        return config_mod.load(config_file)
    anchor = next((p for p in paths if p != "-"), None) or stdin_filename or "."
    return config_mod.load(config_mod.find_config_file(Path(anchor)))


def lint(paths: list[str], config: Config, jobs: int | None = None, stdin_filename: str | None = None) -> LintResult:
    """Lint paths (and `-` for standard input) with a resolved config."""
    files = [p for p in paths if p != "-"]
    result = lint_paths([Path(p) for p in files], config, jobs) if files else LintResult()
    if "-" in paths:
        name = stdin_filename or "<stdin>"
        text = decode(sys.stdin.buffer.read(), name)
        if name.endswith(".ipynb"):
            from tapelint.notebooks import lint_notebook_text

            result.diagnostics.extend(lint_notebook_text(text, name, config, force=True))
        else:
            result.diagnostics.extend(lint_source(text, name, config, force=True))
        result.files_checked += 1
        result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def exit_code(diagnostics: list[Diagnostic], errors: list[str], exit_zero: bool) -> int:
    if errors:
        return 2
    if diagnostics and not exit_zero:
        return 1
    return 0


def run_check(*, paths: list[str], select: list[str], ignore: list[str], extend_select: list[str],
              output_format: str, stdin_filename: str | None, config_file: Path | None, jobs: int | None,
              exit_zero: bool, quiet: bool) -> int:
    for p in paths:
        if p != "-" and not Path(p).exists():
            raise InputError(f"{p}: no such file or directory")
    config = load_config(paths, config_file, stdin_filename)
    config = config.with_cli(select or None, ignore or None, extend_select or None)
    result = lint(paths, config, jobs, stdin_filename)
    for error in result.errors:
        print(f"tapelint: error: {error}", file=sys.stderr)
    render = REPORTERS[output_format]
    sys.stdout.write(render(result.diagnostics, result.files_checked, quiet=quiet))
    return exit_code(result.diagnostics, result.errors, exit_zero)


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
    """The first sentence of the rule's 'What it does' section."""
    docs = rule.docs()
    body = docs.split("## What it does", 1)[-1].strip().split("\n\n", 1)[0]
    return " ".join(body.split())


def explain(key: str) -> str:
    rule = registry.rule_by_key(key)
    if rule is None:
        raise InputError(f"unknown rule {key!r} (see `tapelint rules`)")
    header = (f"# {rule.code} {rule.name}\n\nSeverity: {rule.severity.value}. Confidence: {rule.confidence.value}. "
              f"{'On' if rule.default_enabled else 'Off'} by default. "
              f"Fix: {'available' if rule.fixable else 'none'}.\n\n")
    return header + rule.docs()

"""What `check --show-settings` and `check --show-files` print: the settings one file is linted with and the
file they came from, and the files a run would lint. Both read; neither lints nor writes anything."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tapelint import registry
from tapelint.cache import default_dir
from tapelint.config import Config, ConfigFinder
from tapelint.errors import InputError, say_error
from tapelint.probe_settings import probe_settings
from tapelint.runner import files_to_lint


def _value(value: Any) -> str:
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=False)


def _listing(key: str, items: list[str]) -> list[str]:
    if not items:
        return [f"{key} = []"]
    return [f"{key} = [", *(f"    {json.dumps(item, ensure_ascii=False)}," for item in items), "]"]


def describe_settings(config: Config, path: str) -> str:
    """The resolved settings for `path`, as `key = value` lines in sections, in a stable order: where they
    came from, the rule selection (after select, extend-select, ignore and the per-file-ignores that match
    `path`), file selection, run, rule and probe settings."""
    if config.source is None:
        origin = "none (defaults: no pyproject.toml with [tool.tapelint] at or above it)"
    else:
        origin = config.source
    file_ignores = config.ignores_for(path) if config.per_file_ignores else []
    names = {info.code: info.name for info in registry.index()}
    enabled = [code for code in config.enabled_codes()
               if not file_ignores or registry.code_enabled(code, names[code], file_ignores)]
    lines = [f"Settings for: {path}", f"Settings path: {origin}", "", "[linter]",
             f"select = {_value(config.select) if config.select is not None else '(the defaults)'}",
             f"extend-select = {_value(config.extend_select)}",
             f"ignore = {_value(config.ignore)}",
             f"preview = {_value(config.preview)}",
             f"keras-version = {_value(config.keras_version) if config.keras_version else '(either)'}",
             "per-file-ignores = {" + ", ".join(f"{json.dumps(p)} = {_value(s)}"
                                                for p, s in config.per_file_ignores) + "}",
             f"per-file-ignores.matching = {_value(file_ignores)}",
             *_listing(f"rules.enabled ({len(enabled)})", [f"{code} {names[code]}" for code in enabled]),
             "", "[files]",
             f"exclude = {_value(config.exclude)}",
             f"extend-exclude = {_value(config.extend_exclude)}",
             f"include-notebooks = {_value(config.include_notebooks)}",
             f"force-exclude = {_value(config.force_exclude)}",
             f"respect-gitignore = {_value(config.respect_gitignore)}",
             "", "[run]",
             f"fail-on = {_value(config.fail_on)}",
             f"cache-dir = {_value(str(default_dir(config)))}",
             "", "[rule-options]"]
    options = [f"{rule}.{key} = {_value(value)}" for rule, values in sorted(config.rule_options)
               for key, value in values]
    lines += options or ["(none set: every rule uses its defaults; `tapelint rule CODE` lists them)"]
    lines += ["", "[probe]"]
    lines += [f"{key} = {_value(value)}" for key, value in sorted(probe_settings(config.probe).items())]
    return "\n".join(lines) + "\n"


def show_settings(paths: list[str], config: Config, finder: ConfigFinder | None, stdin_filename: str | None) -> int:
    """`check --show-settings PATH`: the settings of the first path (ruff's rule), or of `--stdin-filename`."""
    target = next((p for p in paths if p != "-"), None) or stdin_filename
    if target is None:
        raise InputError("--show-settings needs a file: `tapelint check --show-settings FILE` "
                         "(or `-` with --stdin-filename)")
    if target != stdin_filename and not Path(target).exists():
        raise InputError(f"{target}: no such file or folder")
    settings = finder.for_path(Path(target)) if finder is not None else config
    sys.stdout.write(describe_settings(settings, target))
    return 0


def show_files(paths: list[str], config: Config, finder: ConfigFinder | None) -> int:
    """`check --show-files PATH...`: every file a run would lint (after walking, exclude, .gitignore and
    notebooks), one a line, sorted. A path that cannot be read is said on stderr and exits 2."""
    problems: list[str] = []
    files = files_to_lint([Path(p) for p in paths if p != "-"], config, finder, problems)
    sys.stdout.write("".join(f"{name}\n" for name in sorted(str(f.path) for f in files)))
    for problem in sorted(problems):
        say_error(problem)
    return 2 if problems else 0

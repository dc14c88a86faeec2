"""The `tapelint` console script.

Most calls are `tapelint [check] [flags] FILE...`: pre-commit runs exactly that on every commit, usually
on files the result cache already knows. For those, loading typer and click would be most of the run
(about 60 ms of a 140 ms start), so this module reads that one shape of command line itself and calls the
same library function the typer command calls (`commands.run_check`). Anything else (another command,
`--help`, an option not in the tables below, a value that needs checking, `--`, grouped short flags)
goes to the typer CLI in `tapelint.cli` unchanged, which also gives every usage error its message.

The tables name the `check` command's own options; tests/test_launch.py checks them against the typer
command (names, kinds, choices) and runs the same command lines both ways.
"""

from __future__ import annotations

import sys

from tapelint.errors import (EXIT_ERROR, EXIT_INTERRUPTED, TapelintError, say_error, say_internal_error,
                             say_interrupted)

# Every command of the typer app (a first word that is one of these is that command, not a path).
COMMANDS = frozenset({"check", "probe", "clean", "rules", "rule", "server", "daemon", "baseline"})

# Flags: option -> (parameter of run_check, value it sets).
FLAGS: dict[str, tuple[str, bool]] = {
    "--fix": ("fix", True),
    "--unsafe-fixes": ("unsafe_fixes", True),
    "--diff": ("diff", True),
    "--exit-zero": ("exit_zero", True),
    "--respect-gitignore": ("respect_gitignore", True),
    "--no-respect-gitignore": ("respect_gitignore", False),
    "--force-exclude": ("force_exclude", True),
    "--quiet": ("quiet", True),
    "-q": ("quiet", True),
    "--no-cache": ("cache", False),
    "--statistics": ("statistics", True),
    "--preview": ("preview", True),
    "--show-baseline-stale": ("show_baseline_stale", True),
    "--add-noqa": ("add_noqa", True),
}
# Options that may be repeated; each value may hold several, comma-separated.
LISTS: dict[str, str] = {"--select": "select", "--ignore": "ignore", "--extend-select": "extend_select"}
# Options with one value of a fixed set of choices.
CHOICES: dict[str, tuple[str, frozenset[str]]] = {
    "--format": ("output_format", frozenset({"text", "json", "sarif", "github", "junit", "gitlab", "azure"})),
    "--output-format": ("text_format", frozenset({"full", "concise"})),
    "--color": ("color", frozenset({"auto", "always", "never"})),
    "--fail-on": ("fail_on", frozenset({"error", "warning", "info"})),
    "--daemon": ("daemon", frozenset({"use", "auto", "off"})),
}
# Options whose value is a path.
PATHS: dict[str, str] = {"--output-file": "output_file", "-o": "output_file", "--config": "config_file",
                         "--cache-dir": "cache_dir", "--baseline": "baseline"}
STRINGS: dict[str, str] = {"--stdin-filename": "stdin_filename"}
INTEGERS: dict[str, str] = {"--jobs": "jobs", "-j": "jobs"}  # at least 1

DEFAULTS: dict[str, object] = {
    "select": [], "ignore": [], "extend_select": [], "output_format": "text", "stdin_filename": None,
    "config_file": None, "jobs": None, "exit_zero": False, "quiet": False, "force_exclude": False,
    "fail_on": None, "fix": False, "unsafe_fixes": False, "diff": False, "output_file": None,
    "probe_script": None, "statistics": False, "respect_gitignore": True, "cache": True, "cache_dir": None,
    "text_format": None, "color": "auto", "daemon": "use", "preview": False,
    "baseline": None, "show_baseline_stale": False, "add_noqa": False,
}


def quick_check_arguments(argv: list[str]) -> dict[str, object] | None:
    """run_check's keyword arguments for a plain `tapelint [check] ...` command line, or None when the
    typer CLI must read it (see the module docstring). Never an error: the typer CLI says those."""
    args = list(argv)
    if args and args[0] == "check":
        args = args[1:]
    elif args and args[0] in COMMANDS:
        return None
    kwargs: dict[str, object] = dict(DEFAULTS)
    lists: dict[str, list[str]] = {name: [] for name in LISTS.values()}
    paths: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if token == "-" or not token.startswith("-"):
            paths.append(token)
            continue
        name, has_value, value = token.partition("=")
        if name in FLAGS:
            if has_value:
                return None
            parameter, setting = FLAGS[name]
            kwargs[parameter] = setting
            continue
        if name not in LISTS and name not in CHOICES and name not in PATHS and name not in STRINGS \
                and name not in INTEGERS:
            return None  # --help, --probe, --, -qj2, an unknown option: the typer CLI's business
        if not has_value:
            if index >= len(args):
                return None
            value = args[index]
            index += 1
        if not value or value.startswith("-"):
            return None
        if name in LISTS:
            lists[LISTS[name]].append(value)
        elif name in CHOICES:
            parameter, allowed = CHOICES[name]
            if value not in allowed:
                return None
            kwargs[parameter] = value
        elif name in PATHS:
            from pathlib import Path  # only here: most command lines name no such option

            kwargs[PATHS[name]] = Path(value)
        elif name in STRINGS:
            kwargs[STRINGS[name]] = value
        else:
            if not value.isdigit() or int(value) < 1:
                return None
            kwargs[INTEGERS[name]] = int(value)
    if not paths:
        # No path: the current folder, or standard input under --stdin-filename (as ruff reads them).
        paths = ["-"] if kwargs["stdin_filename"] is not None else ["."]
    kwargs["paths"] = paths
    if any(lists.values()):
        # Only here: tapelint.config is a heavy import, and a check sent to the daemon never needs it.
        from tapelint.config import split_selectors

        for parameter, values in lists.items():
            kwargs[parameter] = split_selectors(values)
    else:
        kwargs.update((parameter, []) for parameter in lists)  # fresh lists, never the defaults' own
    return kwargs


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        from tapelint import __version__

        print(f"tapelint {__version__}", flush=True)
        sys.exit(0)
    kwargs = quick_check_arguments(args)
    if kwargs is None:
        from tapelint.cli import main as typer_main

        if argv is not None:
            sys.argv = [sys.argv[0] if sys.argv else "tapelint", *argv]
        typer_main()
        return
    from tapelint.daemon import run_in_daemon

    code = run_in_daemon(args, str(kwargs.pop("daemon")))  # the same command, in a fork of a warm daemon
    if code is not None:
        _exit_now(code)
    try:
        from tapelint.commands import run_check

        code = run_check(**kwargs)  # type: ignore[arg-type]
    except TapelintError as error:
        say_error(str(error))
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        say_interrupted()
        sys.exit(EXIT_INTERRUPTED)
    except Exception as error:  # noqa: BLE001 - see say_internal_error
        say_internal_error(error)
        sys.exit(EXIT_ERROR)
    sys.exit(code)


def _exit_now(code: int) -> None:
    """Exit after a check the daemon ran: this process only waited for it, so it skips the interpreter's
    clean-up (several ms of a 0.1 s check)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()

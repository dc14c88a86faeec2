"""The command line. Each command parses its options and calls one library function.

`tapelint PATH...` is shorthand for `tapelint check PATH...`. The console script starts in
`tapelint.launch`, which runs a plain `check` command line without loading typer and hands every other
one to `main` here.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Any, List, Optional


import typer
from typer.core import TyperGroup

from tapelint import __version__
from tapelint.config import split_selectors
from tapelint.errors import (EXIT_ERROR, EXIT_INTERRUPTED, TapelintError, say_error, say_internal_error,
                             say_interrupted)

EXIT_CLEAN, EXIT_FINDINGS = 0, 1


class _DefaultCheckGroup(TyperGroup):
    """Routes `tapelint src/` to the `check` command, so the short form keeps working."""

    # `ctx` is the click Context typer hands on (typer vendors click, under a private module name).
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version", "-V")):
            args = ["check", *args]  # bare `tapelint` checks the current folder, as ruff does
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_DefaultCheckGroup,
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="tapelint finds why a TensorFlow GradientTape training loop silently fails to learn.\n\n"
    "`tapelint PATH...` is short for `tapelint check PATH...`; with no path, both check the current folder.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


class ReportFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"
    junit = "junit"
    gitlab = "gitlab"
    azure = "azure"


class TextFormat(str, Enum):
    full = "full"
    concise = "concise"


class ColorChoice(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


def fail(message: str) -> "typer.Exit":
    say_error(message)
    return typer.Exit(EXIT_ERROR)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tapelint {__version__}")
        raise typer.Exit(EXIT_CLEAN)


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """tapelint finds why a TensorFlow GradientTape training loop silently fails to learn."""


def _split(values: Optional[List[str]]) -> list[str]:
    return split_selectors(list(values or []))


class DaemonUse(str, Enum):
    use = "use"
    auto = "auto"
    off = "off"


@app.command()
def check(
    paths: Optional[List[str]] = typer.Argument(None, help="Files or folders to lint (default: the current folder); "
                                                           "`-` reads standard input."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Only these rules (codes, prefixes such as TL2, or names)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip these rules."),
    extend_select: Optional[List[str]] = typer.Option(None, "--extend-select", help="Add rules to the selection, e.g. off-by-default ones."),
    preview: bool = typer.Option(False, "--preview", help="Also run the rules in preview: those not yet shown to hold on "
                                                          "real code (`tapelint rules` marks them; `preview = true` in the config)."),
    output_format: ReportFormat = typer.Option(ReportFormat.text, "--format", help="Output format."),
    output_file: Optional[Path] = typer.Option(None, "--output-file", "-o", help="Write the report to this file."),
    text_format: Optional[TextFormat] = typer.Option(
        None, "--output-format", help="How --format text shows a finding: full (its source line with a caret under it, "
                                    "and the fix) or concise (one line). Default: full on a terminal, else concise."),
    color: ColorChoice = typer.Option(ColorChoice.auto, "--color",
                                      help="Colour the text report: auto (on a terminal; NO_COLOR turns it off, "
                                           "FORCE_COLOR on), always or never. Never in --output-file."),
    fix: bool = typer.Option(False, "--fix", help="Apply safe fixes and write the files."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes",
                                      help="With --fix or --diff, also apply fixes that can change behaviour."),
    diff: bool = typer.Option(False, "--diff", help="Print the fixes as a unified diff; write nothing. "
                                                    "Exit 1 when there would be changes."),
    stdin_filename: Optional[str] = typer.Option(None, "--stdin-filename", help="The file name to report for `-`, also used to find the config."),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Use this pyproject.toml instead of searching for one."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: number of cores)."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when there are findings."),
    fail_on: Optional[FailOn] = typer.Option(None, "--fail-on", help="Lowest severity that makes the run exit 1 "
                                                                    "(default: warning, or `fail-on` in the config)."),
    respect_gitignore: bool = typer.Option(True, "--respect-gitignore/--no-respect-gitignore",
                                           help="Skip files git ignores when walking folders (default: on)."),
    force_exclude: bool = typer.Option(False, "--force-exclude", help="Apply `exclude` to files named on the command line too (for pre-commit)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print findings only, no summary."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Lint every file, neither reading nor writing the result cache."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Where the result cache lives "
                                                                        "(default: .tapelint_cache next to pyproject.toml)."),
    statistics: bool = typer.Option(False, "--statistics", help="Print how many findings each rule has, "
                                                                "instead of the findings ([*]: all safely fixable)."),
    daemon: DaemonUse = typer.Option(
        DaemonUse.use, "--daemon",
        help="use: run in `tapelint daemon` when one is running (POSIX); auto: also start one in the background "
             "when none is, for the next check; off: always run in this process."),
    probe_script: Optional[str] = typer.Option(
        None, "--probe", metavar="SCRIPT",
        help="After the static pass, run SCRIPT's first training step under the runtime probe: mark each "
             "finding in the files it runs confirmed, refuted or not-checked, and add the runtime (TL8xx) findings."),
    # Adopting tapelint in a project that has findings today (tapelint.baseline, tapelint.add_noqa).
    baseline: Optional[Path] = typer.Option(None, "--baseline", metavar="FILE",
                                            help="Report only findings not recorded in FILE (written by "
                                                 "`tapelint baseline`; default: `baseline` in the config)."),
    show_baseline_stale: bool = typer.Option(False, "--show-baseline-stale",
                                             help="List the baseline's entries that are no longer found."),
    add_noqa: bool = typer.Option(False, "--add-noqa", help="Add `# noqa: CODE` comments to every line with a "
                                                            "finding, and write the files."),
    show_settings: bool = typer.Option(False, "--show-settings", help="Print the settings the first path is linted "
                                                                      "with and the pyproject.toml they come from; lint nothing."),
    show_files: bool = typer.Option(False, "--show-files", help="Print every file the run would lint, one a line; "
                                                                "lint nothing."),
    watch: bool = typer.Option(False, "--watch", "-w", help="Lint, then lint again whenever a file under the paths "
                                                            "changes (only changed files are parsed again); Ctrl-C stops."),
) -> None:
    """Lint Python files and folders for GradientTape training-loop bugs."""
    from tapelint.commands import run_check

    del daemon  # read by the console script, which hands a plain check to the daemon (tapelint.launch)

    try:
        code = run_check(
            # No path: the current folder, or standard input under --stdin-filename (as ruff reads them).
            paths=list(paths or (["-"] if stdin_filename is not None else ["."])),
            select=_split(select), ignore=_split(ignore), extend_select=_split(extend_select),
            preview=preview,
            output_format=output_format.value, stdin_filename=stdin_filename, config_file=config_file,
            jobs=jobs, exit_zero=exit_zero, quiet=quiet, force_exclude=force_exclude,
            fail_on=fail_on.value if fail_on is not None else None,
            fix=fix, unsafe_fixes=unsafe_fixes, diff=diff, output_file=output_file,
            probe_script=probe_script, statistics=statistics, respect_gitignore=respect_gitignore,
            cache=not no_cache, cache_dir=cache_dir,
            text_format=text_format.value if text_format is not None else None, color=color.value,
            baseline=baseline, show_baseline_stale=show_baseline_stale, add_noqa=add_noqa,
            show_settings=show_settings, show_files=show_files, watch=watch,
        )
    except TapelintError as error:
        raise fail(str(error)) from None
    raise typer.Exit(code)


@app.command("baseline")
def baseline_command(
    paths: Optional[List[str]] = typer.Argument(None, help="Files or folders to record (default: the current folder)."),
    output_file: Optional[Path] = typer.Option(
        None, "--output-file", "-o", help="The baseline file to write (default: `baseline` in the config, "
                                          "else .tapelint-baseline.json in the current folder)."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Only these rules."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip these rules."),
    extend_select: Optional[List[str]] = typer.Option(None, "--extend-select", help="Add rules to the selection."),
    preview: bool = typer.Option(False, "--preview", help="Also run the rules in preview."),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Use this pyproject.toml instead of searching for one."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: number of cores)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Lint every file, neither reading nor writing the result cache."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
) -> None:
    """Record today's findings in a baseline file, so that `check --baseline FILE` reports only new ones.

    A finding is matched by its rule, its file, the flagged code and the function around it, not by
    its line number: code moving up or down, or functions reordered, keep it known.
    """
    from tapelint.commands import run_baseline_command

    try:
        code = run_baseline_command(paths=list(paths or ["."]), output_file=output_file, config_file=config_file,
                                    select=_split(select), ignore=_split(ignore),
                                    extend_select=_split(extend_select), preview=preview, jobs=jobs,
                                    cache=not no_cache, quiet=quiet)
    except TapelintError as error:
        raise fail(str(error)) from None
    raise typer.Exit(code)


class ProbeDevice(str, Enum):
    auto = "auto"
    cpu = "cpu"
    gpu = "gpu"


class ProbeSyntheticData(str, Enum):
    missing = "missing"
    always = "always"


class ProbeFunctions(str, Enum):
    graph = "graph"
    eager = "eager"


@app.command("probe")
def probe_command(
    script: str = typer.Argument(..., metavar="SCRIPT", help="The training script to run (under the probe, in a child process)."),
    script_args: Optional[List[str]] = typer.Argument(None, metavar="[-- ARGS...]", help="Arguments for the script."),
    steps: Optional[int] = typer.Option(None, "--steps", help="Training steps to measure before stopping the script "
                                                               "(default 1, or `probe.steps` in the config)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds before the script is killed (default 300, "
                                                                     "at most a week)."),
    device: ProbeDevice = typer.Option(ProbeDevice.auto, "--device",
                                       help="Where the step runs: cpu hides the GPUs, gpu requires one. "
                                            "Default: wherever TensorFlow puts it."),
    memory_limit: Optional[int] = typer.Option(None, "--memory-limit", metavar="MB",
                                               help="Limit the child's memory (heap) to MB megabytes (256 or "
                                                    "more: TensorFlow does not import under that)."),
    python: Optional[str] = typer.Option(None, "--python", metavar="PATH",
                                         help="Run the script with this interpreter (your project's virtualenv, "
                                              "e.g. .venv/bin/python); it needs TensorFlow. Default: tapelint's own."),
    functions: ProbeFunctions = typer.Option(ProbeFunctions.graph, "--functions",
                                             help="graph: tf.functions run traced, as without the probe. eager: they "
                                                  "run eagerly, and the last one is traced once more at the end."),
    synthetic_data: Optional[ProbeSyntheticData] = typer.Option(
        None, "--synthetic-data", metavar="[missing|always]",
        help="Hand the script synthetic data where its data source is not here, and random weights where pretrained "
             "ones would be downloaded (nothing is); the report lists each. always: replace every data source. A bare "
             "--synthetic-data means missing (or `probe.synthetic-data` in the config)."),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="Output format."),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Use this pyproject.toml instead of searching for one."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when there are findings."),
) -> None:
    """Run a training script's first steps under the runtime probe and report what the gradients do.

    Exit status: 0 when the steps ran with no finding, 1 when there are findings or the script failed, timed
    out or computed no gradient, 2 for a usage error (no such script, no TensorFlow, bad option).
    """
    from tapelint.commands import run_probe_command

    try:
        code = run_probe_command(script=script, args=list(script_args or []), steps=steps, timeout=timeout,
                                 device=device.value, memory_limit=memory_limit, output_format=output_format.value,
                                 config_file=config_file, exit_zero=exit_zero, python=python,
                                 functions=functions.value,
                                 synthetic_data=synthetic_data.value if synthetic_data is not None else None)
    except TapelintError as error:
        raise fail(str(error)) from None
    raise typer.Exit(code)


@app.command("clean")
def clean_command(
    paths: Optional[List[str]] = typer.Argument(None, help="A folder of the project (default: the current one)."),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Use this pyproject.toml instead of searching for one."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="The cache folder to remove."),
) -> None:
    """Remove the result cache (.tapelint_cache) of the project."""
    from tapelint.commands import run_clean_command

    try:
        code = run_clean_command(paths=list(paths or ["."]), config_file=config_file, cache_dir=cache_dir)
    except TapelintError as error:
        raise fail(str(error)) from None
    raise typer.Exit(code)


class DaemonAction(str, Enum):
    start = "start"
    stop = "stop"
    status = "status"


@app.command("daemon")
def daemon_command(
    action: DaemonAction = typer.Argument(..., help="start, stop, or status."),
    idle_timeout: float = typer.Option(3600.0, "--idle-timeout", min=1.0,
                                       help="With start: seconds without a check before the daemon exits."),
) -> None:
    """A warm background process that plain checks run in (POSIX): `tapelint FILE` takes a tenth of the time.

    While it runs, each `tapelint [check] FILE...` is a fresh fork of it that prints to your terminal, so a
    run gives what a run without it gives. It exits after --idle-timeout seconds without a check, or when
    tapelint is upgraded. `check --daemon off` (or TAPELINT_NO_DAEMON=1) ignores it; `check --daemon auto`
    (or TAPELINT_DAEMON=auto) starts one when none runs, for the next check. Exit 1 from status: not running.
    """
    from tapelint.commands import run_daemon_command

    try:
        code = run_daemon_command(action=action.value, idle_timeout=idle_timeout)
    except TapelintError as error:
        raise fail(str(error)) from None
    raise typer.Exit(code)


@app.command("rules")
def list_rules(
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="Output format."),
) -> None:
    """List every rule: code, name, severity, whether it is on by default or in preview, and its real-world figures."""
    from tapelint.docs import rules_listing

    typer.echo(rules_listing(output_format.value), nl=False)


@app.command("rule")
def explain_rule(key: str = typer.Argument(..., help="A rule code (TL001) or name (optimizer-never-applied).")) -> None:
    """Explain one rule: its full documentation."""
    from tapelint.docs import explain

    try:
        typer.echo(explain(key))
    except TapelintError as error:
        raise fail(str(error)) from None


@app.command("server")
def server(
    stdio: bool = typer.Option(True, "--stdio", help="Talk LSP over standard input and output, the only transport; "
                                                     "accepted because some editors always pass it."),
) -> None:
    """Run the language server for editors over stdio (needs pygls: the `lsp` extra)."""
    try:
        from tapelint.lsp import serve
    except ImportError as error:
        if (error.name or "").split(".")[0] in ("pygls", "lsprotocol"):
            raise fail('the language server needs pygls: pip install "pygls>=2" (or install tapelint with its lsp extra)') from None
        raise
    serve()


def optional_values(args: list[str]) -> list[str]:
    """`tapelint probe ... --synthetic-data` without a value means `--synthetic-data=missing` (click's options
    take a value or none, not either)."""
    if not args or args[0] != "probe":
        return args
    out = list(args)
    for index, token in enumerate(out):
        if token == "--":
            break
        if token == "--synthetic-data" and (index + 1 == len(out) or out[index + 1] not in ("missing", "always")):
            out[index] = "--synthetic-data=missing"
    return out


def main() -> None:
    try:
        result = app(prog_name="tapelint", args=optional_values(sys.argv[1:]), standalone_mode=False)
        if result == EXIT_INTERRUPTED:
            # typer turns Ctrl-C into a quiet exit 130; say what happened, once.
            say_interrupted()
        sys.exit(result if isinstance(result, int) else EXIT_CLEAN)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except KeyboardInterrupt:
        say_interrupted()
        sys.exit(EXIT_INTERRUPTED)
    except TapelintError as error:
        say_error(str(error))
        sys.exit(EXIT_ERROR)
    except Exception as error:  # noqa: BLE001 - a bug in tapelint must not print a traceback at users
        if type(error).__name__ == "NoArgsIsHelpError":
            typer.echo(error.format_message())  # type: ignore[attr-defined]
            sys.exit(EXIT_ERROR)
        if hasattr(error, "format_message") and hasattr(error, "exit_code"):
            # click's usage errors (unknown option, missing argument): one line, exit 2.
            typer.echo(f"tapelint: error: {error.format_message()} (see `tapelint --help`)", err=True)
            sys.exit(EXIT_ERROR)
        say_internal_error(error)
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":  # pragma: no cover
    main()

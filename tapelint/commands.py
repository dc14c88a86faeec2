"""The commands: what `tapelint check` (with --fix, --diff, --probe) and `tapelint probe` do, on top of
the library. `cli.py` parses arguments and calls these; nothing below this module calls back up into it
(tests/test_import_layering.py checks). `python -m tapelint.docs` is tapelint.docs' own entry point (docs.main)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TextIO

from tapelint import config as config_mod
from tapelint.config import Config, ConfigFinder
from tapelint.diagnostic import Diagnostic, Severity
from tapelint.errors import ConfigError, InputError, TapelintError, say_error
from tapelint.files import MAX_NOTEBOOK_BYTES, MAX_SOURCE_BYTES, check_size, decode
from tapelint.reporters import reporter
from tapelint.reporters.progress import ProgressLine, progress_line
from tapelint.reporters.terminal import SourceFiles, text_options
from tapelint.runner import LintResult, lint_paths

if TYPE_CHECKING:
    from tapelint.baseline import Baseline


def load_config(paths: list[str], config_file: Path | None, stdin_filename: str | None = None) -> Config:
    if config_file is not None:
        if not config_file.is_file():
            what = "is not a file" if config_file.exists() else "does not exist"
            raise ConfigError(f"config file {config_file} {what}")
        return config_mod.load(config_file)
    anchor = next((p for p in paths if p != "-"), None) or stdin_filename or "."
    return config_mod.load(config_mod.find_config_file(Path(anchor)))


def settings(paths: list[str], config_file: Path | None, stdin_filename: str | None,
             adjust: Callable[[Config], Config]) -> tuple[Config, ConfigFinder | None]:
    """The run's config (from `--config`, or the one nearest the first path: the cache folder, `fail-on`
    and the probe's settings come from it) and, without `--config`, the finder that gives each file the
    config nearest to it. `adjust` applies the command line's choices to every config."""
    config = adjust(load_config(paths, config_file, stdin_filename))
    return config, (config_mod.ConfigFinder(adjust) if config_file is None else None)


def lint_inputs(paths: list[str], config: Config, jobs: int | None = None, stdin_filename: str | None = None,
                cache: bool = False, finder: ConfigFinder | None = None, progress: ProgressLine | None = None,
                sources: SourceFiles | None = None) -> LintResult:
    """Lint paths (and `-` for standard input) with a resolved config, or each file with its own (`finder`);
    with `cache`, through the result cache (standard input is always linted). `progress` is told as files
    finish; `sources` is given the text of standard input, for the report's snippets."""
    files = [p for p in paths if p != "-"]
    store = None
    if cache and files:
        from tapelint.cache import Cache

        store = Cache.for_config(config)
    result = (lint_paths([Path(p) for p in files], config, jobs, store, finder, progress=progress)
              if files else LintResult())
    if "-" in paths:
        name = stdin_filename or "<stdin>"
        data = sys.stdin.buffer.read()
        notebook = name.endswith(".ipynb")
        check_size(name, len(data), MAX_NOTEBOOK_BYTES if notebook else MAX_SOURCE_BYTES)
        text = decode(data, name, python=not notebook)
        if sources is not None:
            sources.remember(name, text)
        if name.endswith(".ipynb"):
            from tapelint.notebooks import lint_notebook_text

            result.diagnostics.extend(lint_notebook_text(text, name, config, force=True))
        else:
            from tapelint.engine import lint_source

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
              respect_gitignore: bool = True, cache: bool = True, cache_dir: Path | None = None,
              text_format: str | None = None, color: str = "auto", preview: bool = False,
              baseline: Path | None = None, show_baseline_stale: bool = False, add_noqa: bool = False,
              show_settings: bool = False, show_files: bool = False, watch: bool = False,
              watch_control: object | None = None) -> int:
    warned: set[str] = set()

    def adjust(config: Config) -> Config:
        config = config.with_cli(select or None, ignore or None, extend_select or None)
        if preview and not config.preview:
            config = dataclasses.replace(config, preview=True)
        if cache_dir is not None:
            config = dataclasses.replace(config, cache_dir=str(cache_dir))
        if not respect_gitignore:
            config = dataclasses.replace(config, respect_gitignore=False)
        if force_exclude and not config.force_exclude:
            config = dataclasses.replace(config, force_exclude=True)
        if fail_on is not None:
            config = dataclasses.replace(config, fail_on=fail_on)
        # A preview rule selected by name does not run without preview: say so once, as each config is read.
        for warning in config.preview_warnings():
            if warning not in warned:
                warned.add(warning)
                print(f"tapelint: warning: {warning}", file=sys.stderr)
        return config

    config, finder = settings(paths, config_file, stdin_filename, adjust)
    if show_settings or show_files or watch:
        _check_show_and_watch(paths, show_settings, show_files, watch, fix, diff, probe_script, add_noqa)
    if show_settings or show_files:
        from tapelint import show

        if show_settings:
            return show.show_settings(paths, config, finder, stdin_filename)
        return show.show_files(paths, config, finder)
    if unsafe_fixes and not (fix or diff):
        raise InputError("--unsafe-fixes only applies with --fix or --diff")
    if statistics and (fix or diff or output_format not in ("text", "json")):
        raise InputError("--statistics prints counts per rule as text or json; it cannot be combined with "
                         + ("--fix or --diff" if fix or diff else f"--format {output_format}"))
    if text_format is not None and output_format != "text":
        raise InputError(f"--output-format chooses how text findings look; it cannot be combined with "
                         f"--format {output_format}")
    if diff and output_format != "text":
        raise InputError(f"--diff prints a unified diff; it cannot be combined with --format {output_format}")
    known = _baseline_of(baseline, config, show_baseline_stale)
    if add_noqa and (fix or diff or statistics or probe_script is not None or "-" in paths):
        raise InputError("--add-noqa writes `# noqa` comments into files; it cannot be combined with "
                         + ("--fix or --diff" if fix or diff else "--statistics" if statistics
                            else "--probe" if probe_script is not None else "`-` (standard input)"))
    if fix or diff:
        if probe_script is not None:
            raise InputError("--probe cannot be combined with --fix or --diff: fix first, then run the probe")
        return run_fix_command(paths=paths, config=config, finder=finder, jobs=jobs, stdin_filename=stdin_filename,
                               output_format=output_format, output_file=output_file, unsafe=unsafe_fixes,
                               diff=diff, exit_zero=exit_zero, quiet=quiet, text_format=text_format, color=color,
                               known=known)
    if watch:
        return _watch(paths, config_file, adjust, lambda config, finder: _check_once(
            paths=paths, config=config, finder=finder, jobs=jobs, stdin_filename=stdin_filename, cache=cache,
            quiet=True, probe_script=None, statistics=statistics, output_format=output_format,
            output_file=output_file, text_format=text_format, color=color, exit_zero=exit_zero,
            known=known, show_baseline_stale=show_baseline_stale, add_noqa=False), watch_control,
            # The watch's own lines go with a text report; a machine-read report on stdout stays parseable.
            sys.stdout if output_format == "text" and output_file is None else sys.stderr)
    return _check_once(paths=paths, config=config, finder=finder, jobs=jobs, stdin_filename=stdin_filename,
                       cache=cache, quiet=quiet, probe_script=probe_script, statistics=statistics,
                       output_format=output_format, output_file=output_file, text_format=text_format, color=color,
                       exit_zero=exit_zero, known=known, show_baseline_stale=show_baseline_stale,
                       add_noqa=add_noqa)[0]


def _check_show_and_watch(paths: list[str], show_settings: bool, show_files: bool, watch: bool, fix: bool,
                          diff: bool, probe_script: str | None, add_noqa: bool = False) -> None:
    """Usage errors of --show-settings, --show-files and --watch (each is a mode of its own)."""
    chosen = [name for name, on in (("--show-settings", show_settings), ("--show-files", show_files),
                                    ("--watch", watch), ("--fix", fix), ("--diff", diff),
                                    ("--probe", probe_script is not None), ("--add-noqa", add_noqa)) if on]
    if len(chosen) > 1:
        raise InputError(f"{chosen[0]} cannot be combined with {chosen[1]}")
    if watch and "-" in paths:
        raise InputError("--watch watches files: it cannot read standard input (`-`)")


def _watch(paths: list[str], config_file: Path | None, adjust: Callable[[Config], Config],
           once: Callable[[Config, ConfigFinder | None], tuple[int, int, LintResult]],
           control: object | None, out: TextIO) -> int:
    """`check --watch`: one check, then one more after each change (tapelint.watch). The settings are read
    again for each pass (a pyproject.toml may be what changed); an error in them is said, and the watch
    goes on."""
    from tapelint import watch

    def run() -> tuple[int, object]:
        try:
            config, finder = settings(paths, config_file, None, adjust)
            _code, count, result = once(config, finder)
        except TapelintError as error:
            say_error(str(error))
            return 0, None
        return count, result

    chosen = control if isinstance(control, watch.Control) else None
    return watch.watch(run, [Path(p) for p in paths], out, chosen)


def _check_once(*, paths: list[str], config: Config, finder: ConfigFinder | None, jobs: int | None,
                stdin_filename: str | None, cache: bool, quiet: bool, probe_script: str | None, statistics: bool,
                output_format: str, output_file: Path | None, text_format: str | None, color: str,
                exit_zero: bool, known: Baseline | None, show_baseline_stale: bool,
                add_noqa: bool) -> tuple[int, int, LintResult]:
    """Lint and report once: (exit code, number of findings, the result)."""
    sources = SourceFiles()
    progress = progress_line(sys.stderr, quiet)
    try:
        result = lint_inputs(paths, config, jobs, stdin_filename, cache=cache, finder=finder, progress=progress,
                             sources=sources)
    finally:
        if progress is not None:
            progress.close()
    probe_failed = False
    if probe_script is not None:
        probe_failed = _probe_and_confirm(result, probe_script, config)
    for error in result.errors:
        say_error(error)
    if result.files_checked == 0 and not result.errors and "-" not in paths:
        print("tapelint: warning: no Python files or notebooks found in the given paths", file=sys.stderr)
    notes: list[str] = []
    if known is not None:
        notes = _filter_by_baseline(known, result, paths, config, sources, probe_script is not None,
                                    show_baseline_stale, quiet)
    if add_noqa:
        return _add_noqa(result.diagnostics, result.errors, quiet), len(result.diagnostics), result
    if statistics:
        from tapelint.reporters.statistics import render_statistics

        emit_report(render_statistics(result.diagnostics, output_format), output_file)
        if notes:
            print("\n".join(notes), file=sys.stderr)
    else:
        render = reporter(output_format)
        report = render(result.diagnostics, result.files_checked, quiet=quiet, errors=len(result.errors),
                        fail_on=config.fail_on,
                        **text_options(output_format, text_format, color, output_file, sys.stdout, sources),
                        **({"sources": sources} if output_format == "gitlab" else {}))
        if notes and output_format == "text":
            report += "".join(note + "\n" for note in notes)
        elif notes:
            print("\n".join(notes), file=sys.stderr)
        emit_report(report, output_file)
    code = exit_code(result.diagnostics, result.errors, exit_zero, config.fail_on)
    return (max(code, 1) if probe_failed and not exit_zero else code), len(result.diagnostics), result


def _baseline_of(option: Path | None, config: Config, show_stale: bool) -> Baseline | None:
    """The baseline the run filters by (`--baseline`, else `baseline` in the config), read now so that a
    missing or broken file stops the run before any work; None without one."""
    chosen = option if option is not None else Path(config.baseline) if config.baseline else None
    if chosen is None:
        if show_stale:
            raise InputError("--show-baseline-stale needs a baseline: --baseline FILE, or `baseline` in the config")
        return None
    from tapelint import baseline

    return baseline.load(chosen)


def _filter_by_baseline(known: Baseline, result: LintResult, paths: list[str], config: Config,
                        sources: SourceFiles, probed: bool, show_stale: bool, quiet: bool) -> list[str]:
    """Drop the findings the baseline holds from `result`; the lines that say what it hid and what in it
    is stale (listed with `show_stale`)."""
    from tapelint import baseline

    codes = [c for c in (*config.enabled_codes(), "TL000") if probed or not c.startswith("TL8")]
    outcome = baseline.apply(known, result.diagnostics, sources, baseline.covered_by(paths, known.root, codes))
    result.diagnostics[:] = outcome.new
    lines = [baseline.stale_line(key, count, known.names) for key, count in outcome.stale] if show_stale else []
    stale = sum(count for _, count in outcome.stale)
    summary = f"Baseline {known.path}: {_plural(outcome.known, 'known finding')} not shown"
    if stale:
        summary += (f"; {_plural(stale, 'entry', 'entries')} no longer found"
                    + ("" if show_stale else " (--show-baseline-stale lists them; `tapelint baseline` drops them)"))
    return [*lines, *([] if quiet else [summary + "."])]


def _add_noqa(diagnostics: list[Diagnostic], errors: list[str], quiet: bool) -> int:
    """`check --add-noqa`: write the `# noqa` comments; exit 0, or 2 when a file could not be read or written."""
    from tapelint.add_noqa import add_noqa

    unparsed = [d for d in diagnostics if d.code in ("TL000", "TL999")]
    run = add_noqa([d for d in diagnostics if d not in unparsed])
    for d in unparsed:
        print(f"tapelint: warning: {d.path}:{d.line}: {d.code} is not suppressed by --add-noqa "
              f"({'fix the syntax error' if d.code == 'TL000' else 'an internal error: please report it'})",
              file=sys.stderr)
    for line in run.skipped:
        print(f"tapelint: warning: {line}", file=sys.stderr)
    for error in run.errors:
        say_error(error)
    if not quiet:
        print(f"Added {_plural(run.added, 'noqa directive')}"
              + (f" in {_plural(run.files, 'file')}." if run.added else "."), file=sys.stderr)
    return 2 if errors or run.errors else 0


def run_baseline_command(*, paths: list[str], output_file: Path | None, config_file: Path | None,
                         select: list[str], ignore: list[str], extend_select: list[str], preview: bool,
                         jobs: int | None, cache: bool, quiet: bool) -> int:
    """`tapelint baseline`: record today's findings, for `check --baseline` to hide."""
    from tapelint import baseline

    if "-" in paths:
        raise InputError("`tapelint baseline` records files on disk; `-` (standard input) cannot be recorded")

    def adjust(config: Config) -> Config:
        config = config.with_cli(select or None, ignore or None, extend_select or None)
        return dataclasses.replace(config, preview=True) if preview and not config.preview else config

    config, finder = settings(paths, config_file, None, adjust)
    target = output_file or (Path(config.baseline) if config.baseline else Path(baseline.DEFAULT_BASELINE))
    if target.is_dir():
        raise InputError(f"cannot write the baseline {target}: is a folder")
    result = lint_inputs(paths, config, jobs, cache=cache, finder=finder)
    for error in result.errors:
        say_error(error)
    root = Path(config.root) if config.root else Path(".")
    recorded = baseline.record(result.diagnostics, target, root, SourceFiles())
    baseline.write(recorded)
    if not quiet:
        files = len({key.path for key in recorded.counts})
        print(f"Recorded {_plural(len(result.diagnostics), 'finding')} in {_plural(files, 'file')} "
              f"({result.files_checked} checked) to {target}.", file=sys.stderr)
    return 2 if result.errors else 0


def _probe_and_confirm(result: LintResult, script: str, config: Config) -> bool:
    """Run the probe on `script`, mark the static findings and add the runtime ones. Returns True when
    the probe could not do its job (the script failed, timed out or ran no step)."""
    from tapelint.probe import run_probe
    from tapelint.probe.confirm import merge
    from tapelint.probe_settings import probe_settings

    settings = probe_settings(config.probe)
    probe = run_probe(script, steps=settings["steps"], timeout=settings["timeout"], settings=dict(config.probe),
                      synthetic_data=_synthetic_mode(settings["synthetic-data"]),
                      memory_limit_mb=settings["memory-limit"])
    enabled = set(config.enabled_codes())
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
    from tapelint.atomic import write_atomic

    try:
        output_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(output_file, report)
    except OSError as error:
        raise InputError(f"cannot write {output_file}: {error.strerror or error}") from None


def run_clean_command(*, paths: list[str], config_file: Path | None, cache_dir: Path | None) -> int:
    """`tapelint clean`: remove the result cache of the project the paths are in (or `--cache-dir`)."""
    from tapelint.cache import clean, default_dir

    config = load_config(paths, config_file)
    if cache_dir is not None:
        config = dataclasses.replace(config, cache_dir=str(cache_dir))
    folder = default_dir(config)
    print(f"Removed {folder}" if clean(folder) else f"No cache at {folder}", file=sys.stderr)
    return 0


def run_daemon_command(*, action: str, idle_timeout: float) -> int:
    """`tapelint daemon start|stop|status`: the warm process short checks run in (tapelint.daemon)."""
    from tapelint import daemon

    try:
        if action == "start":
            pid, started = daemon.start(idle_timeout)
            print(f"tapelint daemon {'started' if started else 'already running'} (pid {pid}); "
                  f"checks run in it until `tapelint daemon stop`", flush=True)
            return 0
        if action == "stop":
            stopped = daemon.stop()
            print("tapelint daemon: not running" if stopped is None else f"tapelint daemon stopped (pid {stopped})",
                  flush=True)
            return 0
        answer = daemon.status()
        if answer is None:
            print("tapelint daemon: not running", flush=True)
            return 1
        stale = "" if answer.get("stamp") == daemon.code_stamp() else "; tapelint changed since it started, " \
                                                                       "so it exits at the next check"
        warm = f" ({answer['warm']} by a warmed-up fork)" if answer.get("warm") else ""
        print(f"tapelint daemon: running (pid {answer.get('pid')}), {answer.get('served', 0)} checks served{warm}, "
              f"socket {daemon.socket_path()}{stale}", flush=True)
        return 0
    except daemon.DaemonError as error:
        raise InputError(str(error)) from None


def run_probe_command(*, script: str, args: list[str], steps: int | None, timeout: float | None, device: str,
                      memory_limit: int | None, output_format: str, config_file: Path | None,
                      exit_zero: bool, python: str | None = None, functions: str = "graph",
                      synthetic_data: str | None = None) -> int:
    """`tapelint probe`: run the script under the probe and print its report. `synthetic_data`: missing or
    always (--synthetic-data), None for the config's `probe.synthetic-data`."""
    from tapelint.probe import run_probe
    from tapelint.probe_settings import probe_settings

    if not Path(script).is_file():
        raise InputError(f"{script}: no such file")
    config = load_config([script], config_file)
    settings = probe_settings(config.probe)
    result = run_probe(script, args, steps=steps if steps is not None else settings["steps"],
                       timeout=timeout if timeout is not None else settings["timeout"], device=device,
                       memory_limit_mb=memory_limit if memory_limit is not None else settings["memory-limit"],
                       settings=dict(config.probe), python=python, functions=functions,
                       synthetic_data=_synthetic_mode(synthetic_data or settings["synthetic-data"]))
    if result.status == "setup-error":
        raise InputError((result.error or {}).get("message") or "the probe could not start")
    enabled = set(config.enabled_codes())
    result.findings = [d for d in result.findings if d.code in enabled]
    sys.stdout.write(result.render(output_format))
    return result.exit_code_for(exit_zero)


def _synthetic_mode(value: str) -> str | None:
    return None if value == "off" else value


def _plural(count: int, noun: str, nouns: str | None = None) -> str:
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def run_fix_command(*, paths: list[str], config: Config, finder: ConfigFinder | None, jobs: int | None,
                    stdin_filename: str | None,
                    output_format: str, output_file: Path | None, unsafe: bool, diff: bool, exit_zero: bool,
                    quiet: bool, text_format: str | None = None, color: str = "auto", known: Baseline | None = None) -> int:
    """`tapelint check --fix` / `--diff`: lint, fix what can be fixed, report what remains.

    Like ruff: with `-` the fixed source goes to stdout and the report to stderr; `--diff` prints diffs,
    writes nothing and exits 1 when something would change."""
    from tapelint.fixes import _decode, fix_diagnostics, fix_roots

    stdin: tuple[str, str] | None = None
    if "-" in paths:
        name = stdin_filename or "<stdin>"
        text, stdin_encoding = _decode(sys.stdin.buffer.read(), name)
        stdin = (text, name)
    result = lint_inputs([p for p in paths if p != "-"], config, jobs, stdin_filename, finder=finder)
    run = fix_diagnostics(result.diagnostics, config, unsafe=unsafe, write=not diff, stdin=stdin,
                          config_for=finder.for_path if finder is not None else None,
                          roots=fix_roots(paths, finder.config_file if finder is not None else None))
    errors = sorted({*result.errors, *run.errors})
    for warning in run.warnings:
        print(f"tapelint: warning: {warning}", file=sys.stderr)
    for error in errors:
        say_error(error)
    files_checked = result.files_checked + (1 if stdin is not None else 0)
    changed = run.changed_files
    fixed = f"{_plural(run.applied, 'finding')} in {_plural(len(changed), 'file')}"
    if diff:
        emit_report("".join(f.diff() for f in changed), output_file)
        if not quiet:
            print(f"Would fix {fixed}." if changed else "No fixes available.", file=sys.stderr)
        if errors:
            return 2
        return 1 if changed and not exit_zero else 0
    stream = sys.stdout
    if run.stdin is not None:
        sys.stdout.flush()
        sys.stdout.buffer.write(run.stdin.after.encode(stdin_encoding, "replace"))
        sys.stdout.flush()
        stream = sys.stderr
    sources = SourceFiles()
    if run.stdin is not None:
        sources.remember(run.stdin.name, run.stdin.after)
    if known is not None:
        from tapelint import baseline

        run.diagnostics[:] = baseline.apply(known, run.diagnostics, sources).new
    report = reporter(output_format)(run.diagnostics, files_checked, quiet=quiet, fail_on=config.fail_on,
                                      **text_options(output_format, text_format, color, output_file, stream,
                                                     sources),
                                      **({"sources": sources} if output_format == "gitlab" else {}))
    if changed and not quiet:
        if output_format == "text":
            head, _, last = report.rstrip("\n").rpartition("\n")
            report = (head + "\n" if head else "") + f"Fixed {fixed}.\n" + last + "\n"
        else:
            print(f"Fixed {fixed}.", file=sys.stderr)
    emit_report(report, output_file, stream)
    return exit_code(run.diagnostics, errors, exit_zero, config.fail_on)

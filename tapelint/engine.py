"""The pure core: (source, path, config) -> diagnostics. No file or terminal I/O here.

A lint is four steps (`_lint_source`): parse the module, instantiate the rules that apply to it, run them
(one traversal, then each rule's check), and collect their reports as findings, less those the file's
`# noqa` comments suppress. Around them: tapelint.guards (what keeps a file nested too deeply from
crashing the run), tapelint.suppressions (`# noqa`), tapelint.prelude (a training file linted with the
definitions it imports from its own project, and its findings given back to their files)."""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any, Callable

import libcst as cst
from libcst.metadata import MetadataWrapper

from tapelint import registry
from tapelint.analysis.parsing import parse_in_pieces, parse_module
from tapelint.analysis.positions import LazyPositions
from tapelint.analysis.walk import walk
from tapelint.config import Config
from tapelint.diagnostic import Diagnostic, Fix, Related, Severity, TextEdit
from tapelint.guards import guarded, nested_too_deeply
from tapelint.prelude import Prelude, give_back
from tapelint.project import imported_names
from tapelint.rule import CellLines, PendingFix, Report, Rule, RuleContext, applicable_rules
from tapelint.splicing import splice_prelude, warm_pieces
from tapelint.suppressions import UNUSED_NOQA, parse_suppressions, suppressed_by_file, unused_suppressions
from tapelint.text import reindent
from tapelint.triggers import mentions_tensorflow, trains

__all__ = ["lint_source", "warm_up", "warm_prelude"]


def lint_source(source: str, path: str = "<stdin>", config: Config | None = None, *, force: bool = True,
                rules: tuple[type[Rule], ...] | None = None, rule_options: dict | None = None,
                cell_lines: CellLines | None = None, prelude: Prelude | None = None,
                parse: Callable[[str], cst.Module] | None = None) -> list[Diagnostic]:
    """Lint one module's source. `force=False` lets the cheap text prefilter skip the parse. `cell_lines`
    maps the lines of a notebook's composed module to cells, for messages that cite another line.
    `prelude` holds the definitions the module imports from its own project (tapelint.project): they
    are analysed before the module's lines, and findings in them are reported in their own files.
    `parse` stands in for libcst's `parse_module` (the editor server's incremental parser): it must
    return the module a full parse gives, or raise the full parse's error."""
    deep = nested_too_deeply(source)
    if deep is not None:
        config = config or Config()
        if not registry.code_enabled(*registry.SYNTAX_ERROR, list(config.ignore)):
            return []
        return [Diagnostic(path, 1, 0, 1, 0, *registry.SYNTAX_ERROR,
                           f"The file is too complex to analyse ({deep}); the file was not checked", Severity.ERROR)]
    try:
        return guarded(_lint_source, source, path, config, force=force, rules=rules, rule_options=rule_options,
                        cell_lines=cell_lines, prelude=prelude, parse=parse)
    except RecursionError:
        config = config or Config()
        if not registry.code_enabled(*registry.SYNTAX_ERROR, list(config.ignore)):
            return []
        return [Diagnostic(path, 1, 0, 1, 0, *registry.SYNTAX_ERROR,
                           "The file is nested too deeply to analyse; the file was not checked", Severity.ERROR)]


def _lint_source(source: str, path: str = "<stdin>", config: Config | None = None, *, force: bool = True,
                rules: tuple[type[Rule], ...] | None = None, rule_options: dict | None = None,
                cell_lines: CellLines | None = None, prelude: Prelude | None = None,
                prelude_context: Prelude | None = None,
                parse: Callable[[str], cst.Module] | None = None) -> list[Diagnostic]:
    """`lint_source` inside the guards. `prelude_context` is the prelude of a combined module being
    linted (for rules that ask where a line came from)."""
    if prelude is not None and trains(source):
        # Only training code is worth analysing with what it imports; the rest is linted alone.
        if not force and not mentions_tensorflow(source):
            return []
        combined = _lint_with_prelude(source, path, config, rules, rule_options, prelude, parse)
        if combined is not None:
            return combined
    config = config or Config()
    enabled = rules if rules is not None else config.enabled_rules()
    file_ignores = config.ignores_for(path) if config.per_file_ignores else []
    if file_ignores:
        enabled = tuple(r for r in enabled if registry.code_enabled(r.code, r.name, file_ignores))
    if not force and not mentions_tensorflow(source):
        return []  # cannot concern any rule: not even parsed
    applicable = applicable_rules(enabled, source)

    def allowed(code: str, name: str) -> bool:
        return registry.code_enabled(code, name, [*config.ignore, *file_ignores])

    if not applicable:
        return _syntax_errors_only(source, path, allowed)
    # The steps: parse, instantiate the rules, run them, collect their findings.
    try:
        module = parse_in_pieces(source) if parse is None else parse(source)
    except (cst.ParserSyntaxError, RecursionError) as error:
        return _unparsed(source, path, config, error, allowed, force=force, rules=rules, rule_options=rule_options,
                         cell_lines=cell_lines)
    shared = _shared_analyses(module, source, path)
    instances = _instantiate(applicable, module, source, path, config, rule_options, shared, cell_lines,
                             prelude_context)
    _run(instances, module)
    diagnostics = _collect(instances, module, path, shared["positions"], allowed)
    diagnostics = _apply_noqa(diagnostics, source, path, applicable, enabled)
    _release(shared)
    return sorted(diagnostics, key=Diagnostic.sort_key)


def _lint_with_prelude(source: str, path: str, config: Config | None, rules: tuple[type[Rule], ...] | None,
                       rule_options: dict | None, prelude: Prelude,
                       parse: Callable[[str], cst.Module] | None = None) -> list[Diagnostic] | None:
    """Lint `prelude + source` as one module, then give each finding back to its own file: lines of the
    source shift up by the prelude's length, lines of the prelude map to the module they came from.
    None when the combination does not parse (the file is then linted alone, for an exact TL000)."""
    combined = prelude.text + source
    whole = parse or parse_module

    def parse_combined(text: str) -> cst.Module:
        # The prelude's blocks are parsed once per process and spliced before the source's own statements
        # (tapelint.splicing.splice_prelude: the module a full parse gives, or None to parse it whole).
        if text == combined:
            spliced = splice_prelude(prelude, source, whole, parse_module)
            if spliced is not None:
                return spliced
        return whole(text)

    found = _lint_source(combined, path, config, force=True, rules=rules, rule_options=rule_options,
                         prelude_context=prelude, parse=parse_combined)
    if any(d.code == registry.SYNTAX_ERROR[0] for d in found):
        return None
    return give_back(found, source, path, prelude)


def warm_prelude(prelude: Prelude) -> None:
    """Parse a prelude's blocks into this process's cache now (tapelint.splicing.warm_pieces)."""
    warm_pieces(prelude, parse_module)


def _syntax_errors_only(source: str, path: str, allowed: Callable[[str, str], bool]) -> list[Diagnostic]:
    """No rule applies: nothing to analyse, but a TensorFlow file that does not parse is still worth saying;
    CPython's parser answers that several times faster than libcst."""
    if not allowed(*registry.SYNTAX_ERROR):
        return []
    try:
        compile(source, path, "exec", dont_inherit=True, flags=0x400)
    except SyntaxError as error:
        line = error.lineno or 1
        column = max((error.offset or 1) - 1, 0)
        return [Diagnostic(path, line, column, line, column, *registry.SYNTAX_ERROR,
                           f"Syntax error: {error.msg}; the file was not checked", Severity.ERROR)]
    except (ValueError, RecursionError, MemoryError):
        pass
    return []


def _unparsed(source: str, path: str, config: Config, error: cst.ParserSyntaxError | RecursionError,
              allowed: Callable[[str, str], bool], **options: Any) -> list[Diagnostic]:
    """Parse step, failed: the file's TL000, or its findings when only libcst's tokenizer refuses it."""
    if isinstance(error, RecursionError):
        diag = Diagnostic(path, 1, 0, 1, 0, *registry.SYNTAX_ERROR,
                          "Syntax error: the file is nested too deeply to parse; the file was not checked",
                          Severity.ERROR)
        return [diag] if allowed(*registry.SYNTAX_ERROR) else []
    if _python_parses(source):
        return _lint_reindented(source, path, config, error, allowed=allowed, **options)
    return [_syntax_error(path, source, error)] if allowed(*registry.SYNTAX_ERROR) else []


def _python_parses(source: str) -> bool:
    try:
        compile(source, "<tapelint>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _lint_reindented(source: str, path: str, config: Config, error: cst.ParserSyntaxError, *,
                     allowed: Callable[[str, str], bool], **options: Any) -> list[Diagnostic]:
    """A file Python runs but libcst's tokenizer rejects (tabs and spaces mixed in a way CPython accepts):
    lint it with its indentation spelled out in spaces, and map columns back. Its fixes are dropped, since
    they were computed on other text; the findings stay."""
    respelled, changed = reindent(source)
    if changed:
        try:
            cst.parse_module(respelled)
        except (cst.ParserSyntaxError, RecursionError):
            pass
        else:
            found = _lint_source(respelled, path, config, **options)

            def back(line: int, column: int) -> int:
                old, new = changed.get(line, (0, 0))
                return column - new + old if column >= new else min(column, old)

            return [dataclasses.replace(d, column=back(d.line, d.column), end_column=back(d.end_line, d.end_column),
                                        fix=None, related=tuple(dataclasses.replace(
                                            r, column=back(r.line, r.column), end_column=back(r.end_line, r.end_column))
                                            for r in d.related)) for d in found]
    if not allowed(*registry.SYNTAX_ERROR):
        return []
    problem = str(error).splitlines()[0] if str(error) else "parser error"
    return [Diagnostic(path, 1, 0, 1, 0, *registry.SYNTAX_ERROR,
                       f"Python accepts this file, but tapelint's parser (libcst) does not ({problem}); "
                       "the file was not checked", Severity.ERROR)]


def _syntax_error(path: str, source: str, error: cst.ParserSyntaxError) -> Diagnostic:
    line = max(error.raw_line, 1)
    column = max(error.raw_column, 0)
    message = error.message.strip().splitlines()[0] if error.message else "invalid syntax"
    # libcst's positions for syntax errors can be a line late; CPython's are exact and cheap to get
    # here, since this only runs for files that failed to parse.
    try:
        compile(source, path, "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError as exact:
        if exact.lineno:
            line = exact.lineno
            column = max((exact.offset or 1) - 1, 0)
            message = exact.msg
    except (ValueError, RecursionError, MemoryError):
        pass
    return Diagnostic(
        path, line, column, line, column, registry.SYNTAX_ERROR[0], registry.SYNTAX_ERROR[1],
        f"Syntax error: {message}; the file was not checked", Severity.ERROR,
    )


def _shared_analyses(module: cst.Module, source: str, path: str) -> dict:
    """What the rules of one lint share (`RuleContext.shared`): the facts, made on first use, the positions
    of reported nodes, and who else in the project imports this module."""
    shared: dict = {}

    def statement_of(node: cst.CSTNode) -> int | None:
        facts = shared.get("facts")
        return facts.top_statement.get(id(node)) if facts is not None else None

    # Positions are computed only for the statements that hold reported nodes (analysis/positions.py).
    shared["positions"] = LazyPositions(module, source, statement_of)
    if path.endswith(".py"):
        # Who else in the project imports this module: read only if a rule about to claim absence asks.
        shared["importers"] = partial(imported_names, path)
    return shared


_KERAS2_MARKERS = ("TF_USE_LEGACY_KERAS",)

def _keras_version(config: Config, source: str, context: RuleContext) -> int | None:
    if config.keras_version is not None:
        return config.keras_version
    if any(marker in source for marker in _KERAS2_MARKERS) or "tf_keras" in source:
        if context.facts.imports.uses_tf_keras or "TF_USE_LEGACY_KERAS" in source:
            return 2
    return None


def _instantiate(applicable: list[type[Rule]], module: cst.Module, source: str, path: str, config: Config,
                 rule_options: dict | None, shared: dict, cell_lines: CellLines | None,
                 prelude_context: Prelude | None) -> list[Rule]:
    """Instantiate step: each rule that applies, with its options and the Keras version the file targets."""
    context = RuleContext(path=path, source=source, module=module, options={}, shared=shared)
    keras_version = _keras_version(config, source, context)
    instances: list[Rule] = []
    for rule_cls in applicable:
        options = (rule_options or {}).get(rule_cls.name) or config.options_for(rule_cls.name)
        instances.append(rule_cls(RuleContext(path, source, module, options, keras_version, shared, cell_lines,
                                              prelude_context)))
    return instances


class _Dispatch:
    """One read-only traversal for every rule's `visit_<Type>`/`leave_<Type>` functions."""

    def __init__(self, rules: list[Rule]) -> None:
        self.visit: dict[str, list] = {}
        self.leave: dict[str, list] = {}
        for rule in rules:
            for name, func in rule.get_visitors().items():
                kind, _, node_type = name.partition("_")
                (self.visit if kind == "visit" else self.leave).setdefault(node_type, []).append(func)

    def on_visit(self, node: cst.CSTNode) -> bool:
        for func in self.visit.get(type(node).__name__, ()):
            func(node)
        return True  # like libcst's batched visitors, a False return does not prune

    def on_leave(self, node: cst.CSTNode) -> None:
        for func in self.leave.get(type(node).__name__, ()):
            func(node)


def _run(instances: list[Rule], module: cst.Module) -> None:
    """Run step: one traversal for every rule's visit functions (libcst's own, which computes metadata, when
    a rule declares metadata it needs), then each rule's check. A rule that raises keeps its error in
    `Rule.crash`; the others carry on."""
    visitors = [r for r in instances if r.get_visitors()]
    if any(r.get_inherited_dependencies() for r in visitors):
        MetadataWrapper(module, unsafe_skip_copy=True).visit_batched(visitors)
    elif visitors:
        walk(module, _Dispatch(visitors))
    for rule in instances:
        rule.run_check()


def _collect(instances: list[Rule], module: cst.Module, path: str, positions: LazyPositions,
             allowed: Callable[[str, str], bool]) -> list[Diagnostic]:
    """Collect step: each report as a finding at its node's position (the same finding of a rule once),
    then an internal error for each rule that crashed, in place of its findings."""
    diagnostics: list[Diagnostic] = []
    reports = [(rule, report) for rule in instances for report in rule.reports if rule.crash is None]
    if reports:
        seen: set[tuple] = set()
        for rule, report in reports:
            rng = positions.get(report.node)
            if rng is None:
                continue
            fix = _to_fix(report.fix, module, positions) if report.fix else None
            diag = Diagnostic(
                path, rng.start.line, rng.start.column, rng.end.line, rng.end.column,
                rule.code, rule.name, report.message, report.severity, report.confidence, fix,
                related=_related(report, path, positions, rng),
            )
            key = (diag.code, diag.line, diag.column, diag.message)
            if key not in seen:
                seen.add(key)
                diagnostics.append(diag)
    for rule in instances:
        if rule.crash is not None and allowed(*registry.INTERNAL_ERROR):
            diagnostics.append(_internal_error(path, rule))
    return diagnostics


def _related(report: Report, path: str, positions: LazyPositions, own: Any) -> tuple[Related, ...]:
    """The report's related places that have a position other than the finding's (`own`), each once, in the
    order the rule gave them."""
    out: list[Related] = []
    for node, what in report.related:
        rng = positions.get(node)
        if rng is None or rng == own:
            continue
        place = Related(path, rng.start.line, rng.start.column, rng.end.line, rng.end.column, what)
        if place not in out:
            out.append(place)
    return tuple(out)


def _to_fix(pending: PendingFix, module: cst.Module, positions) -> Fix | None:  # type: ignore[no-untyped-def]
    edits = []
    for node, replacement in pending.changes:
        rng = positions.get(node)
        if rng is None:
            return None
        text = replacement if isinstance(replacement, str) else module.code_for_node(replacement)
        edits.append(TextEdit(rng.start.line, rng.start.column, rng.end.line, rng.end.column, text))
    return Fix(pending.title, tuple(sorted(edits, key=lambda e: (e.line, e.column))), pending.safe)


def _internal_error(path: str, rule: Rule) -> Diagnostic:
    error = rule.crash
    detail = f"{type(error).__name__}: {error}".splitlines()[0][:200]
    return Diagnostic(
        path, 1, 0, 1, 0, registry.INTERNAL_ERROR[0], registry.INTERNAL_ERROR[1],
        f"Internal error in {rule.code} {rule.name} ({detail}); its findings for this file are missing, "
        "please report it",
        Severity.ERROR,
    )


def _apply_noqa(diagnostics: list[Diagnostic], source: str, path: str, applicable: list[type[Rule]],
                enabled: tuple[type[Rule], ...]) -> list[Diagnostic]:
    """The findings the file's `# noqa` comments leave, and the unused directives when TL900 runs."""
    report_unused = any(r.code == UNUSED_NOQA[0] for r in applicable)
    if diagnostics or report_unused:
        suppressions = parse_suppressions(source)
        found = diagnostics
        diagnostics = [d for d in diagnostics if not suppressions.suppresses(d)]
        if report_unused and suppressions.lines:
            # A rule skipped by its trigger words ran in effect: it cannot report anything there.
            checked = {key: r.code for r in enabled if not r.runtime_only for key in (r.code, r.name.upper())}
            extra = unused_suppressions(path, source, suppressions, found, checked)
            diagnostics += [d for d in extra if not suppressed_by_file(suppressions, d)]
    return diagnostics


def _release(shared: dict) -> None:
    """Break the reference cycles of one lint (the shared analyses point back at the facts, the positions
    at `shared`), so that reference counting frees its tree and facts as soon as it ends. Left to the
    cyclic collector, they would be traced once more, object by object, on its next full pass."""
    facts = shared.get("facts")
    if facts is not None:
        facts.release()
    shared.clear()


# A small training program for `warm_up`.
_WARM_UP = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(2)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(2):
    for x, y in tf.data.Dataset.from_tensor_slices(([[0.0] * 4], [0])).batch(1):
        train_step(x, y)
model.compile(optimizer="adam", loss="mse")
model.fit([[0.0] * 4], [0], epochs=1)
"""


def warm_up(copies: int = 1) -> None:
    """Pay now what the first lint of a process pays (the analyses' lazy imports, compiled patterns,
    libcst's first parse, each rule's table of visit methods), for a process that forks workers that
    would each pay it again (the daemon). With `copies`, the sample program is that many times as long,
    which also grows the parser's and the analyses' memory to the size of a real file's."""
    lint_source(_WARM_UP * copies, "warm_up.py", Config())
    for rule in registry.all_rules():
        rule._visitor_names()  # filled per class on first use; a rule the sample does not trigger too

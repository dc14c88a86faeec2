"""The editor language server behind `tapelint server`: diagnostics, quick fixes and rule docs over LSP.

Only the `server` command imports this module, so `import tapelint` never imports pygls. The server runs
the same engine and reads the same `[tool.tapelint]` config as the command line; it never runs the probe.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument

from tapelint import __version__, registry
from tapelint.config import Config, find_config_file, load
from tapelint.diagnostic import Diagnostic, Severity, TextEdit
from tapelint.project import ProjectIndex
from tapelint.runner import attribute, lint_document
from tapelint.errors import TapelintError
from tapelint.files import MAX_SOURCE_BYTES
from tapelint.fixes import fix_source

logger = logging.getLogger("tapelint.lsp")

SOURCE = "tapelint"
FIX_ALL_KIND = "source.fixAll.tapelint"
FIX_ALL_TITLE = "tapelint: fix all safe"
# Typing pauses shorter than this do not start a lint; a newer edit cancels the run still waiting.
DEBOUNCE_SECONDS = 0.3

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# `# noqa: TL001, TL002` and the file-level `# tapelint: noqa: TL001`, as the engine reads them.
_NOQA = re.compile(r"#\s*(?:tapelint:\s*)?noqa:\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*)",
                   re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z0-9_\-]+")
_NOT_RULES = {
    registry.SYNTAX_ERROR[0]: "The buffer does not parse as Python, so tapelint reports this instead of "
                              "checking the file. Fix the syntax error and the other findings come back.",
    registry.INTERNAL_ERROR[0]: "A rule crashed on this file; its findings are missing and the other rules' "
                                "findings are still shown. Please report it.",
}


# ---------------------------------------------------------------------------------------------------------
# Positions. Inside tapelint they are libcst's (1-based lines, 0-based columns in code points); LSP wants
# 0-based lines and columns in the negotiated encoding (UTF-16 unless the client offers better).


def split_lines(source: str) -> list[str]:
    """The lines as libcst counts them (\\n, \\r\\n and \\r end a line), without their line breaks."""
    return _LINE_BREAK.split(source)


def _units(codec: Any, text: str) -> int:
    return int(codec.client_num_units(text))


def to_lsp_position(lines: Sequence[str], codec: Any, line: int, column: int) -> types.Position:
    """A libcst position as an LSP position."""
    index = line - 1
    if index >= len(lines):
        return types.Position(line=max(len(lines) - 1, 0), character=_units(codec, lines[-1]) if lines else 0)
    text = lines[max(index, 0)]
    return types.Position(line=max(index, 0), character=_units(codec, text[:column]))


def from_lsp_position(lines: Sequence[str], codec: Any, position: types.Position) -> tuple[int, int]:
    """An LSP position as (0-based line, column in code points), clamped into the document."""
    if not lines:
        return 0, 0
    line = min(max(position.line, 0), len(lines) - 1)
    text = lines[line]
    units = 0
    for index, char in enumerate(text):
        if units >= position.character:
            return line, index
        units += _units(codec, char)
    return line, len(text)


def to_lsp_range(lines: Sequence[str], codec: Any, line: int, column: int, end_line: int,
                 end_column: int) -> types.Range:
    return types.Range(start=to_lsp_position(lines, codec, line, column),
                       end=to_lsp_position(lines, codec, end_line, end_column))


def diagnostic_range(diagnostic: Diagnostic, lines: Sequence[str], codec: Any) -> types.Range:
    rng = to_lsp_range(lines, codec, diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)
    if rng.start == rng.end:
        # A point (a syntax error, an internal error) would be invisible in most editors: mark one character,
        # or the whole line when the point sits at its end.
        text = lines[rng.start.line] if rng.start.line < len(lines) else ""
        column = diagnostic.column
        if column < len(text):
            end = to_lsp_position(lines, codec, diagnostic.line, column + 1)
            return types.Range(start=rng.start, end=end)
        if text:
            return types.Range(start=types.Position(line=rng.start.line, character=0),
                               end=types.Position(line=rng.start.line, character=_units(codec, text)))
    return rng


def _before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) <= (b.line, b.character)


def ranges_touch(a: types.Range, b: types.Range) -> bool:
    return _before(a.start, b.end) and _before(b.start, a.end)


def whole_text_edit(old: str, new: str, codec: Any) -> types.TextEdit:
    """One edit that turns `old` into `new`, replacing only the lines between the common head and tail."""
    head = len(os.path.commonprefix([old, new]))
    while not _line_start(old, head):
        head -= 1
    tail = len(os.path.commonprefix([old[head:][::-1], new[head:][::-1]]))
    while tail and not _line_start(old, len(old) - tail):
        tail -= 1
    lines = split_lines(old)
    start = _offset_position(old, head, lines, codec)
    end = _offset_position(old, len(old) - tail, lines, codec)
    return types.TextEdit(range=types.Range(start=start, end=end), new_text=new[head:len(new) - tail])


def _line_start(text: str, index: int) -> bool:
    """Whether `index` starts a line (never between the two characters of a \\r\\n)."""
    if index <= 0:
        return True
    before = text[index - 1]
    return before == "\n" or (before == "\r" and (index >= len(text) or text[index] != "\n"))


def _offset_position(source: str, offset: int, lines: Sequence[str], codec: Any) -> types.Position:
    before = source[:offset]
    line = len(split_lines(before)) - 1
    column = len(split_lines(before)[-1])
    return to_lsp_position(lines, codec, line + 1, column)


# ---------------------------------------------------------------------------------------------------------
# Rule documentation links.


def _cache_root() -> Path:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or tempfile.gettempdir()
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tapelint"


_DOC_URIS: dict[str, str | None] = {}


def rule_docs(code: str) -> str:
    """The markdown shown for a code: the rule's full docs, or a note for TL000/TL999 and unknown codes."""
    from tapelint.docs import explain

    key = code.strip()
    if key.upper() in _NOT_RULES:
        name = registry.SYNTAX_ERROR[1] if key.upper() == registry.SYNTAX_ERROR[0] else registry.INTERNAL_ERROR[1]
        return f"# {key.upper()} {name}\n\n{_NOT_RULES[key.upper()]}"
    try:
        return explain(key)
    except TapelintError:
        return f"`{key}` is not a tapelint rule (`tapelint rules` lists them)."


def rule_docs_uri(code: str) -> str | None:
    """A `file:` URI to the rule's docs, rendered from the installed rule into the user cache.

    The docs folder of the repository is not installed with the package, and no web site exists yet, so
    each server renders `<cache>/tapelint/<version>/rules/TL001.md` from the rule's docstring (refreshed
    when it differs) and links to it: the link works for any install and always matches the running rules.
    """
    rule = registry.rule_by_key(code)
    if rule is None:
        return None
    if rule.code in _DOC_URIS:
        return _DOC_URIS[rule.code]
    uri: str | None = None
    target = _cache_root() / __version__ / "rules" / f"{rule.code}.md"
    text = rule_docs(rule.code) + "\n"
    try:
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{rule.code}.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temp, target)
        uri = target.as_uri()
    except OSError as error:
        logger.warning("cannot write the docs of %s to %s: %s", rule.code, target, error)
    _DOC_URIS[rule.code] = uri
    return uri


# ---------------------------------------------------------------------------------------------------------
# The server.


@dataclass(frozen=True)
class LintRun:
    """The findings for one version of one document."""

    version: int | None
    source: str
    diagnostics: tuple[Diagnostic, ...]


class _Handled:
    """Stands in for a message that was already answered with an error, so pygls skips it."""

    jsonrpc = "handled"


class TapelintProtocol(LanguageServerProtocol):
    """Answers a request whose params do not parse with InvalidParams instead of leaving the client waiting."""

    def structure_message(self, data: dict[str, Any]):  # type: ignore[no-untyped-def]
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if isinstance(data, dict) and "id" in data and "method" in data:
                code = getattr(error, "code", types.ErrorCodes.InvalidParams)
                self._send_response(data["id"], None, types.ResponseError(
                    code=code, message=f"tapelint: cannot read the params of {data['method']!r}"))
                return _Handled()
            raise

    def handle_message(self, message):  # type: ignore[no-untyped-def]
        if isinstance(message, _Handled):
            return None
        return super().handle_message(message)


class LintWorker:
    """One long-lived worker process for lints and fixes, started on first use (spawned: forking a process
    with threads is unsafe). If it dies, the call is retried once in this process and a new worker is
    started for the next one."""

    def __init__(self) -> None:
        self._pool: Any = None
        self._lock = threading.Lock()

    def _executor(self) -> Any:
        with self._lock:
            if self._pool is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
            return self._pool

    def run(self, function: Any, *args: Any) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        pool = self._executor()
        try:
            return pool.submit(function, *args).result()
        except (BrokenProcessPool, RuntimeError, OSError) as error:
            # RuntimeError: the pool was shut down under us; OSError: no more processes. Lint here instead.
            logger.warning("the lint worker failed (%r); linting in the server process", error)
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            return function(*args)

    def warm(self) -> None:
        """Start the worker now, so the first lint does not pay for its start."""
        self._executor().submit(lint_document, "", "<warm-up>", Config(), None)

    def stop(self) -> None:
        """Kill the worker at once (it may be in the middle of a long parse)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                process.kill()
            except (OSError, AttributeError):
                pass
        pool.shutdown(wait=False, cancel_futures=True)


class TapelintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__, protocol_cls=TapelintProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.pending: dict[str, asyncio.Task] = {}
        self.runs: dict[str, LintRun] = {}
        self._configs: dict[str, tuple[float, Config]] = {}
        self._config_errors: set[tuple[str, float]] = set()
        self._too_large: set[str] = set()
        # Modules of the workspace that open documents import, read lazily and again when they change.
        self.project = ProjectIndex()
        # One worker: lints never compete for the GIL, and a queued stale run is cancelled before it starts.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tapelint-lint")
        # The lint itself runs in a worker process: libcst's parser holds the GIL for the whole parse (seconds
        # on a big file), which would freeze this process's message loop, `exit` included.
        self.worker = LintWorker()
        self.loop: asyncio.AbstractEventLoop | None = None

    def report_server_error(self, error: Exception, source: Any) -> None:
        # A malformed message from the client is the client's problem: log it, do not pop up a dialog.
        logger.warning("ignored a message tapelint could not handle: %s", error)
        if isinstance(error, ValueError) and type(error).__name__ == "JSONDecodeError":
            # JSON-RPC 2.0: a body that is not JSON gets a Parse error with a null id.
            try:
                self.protocol._send_data({"jsonrpc": "2.0", "id": None, "error": {
                    "code": int(types.ErrorCodes.ParseError), "message": f"tapelint: the message is not JSON ({error})"}})
            except Exception:  # noqa: BLE001 - a client that went away must not take the server down
                logger.warning("could not answer the malformed message")

    # -- documents ---------------------------------------------------------------------------------------

    def open_document(self, uri: str) -> TextDocument | None:
        """The document if the client opened it (never read from disk behind the editor's back)."""
        if not isinstance(uri, str) or unquote(uri) not in self.workspace.text_documents:
            return None
        return self.workspace.get_text_document(uri)

    @staticmethod
    def document_path(uri: str) -> Path | None:
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None
        return Path(url2pathname(parsed.path))

    def is_lintable(self, uri: str) -> bool:
        """Python files and unsaved Python buffers; never notebooks, TOML or whatever else a client syncs."""
        document = self.open_document(uri)
        if document is None:
            return False
        path = self.document_path(uri)
        if path is None:
            return urlparse(uri).scheme == "untitled" and document.language_id == "python"
        if path.suffix in (".py", ".pyi"):
            return True
        # Notebooks are linted by the command line: the editor sends them as JSON or as cell documents.
        return document.language_id == "python" and path.suffix != ".ipynb"

    def notify(self, send: Any, params: Any) -> None:
        """Send a notification from any thread: the protocol's writer belongs to the event loop."""
        loop = self.loop
        if loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            send(params)
        else:
            loop.call_soon_threadsafe(send, params)

    def config_for(self, uri: str) -> Config:
        """The `[tool.tapelint]` settings that the command line would use for this file."""
        path = self.document_path(uri)
        anchor = path if path is not None else (Path(self.workspace.root_path) if self.workspace.root_path else None)
        if anchor is None:
            return Config()
        found = find_config_file(anchor)
        if found is None:
            return Config()
        try:
            mtime = found.stat().st_mtime
        except OSError:
            return Config()
        key = str(found)
        cached = self._configs.get(key)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            config = load(found)
        except TapelintError as error:
            if (key, mtime) not in self._config_errors:
                self._config_errors.add((key, mtime))
                self.notify(self.window_show_message, types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"tapelint: {error}; using the default settings"))
            config = Config()
        self._configs[key] = (mtime, config)
        return config

    def lint_text(self, uri: str, source: str) -> tuple[Diagnostic, ...]:
        path = self.document_path(uri)
        config = self.config_for(uri)
        if path is not None and config.root is not None and config.is_excluded(path):
            return ()
        name = str(path) if path is not None else uri
        if len(source) > MAX_SOURCE_BYTES:
            # Parsing it would hold the server for minutes; say so once per document instead.
            if uri not in self._too_large:
                self._too_large.add(uri)
                self.notify(self.window_show_message, types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"tapelint: {name} is over the {MAX_SOURCE_BYTES // 2**20} MB limit for one file; not linted"))
            return ()
        self._too_large.discard(uri)
        try:
            # What the document imports from its own project is analysed with it (tapelint.project).
            prelude = self.project.prelude(path, source) if path is not None and path.suffix == ".py" else None
            found = self.worker.run(lint_document, source, name, config, prelude)
            return tuple(attribute(found, name, prelude, {}))
        except Exception as error:  # noqa: BLE001 - a bug in the engine must not take the editor's server down
            logger.exception("linting %s failed", uri)
            self.notify(self.window_log_message, types.LogMessageParams(
                type=types.MessageType.Error, message=f"tapelint: linting {uri} failed: {error!r}"))
            return ()

    def current_run(self, uri: str, document: TextDocument) -> LintRun:
        """Findings for the document as it is now: the last published run, or a fresh lint."""
        source = document.source
        run = self.runs.get(uri)
        if run is not None and run.source == source:
            return run
        return LintRun(document.version, source, self.lint_text(uri, source))

    # -- diagnostics -------------------------------------------------------------------------------------

    def schedule(self, uri: str, delay: float) -> None:
        """Lint the document after `delay` seconds; a newer request for the same document replaces this one."""
        self.loop = asyncio.get_running_loop()
        stale = self.pending.pop(uri, None)
        if stale is not None:
            stale.cancel()
        if not self.is_lintable(uri):
            return
        task = asyncio.ensure_future(self._lint_and_publish(uri, delay))
        self.pending[uri] = task
        task.add_done_callback(lambda done, uri=uri: self._forget(uri, done))

    def _forget(self, uri: str, task: asyncio.Task) -> None:
        if self.pending.get(uri) is task:
            del self.pending[uri]
        if not task.cancelled() and task.exception() is not None:
            logger.error("publishing diagnostics for %s failed: %r", uri, task.exception())

    async def _lint_and_publish(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        document = self.open_document(uri)
        if document is None:
            return
        version, source = document.version, document.source
        loop = asyncio.get_running_loop()
        diagnostics = await loop.run_in_executor(self.executor, self.lint_text, uri, source)
        document = self.open_document(uri)
        if document is None or document.source != source:
            return  # edited (or closed) while we linted: a newer run is on its way
        self.runs[uri] = LintRun(version, source, diagnostics)
        lines = split_lines(source)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=[self.to_lsp(d, lines) for d in diagnostics]))

    def to_lsp(self, diagnostic: Diagnostic, lines: Sequence[str]) -> types.Diagnostic:
        href = rule_docs_uri(diagnostic.code)
        return types.Diagnostic(
            range=diagnostic_range(diagnostic, lines, self.workspace.position_codec),
            message=diagnostic.message,
            severity=_SEVERITY.get(diagnostic.severity, types.DiagnosticSeverity.Warning),
            code=diagnostic.code,
            code_description=types.CodeDescription(href=href) if href else None,
            source=SOURCE,
        )

    def forget(self, uri: str) -> None:
        stale = self.pending.pop(uri, None)
        if stale is not None:
            stale.cancel()
        self.runs.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- code actions ------------------------------------------------------------------------------------

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        document = self.open_document(uri)
        if document is None or not self.is_lintable(uri):
            return None
        run = self.current_run(uri, document)
        lines = split_lines(run.source)
        codec = self.workspace.position_codec
        only = list(params.context.only or []) if params.context is not None else []

        def wanted(kind: str) -> bool:
            return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)

        actions: list[types.CodeAction] = []
        if wanted(types.CodeActionKind.QuickFix.value):
            for diagnostic in run.diagnostics:
                fix = diagnostic.fix
                if fix is None:
                    continue
                lsp_diagnostic = self.to_lsp(diagnostic, lines)
                if not ranges_touch(lsp_diagnostic.range, params.range):
                    continue
                title = f"{diagnostic.code}: {fix.title}"
                if not fix.safe:
                    title += " (unsafe fix: may change behaviour)"
                actions.append(types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diagnostic],
                    is_preferred=fix.safe,
                    edit=types.WorkspaceEdit(changes={uri: [self._edit(e, lines, codec) for e in fix.edits]}),
                ))
        if wanted(FIX_ALL_KIND) and any(d.fix is not None and d.fix.safe for d in run.diagnostics):
            outcome = self.worker.run(fix_source, run.source, self._lint_name(uri), self.config_for(uri))
            if outcome.source != run.source:
                actions.append(types.CodeAction(
                    title=FIX_ALL_TITLE,
                    kind=FIX_ALL_KIND,
                    edit=types.WorkspaceEdit(changes={uri: [whole_text_edit(run.source, outcome.source, codec)]}),
                ))
        return actions

    def _lint_name(self, uri: str) -> str:
        path = self.document_path(uri)
        return str(path) if path is not None else uri

    @staticmethod
    def _edit(edit: TextEdit, lines: Sequence[str], codec: Any) -> types.TextEdit:
        return types.TextEdit(range=to_lsp_range(lines, codec, edit.line, edit.column, edit.end_line,
                                                 edit.end_column), new_text=edit.text)

    # -- hover -------------------------------------------------------------------------------------------

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        document = self.open_document(params.text_document.uri)
        if document is None:
            return None
        lines = split_lines(document.source)
        codec = self.workspace.position_codec
        line, column = from_lsp_position(lines, codec, params.position)
        text = lines[line] if line < len(lines) else ""
        for match in _NOQA.finditer(text):
            if not match.start() <= column <= match.end():
                continue
            codes = [(m.group(), match.start("codes") + m.start(), match.start("codes") + m.end())
                     for m in _CODE.finditer(match.group("codes"))]
            under = [c for c in codes if c[1] <= column <= c[2]]
            shown = under or codes
            start, end = (under[0][1], under[0][2]) if under else (match.start(), match.end())
            value = "\n\n---\n\n".join(rule_docs(code) for code, _, _ in shown)
            return types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
                range=to_lsp_range(lines, codec, line + 1, start, line + 1, end),
            )
        return None


def create_server() -> TapelintServer:
    server = TapelintServer()

    @server.feature(types.INITIALIZED)
    def initialized(ls: TapelintServer, params: types.InitializedParams) -> None:
        ls.worker.warm()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: TapelintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: TapelintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: TapelintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.endswith("pyproject.toml"):
            # The settings may have changed: re-lint everything that is open.
            for document in list(ls.workspace.text_documents.values()):
                ls.schedule(document.uri, 0)
            return
        ls.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: TapelintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    async def code_action(ls: TapelintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        # Fixing re-lints the document several times: keep the event loop free for other messages meanwhile.
        loop = ls.loop = asyncio.get_running_loop()
        return await loop.run_in_executor(ls.executor, ls.code_actions, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TapelintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    return server


def serve() -> None:
    """Run the server over standard input and output until the client says exit."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="tapelint server: %(message)s")
    server = create_server()
    server.start_io()
    # `exit` ends the message loop; a lint still running in the worker thread (a big file) must not hold
    # the process until it finishes, as interpreter shutdown would: leave now, with the protocol's code
    # (0 after `shutdown`, 1 without).
    code = 0 if getattr(server.protocol, "_shutdown", False) else 1
    server.worker.stop()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)

"""``gnnlint server``: a Language Server Protocol server over stdio (pygls).

What an editor gets for each open Python file (``languageId`` python, or a
``.py``/``.pyi`` path):

- diagnostics on open and save at once, on change after a short pause
  (debounced), published for the version they were computed for. They are
  exactly ``gnnlint check .``'s findings for that file: the file is linted
  with the cross-file facts of its whole project (``engine.check_project``),
  every open buffer of the project standing in for its file on disk, so a
  compile added in ``train.py`` is felt in ``models.py`` before either is
  saved; the other open files of a project are linted again when one changes.
- each diagnostic: ``code`` (GNN001), ``codeDescription`` (the rule's page in
  the rules/ catalogue, ``report.rule_url``), ``source`` "gnnlint", the rule
  name and message, the severity (error/warning/info) and the range;
- code actions: each finding's fix (``quickfix``; a safe fix is the preferred
  action, an unsafe one says "(unsafe)" in its title), ``Disable GNNxxx for
  this line`` (adds or extends the line's ``# noqa``), and
  ``source.fixAll.gnnlint``: every safe fix, applied the way ``gnnlint check
  --fix`` applies them (fixed until stable, each result must parse);
- hover on a code in a ``# noqa: GNN001`` comment: the rule's summary;
- configuration: each file's settings come from its project's
  ``pyproject.toml`` (closest ``[tool.gnnlint]``, as the CLI finds it), read
  again when a ``pyproject.toml`` changes (watched files, or saved in the
  editor) -- the open files are then linted again;
- progress (``window/workDoneProgress``) while a project's index is first
  built.

Linting runs in one worker thread, so the server answers while a project is
indexed. pygls is imported by this module only: ``gnnlint check`` never
loads it.
"""
from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from gnnlint import __version__
from gnnlint.finding import Edit, Finding
from gnnlint.fix import split_lines

log = logging.getLogger("gnnlint.server")

DEBOUNCE_SECONDS = 0.3
FIX_ALL_KIND = "source.fixAll.gnnlint"
SEVERITY = {"error": T.DiagnosticSeverity.Error, "warning": T.DiagnosticSeverity.Warning,
            "info": T.DiagnosticSeverity.Information}
_NOQA_CODES = re.compile(r"#\s*noqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")


@dataclass
class LintState:
    """What the last lint of one document found (for code actions)."""

    version: Optional[int]
    text: str
    findings: list[Finding]  # `# noqa` applied
    raw: list[Finding]  # before `# noqa` (the fixer's input)
    facts: object = None  # the ProjectFacts the file was linted with
    settings: object = None


@dataclass
class Linter:
    """The engine, as the server uses it (no pygls here: unit-testable)."""

    settings_cache: dict = field(default_factory=dict)  # folder -> (signature, Settings)
    indexed: set = field(default_factory=set)  # project roots linted at least once
    # One process: the engine's worker pool forks, and forking this
    # multi-threaded server (the stdio reader, the lint thread) can deadlock
    # the children on a lock another thread held.
    jobs: int = 1

    def settings_for(self, path: str):
        from gnnlint.config import load_settings

        folder = os.path.dirname(path)
        signature = _config_signature(folder)
        cached = self.settings_cache.get(folder)
        if cached is not None and cached[0] == signature:
            return cached[1]
        settings = load_settings(cwd=Path(folder), start=Path(folder))
        self.settings_cache[folder] = (signature, settings)
        return settings

    def forget_settings(self) -> None:
        self.settings_cache.clear()

    def project_root(self, path: str) -> str:
        return os.path.normpath(os.path.abspath(self.settings_for(path).project_root))

    def lint(self, path: str, text: str, version: Optional[int], buffers: dict[str, str]) -> LintState:
        """Lint the buffer ``text`` of ``path`` with its project's facts;
        ``buffers``: other open files (path -> text) standing in for the disk."""
        from gnnlint.engine import apply_noqa, check_project

        settings = self.settings_for(path)
        if _excluded(path, settings):  # `gnnlint check .` does not report it: neither do we
            return LintState(version, text, [], [], None, settings)
        root = self.project_root(path)
        contents = {p: t.encode("utf-8") for p, t in buffers.items()
                    if p != path and _within(p, root) and p.endswith((".py", ".pyi"))}
        contents[path] = text.encode("utf-8")
        result = check_project([Path(path)], settings, project_facts=True, use_cache=True,
                               jobs=self.jobs, contents=contents)
        self.indexed.add(root)
        for error in result.errors + result.internal_errors:
            log.warning(error)
        raw = [f for f in result.findings if os.path.normpath(f.path) == path]
        findings = apply_noqa(raw, sources={path: text})
        from gnnlint.finding import at_least

        findings = at_least(findings, settings.severity)  # as the CLI filters
        return LintState(version, text, findings, raw, result.facts.get(str(Path(path))), settings)

    def fix_all(self, path: str, state: LintState) -> Optional[str]:
        """The buffer with every safe fix applied (None: nothing to fix)."""
        from gnnlint.engine import options_resolver
        from gnnlint.fix import fix_source

        settings = state.settings
        options = options_resolver(settings)(Path(path))
        fixable = frozenset(settings.for_path(path).fixable_codes)
        fixed = fix_source(path, state.text.encode("utf-8"), options, state.facts, unsafe=False,
                           fixable=fixable, findings=state.raw)
        for error in fixed.errors:
            log.warning(error)
        return fixed.text if fixed.changed else None


def _excluded(path: str, settings) -> bool:
    """Whether exclude / extend-exclude leave ``path`` (or a folder above it,
    up to the project root) out of a walk, as ``--force-exclude`` decides."""
    from gnnlint.cli import _force_excluded

    return _force_excluded(Path(path), settings)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _config_signature(folder: str) -> tuple:
    """(path, mtime) of every pyproject.toml from ``folder`` up: a changed,
    added or removed config changes it."""
    out = []
    d = folder
    while True:
        candidate = os.path.join(d, "pyproject.toml")
        try:
            out.append((candidate, os.stat(candidate).st_mtime_ns))
        except OSError:
            pass
        parent = os.path.dirname(d)
        if parent == d:
            return tuple(out)
        d = parent


# ---------------------------------------------------------------------- conversions
def _lines(text: str) -> list[str]:
    """The document's lines without their ends, cut where the LSP (and
    libcst) cut them: at \\n, \\r\\n and \\r only."""
    return [line.rstrip("\r\n") for line in split_lines(text)] or [""]


def to_position(doc, lines: list[str], line: int, col: int) -> T.Position:
    """1-based (line, code-point column) -> the client's position units
    (UTF-16 unless the client negotiated another encoding)."""
    from pygls.workspace.position_codec import ServerTextPosition

    if line - 1 >= len(lines):
        return T.Position(line=len(lines), character=0)
    text = lines[line - 1]
    pos = doc.position_codec.position_to_client_units([text], ServerTextPosition(0, min(max(col - 1, 0), len(text))))
    return T.Position(line=line - 1, character=pos.character)


def to_range(doc, lines: list[str], line: int, col: int, end_line: int, end_col: int) -> T.Range:
    return T.Range(start=to_position(doc, lines, line, col), end=to_position(doc, lines, end_line, end_col))


def rule_url(code: str) -> str:
    from gnnlint.report import rule_url as url

    return url(code)


def to_diagnostic(doc, lines: list[str], f: Finding) -> T.Diagnostic:
    return T.Diagnostic(
        range=to_range(doc, lines, f.line, f.col, f.end_line, f.end_col),
        message=f"{f.message} [{f.name}]",
        severity=SEVERITY.get(getattr(f, "severity", "error"), T.DiagnosticSeverity.Error),
        code=f.code,
        code_description=T.CodeDescription(href=rule_url(f.code)),
        source="gnnlint",
        data={"name": f.name, "fix": f.fix.applicability if f.fix is not None else None},
    )


def text_edits(doc, lines: list[str], edits: tuple[Edit, ...]) -> list[T.TextEdit]:
    return [T.TextEdit(range=to_range(doc, lines, e.line, e.col, e.end_line, e.end_col), new_text=e.content)
            for e in edits]


# ---------------------------------------------------------------------- the server
class GnnlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("gnnlint", __version__, text_document_sync_kind=T.TextDocumentSyncKind.Incremental)
        self.linter = Linter()
        self.states: dict[str, LintState] = {}  # uri -> last lint
        self.tasks: dict[str, asyncio.Task] = {}
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gnnlint-lint")
        self.debounce = DEBOUNCE_SECONDS
        self.last_error: Optional[str] = None

    # -- documents -------------------------------------------------------------
    def lintable(self, uri: str) -> Optional[str]:
        """The file system path of a document we lint (a Python file; not a
        notebook: editors sync those as notebook documents), else None."""
        path = to_fs_path(uri)
        if path is None or path.endswith(".ipynb"):
            return None
        doc = self.workspace.text_documents.get(uri)
        if not path.endswith((".py", ".pyi")) and (doc is None or doc.language_id != "python"):
            return None
        return os.path.normpath(os.path.abspath(path))

    def buffers(self) -> dict[str, str]:
        out = {}
        for uri, doc in self.workspace.text_documents.items():
            path = to_fs_path(uri)
            if path is not None:
                out[os.path.normpath(os.path.abspath(path))] = doc.source
        return out

    def schedule(self, uri: str, delay: float, others: bool = False) -> None:
        """Lint ``uri`` after ``delay`` seconds (a newer request replaces an
        older one); ``others``: then the other open files of its project."""
        old = self.tasks.pop(uri, None)
        if old is not None and not old.done():
            old.cancel()
        self.tasks[uri] = asyncio.ensure_future(self._lint_later(uri, delay, others))

    async def _lint_later(self, uri: str, delay: float, others: bool) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            await self.lint_and_publish(uri)
            if others:
                path = self.lintable(uri)
                root = self.linter.project_root(path) if path else None
                for other in list(self.workspace.text_documents):
                    other_path = self.lintable(other) if other != uri else None
                    if other_path and root and _within(other_path, root):
                        await self.lint_and_publish(other)
        except asyncio.CancelledError:
            pass

    async def lint_and_publish(self, uri: str) -> Optional[LintState]:
        path = self.lintable(uri)
        if path is None:
            return None
        doc = self.workspace.get_text_document(uri)
        text, version = doc.source, doc.version
        loop = asyncio.get_running_loop()
        progress = None
        try:
            root = await loop.run_in_executor(self.executor, self.linter.project_root, path)
            if root not in self.linter.indexed:
                progress = await self._begin_progress(f"indexing {root}")
            started = time.perf_counter()
            state = await loop.run_in_executor(self.executor, self.linter.lint, path, text, version, self.buffers())
            log.info("linted %s in %.3f s", path, time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001 - a config error or a bug: tell the user, keep serving
            from gnnlint.config import ConfigError

            kind = "configuration error" if isinstance(exc, ConfigError) else "internal error"
            message = f"gnnlint: {kind}: {exc}"
            if message != self.last_error:  # once, not on every keystroke
                self.last_error = message
                self.window_show_message(T.ShowMessageParams(type=T.MessageType.Error, message=message))
            log.exception("lint failed for %s", path)
            return None
        finally:
            if progress is not None:
                self.work_done_progress.end(progress, T.WorkDoneProgressEnd(message="done"))
        current = self.workspace.text_documents.get(uri)
        if current is None or current.version != version:
            return state  # the buffer moved on: its own lint will publish
        self.states[uri] = state
        self.last_error = None
        lines = _lines(text)
        self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=[to_diagnostic(doc, lines, f) for f in state.findings]))
        return state

    async def _begin_progress(self, title: str):
        caps = self.client_capabilities.window
        if caps is None or not caps.work_done_progress:
            return None
        token = f"gnnlint-index-{time.monotonic_ns()}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), 5.0)
        except Exception:  # noqa: BLE001 - a client that refuses or never answers: no progress, still lint
            return None
        self.work_done_progress.begin(token, T.WorkDoneProgressBegin(title="gnnlint", message=title))
        return token

    async def current_state(self, uri: str) -> Optional[LintState]:
        doc = self.workspace.text_documents.get(uri)
        state = self.states.get(uri)
        if doc is None:
            return None
        if state is None or state.version != doc.version:
            state = await self.lint_and_publish(uri)
        return state

    def config_changed(self) -> None:
        self.linter.forget_settings()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, 0)


server = GnnlintServer()


@server.feature(T.INITIALIZED)
async def initialized(ls: GnnlintServer, params: T.InitializedParams) -> None:
    watch = ls.client_capabilities.workspace
    dynamic = watch is not None and watch.did_change_watched_files is not None and \
        watch.did_change_watched_files.dynamic_registration
    if dynamic:
        try:
            await ls.client_register_capability_async(T.RegistrationParams(registrations=[T.Registration(
                id="gnnlint-pyproject", method=T.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=T.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[T.FileSystemWatcher(glob_pattern="**/pyproject.toml")]))]))
        except Exception:  # noqa: BLE001 - not fatal: saves in the editor still reload the config
            log.info("the client did not register the pyproject.toml watcher")


@server.feature(T.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GnnlintServer, params: T.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GnnlintServer, params: T.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("pyproject.toml"):
        return
    ls.schedule(uri, ls.debounce, others=True)


@server.feature(T.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GnnlintServer, params: T.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("pyproject.toml"):
        ls.config_changed()
        return
    ls.schedule(uri, 0, others=True)


@server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GnnlintServer, params: T.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls.tasks.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.states.pop(uri, None)
    ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def watched_files(ls: GnnlintServer, params: T.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.config_changed()


def _wants(only: Optional[list[str]], kind: str) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


@server.feature(T.TEXT_DOCUMENT_CODE_ACTION, T.CodeActionOptions(
    code_action_kinds=[T.CodeActionKind.QuickFix, T.CodeActionKind.SourceFixAll, FIX_ALL_KIND], resolve_provider=False))
async def code_action(ls: GnnlintServer, params: T.CodeActionParams) -> Optional[list[T.CodeAction]]:
    uri = params.text_document.uri
    path = ls.lintable(uri)
    if path is None:
        return None
    state = await ls.current_state(uri)
    if state is None:
        return None
    doc = ls.workspace.get_text_document(uri)
    lines = _lines(state.text)
    only = params.context.only
    actions: list[T.CodeAction] = []
    if _wants(only, T.CodeActionKind.QuickFix):
        first, last = params.range.start.line + 1, params.range.end.line + 1
        for f in state.findings:
            if f.end_line < first or f.line > last:
                continue
            diagnostic = to_diagnostic(doc, lines, f)
            if f.fix is not None and f.fix.applicability != "display-only":
                unsafe = f.fix.applicability == "unsafe"
                actions.append(T.CodeAction(
                    title=f"{'(unsafe) ' if unsafe else ''}{f.fix.message} ({f.code})",
                    kind=T.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=not unsafe,
                    edit=T.WorkspaceEdit(changes={uri: text_edits(doc, lines, f.fix.edits)})))
            noqa = _noqa_edit(doc, lines, state.text, f)
            if noqa is not None:
                actions.append(T.CodeAction(
                    title=f"Disable {f.code} for this line", kind=T.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], edit=T.WorkspaceEdit(changes={uri: [noqa]})))
    if _wants(only, FIX_ALL_KIND) and any(f.fixable for f in state.findings):
        loop = asyncio.get_running_loop()
        fixed = await loop.run_in_executor(ls.executor, ls.linter.fix_all, path, state)
        if fixed is not None:
            end = T.Position(line=len(split_lines(state.text)), character=0)
            actions.append(T.CodeAction(
                title="gnnlint: fix all safe fixes", kind=FIX_ALL_KIND,
                edit=T.WorkspaceEdit(changes={uri: [T.TextEdit(
                    range=T.Range(start=T.Position(line=0, character=0), end=end), new_text=fixed)]})))
    return actions


def _noqa_edit(doc, lines: list[str], text: str, f: Finding) -> Optional[T.TextEdit]:
    """Add ``# noqa: CODE`` to the finding's statement line (or extend the
    directive there), as ``gnnlint check --add-noqa`` does."""
    from gnnlint.add_noqa import add_noqa

    new = split_lines(add_noqa(text, [f]).text)
    if len(new) != len(lines):
        return None
    for n, (a, b) in enumerate(zip(lines, new), start=1):
        b = b.rstrip("\r\n")
        if a != b:
            return T.TextEdit(range=to_range(doc, lines, n, 1, n, len(a) + 1), new_text=b)
    return None


@server.feature(T.TEXT_DOCUMENT_HOVER)
def hover(ls: GnnlintServer, params: T.HoverParams) -> Optional[T.Hover]:
    """A rule's summary when hovering its code in a ``# noqa: ...`` comment."""
    from gnnlint.rules import rule_by_code

    doc = ls.workspace.get_text_document(params.text_document.uri)
    lines = _lines(doc.source)
    if params.position.line >= len(lines):
        return None
    line = lines[params.position.line]
    col = doc.position_codec.position_from_client_units([line], T.Position(line=0, character=params.position.character)).character
    for m in _NOQA_CODES.finditer(line):
        for code in _CODE.finditer(m.group("codes")):
            start, end = m.start("codes") + code.start(), m.start("codes") + code.end()
            if start <= col <= end:
                rule = rule_by_code(code.group(0).upper())
                if rule is None:
                    return None
                value = f"**{rule.code}** `{rule.name}`\n\n{rule.summary}\n\n[{rule.code} rule page]({rule_url(rule.code)})"
                row = params.position.line
                return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=value),
                               range=T.Range(start=T.Position(line=row, character=to_position(doc, [line], 1, start + 1).character),
                                             end=T.Position(line=row, character=to_position(doc, [line], 1, end + 1).character)))
    return None


def main() -> None:
    logging.basicConfig(level=os.environ.get("GNNLINT_LOG", "WARNING").upper(),
                        format="gnnlint-server %(levelname)s %(message)s")
    server.start_io()


if __name__ == "__main__":
    main()

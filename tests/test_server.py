"""`gnnlint server` driven over stdio by a real LSP client (pytest-lsp): a
workspace whose model is compiled in another file, its diagnostics (the same
as `gnnlint check .`), a quick fix's edit, fix-all, # noqa, hover, the
cross-file facts of unsaved buffers, config reload and progress."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

MODELS = textwrap.dedent("""\
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            if x.sum().item() > 0:  # the host sync
                x = x * 2
            return self.lin(x)
""")
TRAIN = textwrap.dedent("""\
    import torch

    from models import Net

    model = Net()
    torch.compile(model)
    model = torch.compile(Net())
    x = torch.ones(2)  # noqa: GNN001
""")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gnnlint", "server"]))
async def client(lsp_client: LanguageClient, workspace: Path):
    lsp_client.registrations = []

    @lsp_client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def register(params: T.RegistrationParams):  # what VS Code does: the server asks to watch files
        lsp_client.registrations.extend(params.registrations)

    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=workspace.as_uri(),
        workspace_folders=[T.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]))
    yield
    await lsp_client.shutdown_session()


def open_file(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text() if text is None else text)))
    return uri


async def diagnostics(client: LanguageClient, uri: str, until=lambda d: True, timeout: float = 30.0):
    """The diagnostics published for ``uri`` once ``until(them)`` holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = client.diagnostics.get(uri)
        if found is not None and until(found):
            return list(found)
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no matching diagnostics for {uri}: {found}")
        await asyncio.sleep(0.05)


def apply(text: str, edits: list[T.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(p: T.Position) -> int:
        return offsets[min(p.line, len(lines))] + p.character

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:at(e.range.start)] + e.new_text + text[at(e.range.end):]
    return text


def cli_findings(workspace: Path, name: str) -> list[tuple]:
    out = subprocess.run([sys.executable, "-m", "gnnlint", "check", ".", "--no-cache", "--output-format", "json"],
                         cwd=workspace, capture_output=True, text=True).stdout
    return sorted((f["code"], f["location"]["row"] - 1, f["location"]["column"] - 1,
                   f["end_location"]["row"] - 1, f["end_location"]["column"] - 1)
                  for f in json.loads(out) if f["filename"] == name)


def as_tuples(diags) -> list[tuple]:
    return sorted((d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
                  for d in diags)


@pytest.mark.asyncio
async def test_diagnostics_quick_fix_noqa_and_fix_all(client: LanguageClient, workspace: Path):
    models = open_file(client, workspace / "models.py")
    diags = await diagnostics(client, models, lambda d: len(d) > 0)
    # the model is compiled in train.py: its forward's .item() is flagged here
    (d,) = diags
    assert (d.code, d.range.start.line, d.source) == ("GNN001", 9, "gnnlint")
    assert d.code_description.href.endswith("/rules/GNN001.md")
    assert d.severity == T.DiagnosticSeverity.Warning and "[host-sync]" in d.message
    assert as_tuples(diags) == cli_findings(workspace, "models.py")  # what `gnnlint check .` says

    train = open_file(client, workspace / "train.py")
    diags = await diagnostics(client, train, lambda d: len(d) > 0)
    assert as_tuples(diags) == cli_findings(workspace, "train.py")
    (d,) = diags
    actions = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=train), range=d.range,
        context=T.CodeActionContext(diagnostics=[d])))
    by_title = {a.title: a for a in actions}
    fix = next(a for a in actions if a.kind == T.CodeActionKind.QuickFix and "GNN010" in a.title
               and not a.title.startswith("Disable"))
    assert fix.is_preferred
    assert apply(TRAIN, fix.edit.changes[train]).splitlines()[5] == "model = torch.compile(model)"
    noqa = by_title["Disable GNN010 for this line"]
    assert apply(TRAIN, noqa.edit.changes[train]).splitlines()[5] == "torch.compile(model)  # noqa: GNN010"

    actions = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=train),
        range=T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=0)),
        context=T.CodeActionContext(diagnostics=[], only=[T.CodeActionKind.SourceFixAll])))
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.gnnlint"
    fixed = apply(TRAIN, fix_all.edit.changes[train])
    assert fixed == TRAIN.replace("\ntorch.compile(model)\n", "\nmodel = torch.compile(model)\n")

    hover = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=train), position=T.Position(line=7, character=30)))
    assert "GNN001" in hover.contents.value and "host-sync" in hover.contents.value

    # the first index of the project was shown as progress
    assert any(isinstance(r, T.WorkDoneProgressBegin) for reports in client.progress_reports.values()
               for r in reports)


@pytest.mark.asyncio
async def test_unsaved_edits_and_config_reload(client: LanguageClient, workspace: Path):
    models = open_file(client, workspace / "models.py")
    train = open_file(client, workspace / "train.py")
    await diagnostics(client, models, lambda d: len(d) == 1)
    # the user deletes the compiles from train.py (not saved): models.py is no longer compiled
    new = TRAIN.replace("torch.compile(model)\n", "").replace("model = torch.compile(Net())\n", "")
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=train, version=2),
        content_changes=[T.TextDocumentContentChangeWholeDocument(text=new)]))
    await diagnostics(client, models, lambda d: len(d) == 0)
    await diagnostics(client, train, lambda d: len(d) == 0)
    # back; then the project's config ignores GNN001 (watched pyproject.toml)
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=train, version=3),
        content_changes=[T.TextDocumentContentChangeWholeDocument(text=TRAIN)]))
    await diagnostics(client, models, lambda d: len(d) == 1)
    (workspace / "pyproject.toml").write_text('[tool.gnnlint]\nignore = ["GNN001"]\n')
    client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(changes=[T.FileEvent(
        uri=(workspace / "pyproject.toml").as_uri(), type=T.FileChangeType.Changed)]))
    await diagnostics(client, models, lambda d: len(d) == 0)
    assert [d.code for d in await diagnostics(client, train, lambda d: len(d) == 1)] == ["GNN010"]
    # an excluded file is not reported, as `gnnlint check .` does not report it
    (workspace / "pyproject.toml").write_text('[tool.gnnlint]\nextend-exclude = ["train.py"]\n')
    client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(changes=[T.FileEvent(
        uri=(workspace / "pyproject.toml").as_uri(), type=T.FileChangeType.Changed)]))
    await diagnostics(client, train, lambda d: len(d) == 0)


def test_check_never_imports_the_server(workspace: Path):
    """The core path stays free of pygls (and of torch)."""
    code = ("import sys\nfrom click.testing import CliRunner\nfrom gnnlint.cli import main\n"
            "r = CliRunner().invoke(main, ['check', '--no-cache', '.'])\n"
            "assert r.exit_code == 1, r.output\n"
            "loaded = [m for m in ('pygls', 'lsprotocol', 'torch') if m in sys.modules]\n"
            "assert not loaded, loaded\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

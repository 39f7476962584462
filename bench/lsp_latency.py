"""Editor latency of `gnnlint server`: time from a document notification
(didOpen, didChange) to the publishDiagnostics for that version, measured by
a real LSP client (pygls's) driving the server over stdio.

The project: a copy of the installed torch_geometric tree (655 files) plus
one 500-line training script at its root that compiles a model built from
torch_geometric layers (so the cross-file facts reach into the tree).

- cold, no cache: a fresh server, no .gnnlint_cache: the first didOpen
  builds the project's index;
- cold, cached: a fresh server (an editor restart) with the cache on disk;
- warm: didChange on the open file (each edit changes one line), median and
  max of N edits. The server waits DEBOUNCE_SECONDS (0.3 s) after a change
  before linting: reported raw and without it.

    python bench/lsp_latency.py [--edits 10] [--keep DIR]

Not a test: it takes about a minute on two cores.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as T
from pygls.lsp.client import LanguageClient

HEADER = '''"""A training script: a GNN built from torch_geometric layers, compiled."""
import torch
import torch.nn.functional as F

from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GCNConv, global_mean_pool


class Net(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.conv1 = GCNConv(16, hidden)
        self.conv2 = GCNConv(hidden, hidden)

    def forward(self, x, edge_index, batch):
        x = F.relu(self.conv1(x, edge_index))
        if x.sum().item() > 0:
            x = x * 2
        return global_mean_pool(self.conv2(x, edge_index), batch)

'''

HELPER = '''
def helper_{i}(t, scale={i}):
    """Helper {i}: plain tensor code outside the compiled region."""
    out = t * scale
    out = out + {i}
    return out.mean()

'''

FOOTER = '''
def train(data):
    model = Net(32)
    model = torch.compile(model)
    loader = NeighborLoader(data, num_neighbors=[10, 10], batch_size=128)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for batch in loader:
        opt.zero_grad()
        loss = model(batch.x, batch.edge_index, batch.batch).sum()
        loss.backward()
        opt.step()
        print(loss.item())
'''


def script(lines: int = 500) -> str:
    text = HEADER
    i = 0
    while text.count("\n") + FOOTER.count("\n") + HELPER.count("\n") <= lines:
        text += HELPER.format(i=i)
        i += 1
    text += FOOTER
    while text.count("\n") < lines:
        text += "\n"
    return text


def make_project(root: Path) -> Path:
    import torch_geometric

    shutil.copytree(os.path.dirname(torch_geometric.__file__), root / "torch_geometric",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "pyproject.toml").write_text("[project]\nname = 'bench'\n\n[tool.gnnlint]\n")
    path = root / "train_gnn.py"
    path.write_text(script())
    return path


class Client:
    def __init__(self) -> None:
        self.client = LanguageClient("lsp-latency", "1")
        self.published: dict[tuple[str, int], float] = {}
        self.diagnostics: dict[tuple[str, int], list] = {}

        @self.client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: T.PublishDiagnosticsParams) -> None:
            key = (params.uri, params.version)
            self.published.setdefault(key, time.perf_counter())
            self.diagnostics[key] = params.diagnostics

        @self.client.feature(T.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params) -> None:
            return None

        @self.client.feature(T.PROGRESS)
        def progress(params) -> None:
            return None

    async def start(self, root: Path) -> None:
        await self.client.start_io(sys.executable, "-m", "gnnlint", "server")
        await self.client.initialize_async(T.InitializeParams(
            capabilities=T.ClientCapabilities(window=T.WindowClientCapabilities(work_done_progress=True)),
            root_uri=root.as_uri(), workspace_folders=[T.WorkspaceFolder(uri=root.as_uri(), name="bench")]))
        self.client.initialized(T.InitializedParams())

    async def wait(self, uri: str, version: int, timeout: float = 600) -> float:
        start = time.perf_counter()
        while (uri, version) not in self.published:
            if time.perf_counter() - start > timeout:
                raise TimeoutError(f"no diagnostics for version {version}")
            await asyncio.sleep(0.005)
        return self.published[(uri, version)]

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def open_once(root: Path, path: Path) -> tuple[float, int]:
    c = Client()
    await c.start(root)
    uri = path.as_uri()
    t0 = time.perf_counter()
    c.client.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text())))
    t1 = await c.wait(uri, 1)
    count = len(c.diagnostics[(uri, 1)])
    await c.stop()
    return t1 - t0, count


async def edits(root: Path, path: Path, n: int) -> tuple[list[float], int]:
    c = Client()
    await c.start(root)
    uri = path.as_uri()
    text = path.read_text()
    c.client.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text)))
    await c.wait(uri, 1)
    lines = text.splitlines(keepends=True)
    target = next(i for i, line in enumerate(lines) if "out = out +" in line)
    times = []
    for k in range(n):
        version = k + 2
        new = f"    out = out + {k + 1000}\n"
        rng = T.Range(start=T.Position(line=target, character=0), end=T.Position(line=target + 1, character=0))
        t0 = time.perf_counter()
        c.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangePartial(range=rng, text=new)]))
        t1 = await c.wait(uri, version)
        times.append(t1 - t0)
        await asyncio.sleep(0.1)
    count = len(c.diagnostics[(uri, n + 1)])
    await c.stop()
    return times, count


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="build the project here and keep it")
    args = parser.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="gnnlint-lsp-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        path = make_project(tmp) if not (tmp / "train_gnn.py").exists() else tmp / "train_gnn.py"
        shutil.rmtree(tmp / ".gnnlint_cache", ignore_errors=True)
        files = sum(1 for _ in tmp.rglob("*.py"))
        print(f"project: {files} files, {path.name}: {path.read_text().count(chr(10))} lines")
        cold, n1 = await open_once(tmp, path)
        print(f"cold open, no cache:  {cold:7.3f} s  ({n1} diagnostics)")
        cached, n2 = await open_once(tmp, path)
        print(f"cold open, cached:    {cached:7.3f} s  ({n2} diagnostics)")
        times, n3 = await edits(tmp, path, args.edits)
        med, worst = statistics.median(times), max(times)
        debounce = 0.3
        print(f"warm didChange -> publishDiagnostics over {len(times)} edits: median {med:.3f} s, "
              f"max {worst:.3f} s (without the {debounce} s debounce: {med - debounce:.3f} s / "
              f"{worst - debounce:.3f} s)  ({n3} diagnostics)")
        import json
        import subprocess

        out = subprocess.run([sys.executable, "-m", "gnnlint", "check", ".", "--output-format", "json", "--exit-zero"],
                             cwd=tmp, capture_output=True, text=True).stdout
        cli = [f for f in json.loads(out) if f["filename"] == path.name]
        print(f"gnnlint check . reports {len(cli)} findings for {path.name} (the server: {n1})")
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())

"""A script compiling a model of another file and running it itself, every call
leaving an optional ``forward`` input out (3D-GSRD: ``trainer_model.model =
torch.compile(trainer_model.model)``, the LightningModule's ``self.model(batch,
x, edge_index)``; the pretraining program runs the encoder eagerly with
``pos_mask=``): the branch needing that input never runs compiled
(semantic/compiled_calls.py tells the defining file what the calls pass). The same
shape with a call that passes the input, with the compiled object handed to a
project function, or with a module-level holder keeps its findings."""
from __future__ import annotations

from tests.project_files import finding_keys

ENCODER = """\
    import torch


    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x, edge_index, pos_mask=None):
            if pos_mask is not None:
                x = x[~pos_mask]
                n = edge_index.max().item()
            return self.lin(x)
"""
PRETRAIN = """\
    from demo.encoder import Encoder


    def pretrain(loader):
        enc = Encoder()
        for batch in loader:
            enc(batch.x, batch.edge_index, pos_mask=batch.pos_mask)
"""


def _script(call: str, extra: str = "", member: bool = True) -> str:
    if member:
        return f"""\
            import lightning as L
            import torch
            from demo.encoder import Encoder
            {extra}

            class Trainer(L.LightningModule):
                def __init__(self, model):
                    super().__init__()
                    self.model = model

                def training_step(self, batch, i):
                    return {call}


            def main(loader):
                trainer_model = Trainer(Encoder())
                trainer_model.model = torch.compile(trainer_model.model, dynamic=True)
                trainer = L.Trainer(max_epochs=1)
                trainer.fit(trainer_model, loader)
        """
    return f"""\
        import torch
        from demo.encoder import Encoder
        {extra}

        def main(loader):
            model = Encoder()
            model = torch.compile(model, dynamic=True)
            model.train()
            for batch in loader:
                {call}
    """


def _findings(tmp_path, script: str) -> list:
    return finding_keys(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/encoder.py": ENCODER,
        "demo/pretrain.py": PRETRAIN,
        "demo/train.py": script,
    }, containing="encoder.py")


def test_no_compiled_call_of_a_member_passes_the_optional_input(tmp_path):
    script = _script("self.model(batch.x, batch.edge_index).sum()")
    assert _findings(tmp_path, script) == []


def test_no_compiled_call_of_a_name_passes_the_optional_input(tmp_path):
    script = _script("model(batch.x, batch.edge_index).sum().backward()", member=False)
    assert _findings(tmp_path, script) == []


def test_a_compiled_call_passing_the_input_keeps_the_findings(tmp_path):
    script = _script("self.model(batch.x, batch.edge_index, pos_mask=batch.mask).sum()")
    assert _findings(tmp_path, script) == ["demo/encoder.py:11:17: GNN008", "demo/encoder.py:12:17: GNN001"]


def test_a_compiled_object_handed_to_a_project_function_keeps_the_findings(tmp_path):
    script = _script("run_step(model, batch)", extra="from demo.steps import run_step", member=False)
    assert _findings(tmp_path, script) == ["demo/encoder.py:11:17: GNN008", "demo/encoder.py:12:17: GNN001"]


def test_a_holder_instance_handed_to_a_project_function_keeps_the_findings(tmp_path):
    script = _script("self.model(batch.x, batch.edge_index).sum()", extra="from demo.steps import run_step")
    script = script.replace("trainer.fit(trainer_model, loader)", "run_step(trainer_model, loader)")
    assert _findings(tmp_path, script) == ["demo/encoder.py:11:17: GNN008", "demo/encoder.py:12:17: GNN001"]


def test_a_wrapper_aliased_through_to_keeps_the_findings(tmp_path):
    script = _script("other(batch.x, batch.edge_index, pos_mask=batch.mask)", member=False)
    script = script.replace("model.train()", "other = model.to('cuda')")
    assert _findings(tmp_path, script) == ["demo/encoder.py:11:17: GNN008", "demo/encoder.py:12:17: GNN001"]

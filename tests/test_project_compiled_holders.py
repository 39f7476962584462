"""An object whose class compiles its own submodules (an RL agent compiling its
value head: ``self.value_net = torch.compile(self.value_net)``) handed to a
method of a class in another file (``ppo.train(agent, loader)``): that method's
per-step calls of the agent's methods run compiled code, so its per-step syncs
are GNN013 (wheatley's PPO and pretraining loops). The same project without the
compile reports nothing; a class picking one submodule per if/else arm and
compiling only one arm's choice makes only that class compiled."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

AGENT = """\
    import torch


    class Agent(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.value_net = torch.nn.Linear(4, 1)
            self.value_net = torch.compile(self.value_net, dynamic=True)

        def get_value(self, x):
            return self.value_net(x)
"""
PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/agent.py": AGENT,
    "demo/ppo.py": """\
        import torch


        class PPO:
            def train(self, agent, loader):
                opt = torch.optim.Adam(agent.parameters())
                for batch in loader:
                    loss = agent.get_value(batch).mean()
                    loss.backward()
                    opt.step()
                    print(loss.item())
    """,
    "demo/train.py": """\
        from demo.agent import Agent
        from demo.ppo import PPO


        def main(loader):
            agent = Agent()
            ppo = PPO()
            ppo.train(agent, loader)
    """,
}


def test_a_handed_holder_of_compiled_submodules_drives_the_loop(tmp_path):
    root = write_project(tmp_path, PROJECT)
    lines = whole_tree_lines(root)
    assert [line.split(" ")[0] for line in sorted(lines)] == ["demo/ppo.py:11:19:"], lines
    assert "compiled submodules of `agent` (passed in train.py)" in next(iter(lines))


def test_without_the_compile_nothing(tmp_path):
    files = dict(PROJECT, **{"demo/agent.py": AGENT.replace(
        "            self.value_net = torch.compile(self.value_net, dynamic=True)\n", "")})
    root = write_project(tmp_path, files)
    assert not whole_tree_lines(root)


def test_a_class_of_the_same_name_in_another_module_is_not_told(tmp_path):
    # wheatley: psp/models/agent.py's Agent compiles its heads, jssp/models/agent.py's Agent
    # (its own class, subclassing a base imported under the same name) does not
    files = {
        "pyproject.toml": PROJECT["pyproject.toml"],
        "demo/__init__.py": "",
        "demo/ppo.py": PROJECT["demo/ppo.py"],
        "psp/__init__.py": "",
        "psp/agent.py": AGENT,
        "jssp/__init__.py": "",
        "jssp/base.py": "import torch\n\n\nclass Agent(torch.nn.Module):\n    pass\n",
        "jssp/agent.py": """\
            import torch
            from jssp.base import Agent


            class Agent(Agent):
                def get_value(self, x):
                    return x.sum()
        """,
        "jssp/train.py": PROJECT["demo/train.py"].replace("demo.agent", "jssp.agent"),
    }
    root = write_project(tmp_path, files)
    assert not whole_tree_lines(root)
    files["psp/train.py"] = PROJECT["demo/train.py"].replace("demo.agent", "psp.agent")
    root = write_project(tmp_path, files)
    lines = whole_tree_lines(root)
    assert [line.split(" ")[0] for line in lines] == ["demo/ppo.py:11:19:"], lines
    assert "(passed in train.py)" in next(iter(lines))

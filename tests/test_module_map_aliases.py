"""A project installed under another package's name (module_map.py,
``installed_names``): a plugin copied into a host package imports its own
files as ``host.core.models.plugin.utils.graph`` (EScAIP inside fairchem,
heldout9); those imports name the project's files when two or more of the
importer's imports share the prefix and all name files under one folder at
or above it. A library prefix some of whose modules the project lacks, or a
prefix with one import, names nothing here."""
from __future__ import annotations

from gnnlint.facts import ImportRef
from gnnlint.module_map import ModuleMap
from tests.project_files import write_project

PLUGIN = {
    "src/__init__.py": "",
    "src/model.py": """\
        import torch
        from host.core.models.plugin.utils.graph import build_graph
        from host.core.models.plugin.configs import Config
        from host.core.common.registry import registry
    """,
    "src/utils/graph.py": """\
        from host.core.models.plugin.utils.radius import radius
        from host.core.models.plugin.custom_types import GraphData


        def build_graph(data):
            return radius(data)
    """,
    "src/utils/radius.py": "def radius(x):\n    return x\n",
    "src/configs.py": "class Config:\n    pass\n",
    "src/custom_types.py": "class GraphData:\n    pass\n",
}


def _map(root):
    paths = [str(p) for p in sorted(root.rglob("*.py"))]
    return ModuleMap(paths, lambda path: open(path, "rb").read())


def test_the_plugins_own_imports_name_its_files(tmp_path):
    root = write_project(tmp_path / "plugin", PLUGIN)
    modules = _map(root)
    found = modules.resolve(str(root / "src/model.py"), ImportRef("host.core.models.plugin.utils.graph", "build_graph"))
    assert found == (str(root / "src/utils/graph.py"), "build_graph")
    # from a file one folder down, the same prefix names the same folder
    found = modules.resolve(str(root / "src/utils/graph.py"), ImportRef("host.core.models.plugin.utils.radius", "radius"))
    assert found == (str(root / "src/utils/radius.py"), "radius")


def test_the_host_packages_own_modules_stay_outside(tmp_path):
    root = write_project(tmp_path / "plugin", PLUGIN)
    modules = _map(root)
    assert modules.resolve(str(root / "src/model.py"), ImportRef("host.core.common.registry", "registry")) is None


def test_a_library_prefix_the_project_only_partly_mirrors_names_nothing(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/train.py": """\
            from torch.utils.data import DataLoader
            from torch.utils.checkpoint import checkpoint
        """,
        "pkg/data.py": "class DataLoader:\n    pass\n",
    }
    root = write_project(tmp_path / "lib", files)
    modules = _map(root)
    assert modules.resolve(str(root / "pkg/train.py"), ImportRef("torch.utils.data", "DataLoader")) is None


def test_without_the_files_bytes_no_alias(tmp_path):
    root = write_project(tmp_path / "plugin", PLUGIN)
    modules = ModuleMap([str(p) for p in sorted(root.rglob("*.py"))])
    assert modules.resolve(str(root / "src/model.py"), ImportRef("host.core.models.plugin.utils.graph", "f")) is None


def test_a_folder_mirroring_a_librarys_layout_without_its_names_names_nothing(tmp_path):
    # GraphGPS: graphgps/config/ and graphgps/loader/ mirror torch_geometric.graphgym's layout
    files = {
        "graphgps/__init__.py": "",
        "graphgps/loader/__init__.py": "",
        "graphgps/loader/split_generator.py": """\
            from torch_geometric.graphgym.config import cfg
            from torch_geometric.graphgym.loader import load_pyg
        """,
        "graphgps/config/__init__.py": "from .split_config import set_cfg_split\n",
    }
    root = write_project(tmp_path / "mirror", files)
    (root / "graphgps/loader/config").mkdir()
    (root / "graphgps/loader/config/__init__.py").write_text("")
    (root / "graphgps/loader/loader").mkdir()
    (root / "graphgps/loader/loader/__init__.py").write_text("def other():\n    pass\n")
    modules = _map(root)
    assert modules.resolve(str(root / "graphgps/loader/split_generator.py"),
                           ImportRef("torch_geometric.graphgym.config", "cfg")) is None


# The two other places that map a run's imports to its files read the bytes too,
# so a plugin's host-package imports name its files there as well.
COMPILING_PLUGIN = dict(PLUGIN, **{
    "src/train.py": """\
        import torch
        from host.core.models.plugin.model_def import Net
        from host.core.models.plugin.configs import Config

        model = torch.compile(Net())
    """,
    "src/model_def.py": """\
        import torch


        class Net(torch.nn.Module):
            def forward(self, x):
                return x
    """,
    "src/fit.py": """\
        import torch


        def fit(model):
            return torch.compile(model)
    """,
})


def test_the_project_index_resolves_a_compiled_class_through_the_alias(tmp_path):
    from gnnlint.project_index import build_index

    root = write_project(tmp_path / "plugin", COMPILING_PLUGIN)
    index = build_index(sorted(root.rglob("*.py")))
    site = index.compile_site_for_class(str(root / "src/model_def.py"), "Net")
    assert site is not None and site.path.endswith("train.py")


def test_compiling_imports_follow_the_alias(tmp_path):
    from gnnlint.compiling_files import CompilingImports

    root = write_project(tmp_path / "plugin", COMPILING_PLUGIN)
    paths = [str(p) for p in sorted(root.rglob("*.py"))]
    imports = CompilingImports(paths, lambda path: open(path, "rb").read())
    importer = str(root / "src/model.py")
    assert imports.compiles(importer, "host.core.models.plugin.fit", 0, "fit")
    assert not imports.compiles(importer, "host.core.models.plugin.utils.graph", 0, "build_graph")

"""Config: [tool.gnnlint] parsing, errors naming the key, CLI precedence,
rule selection (prefixes, ALL, specificity), per-file-ignores, fingerprint."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gnnlint import config, config_selectors
from gnnlint.config import (
    DEFAULT_EXCLUDE,
    ConfigError,
    Settings,
    VerifySettings,
    find_config,
    glob_to_regex,
    load_settings,
    resolve_codes,
)

# The catalogue the design fixes (GNN000..GNN012); rules land over time, so the
# tests pin it instead of depending on which rule modules exist today.
CODES = [f"GNN{i:03d}" for i in range(13)]


@pytest.fixture(autouse=True)
def _known(monkeypatch):
    # every config module asks config_selectors.known_codes (the one seam)
    monkeypatch.setattr(config_selectors, "known_codes", lambda: list(CODES))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def pyproject(tmp_path: Path, body: str) -> Path:
    return write(tmp_path / "pyproject.toml", body)


def load(tmp_path: Path, **kw) -> Settings:
    return load_settings(cwd=tmp_path, **kw)


# ---------------------------------------------------------------- defaults


def test_defaults_without_any_config(tmp_path):
    s = load(tmp_path)
    assert s.select == ["ALL"]
    assert s.extend_select == [] and s.ignore == []
    assert s.exclude == list(DEFAULT_EXCLUDE)
    assert ".gnnlint_cache" in s.exclude and "node_modules" in s.exclude
    assert s.respect_gitignore is True
    assert s.fixable == ["ALL"] and s.unfixable == []
    assert s.assume_compiled == "detected"
    assert s.torch_version is None and s.pyg_version is None and s.cache_dir is None
    assert s.verify == VerifySettings([], "eager", 120.0)
    assert s.project_root == tmp_path
    assert s.config_path is None
    assert s.enabled_codes == frozenset(CODES)


def test_full_table_is_read(tmp_path):
    pyproject(
        tmp_path,
        """
        [tool.gnnlint]
        select = ["GNN0"]
        extend-select = ["GNN010"]
        ignore = ["GNN002"]
        per-file-ignores = {"tests/*" = ["GNN001"]}
        exclude = ["gen"]
        extend-exclude = ["legacy/"]
        respect-gitignore = false
        fixable = ["GNN007"]
        unfixable = ["GNN010"]
        assume-compiled = "modules"
        torch-version = "2.5"
        pyg-version = "2.6.1"
        cache-dir = ".cache/gnn"

        [tool.gnnlint.verify]
        targets = ["pkg.mod:example"]
        backend = "aot_eager"
        timeout = 60
        """,
    )
    s = load(tmp_path)
    assert s.select == ["GNN0"]
    assert s.extend_select == ["GNN010"]
    assert s.ignore == ["GNN002"]
    assert s.per_file_ignores == {"tests/*": ["GNN001"]}
    assert s.exclude == ["gen"]
    assert s.extend_exclude == ["legacy/"]
    assert s.respect_gitignore is False
    assert s.fixable == ["GNN007"] and s.unfixable == ["GNN010"]
    assert s.assume_compiled == "modules"
    assert s.torch_version == "2.5" and s.pyg_version == "2.6.1"
    assert s.cache_dir == ".cache/gnn"
    assert s.verify == VerifySettings(["pkg.mod:example"], "aot_eager", 60.0)
    assert isinstance(s.verify.timeout, float)
    assert s.config_path == tmp_path / "pyproject.toml"
    assert s.enabled_codes == frozenset(c for c in CODES if c != "GNN002")
    assert s.fixable_codes == frozenset({"GNN007"})


# ---------------------------------------------------------------- find_config


def test_find_config_walks_up_and_skips_pyproject_without_table(tmp_path):
    pyproject(tmp_path, "[tool.gnnlint]\nselect = ['GNN001']\n")
    sub = tmp_path / "pkg" / "sub"
    write(tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'x'\n[tool.ruff]\n")
    sub.mkdir(parents=True)
    assert find_config(sub) == tmp_path / "pyproject.toml"
    s = load_settings(cwd=sub)
    assert s.select == ["GNN001"]
    assert s.project_root == tmp_path


def test_find_config_nearest_table_wins(tmp_path):
    pyproject(tmp_path, "[tool.gnnlint]\nselect = ['GNN001']\n")
    inner = write(tmp_path / "a" / "pyproject.toml", "[tool.gnnlint]\nselect = ['GNN002']\n")
    assert find_config(tmp_path / "a") == inner


def test_find_config_mentioning_gnnlint_elsewhere_is_skipped(tmp_path):
    # The word appears, but not as [tool.gnnlint]: still no config.
    write(tmp_path / "pyproject.toml", "[project]\nname = 'gnnlint-plugin'\n")
    assert find_config(tmp_path) is None


def test_find_config_from_a_file_path(tmp_path):
    cfg = pyproject(tmp_path, "[tool.gnnlint]\n")
    f = write(tmp_path / "m.py", "x = 1\n")
    assert find_config(f) == cfg


def test_find_config_none_stops_at_root(tmp_path):
    # No table anywhere below tmp_path: the walk goes past it and ends at "/"
    # without finding (or crashing on) anything inside tmp_path.
    write(tmp_path / "pyproject.toml", "[tool.black]\n")
    (tmp_path / "empty").mkdir()
    found = find_config(tmp_path / "empty")
    assert found is None or tmp_path not in found.parents
    root_found = find_config(Path("/"))
    assert root_found is None or root_found == Path("/pyproject.toml")


def test_empty_table_gives_defaults_but_sets_root(tmp_path):
    cfg = pyproject(tmp_path, "[tool.gnnlint]\n")
    sub = tmp_path / "x"
    sub.mkdir()
    s = load_settings(cwd=sub)
    assert s.config_path == cfg and s.project_root == tmp_path
    assert s.select == ["ALL"]


# ---------------------------------------------------------------- explicit / isolated


def test_explicit_config_path(tmp_path):
    other = write(tmp_path / "conf" / "gnn.toml", "[tool.gnnlint]\nignore = ['GNN003']\n")
    pyproject(tmp_path, "[tool.gnnlint]\nignore = ['GNN004']\n")
    s = load(tmp_path, config_path=Path("conf/gnn.toml"))
    assert s.ignore == ["GNN003"]
    assert s.config_path == other
    assert s.project_root == other.parent


def test_explicit_config_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not found.*nope.toml"):
        load(tmp_path, config_path=tmp_path / "nope.toml")


def test_isolated_ignores_config_files(tmp_path):
    pyproject(tmp_path, "[tool.gnnlint]\nselct = ['GNN001']\n")  # would be an error
    s = load(tmp_path, isolated=True)
    assert s.config_path is None and s.select == ["ALL"]


def test_isolated_with_config_path_is_an_error(tmp_path):
    cfg = pyproject(tmp_path, "[tool.gnnlint]\n")
    with pytest.raises(ConfigError, match="isolated"):
        load(tmp_path, isolated=True, config_path=cfg)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "body, needle",
    [
        ("selct = ['GNN001']", "unknown key 'selct' in [tool.gnnlint]"),
        ("extend_select = ['GNN001']", "unknown key 'extend_select'"),
        ("select = 'GNN001'", "'select' must be a list of strings"),
        ("ignore = [1]", "'ignore' must be a list of strings"),
        ("extend-select = 'GNN001'", "'extend-select' must be a list of strings"),
        ("exclude = 'build'", "'exclude' must be a list of strings"),
        ("extend-exclude = {a = 1}", "'extend-exclude' must be a list of strings"),
        ("fixable = 'ALL'", "'fixable' must be a list of strings"),
        ("unfixable = [true]", "'unfixable' must be a list of strings"),
        ("respect-gitignore = 'yes'", "'respect-gitignore' must be a boolean"),
        ("assume-compiled = 'x'", "'assume-compiled' must be one of"),
        ("assume-compiled = 1", "'assume-compiled' must be one of"),
        ("torch-version = 2.5", "'torch-version' must be a version string"),
        ("pyg-version = 'latest'", "'pyg-version' must be a version string"),
        ("cache-dir = 3", "'cache-dir' must be a non-empty string"),
        ("select = ['GNN999']", "unknown rule code or prefix 'GNN999' in 'select'"),
        ("extend-select = ['GNN0', 'XYZ1']", "unknown rule code or prefix 'XYZ1' in 'extend-select'"),
        ("ignore = ['']", "unknown rule code or prefix '' in 'ignore'"),
        ("fixable = ['GNN42']", "unknown rule code or prefix 'GNN42' in 'fixable'"),
        ("unfixable = ['all']", "unknown rule code or prefix 'all' in 'unfixable'"),
        ("per-file-ignores = ['x']", "'per-file-ignores' must be a table"),
        ("per-file-ignores = {'t/*' = 'GNN001'}", "'per-file-ignores' ('t/*') must be a list"),
        (
            "per-file-ignores = {'t/*' = ['GNN777']}",
            "unknown rule code or prefix 'GNN777' in 'per-file-ignores' ('t/*')",
        ),
        ("verify = 3", "'verify' must be a table"),
    ],
)
def test_config_errors_name_the_key(tmp_path, body, needle):
    cfg = pyproject(tmp_path, "[tool.gnnlint]\n" + body + "\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    msg = str(info.value)
    assert needle in msg
    assert str(cfg) in msg  # and the file it came from


def test_unknown_key_message_exact_and_suggests(tmp_path):
    cfg = pyproject(tmp_path, "[tool.gnnlint]\nselct = []\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    assert str(info.value).startswith(f"unknown key 'selct' in [tool.gnnlint] ({cfg})")
    assert "did you mean 'select'" in str(info.value)


@pytest.mark.parametrize(
    "body, needle",
    [
        ("tagets = []", "unknown key 'tagets' in [tool.gnnlint.verify]"),
        ("backend = 'x'", "'backend' must be one of 'eager', 'aot_eager', 'inductor'"),
        ("targets = 'm:f'", "'targets' must be a list of strings"),
        ("timeout = -1", "'timeout' must be a positive number"),
        ("timeout = 'long'", "'timeout' must be a positive number"),
        ("timeout = true", "'timeout' must be a positive number"),
    ],
)
def test_verify_errors_name_the_key(tmp_path, body, needle):
    pyproject(tmp_path, "[tool.gnnlint.verify]\n" + body + "\n")
    with pytest.raises(ConfigError, match=None) as info:
        load(tmp_path)
    assert needle in str(info.value)


def test_gnnlint_not_a_table(tmp_path):
    pyproject(tmp_path, "[tool]\ngnnlint = 3\n")
    with pytest.raises(ConfigError, match=r"\[tool.gnnlint\] must be a table"):
        load(tmp_path)


def test_invalid_toml_names_file_and_error(tmp_path):
    cfg = pyproject(tmp_path, "[tool.gnnlint]\nselect = ]\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    msg = str(info.value)
    assert "invalid TOML" in msg and str(cfg) in msg
    assert "line 2" in msg  # tomllib's position comes through


def test_invalid_toml_via_explicit_path(tmp_path):
    cfg = write(tmp_path / "x.toml", "tool.gnnlint = = 1\n")
    with pytest.raises(ConfigError, match="invalid TOML in .*x.toml"):
        load(tmp_path, config_path=cfg)


def test_non_utf8_config(tmp_path):
    cfg = tmp_path / "pyproject.toml"
    cfg.write_bytes(b"[tool.gnnlint]\nselect = ['\xff']\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load(tmp_path)


# ---------------------------------------------------------------- CLI overrides


def test_cli_select_replaces_file_selection(tmp_path):
    pyproject(
        tmp_path,
        "[tool.gnnlint]\nselect=['GNN0']\nextend-select=['GNN010']\nignore=['GNN001']\n",
    )
    s = load(tmp_path, overrides={"select": ["GNN001"]})
    assert s.select == ["GNN001"]
    # Like ruff's CLI layer: an explicit --select starts afresh, so the file's
    # ignore does not cancel the code the user asked for.
    assert s.enabled_codes == {"GNN000", "GNN001"}


def test_cli_extend_select_and_ignore_are_added(tmp_path):
    pyproject(
        tmp_path,
        "[tool.gnnlint]\nselect=['GNN001']\nextend-select=['GNN002']\nignore=['GNN003']\n",
    )
    s = load(tmp_path, overrides={"extend_select": ["GNN004"], "ignore": ["GNN002"]})
    assert s.select == ["GNN001"]
    assert s.extend_select == ["GNN002"] and s.ignore == ["GNN003"]
    assert s.layers == [(None, ["GNN004"], ["GNN002"])]  # the command line, applied last
    assert s.enabled_codes == {"GNN000", "GNN001", "GNN004"}


def test_cli_extend_select_re_enables_a_code_the_config_ignores(tmp_path):
    # ruff's precedence: the command line is a later layer than the file.
    pyproject(tmp_path, "[tool.gnnlint]\nignore=['GNN003', 'GNN00']\n")
    s = load(tmp_path, overrides={"extend_select": ["GNN003"]})
    assert "GNN003" in s.enabled_codes and "GNN004" not in s.enabled_codes
    s = load(tmp_path, overrides={"extend_select": ["GNN0"]})  # less specific than the file's ignore: still wins
    assert {"GNN003", "GNN004"} <= s.enabled_codes
    assert "GNN003" not in load(tmp_path).enabled_codes


def test_cli_ignore_drops_a_code_the_config_selects_exactly(tmp_path):
    pyproject(tmp_path, "[tool.gnnlint]\nselect=['GNN001', 'GNN002']\n")
    s = load(tmp_path, overrides={"ignore": ["GNN"]})
    assert s.enabled_codes == {"GNN000"}


def test_cli_scalars_and_lists_win(tmp_path):
    pyproject(
        tmp_path,
        """
        [tool.gnnlint]
        exclude = ["a"]
        extend-exclude = ["b"]
        respect-gitignore = true
        fixable = ["GNN001"]
        unfixable = ["GNN002"]
        assume-compiled = "detected"
        torch-version = "2.1"
        pyg-version = "2.3"
        per-file-ignores = {"x.py" = ["GNN001"]}
        """,
    )
    s = load(
        tmp_path,
        overrides={
            "exclude": ["c"],
            "extend_exclude": ["d"],
            "respect_gitignore": False,
            "fixable": ["GNN003"],
            "unfixable": ["GNN004"],
            "assume_compiled": "modules",
            "torch_version": "2.5.1",
            "pyg_version": "2.8.1",
            "per_file_ignores": {"y.py": ["GNN002"]},
            "cache_dir": "/tmp/c",
        },
    )
    assert s.exclude == ["c"]
    assert s.extend_exclude == ["b", "d"]
    assert s.respect_gitignore is False
    assert s.fixable == ["GNN003"]
    assert s.unfixable == ["GNN002", "GNN004"]
    assert s.assume_compiled == "modules"
    assert (s.torch_version, s.pyg_version) == ("2.5.1", "2.8.1")
    assert s.per_file_ignores == {"y.py": ["GNN002"]}
    assert s.cache_dir == "/tmp/c"


def test_cli_none_means_not_given(tmp_path):
    pyproject(tmp_path, "[tool.gnnlint]\nselect=['GNN001']\nassume-compiled='modules'\n")
    s = load(tmp_path, overrides={"select": None, "assume_compiled": None, "ignore": None})
    assert s.select == ["GNN001"] and s.assume_compiled == "modules"


def test_cli_comma_strings_and_tuples_are_split(tmp_path):
    s = load(tmp_path, overrides={"select": "GNN001,GNN002", "ignore": ("GNN003,GNN004",)})
    assert s.select == ["GNN001", "GNN002"]
    assert s.ignore == ["GNN003", "GNN004"]


@pytest.mark.parametrize(
    "overrides, needle",
    [
        ({"select": ["GNN999"]}, "unknown rule code or prefix 'GNN999' in '--select'"),
        ({"extend_select": ["NOPE1"]}, "'NOPE1' in '--extend-select'"),
        ({"ignore": ["GNN55"]}, "'GNN55' in '--ignore'"),
        ({"unfixable": ["X"]}, "'X' in '--unfixable'"),
        ({"assume_compiled": "everything"}, "'--assume-compiled' must be one of"),
        ({"respect_gitignore": "no"}, "'--respect-gitignore' must be a boolean"),
        ({"torch_version": "new"}, "'--torch-version' must be a version string"),
        ({"per_file_ignores": {"a": ["GNN999"]}}, "'GNN999' in '--per-file-ignores'"),
        ({"selct": ["GNN001"]}, "unknown setting 'selct'"),
        ({"exclude": [1]}, "'--exclude' must be a list of strings"),
    ],
)
def test_cli_values_are_validated(tmp_path, overrides, needle):
    with pytest.raises(ConfigError) as info:
        load(tmp_path, overrides=overrides)
    assert needle in str(info.value)


# ---------------------------------------------------------------- resolve_codes


def rc(select, extend=(), ignore=()):
    return resolve_codes(select, extend, ignore, known=CODES)


def test_all_selects_everything():
    assert rc(["ALL"]) == set(CODES)


def test_prefixes_expand():
    assert rc(["GNN00"]) == {f"GNN00{i}" for i in range(10)}
    assert rc(["GNN01"]) == {"GNN000", "GNN010", "GNN011", "GNN012"}
    assert rc(["GNN0"]) == set(CODES)
    assert rc(["GNN"]) == set(CODES)


def test_exact_codes():
    assert rc(["GNN003", "GNN007"]) == {"GNN000", "GNN003", "GNN007"}


def test_ignore_more_specific_than_select_wins():
    assert rc(["GNN"], ignore=["GNN001"]) == set(CODES) - {"GNN001"}
    assert rc(["ALL"], ignore=["GNN01"]) == set(CODES) - {"GNN010", "GNN011", "GNN012"}


def test_select_more_specific_than_ignore_wins():
    assert rc(["GNN001"], ignore=["GNN"]) == {"GNN000", "GNN001"}
    assert rc(["ALL", "GNN01"], ignore=["GNN0"]) == {"GNN000", "GNN010", "GNN011", "GNN012"}


def test_equal_specificity_ignore_wins():
    assert "GNN001" not in rc(["GNN001"], ignore=["GNN001"])
    assert rc(["GNN00"], ignore=["GNN00"]) == {"GNN000"}


def test_extend_select_adds_with_specificity():
    assert rc(["GNN001"], extend=["GNN01"]) == {"GNN000", "GNN001", "GNN010", "GNN011", "GNN012"}
    # extend-select more specific than ignore: re-enables
    assert rc(["ALL"], extend=["GNN005"], ignore=["GNN00"]) == (
        {"GNN000", "GNN005", "GNN010", "GNN011", "GNN012"}
    )


def test_syntax_error_code_always_on_unless_exactly_ignored():
    assert "GNN000" in rc([])
    assert "GNN000" in rc(["GNN005"])
    assert "GNN000" in rc(["ALL"], ignore=["ALL"])
    assert "GNN000" in rc(["ALL"], ignore=["GNN00"])
    assert rc(["ALL"], ignore=["ALL"]) == {"GNN000"}
    assert "GNN000" not in rc(["ALL"], ignore=["GNN000"])


def test_resolve_codes_rejects_unknown():
    with pytest.raises(ConfigError, match="'GNN999' in 'select'"):
        rc(["GNN999"])
    with pytest.raises(ConfigError, match="'GNX' in 'ignore'"):
        rc(["ALL"], ignore=["GNX"])
    with pytest.raises(ConfigError, match="'gnn001' in 'extend-select'"):
        rc(["ALL"], extend=["gnn001"])  # codes are upper-case, as in ruff


def test_resolve_codes_uses_registry_by_default():
    # known_codes is patched to CODES here; the default path must consult it.
    assert resolve_codes(["ALL"]) == set(CODES)


def test_fixable_minus_unfixable(tmp_path):
    s = load(tmp_path, overrides={"fixable": ["GNN0"], "unfixable": ["GNN002", "GNN01"]})
    assert "GNN002" not in s.fixable_codes and "GNN010" not in s.fixable_codes
    assert "GNN007" in s.fixable_codes
    assert "GNN000" not in s.fixable_codes  # syntax errors have no fix


# ---------------------------------------------------------------- per-file-ignores


def settings_with_pfi(tmp_path, pfi, **kw) -> Settings:
    return Settings(project_root=tmp_path, cwd=tmp_path, per_file_ignores=pfi, **kw)


@pytest.mark.parametrize(
    "pattern, path, hit",
    [
        ("tests/*", "tests/test_a.py", True),
        ("tests/*", "tests/sub/test_a.py", True),  # ruff/globset: * crosses /
        ("tests/*", "src/tests_a.py", False),
        ("tests/*", "src/tests/test_a.py", False),  # anchored at the project root
        ("**/test_*.py", "test_a.py", True),
        ("**/test_*.py", "pkg/deep/test_a.py", True),
        ("**/test_*.py", "pkg/deep/a_test.py", False),
        ("models.py", "models.py", True),
        ("models.py", "pkg/models.py", True),  # basename anywhere
        ("models.py", "pkg/models_v2.py", False),
        ("./scripts/*.py", "scripts/run.py", True),
        ("pkg/[ab].py", "pkg/a.py", True),
        ("pkg/[!ab].py", "pkg/a.py", False),
        ("pkg/?.py", "pkg/c.py", True),
        ("!pkg/*", "other/x.py", True),  # negated: everything outside pkg
        ("!pkg/*", "pkg/x.py", False),
        ("/tests/*", "tests/a.py", True),  # gitignore-style root anchor, not "/tests"
    ],
)
def test_per_file_ignore_globs(tmp_path, pattern, path, hit):
    s = settings_with_pfi(tmp_path, {pattern: ["GNN001"]})
    codes = s.codes_for(tmp_path / path)
    assert ("GNN001" not in codes) is hit
    assert "GNN002" in codes


def test_per_file_ignores_relative_path_uses_cwd(tmp_path):
    s = settings_with_pfi(tmp_path, {"tests/*": ["GNN00"]})
    codes = s.codes_for(Path("tests/test_x.py"))
    assert not any(c.startswith("GNN00") and c != "GNN000" for c in codes)
    assert "GNN010" in codes


def test_per_file_ignores_relative_to_project_root_not_cwd(tmp_path):
    pyproject(tmp_path, "[tool.gnnlint]\nper-file-ignores = {'pkg/*' = ['GNN001']}\n")
    sub = tmp_path / "pkg"
    sub.mkdir()
    s = load_settings(cwd=sub)
    assert "GNN001" not in s.codes_for(Path("a.py"))  # pkg/a.py seen from inside pkg
    assert "GNN001" in s.codes_for(tmp_path / "other" / "a.py")


def test_per_file_ignores_all_and_prefix_and_syntax_error(tmp_path):
    s = settings_with_pfi(tmp_path, {"gen/*": ["ALL"], "old/*": ["GNN000", "GNN001"]})
    assert s.codes_for(tmp_path / "gen/x.py") == {"GNN000"}
    assert s.codes_for(tmp_path / "old/x.py") == frozenset(CODES) - {"GNN000", "GNN001"}
    assert s.codes_for(tmp_path / "new/x.py") == frozenset(CODES)


def test_per_file_ignores_combine(tmp_path):
    s = settings_with_pfi(tmp_path, {"tests/*": ["GNN001"], "**/test_*.py": ["GNN002"]})
    codes = s.codes_for(tmp_path / "tests/test_a.py")
    assert "GNN001" not in codes and "GNN002" not in codes and "GNN003" in codes


def test_per_file_ignores_absolute_pattern(tmp_path):
    s = settings_with_pfi(tmp_path, {str(tmp_path / "abs" / "*.py"): ["GNN004"]})
    assert "GNN004" not in s.codes_for(tmp_path / "abs/a.py")
    assert "GNN004" in s.codes_for(tmp_path / "rel/a.py")


def test_codes_for_follows_settings_edits(tmp_path):
    s = settings_with_pfi(tmp_path, {"a.py": ["GNN001"]})
    assert "GNN001" not in s.codes_for(tmp_path / "a.py")
    s.per_file_ignores = {}
    assert "GNN001" in s.codes_for(tmp_path / "a.py")
    s.ignore = ["GNN002"]
    assert "GNN002" not in s.codes_for(tmp_path / "a.py")


# ---------------------------------------------------------------- globs


@pytest.mark.parametrize(
    "pattern, path, hit",
    [
        ("*.py", "a.py", True),
        ("*.py", "d/a.py", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("**/x", "x", True),
        ("**/x", "p/q/x", True),
        ("a/**", "a/b/c", True),
        ("a/**", "a", False),
        ("[", "[", True),  # unclosed class is literal
        (r"\*", "*", True),
        (r"\*", "a", False),
    ],
)
def test_glob_to_regex(pattern, path, hit):
    import re

    assert bool(re.match(glob_to_regex(pattern) + r"\Z", path)) is hit


# ---------------------------------------------------------------- fingerprint


def test_fingerprint_stable_and_sensitive(tmp_path):
    a = Settings(project_root=tmp_path, cwd=tmp_path)
    b = Settings(project_root=tmp_path, cwd=tmp_path)
    assert a.fingerprint() == b.fingerprint()
    assert len(a.fingerprint()) == 64
    base = a.fingerprint()
    for change in (
        {"ignore": ["GNN001"]},
        {"select": ["GNN002"]},
        {"per_file_ignores": {"x.py": ["GNN001"]}},
        {"assume_compiled": "modules"},
        {"torch_version": "2.1"},
        {"pyg_version": "2.3"},
    ):
        other = Settings(project_root=tmp_path, cwd=tmp_path, **change)
        assert other.fingerprint() != base, change


def test_fingerprint_ignores_equivalent_selections(tmp_path):
    # Same enabled set, spelled differently: same cache key.
    a = Settings(project_root=tmp_path, cwd=tmp_path, select=["ALL"])
    b = Settings(project_root=tmp_path, cwd=tmp_path, select=["GNN"])
    assert a.fingerprint() == b.fingerprint()
    # Fix settings and excludes do not change a file's findings.
    c = Settings(project_root=tmp_path, cwd=tmp_path, unfixable=["GNN001"], exclude=[])
    assert c.fingerprint() == a.fingerprint()


def test_real_registry_contains_syntax_error(monkeypatch):
    monkeypatch.undo()  # use the real rule registry
    assert "GNN000" in config.known_codes()


def test_the_cache_key_follows_the_analyses_as_well_as_the_rules(monkeypatch):
    # a development install that edits gnnlint/semantic/*.py must not be answered from stale cache entries
    from pathlib import Path
    from types import SimpleNamespace

    import gnnlint.cache as cache_module

    before = cache_module._rules_fingerprint()
    real_stat = Path.stat

    def touched(self, *args, **kwargs):
        result = real_stat(self, *args, **kwargs)
        if self.parent.name == "semantic" and self.name == "steps.py":
            return SimpleNamespace(st_size=result.st_size + 1, st_mtime_ns=result.st_mtime_ns)
        return result

    monkeypatch.setattr(Path, "stat", touched)
    assert cache_module._rules_fingerprint() != before

"""File discovery: walking, excludes, .gitignore (nested, negation, dir-only,
anchored, info/exclude), explicit files, missing paths, symlink loops."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from gnnlint.config import DEFAULT_EXCLUDE, Settings
from gnnlint.discover import ExcludeMatcher, discover, parse_gitignore


def touch(root: Path, *rels: str) -> None:
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x = 1\n")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def settings(root: Path, **kw) -> Settings:
    return Settings(project_root=root, cwd=root, **kw)


def run(root: Path, paths=(".",), **kw) -> tuple[list[str], list[str]]:
    files, warnings = discover([Path(p) for p in paths], settings(root, **kw))
    return [p.as_posix() for p in files], warnings


def git_repo(root: Path) -> None:
    (root / ".git" / "info").mkdir(parents=True)


# ---------------------------------------------------------------- walking


def test_walks_py_and_pyi_only_sorted(tmp_path):
    touch(tmp_path, "b.py", "a.py", "pkg/m.pyi", "pkg/sub/n.py", "notes.txt", "pkg/data.json")
    files, warnings = run(tmp_path)
    assert files == ["a.py", "b.py", "pkg/m.pyi", "pkg/sub/n.py"]
    assert warnings == []


def test_paths_keep_the_given_form(tmp_path):
    touch(tmp_path, "pkg/a.py")
    assert run(tmp_path, ["pkg"])[0] == ["pkg/a.py"]
    assert run(tmp_path, ["./pkg/"])[0] == ["pkg/a.py"]
    absolute = run(tmp_path, [str(tmp_path / "pkg")])[0]
    assert absolute == [(tmp_path / "pkg" / "a.py").as_posix()]


def test_unique_across_overlapping_arguments(tmp_path):
    touch(tmp_path, "pkg/a.py", "pkg/b.py")
    files, _ = run(tmp_path, ["pkg", "pkg/a.py", "./pkg/a.py", "pkg"])
    assert files == ["pkg/a.py", "pkg/b.py"]


def test_empty_directory_gives_nothing(tmp_path):
    (tmp_path / "empty").mkdir()
    assert run(tmp_path, ["empty"]) == ([], [])


def test_missing_path_is_a_warning(tmp_path):
    touch(tmp_path, "a.py")
    files, warnings = run(tmp_path, ["path/x", "a.py"])
    assert files == ["a.py"]
    assert warnings == ["path/x: No such file or directory"]


def test_broken_symlink_argument_warns(tmp_path):
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    files, warnings = run(tmp_path, ["dangling.py"])
    assert files == []
    assert warnings == ["dangling.py: No such file or directory"]


def test_broken_symlink_inside_dir_is_skipped(tmp_path):
    touch(tmp_path, "a.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    assert run(tmp_path) == (["a.py"], [])


# ---------------------------------------------------------------- explicit files


def test_explicit_files_always_returned(tmp_path):
    touch(tmp_path, "build/gen.py", "script", "ignored.py")
    write(tmp_path / ".gitignore", "ignored.py\n")
    git_repo(tmp_path)
    files, _ = run(
        tmp_path,
        ["build/gen.py", "script", "ignored.py"],
        extend_exclude=["script", "ignored.py"],
    )
    assert files == ["build/gen.py", "ignored.py", "script"]


def test_explicit_excluded_directory_is_walked(tmp_path):
    # Like ruff: exclusions apply to what is found inside, not to the argument.
    touch(tmp_path, "build/gen.py", "build/__pycache__/x.py")
    assert run(tmp_path, ["build"])[0] == ["build/gen.py"]


# ---------------------------------------------------------------- excludes


def test_default_excludes_prune(tmp_path):
    touch(
        tmp_path,
        "a.py",
        ".venv/lib/site.py",
        "venv/x.py",
        "node_modules/y.py",
        "pkg/__pycache__/z.py",
        "build/b.py",
        "dist/d.py",
        ".git/hooks/h.py",
        ".gnnlint_cache/c.py",
        "pkg/ok.py",
    )
    assert run(tmp_path)[0] == ["a.py", "pkg/ok.py"]


def test_exclude_replaces_defaults(tmp_path):
    touch(tmp_path, "build/b.py", "gen/g.py", "a.py")
    files, _ = run(tmp_path, exclude=["gen"])
    assert files == ["a.py", "build/b.py"]


def test_extend_exclude_keeps_defaults(tmp_path):
    touch(tmp_path, "build/b.py", "gen/g.py", "a.py")
    files, _ = run(tmp_path, extend_exclude=["gen"])
    assert files == ["a.py"]


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("*_pb2.py", ["a.py", "pkg/b.py", "pkg/sub/c.py"]),
        ("pkg/*.py", ["a.py", "pkg/sub/c.py", "x_pb2.py"]),  # one level only
        ("pkg/", ["a.py", "x_pb2.py"]),
        ("**/c.py", ["a.py", "pkg/b.py", "x_pb2.py"]),
        ("sub", ["a.py", "pkg/b.py", "x_pb2.py"]),  # by name, any depth
        ("pkg/sub", ["a.py", "pkg/b.py", "x_pb2.py"]),
        ("/pkg", ["a.py", "x_pb2.py"]),
        ("./pkg", ["a.py", "x_pb2.py"]),
        ("a.py/", ["a.py", "pkg/b.py", "pkg/sub/c.py", "x_pb2.py"]),  # dir-only: no effect
        ("p?g", ["a.py", "x_pb2.py"]),
        ("[ab].py", ["pkg/sub/c.py", "x_pb2.py"]),
    ],
)
def test_exclude_patterns(tmp_path, pattern, expected):
    touch(tmp_path, "a.py", "x_pb2.py", "pkg/b.py", "pkg/sub/c.py")
    assert run(tmp_path, extend_exclude=[pattern])[0] == expected


def test_exclude_is_relative_to_project_root_not_argument(tmp_path):
    touch(tmp_path, "pkg/gen/a.py", "pkg/keep.py")
    s = Settings(project_root=tmp_path, cwd=tmp_path / "pkg", extend_exclude=["pkg/gen"])
    files, _ = discover([Path(".")], s)
    assert [f.as_posix() for f in files] == ["keep.py"]


def test_absolute_exclude(tmp_path):
    touch(tmp_path, "a/x.py", "b/y.py")
    assert run(tmp_path, extend_exclude=[str(tmp_path / "a")])[0] == ["b/y.py"]


def test_exclude_matcher_unit(tmp_path):
    m = ExcludeMatcher(["build", "docs/", "gen/*.py"], tmp_path)
    assert m.excluded(str(tmp_path / "x" / "build"), "build", True)
    assert m.excluded(str(tmp_path / "docs"), "docs", True)
    assert not m.excluded(str(tmp_path / "docs"), "docs", False)
    assert m.excluded(str(tmp_path / "gen" / "a.py"), "a.py", False)
    assert not m.excluded(str(tmp_path / "gen" / "s" / "a.py"), "a.py", False)


def test_default_exclude_list_is_ruff_like():
    for name in (".git", ".venv", "__pycache__", "build", "dist", "site-packages", "__pypackages__"):
        assert name in DEFAULT_EXCLUDE


# ---------------------------------------------------------------- gitignore


def test_root_gitignore(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "# comment\n\ngenerated/\n*_gen.py\n")
    touch(tmp_path, "a.py", "b_gen.py", "generated/x.py", "pkg/c_gen.py", "pkg/d.py")
    assert run(tmp_path)[0] == ["a.py", "pkg/d.py"]


def test_gitignore_ignored_when_disabled(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "*_gen.py\n")
    touch(tmp_path, "a.py", "b_gen.py")
    assert run(tmp_path, respect_gitignore=False)[0] == ["a.py", "b_gen.py"]


def test_gitignore_negation(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "*_gen.py\n!keep_gen.py\n")
    touch(tmp_path, "a_gen.py", "keep_gen.py", "sub/keep_gen.py", "sub/b_gen.py")
    assert run(tmp_path)[0] == ["keep_gen.py", "sub/keep_gen.py"]


def test_gitignore_later_rule_wins(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "!a.py\n*.py\n")
    touch(tmp_path, "a.py", "b.py")
    assert run(tmp_path)[0] == []


def test_gitignore_negation_cannot_reinclude_inside_ignored_dir(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "out/\n!out/keep.py\n")
    touch(tmp_path, "out/keep.py", "a.py")
    assert run(tmp_path)[0] == ["a.py"]


def test_gitignore_dir_only(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "cache/\n")
    touch(tmp_path, "cache/x.py", "pkg/cache/y.py", "a.py", "pkg/cache.py")
    assert run(tmp_path)[0] == ["a.py", "pkg/cache.py"]


def test_gitignore_dir_only_does_not_match_files(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "mod.py/\n")
    touch(tmp_path, "mod.py", "pkg/mod.py")
    assert run(tmp_path)[0] == ["mod.py", "pkg/mod.py"]


def test_gitignore_anchored(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "/top.py\nsrc/gen.py\n")
    touch(tmp_path, "top.py", "pkg/top.py", "src/gen.py", "pkg/src/gen.py")
    assert run(tmp_path)[0] == ["pkg/src/gen.py", "pkg/top.py"]


def test_gitignore_double_star(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "**/fixtures/*.py\nlogs/**\na/**/b.py\n")
    touch(
        tmp_path,
        "fixtures/f.py",
        "deep/er/fixtures/g.py",
        "logs/x.py",
        "a/b.py",
        "a/x/y/b.py",
        "a/c.py",
        "keep.py",
    )
    assert run(tmp_path)[0] == ["a/c.py", "keep.py"]


def test_nested_gitignore(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "*_gen.py\n")
    write(tmp_path / "pkg" / ".gitignore", "!ok_gen.py\n/local.py\n")
    touch(
        tmp_path,
        "ok_gen.py",  # root rule ignores it; the nested negation is for pkg only
        "local.py",  # anchored to pkg/, so root local.py stays
        "pkg/ok_gen.py",
        "pkg/bad_gen.py",
        "pkg/local.py",
        "pkg/sub/local.py",
    )
    assert run(tmp_path)[0] == ["local.py", "pkg/ok_gen.py", "pkg/sub/local.py"]


def test_gitignore_of_parent_applies_when_walking_subdir(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "pkg/gen/\n*_tmp.py\n")
    touch(tmp_path, "pkg/gen/a.py", "pkg/b_tmp.py", "pkg/c.py")
    files, _ = discover([Path("pkg")], settings(tmp_path))
    assert [f.as_posix() for f in files] == ["pkg/c.py"]


def test_git_info_exclude(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".git" / "info" / "exclude", "scratch.py\n")
    write(tmp_path / ".gitignore", "!keep/scratch.py\n")
    touch(tmp_path, "scratch.py", "a.py", "keep/scratch.py")
    # .gitignore outranks info/exclude, so its negation re-includes keep/scratch.py.
    assert run(tmp_path)[0] == ["a.py", "keep/scratch.py"]


def test_gitignore_without_repo_honoured_from_project_root(tmp_path):
    write(tmp_path / ".gitignore", "skip.py\n")
    touch(tmp_path, "skip.py", "a.py")
    assert run(tmp_path)[0] == ["a.py"]


def test_gitignore_in_repo_root_above_project_root(tmp_path):
    git_repo(tmp_path)
    write(tmp_path / ".gitignore", "proj/vendored/\n")
    touch(tmp_path, "proj/vendored/v.py", "proj/a.py")
    s = Settings(project_root=tmp_path / "proj", cwd=tmp_path / "proj")
    files, _ = discover([Path(".")], s)
    assert [f.as_posix() for f in files] == ["a.py"]


def test_gitignore_escapes_and_trailing_spaces(tmp_path):
    rules = parse_gitignore("\\#hash.py\n\\!bang.py\nspace.py   \n# c\n\n/\n")
    assert len(rules) == 3
    assert all(not r.negated for r in rules)
    assert rules[0].regex.match("#hash.py")
    assert rules[1].regex.match("!bang.py")
    assert rules[2].regex.match("space.py")


def test_gitignore_crlf(tmp_path):
    git_repo(tmp_path)
    (tmp_path / ".gitignore").write_bytes(b"gen.py\r\nother/\r\n")
    touch(tmp_path, "gen.py", "other/o.py", "a.py")
    assert run(tmp_path)[0] == ["a.py"]


# ---------------------------------------------------------------- symlinks


def test_symlink_loop_terminates(tmp_path):
    touch(tmp_path, "pkg/a.py")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    os.symlink(tmp_path, tmp_path / "pkg" / "up")
    files, _ = run(tmp_path)
    assert files == ["pkg/a.py"]


def test_symlinked_dir_outside_is_followed(tmp_path):
    outside = tmp_path / "outside"
    touch(outside, "o.py")
    proj = tmp_path / "proj"
    touch(proj, "a.py")
    os.symlink(outside, proj / "linked")
    files, _ = run(proj)
    assert files == ["a.py", "linked/o.py"]


# ---------------------------------------------------------------- speed


def test_pruned_directories_are_not_entered(tmp_path, monkeypatch):
    touch(tmp_path, "a.py", ".venv/big/x.py")
    import gnnlint.discover as d

    seen: list[str] = []
    real = os.scandir

    def spy(path="."):
        seen.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(d.os, "scandir", spy)
    files, _ = run(tmp_path)
    assert files == ["a.py"]
    assert not any(".venv" in p for p in seen)

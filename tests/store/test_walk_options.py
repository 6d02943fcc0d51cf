"""Directory-walk options (ctxmode.store.files.WalkOptions): what a walk lists, and how
index_paths passes them on (real files in tmp_path, a real SQLite store)."""

import os
from pathlib import Path

import pytest

from ctxmode.errors import UsageError
from ctxmode.store import files
from ctxmode.store.files import PLAIN_WALK, WalkOptions, walk_text_files
from ctxmode.store.indexer import index_paths

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")


def _tree(root: Path, paths: dict[str, str]) -> None:
    for rel, text in paths.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _walk(root: Path, **options) -> list[str]:
    walked = walk_text_files(root, options=WalkOptions(**options))
    return [p.relative_to(root).as_posix() for p in walked]


def _labels(run) -> list[str]:
    return sorted(r.label for r in run.indexed)


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "tree"
    _tree(
        root,
        {
            "README.md": "# Readme\n",
            "setup.py": "print('setup')\n",
            "docs/guide.md": "# Guide\n",
            "docs/notes.txt": "notes\n",
            "docs/api/ref.MD": "# Ref\n",
            "docs/drafts/wip.md": "# Wip\n",
            "src/app.py": "def app():\n    pass\n",
            "src/pkg/util.py": "def util():\n    pass\n",
            "src/pkg/bundle.min.js": "var a=1;\n",
            "node_modules/dep/index.md": "# dep\n",
        },
    )
    return root


# --------------------------------------------------------------------------- defaults


def test_default_options_walk_exactly_as_before(tree):
    plain = [p.relative_to(tree).as_posix() for p in walk_text_files(tree)]
    assert (
        plain
        == _walk(tree)
        == [
            "README.md",
            "docs/api/ref.MD",
            "docs/drafts/wip.md",
            "docs/guide.md",
            "docs/notes.txt",
            "setup.py",
            "src/app.py",
            "src/pkg/bundle.min.js",
            "src/pkg/util.py",
        ]
    )
    assert WalkOptions() == PLAIN_WALK


def test_default_options_resolve_no_real_paths(tree, monkeypatch):
    """The plain walk costs what it did: no realpath (stat) per directory."""

    def boom(*_a, **_k):
        raise AssertionError("realpath called on a plain walk")

    monkeypatch.setattr(files.os.path, "realpath", boom)
    assert len(list(walk_text_files(tree))) == 9
    assert len(_walk(tree, include=["*.md"], max_depth=1, max_files=3)) == 2


# --------------------------------------------------------------------------- include / exclude


def test_include_matches_the_bare_name(tree):
    assert _walk(tree, include=["*.md"]) == ["README.md", "docs/drafts/wip.md", "docs/guide.md"]


def test_include_matches_the_path_under_the_root_and_double_star_prefixes(tree):
    assert _walk(tree, include=["docs/*.txt"]) == ["docs/notes.txt"]
    assert _walk(tree, include=["**/*.py"]) == ["setup.py", "src/app.py", "src/pkg/util.py"]
    assert _walk(tree, include=["src/**/*.py"]) == ["src/app.py", "src/pkg/util.py"]
    assert _walk(tree, include=["*.txt", "setup.*"]) == ["docs/notes.txt", "setup.py"]


def test_exclude_a_directory_by_name_or_path_is_not_entered(tree):
    assert "docs/drafts/wip.md" not in _walk(tree, exclude=["drafts"])
    assert _walk(tree, exclude=["docs"]) == _walk(tree, exclude=["docs/"])
    assert not any(p.startswith("docs/") for p in _walk(tree, exclude=["docs/"]))
    assert not any(p.startswith("docs/") for p in _walk(tree, exclude=["docs/**"]))
    assert not any(p.startswith("src/pkg/") for p in _walk(tree, exclude=["src/pkg"]))


def test_an_excluded_directory_is_not_even_listed(tree, monkeypatch):
    entered = []
    real_scandir = os.scandir

    def spy(path):
        entered.append(Path(path).name)
        return real_scandir(path)

    monkeypatch.setattr(files.os, "scandir", spy)
    list(walk_text_files(tree, options=WalkOptions(exclude=["drafts"])))
    assert "docs" in entered and "drafts" not in entered


def test_exclude_a_file_pattern(tree):
    walked = _walk(tree, exclude=["*.min.js", "docs/*.txt"])
    assert "src/pkg/bundle.min.js" not in walked and "docs/notes.txt" not in walked
    assert "src/pkg/util.py" in walked and "docs/guide.md" in walked


def test_a_trailing_slash_excludes_directories_only(tmp_path):
    _tree(tmp_path, {"build": "a file named build", "out/build/x.md": "# x\n", "keep.md": ""})
    assert _walk(tmp_path, exclude=["build/"]) == ["build", "keep.md"]
    assert _walk(tmp_path, exclude=["build"]) == ["keep.md"]


def test_exclude_adds_to_the_built_in_skipped_directories(tree):
    walked = _walk(tree, exclude=["drafts"])
    assert not any(p.startswith("node_modules/") for p in walked)


def test_exclude_wins_over_include(tree):
    assert _walk(tree, include=["*.md"], exclude=["drafts"]) == ["README.md", "docs/guide.md"]


# --------------------------------------------------------------------------- depth and count


def test_max_depth_zero_lists_only_the_files_in_the_root(tree):
    assert _walk(tree, max_depth=0) == ["README.md", "setup.py"]


def test_max_depth_one_lists_one_level_of_subdirectories(tree):
    assert _walk(tree, max_depth=1) == [
        "README.md",
        "docs/guide.md",
        "docs/notes.txt",
        "setup.py",
        "src/app.py",
    ]


def test_max_files_stops_the_walk_in_its_stable_order(tree):
    assert _walk(tree, max_files=3) == _walk(tree)[:3]
    assert _walk(tree, max_files=100) == _walk(tree)


# --------------------------------------------------------------------------- extensions


def test_extensions_with_or_without_dot_in_any_case(tree):
    md = ["README.md", "docs/api/ref.MD", "docs/drafts/wip.md", "docs/guide.md"]
    assert _walk(tree, extensions=[".md"]) == md
    assert _walk(tree, extensions=["md"]) == md
    assert _walk(tree, extensions=["MD"]) == md
    assert _walk(tree, extensions=["txt", ".py"]) == [
        "docs/notes.txt",
        "setup.py",
        "src/app.py",
        "src/pkg/util.py",
    ]
    assert WalkOptions(extensions=["MD", ".md", "md"]).extensions == (".md",)
    assert WalkOptions(extensions=[]).extensions is None


def test_extensions_still_skip_binary_files_when_indexed(store, tmp_path):
    root = tmp_path / "d"
    _tree(root, {"a.md": "# A\n"})
    (root / "blob.md").write_bytes(b"\x00\x01\x02binary")
    run = index_paths(
        store, [str(root)], project=tmp_path, cwd=tmp_path, walk=WalkOptions(extensions=["md"])
    )
    assert _labels(run) == ["d/a.md"]
    assert [(p.path, p.code) for p in run.skipped] == [("d/blob.md", "bad_input")]


# --------------------------------------------------------------------------- .gitignore


def test_respect_gitignore_off_lists_ignored_files(tmp_path):
    _tree(tmp_path, {".gitignore": "*.log\nbuild/\n", "a.md": "", "run.log": "", "build/o.md": ""})
    assert _walk(tmp_path) == ["a.md"]
    assert _walk(tmp_path, respect_gitignore=False) == ["a.md", "build/o.md", "run.log"]


def test_gitignore_off_still_skips_hidden_and_built_in_directories(tmp_path):
    _tree(tmp_path, {".gitignore": "*\n", ".env": "", "node_modules/x.md": "", "a.md": ""})
    assert _walk(tmp_path, respect_gitignore=False) == ["a.md"]


def test_gitignore_off_reads_no_gitignore_file(tmp_path, monkeypatch):
    _tree(tmp_path, {".gitignore": "*.md\n", "a.md": ""})
    monkeypatch.setattr(files, "parse_gitignore", lambda _t: pytest.fail("parsed .gitignore"))
    assert _walk(tmp_path, respect_gitignore=False) == ["a.md"]


# --------------------------------------------------------------------------- symlinks


@needs_symlinks
def test_symlinked_directories_are_followed_only_when_asked(tmp_path):
    root = tmp_path / "root"
    _tree(root, {"a.md": "", "real/inner.md": ""})
    (root / "linked").symlink_to(root / "real", target_is_directory=True)
    _tree(tmp_path, {"elsewhere/x.md": ""})
    assert _walk(root) == ["a.md", "real/inner.md"]
    # the link comes first in name order: the real directory is then not walked again
    assert _walk(root, follow_symlinks=True) == ["a.md", "linked/inner.md"]


@needs_symlinks
def test_following_symlinks_does_not_loop_on_a_cycle(tmp_path):
    root = tmp_path / "root"
    _tree(root, {"a.md": "", "sub/b.md": ""})
    (root / "sub" / "back").symlink_to(root, target_is_directory=True)
    (root / "sub" / "self").symlink_to(root / "sub", target_is_directory=True)
    assert _walk(root, follow_symlinks=True) == ["a.md", "sub/b.md"]


@needs_symlinks
def test_a_followed_link_never_leaves_the_confinement(tmp_path):
    root = tmp_path / "root"
    _tree(root, {"a.md": ""})
    _tree(tmp_path, {"outside/secret.md": ""})
    (root / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert _walk(root, follow_symlinks=True) == ["a.md"]  # confined to the root by default
    assert _walk(root, follow_symlinks=True, confine=root) == ["a.md"]
    assert _walk(root, follow_symlinks=True, confine=tmp_path) == ["a.md", "out/secret.md"]


@needs_symlinks
def test_max_depth_counts_levels_through_followed_links(tmp_path):
    root = tmp_path / "root"
    _tree(root, {"a.md": "", "real/deep/d.md": "", "real/r.md": ""})
    (root / "link").symlink_to(root / "real" / "deep", target_is_directory=True)
    assert _walk(root, follow_symlinks=True, max_depth=1) == ["a.md", "link/d.md", "real/r.md"]


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"max_depth": -1}, "max_depth must be 0 or more"),
        ({"max_files": 0}, "max_files must be 1 or more"),
        ({"max_files": -5}, "max_files must be 1 or more"),
        ({"extensions": ["."]}, "not a file extension"),
    ],
)
def test_bad_values_are_usage_errors(options, words):
    with pytest.raises(UsageError, match=words):
        WalkOptions(**options)


def test_a_single_pattern_string_is_one_pattern():
    assert WalkOptions(include="*.md", exclude="dist").include == ("*.md",)
    assert WalkOptions(include="*.md", exclude="dist").exclude == ("dist",)


# --------------------------------------------------------------------------- index_paths


def test_index_paths_passes_the_options_to_directory_walks(store, tree):
    run = index_paths(
        store,
        [str(tree)],
        project=tree,
        cwd=tree,
        walk=WalkOptions(include=["*.md"], exclude=["drafts"]),
    )
    assert _labels(run) == ["README.md", "docs/guide.md"]
    assert not run.capped


def test_options_do_not_apply_to_files_or_globs_named(store, tree):
    walk = WalkOptions(extensions=["md"], exclude=["*.py", "src"], max_depth=0)
    run = index_paths(store, ["setup.py", "src/**/*.py"], project=tree, cwd=tree, walk=walk)
    assert _labels(run) == ["setup.py", "src/app.py", "src/pkg/util.py"]


def test_max_files_caps_the_run_and_says_so(store, tree):
    run = index_paths(store, [str(tree)], project=tree, cwd=tree, walk=WalkOptions(max_files=2))
    assert _labels(run) == ["README.md", "docs/api/ref.MD"]
    assert run.capped


def test_max_files_equal_to_the_files_there_is_not_capped(store, tree):
    run = index_paths(store, [str(tree)], project=tree, cwd=tree, walk=WalkOptions(max_files=9))
    assert len(run.indexed) == 9 and not run.capped


def test_max_files_is_shared_by_every_directory_named(store, tree):
    walk = WalkOptions(max_files=3)
    run = index_paths(store, ["docs", "src", "setup.py"], project=tree, cwd=tree, walk=walk)
    assert _labels(run) == ["docs/api/ref.MD", "docs/drafts/wip.md", "docs/guide.md", "setup.py"]
    assert run.capped  # docs/notes.txt and src/ were left out; setup.py was named


def test_max_files_used_up_exactly_by_the_first_directory(store, tree):
    walk = WalkOptions(max_files=2)
    run = index_paths(store, ["src/pkg", "docs/api"], project=tree, cwd=tree, walk=walk)
    assert _labels(run) == ["src/pkg/bundle.min.js", "src/pkg/util.py"]
    assert run.capped  # docs/api/ref.MD is not indexed
    run = index_paths(store, ["src/pkg"], project=tree, cwd=tree, walk=walk)
    assert not run.capped

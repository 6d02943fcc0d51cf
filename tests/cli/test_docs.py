"""The man page and shell completions: generated from the app, committed, and kept fresh."""

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import typer.main
from typer.core import TyperArgument, TyperGroup

from ctxmode import paths, settings
from ctxmode.cli import gendocs

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "ctxmode"
REGENERATE = "run `python -m ctxmode.cli.gendocs` and commit the result"

_ENV_TOKEN = re.compile(r"\b(?:CTXMODE|CONTEXT_MODE)_[A-Z][A-Z0-9_]*")
# Markers in the executor's code templates that look like variables but are not read.
_NOT_ENVIRONMENT = {"CTXMODE_USER_CODE", "CTXMODE_FILE_CONTENT"}
_EXAMPLE_LINE = re.compile(r"^\s*Examples?:", re.MULTILINE)


def _section(man: str, title: str) -> str:
    return man.split(f".SH {title}\n", 1)[1].split("\n.SH ", 1)[0]


def _source_env_vars() -> set[str]:
    """CTXMODE_* / CONTEXT_MODE_* names anywhere in the package (code, templates, JS)."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts or path.name == "gendocs.py":
            continue
        try:
            found.update(_ENV_TOKEN.findall(path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue
    return found - _NOT_ENVIRONMENT


def _venv_env(tmp_path: Path) -> dict[str, str]:
    """The environment a shell completion runs in: this venv's ctxmode first on PATH."""
    bindir = Path(sys.executable).parent
    if not (bindir / "ctxmode").exists():
        pytest.skip("the ctxmode executable is not installed next to this interpreter")
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}


# --- freshness ----------------------------------------------------------------------------


def test_committed_files_match_the_app(tmp_path):
    assert gendocs.main(["--out", str(tmp_path)]) == 0
    stale = [
        str(rel)
        for rel in gendocs.render_all()
        if not (REPO / rel).is_file() or (REPO / rel).read_bytes() != (tmp_path / rel).read_bytes()
    ]
    assert not stale, f"out of date: {', '.join(stale)}; {REGENERATE}"


def test_check_lists_stale_files_and_writes_nothing(tmp_path, capsys):
    assert gendocs.main(["--out", str(tmp_path)]) == 0
    assert gendocs.main(["--check", "--out", str(tmp_path)]) == 0
    fish = tmp_path / "completions" / "ctxmode.fish"
    fish.write_text("old\n", encoding="utf-8")
    (tmp_path / "man" / "ctxmode.1").unlink()
    capsys.readouterr()
    assert gendocs.main(["--check", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "completions/ctxmode.fish" in err and "man/ctxmode.1" in err
    assert "python -m ctxmode.cli.gendocs" in err
    assert fish.read_text(encoding="utf-8") == "old\n"
    assert not (tmp_path / "man" / "ctxmode.1").exists()


def test_output_does_not_depend_on_the_machine(tmp_path):
    """Another home, data root, working directory, terminal width and colour setting
    produce the same bytes, and none of those paths leaks into them."""
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "CTXMODE_DIR": str(tmp_path / "data"),
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "COLUMNS": "37",
        "NO_COLOR": "1",
        "FORCE_COLOR": "1",
        "TERM": "dumb",
        "PYTHONPATH": str(REPO),
    }
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "ctxmode.cli.gendocs", "--out", str(out)],
        cwd=home,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    for rel, text in gendocs.render_all().items():
        assert (out / rel).read_text(encoding="utf-8") == text, rel
        assert str(tmp_path) not in text
        assert str(Path.home()) not in text


def test_a_home_that_begins_other_words_is_replaced_only_as_a_path(tmp_path):
    """With the home directory and the data root at /data, "/data.json" in a help text is
    not a path under them: the page comes out byte for byte as committed."""
    env = {
        **os.environ,
        "HOME": "/data",
        "CTXMODE_DIR": "/data",
        "XDG_DATA_HOME": "/data/.local/share",
        "PYTHONPATH": str(REPO),
    }
    out = tmp_path / "out"
    for args in (["--out", str(out)], ["--check"]):
        result = subprocess.run(
            [sys.executable, "-m", "ctxmode.cli.gendocs", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, f"{args}: {result.stderr}; {REGENERATE}"
    man = (out / gendocs.MAN_PAGE).read_bytes()
    assert b"/data.json" in man
    assert man == (REPO / gendocs.MAN_PAGE).read_bytes()


def test_only_whole_paths_become_placeholders(monkeypatch):
    monkeypatch.setattr(
        gendocs, "_machine_paths", lambda: [("/data/x", "<data root>"), ("/data", "~")]
    )
    text = "GET /data.json; see /data/x/logs, /data. /database /data-old x/data ~/data (/data)"
    assert gendocs.neutral(text) == (
        "GET /data.json; see <data root>/logs, ~. /database /data-old x/data ~/data (~)"
    )
    assert gendocs.neutral("/data") == "~" and gendocs.neutral("/data/x") == "<data root>"


# --- what the man page covers -------------------------------------------------------------


def test_every_command_has_help_and_every_leaf_an_example():
    """Groups describe themselves in one line; the commands under them carry examples."""
    entries = list(gendocs.iter_commands())
    names = {e.name for e in entries}
    assert {"ctxmode index", "ctxmode policy check", "ctxmode session events"} <= names
    no_help = [e.name for e in entries if not (e.command.help or "").strip()]
    no_example = [
        e.name
        for e in entries
        if not isinstance(e.command, TyperGroup) and not _EXAMPLE_LINE.search(e.command.help or "")
    ]
    assert not no_help, f"commands without help text: {no_help}"
    assert not no_example, f"add an `Example:` line to the docstring of: {no_example}"


def test_man_page_documents_every_command_option_and_argument():
    man = gendocs.render_man()
    for entry in gendocs.iter_commands():
        heading = f'.SS "{gendocs.esc(entry.name)}"\n'
        assert heading in man, entry.name
        section = man.split(heading, 1)[1].split("\n.SS ", 1)[0]
        for param in gendocs.visible_params(entry.command, entry.ctx):
            if isinstance(param, TyperArgument):
                wanted = [gendocs.italic(param.metavar or param.name.upper())]
            else:
                wanted = [gendocs.bold(o) for o in (*param.opts, *param.secondary_opts)]
            for text in wanted:
                assert text in section, f"{entry.name}: {text}"
        if _EXAMPLE_LINE.search(entry.command.help or ""):
            assert "\nExample:\n.RS 4\n.nf\n" in section or "\nExamples:\n" in section


def test_exit_status_lists_every_exit_code():
    section = _section(gendocs.render_man(), "EXIT STATUS")
    from ctxmode.errors import ExitCode

    for code in ExitCode:
        assert f".TP\n\\fB{int(code)}\\fR\n" in section, code.name


def test_files_section_follows_the_data_root_layout():
    section = _section(gendocs.render_man(), "FILES")
    for where in ("content", "sessions", "logs"):
        assert f"\\fI<data root>/{where}/" in section, where


def _documented_env_vars() -> set[str]:
    """Variable names the ENVIRONMENT section of the man page mentions."""
    section = re.sub(r"\\f[BIRP]", " ", _section(gendocs.render_man(), "ENVIRONMENT"))
    return set(re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", section))


_REGISTERED = {name for var in settings.REGISTRY for name in var.names}
_SETTINGS_PY = PACKAGE / "settings.py"
_PREAMBLES = PACKAGE / "executor" / "preambles"  # run inside user code, not ctxmode


def _package_modules() -> list[Path]:
    return [
        p
        for p in sorted(PACKAGE.rglob("*.py"))
        if p != _SETTINGS_PY and _PREAMBLES not in p.parents and "__pycache__" not in p.parts
    ]


def test_every_variable_named_in_the_package_is_declared_in_settings():
    undeclared = sorted(_source_env_vars() - _REGISTERED)
    assert not undeclared, (
        f"{undeclared} appear in ctxmode/ but not in ctxmode/settings.py: declare each there "
        f"(names, parser, default, doc), then {REGENERATE}"
    )


def test_every_declared_variable_is_documented():
    missing = sorted(_REGISTERED - _documented_env_vars())
    assert not missing, f"not in the man page: {missing}; {REGENERATE}"


def test_only_the_settings_module_names_the_variables_ctxmode_reads():
    """A ``"CTXMODE_..."`` string anywhere else is a direct read in the making: code asks
    `ctxmode.settings` instead. Names ctxmode sets for the code it runs are the exception."""
    read = {n for var in settings.REGISTRY if var.role == settings.READ for n in var.names}
    token = re.compile(r"(?:CTXMODE|CONTEXT_MODE|CTX)_[A-Z0-9_]+")
    found = []
    for path in _package_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            if token.fullmatch(node.value) and node.value not in _NOT_ENVIRONMENT:
                if node.value in read or node.value not in _REGISTERED:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value}")
    assert not found, "read these through ctxmode.settings:\n" + "\n".join(found)


def _used_names() -> set[str]:
    """Every attribute and name used by the package outside the settings module."""
    used: set[str] = set()
    for path in _package_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.Name):
                used.add(node.id)
    return used


def test_every_declared_variable_is_still_read():
    """Each variable ctxmode reads is used, through its `Var` or an accessor of it."""
    tree = ast.parse(_SETTINGS_PY.read_text(encoding="utf-8"))
    accessors: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name):
                    accessors.setdefault(inner.id, set()).add(node.name)
    used = _used_names()
    constants = {id(v): k for k, v in vars(settings).items() if isinstance(v, settings.Var)}
    unused = [
        var.name
        for var in settings.REGISTRY
        if var.role == settings.READ
        and not ({constants[id(var)]} | accessors.get(constants[id(var)], set())) & used
    ]
    assert not unused, f"declared in ctxmode/settings.py but never read: {unused}"


def test_hidden_commands_and_options_are_left_out():
    app = typer.Typer()

    @app.command()
    def shown(
        visible: bool = typer.Option(False, "--visible", help="Seen."),
        secret: bool = typer.Option(False, "--secret-flag", hidden=True),
    ) -> None:
        """Shown.

        Example: demo shown --visible
        """

    @app.command(hidden=True)
    def internal() -> None:
        """Internal."""

    man = gendocs.render_man(typer.main.get_command(app))
    assert '.SS "ctxmode shown"' in man and "\\-\\-visible" in man
    assert "internal" not in man and "secret" not in man


def test_machine_specific_defaults_are_shown_as_placeholders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = typer.Typer()
    home_default = str(Path.home() / ".cache" / "demo")
    data_default = str(paths.data_root() / "extra")

    @app.command()
    def demo(
        cache: str = typer.Option(home_default, help="Cache directory."),
        data: str = typer.Option(data_default, help=f"Data (see {tmp_path / 'notes'})."),
    ) -> None:
        """Demo.

        Example: demo --cache x
        """

    @app.command()
    def other() -> None:
        """Other."""

    man = gendocs.render_man(typer.main.get_command(app))
    assert "[default: \\(ti/.cache/demo]" in man
    assert "[default: <data root>/extra]" in man
    assert "(see <current directory>/notes)" in man
    assert str(Path.home()) not in man and str(tmp_path) not in man


def test_roff_escaping():
    assert gendocs.esc(".hidden") == "\\&.hidden"
    assert gendocs.esc("'quoted'") == "\\(aqquoted\\(aq"
    assert gendocs.esc("a\\b --opt") == "a\\eb \\-\\-opt"
    assert gendocs.esc("fix — …") == "fix \\[u2014] \\[u2026]"
    assert gendocs.fill("a" * 77 + " .b") == ["a" * 77, "\\&.b"]


# --- the man page renders cleanly ---------------------------------------------------------


@pytest.fixture
def man_page(tmp_path) -> Path:
    page = tmp_path / "ctxmode.1"
    page.write_text(gendocs.render_man(), encoding="utf-8")
    return page


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_man_page_renders_without_groff_warnings(man_page):
    result = subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", str(man_page)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    text = re.sub(".\b", "", result.stdout)  # bold and underline are overstruck
    assert "EXIT STATUS" in text and "ctxmode policy check" in text


@pytest.mark.skipif(shutil.which("mandoc") is None, reason="mandoc is not installed")
def test_man_page_passes_mandoc_lint(man_page):
    result = subprocess.run(
        ["mandoc", "-Tlint", "-Wwarning", str(man_page)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # The date of .TH is left empty on purpose: the page must not change from day to day.
    problems = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if line.strip() and "missing date" not in line
    ]
    assert not problems, "\n".join(problems)


# --- completions --------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["ctxmode", "se"], {"search", "serve", "session", "setup"}),
        (["ctxmode", "session", ""], {"events", "list"}),
        (["ctxmode", "search", "--type", ""], {"code", "prose"}),
        (["ctxmode", "index", "--re"], {"--refresh"}),
    ],
)
def test_bash_completion_completes_commands_options_and_choices(tmp_path, words, expected):
    script = REPO / "completions" / "ctxmode.bash"
    function = re.search(r"complete .*-F (\S+) ctxmode", script.read_text(encoding="utf-8"))
    assert function is not None
    code = (
        'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); '
        f'{function.group(1)} ctxmode; printf "%s\\n" "${{COMPREPLY[@]}}"'
    )
    result = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", code, "bash", str(script), *words],
        env=_venv_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert expected <= set(result.stdout.split()), result.stdout


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_is_valid_and_asks_ctxmode(tmp_path):
    script = REPO / "completions" / "ctxmode.zsh"
    assert script.read_text(encoding="utf-8").startswith("#compdef ctxmode\n")
    assert subprocess.run(["zsh", "-n", str(script)], timeout=60).returncode == 0
    # Without a terminal there is no completion system: stand in for what it provides.
    code = (
        'compdef() { :; }; _arguments() { print -r -- "$@"; }; source "$1"; '
        "words=(ctxmode se); CURRENT=2; _ctxmode_completion"
    )
    result = subprocess.run(
        ["zsh", "-f", "-c", code, "zsh", str(script)],
        env=_venv_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    for name in ("search", "serve", "session", "setup"):
        assert f'"{name}"' in result.stdout


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion_is_valid_and_completes(tmp_path):
    script = REPO / "completions" / "ctxmode.fish"
    assert subprocess.run(["fish", "--no-execute", str(script)], timeout=60).returncode == 0
    env = {**_venv_env(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    result = subprocess.run(
        ["fish", "--no-config", "-c", 'source $argv[1]; complete -C "ctxmode se"', str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    found = {line.split("\t", 1)[0] for line in result.stdout.splitlines()}
    assert {"search", "serve", "session", "setup"} <= found


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["ctxmode", "setup", "cl"], {"claude-code"}),
        (["ctxmode", "uninstall", ""], {"claude-code", "codex", "cursor"}),
        (["ctxmode", "hook", "gem"], {"gemini-cli"}),
        (["ctxmode", "execute", "--lang", "py"], {"python"}),
        (["ctxmode", "execute", "-l", "js"], {"js"}),
    ],
)
def test_bash_completion_offers_platform_and_language_names(tmp_path, words, expected):
    test_bash_completion_completes_commands_options_and_choices(tmp_path, words, expected)


def test_platform_completion_reads_the_registry_when_it_runs(monkeypatch):
    from ctxmode import platforms
    from ctxmode.cli.options import complete_platform

    monkeypatch.setitem(platforms.PLATFORMS, "brand-new-host", "ctxmode.platforms.nowhere")
    assert "brand-new-host" in complete_platform("brand")
    assert complete_platform("claude") == ["claude-code"]


def test_help_prose_wraps_at_the_terminal_width_not_at_the_docstrings_line_breaks(
    monkeypatch, capsys
):
    """At 80 columns no description line is cut short mid-paragraph (a word or two left
    alone on a line because the docstring broke there)."""
    from ctxmode.cli.app import main

    monkeypatch.setenv("COLUMNS", "80")
    orphans = []
    for entry in gendocs.iter_commands():
        if isinstance(entry.command, TyperGroup):
            continue
        main([*entry.name.split()[1:], "--help"])
        text = capsys.readouterr().out
        lines = text.split("╭", 1)[0].splitlines()
        for line, following in zip(lines, lines[1:], strict=False):
            words = line.split()
            # a short line inside a paragraph; `Example:` commands may wrap anywhere
            if 0 < len(words) <= 2 and following.strip() and "Example" not in line:
                orphans.append(f"{entry.name}: {line.strip()!r}")
    assert not orphans

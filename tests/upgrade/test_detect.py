"""How ctxmode tells its install method, from fake prefixes: no real pipx or uv needed."""

import time
from pathlib import Path

import pytest

from ctxmode import upgrade
from ctxmode.errors import UsageError
from ctxmode.upgrade import Facts, detect


@pytest.fixture
def base(tmp_path) -> Path:
    """A stand-in for the Python every virtualenv is made from."""
    (tmp_path / "python" / "lib").mkdir(parents=True)
    return tmp_path / "python"


def _facts(base: Path, prefix: Path | None = None, **changes) -> Facts:
    prefix = base if prefix is None else prefix
    facts = Facts(
        prefix=str(prefix),
        base_prefix=str(base),
        executable=str(prefix / "bin" / "python"),
        installed=True,
        direct_url=None,
        location=str(prefix / "lib" / "site-packages"),
        user_base=str(base.parent / "home" / ".local"),
        stdlib=str(base / "lib"),
    )
    return facts._replace(**changes)


def test_pipx_venv_under_the_default_home(base, tmp_path):
    prefix = tmp_path / "home" / ".local" / "share" / "pipx" / "venvs" / "ctxmode"
    found = detect(_facts(base, prefix))
    assert found.method == "pipx"
    assert found.command == ["pipx", "upgrade", "ctxmode"]
    assert str(prefix) in found.detail


def test_pipx_venv_under_pipx_home(base, tmp_path):
    prefix = tmp_path / "tools" / "venvs" / "ctxmode"
    found = detect(_facts(base, prefix, pipx_home=str(tmp_path / "tools")))
    assert (found.method, found.command) == ("pipx", ["pipx", "upgrade", "ctxmode"])


def test_a_venvs_directory_alone_is_not_pipx(base, tmp_path):
    prefix = tmp_path / "work" / "venvs" / "ctxmode"
    assert detect(_facts(base, prefix)).method == "venv"


def test_uv_tool_under_the_default_and_a_custom_tool_dir(base, tmp_path):
    prefix = tmp_path / "home" / ".local" / "share" / "uv" / "tools" / "ctxmode"
    found = detect(_facts(base, prefix))
    assert (found.method, found.command) == ("uv-tool", ["uv", "tool", "upgrade", "ctxmode"])
    custom = tmp_path / "mytools" / "ctxmode"
    found = detect(_facts(base, custom, uv_tool_dir=str(tmp_path / "mytools")))
    assert found.method == "uv-tool"


def test_pip_inside_a_virtualenv_uses_that_venvs_python(base, tmp_path):
    prefix = tmp_path / "project" / ".venv"
    facts = _facts(base, prefix)
    found = detect(facts)
    assert found.method == "venv"
    assert found.command == [facts.executable, "-m", "pip", "install", "--upgrade", "ctxmode"]


def test_a_uv_made_virtualenv_is_upgraded_with_uv_pip(base, tmp_path):
    prefix = tmp_path / "project" / ".venv"
    prefix.mkdir(parents=True)
    (prefix / "pyvenv.cfg").write_text("home = /x\nuv = 0.5.1\n", encoding="utf-8")
    facts = _facts(base, prefix)
    found = detect(facts)
    assert found.method == "venv"
    assert found.command[:3] == ["uv", "pip", "install"] and facts.executable in found.command


def test_pip_user_install(base):
    facts = _facts(base)
    facts = facts._replace(location=str(Path(facts.user_base or "") / "lib" / "site-packages"))
    found = detect(facts)
    assert found.method == "user"
    assert found.command == [
        facts.executable,
        "-m",
        "pip",
        "install",
        "--user",
        "--upgrade",
        "ctxmode",
    ]


def test_system_pip_and_an_externally_managed_python(base):
    facts = _facts(base)
    found = detect(facts)
    assert found.method == "system" and found.command[-3:] == ["install", "--upgrade", "ctxmode"]

    (base / "lib" / "EXTERNALLY-MANAGED").write_text("[externally-managed]\n", encoding="utf-8")
    found = detect(facts)
    assert found.method == "system" and found.command == []
    assert "PEP 668" in found.detail and "pipx install ctxmode" in found.detail
    user = facts._replace(location=str(Path(facts.user_base or "") / "lib"))
    assert detect(user).command == [] and detect(user).method == "user"


def test_an_editable_checkout_is_upgraded_with_git_whatever_venv_holds_it(base, tmp_path):
    checkout = tmp_path / "src" / "ctx mode"
    (checkout / ".git").mkdir(parents=True)
    direct_url = {"url": checkout.as_uri(), "dir_info": {"editable": True}}
    prefix = tmp_path / "home" / ".local" / "share" / "pipx" / "venvs" / "ctxmode"
    found = detect(_facts(base, prefix, direct_url=direct_url))
    assert found.method == "editable"
    assert found.command == ["git", "-C", str(checkout), "pull", "--ff-only"]
    assert "pip is not run" in found.detail

    (checkout / ".git").rmdir()
    found = detect(_facts(base, prefix, direct_url=direct_url))
    assert found.method == "editable" and found.command == []


def test_a_non_editable_direct_url_is_a_normal_install(base, tmp_path):
    direct_url = {"url": (tmp_path / "ctxmode.whl").as_uri(), "archive_info": {}}
    prefix = tmp_path / "project" / ".venv"
    assert detect(_facts(base, prefix, direct_url=direct_url)).method == "venv"


def test_not_installed_at_all(base):
    found = detect(_facts(base, installed=False))
    assert found.method == "unknown" and found.command == []


def test_the_command_override_must_be_a_json_list_of_strings(monkeypatch):
    monkeypatch.setenv("CTXMODE_UPGRADE_COMMAND", '["echo", "hi"]')
    found = upgrade.current_install()
    assert found.command == ["echo", "hi"] and "CTXMODE_UPGRADE_COMMAND" in found.detail
    for bad in ("echo hi", "[]", '["echo", 1]', '{"a": 1}'):
        monkeypatch.setenv("CTXMODE_UPGRADE_COMMAND", bad)
        with pytest.raises(UsageError, match="JSON list"):
            upgrade.current_install()


@pytest.mark.parametrize(
    ("latest", "installed", "expected"),
    [
        ("0.2.0", "0.1.0", True),
        ("0.1", "0.1.0", False),
        ("0.1.0", "0.10.0", False),
        ("1.0.0rc1", "0.9", True),
        (None, "0.1.0", None),
        ("garbage", "0.1.0", None),
    ],
)
def test_newer_compares_releases_numerically(latest, installed, expected):
    assert upgrade.newer(latest, installed) is expected


def test_pypi_out_of_reach_is_unknown_and_quick():
    start = time.monotonic()
    assert upgrade.latest_version("http://127.0.0.1:9/pypi/ctxmode/json", timeout=1.0) is None
    assert time.monotonic() - start < 2.0

"""How ctxmode tells its install method, from fake prefixes: no real pipx or uv needed."""

import socket
from pathlib import Path

import pytest

import ctxmode.upgrade.install as install_module
from ctxmode import upgrade
from ctxmode.errors import UsageError
from ctxmode.upgrade import Facts, Install, detect


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


def test_an_editable_checkout_gets_no_command_whatever_venv_holds_it(base, tmp_path):
    checkout = tmp_path / "src" / "ctx mode"
    (checkout / ".git").mkdir(parents=True)
    direct_url = {"url": checkout.as_uri(), "dir_info": {"editable": True}}
    prefix = tmp_path / "home" / ".local" / "share" / "pipx" / "venvs" / "ctxmode"
    for facts in (
        _facts(base, prefix, direct_url=direct_url),  # pipx install -e
        _facts(base, tmp_path / "project" / ".venv", direct_url=direct_url),
    ):
        found = detect(facts)
        assert (found.method, found.command, found.development) == ("editable", [], True)
        assert found.detail == (
            f"development install at {checkout}: "
            "update the checkout yourself (git pull, pip install -e .)"
        )
    (checkout / ".git").rmdir()  # not a git checkout: the same advice
    assert detect(_facts(base, prefix, direct_url=direct_url)).development


def test_an_externally_managed_python_is_no_development_install(base):
    (base / "lib" / "EXTERNALLY-MANAGED").write_text("[externally-managed]\n", encoding="utf-8")
    found = detect(_facts(base))
    assert found.command == [] and not found.development


def test_a_directory_install_is_not_swapped_for_the_index(base, tmp_path):
    """`pip install .`: pip would fetch whatever PyPI calls ctxmode; no command at all."""
    source = tmp_path / "my fork"
    direct_url = {"url": source.as_uri(), "dir_info": {}}
    prefix = tmp_path / "project" / ".venv"
    found = detect(_facts(base, prefix, direct_url=direct_url))
    assert (found.method, found.command, found.development) == ("venv", [], False)
    assert found.detail == (
        f"installed from {source}: reinstall from there (pip install --upgrade {source})"
    )


def test_a_local_archive_install_is_not_swapped_for_the_index(base, tmp_path):
    wheel = tmp_path / "dist" / "ctxmode-0.1.0-py3-none-any.whl"
    direct_url = {"url": wheel.as_uri(), "archive_info": {"hashes": {"sha256": "00"}}}
    for facts in (_facts(base, tmp_path / "v", direct_url=direct_url), _facts(base)):
        facts = facts._replace(direct_url=direct_url)
        found = detect(facts)
        assert found.command == [] and f"installed from {wheel}: reinstall from there" in (
            found.detail
        )


def test_a_remote_archive_install_gets_no_command_either(base):
    url = "https://example.org/ctxmode-0.1.0.tar.gz"
    found = detect(_facts(base, direct_url={"url": url, "archive_info": {}}))
    assert found.command == [] and f"installed from {url}" in found.detail


GIT = "https://github.com/someone/ctxmode.git"


@pytest.mark.parametrize(
    ("vcs_info", "spec"),
    [
        ({"vcs": "git", "requested_revision": "main", "commit_id": "ab12"}, f"git+{GIT}@main"),
        ({"vcs": "git", "commit_id": "ab12"}, f"git+{GIT}"),
        ({"vcs": "git", "requested_revision": "", "commit_id": "ab12"}, f"git+{GIT}"),
    ],
)
def test_a_git_install_is_upgraded_from_its_repository(base, tmp_path, vcs_info, spec):
    direct_url = {"url": GIT, "vcs_info": vcs_info}
    facts = _facts(base, tmp_path / "project" / ".venv", direct_url=direct_url)
    found = detect(facts)
    assert found.method == "venv"
    assert found.command == [facts.executable, "-m", "pip", "install", "--upgrade", spec]
    assert spec in found.detail


def test_a_git_install_uses_the_same_pip_choice_as_an_index_install(base, tmp_path):
    direct_url = {"url": GIT, "vcs_info": {"vcs": "git", "requested_revision": "v2"}}
    prefix = tmp_path / "project" / ".venv"
    prefix.mkdir(parents=True)
    (prefix / "pyvenv.cfg").write_text("home = /x\nuv = 0.5.1\n", encoding="utf-8")
    facts = _facts(base, prefix, direct_url=direct_url)
    assert detect(facts).command == [
        "uv",
        "pip",
        "install",
        "--python",
        facts.executable,
        "--upgrade",
        f"git+{GIT}@v2",
    ]
    user = _facts(base, direct_url=direct_url)
    user = user._replace(location=str(Path(user.user_base or "") / "lib"))
    assert detect(user).command[-3:] == ["--user", "--upgrade", f"git+{GIT}@v2"]
    (base / "lib" / "EXTERNALLY-MANAGED").write_text("[externally-managed]\n", encoding="utf-8")
    assert detect(user).command == [] and "PEP 668" in detect(user).detail


def test_pipx_and_uv_tool_upgrade_from_the_source_they_recorded(base, tmp_path):
    """`pipx upgrade` and `uv tool upgrade` reinstall from the spec they were given (a
    repository, a path), not from the index: their command stays."""
    direct_url = {"url": GIT, "vcs_info": {"vcs": "git", "requested_revision": "main"}}
    pipx = tmp_path / "home" / ".local" / "share" / "pipx" / "venvs" / "ctxmode"
    found = detect(_facts(base, pipx, direct_url=direct_url))
    assert found.command == ["pipx", "upgrade", "ctxmode"] and GIT in found.detail
    uv = tmp_path / "home" / ".local" / "share" / "uv" / "tools" / "ctxmode"
    local = {"url": (tmp_path / "src").as_uri(), "dir_info": {}}
    found = detect(_facts(base, uv, direct_url=local))
    assert found.command == ["uv", "tool", "upgrade", "ctxmode"]
    assert str(tmp_path / "src") in found.detail


@pytest.mark.parametrize(
    "direct_url",
    [
        {"url": "file:///src/ctxmode", "dir_info": {}},
        {"url": "file:///dist/ctxmode.whl", "archive_info": {}},
        {"url": "https://example.org/ctxmode.zip", "archive_info": {}},
        {"url": GIT, "vcs_info": {"vcs": "git", "requested_revision": "main"}},
        {"url": "file:///src/ctxmode", "dir_info": {"editable": True}},
        {"url": "file:///src/ctxmode"},  # no *_info at all: still not the index
    ],
)
def test_the_index_is_asked_only_without_a_direct_url(base, tmp_path, direct_url):
    for prefix in (base, tmp_path / "project" / ".venv"):
        command = detect(_facts(base, prefix, direct_url=direct_url)).command
        assert "ctxmode" not in command[-1:], command
    assert detect(_facts(base, tmp_path / "v")).command[-1] == "ctxmode"


def test_not_installed_at_all(base):
    found = detect(_facts(base, installed=False))
    assert found.method == "unknown" and found.command == []


def test_the_command_override_applies_to_a_development_install_too(monkeypatch):
    editable = Install("editable", [], "development install at /src: update the checkout")
    monkeypatch.setattr(install_module, "detect", lambda facts=None: editable)
    monkeypatch.setenv("CTXMODE_UPGRADE_COMMAND", '["echo", "hi"]')
    found = upgrade.current_install()
    assert found.command == ["echo", "hi"] and not found.development


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
        ("0.1.0", "0.1", False),
        ("0.1.0", "0.10.0", False),
        ("1.0.0rc1", "0.9", True),
        ("1.0.0", "1.0.0rc1", True),  # a release candidate is older than its release
        ("1.0.0rc1", "1.0.0", False),
        ("1.0.0rc2", "1.0.0rc1", True),
        ("1.0.0.post1", "1.0.0", True),
        ("1.0.0", "1.0.0.post1", False),
        ("1.0.0a1", "1.0.0.dev3", True),
        ("v1.0.0", "1.0.0-rc.1", True),  # PEP 440's other spellings
        ("1.0.0", "1.0.0+local.1", False),
        ("2!0.1", "1.9", True),
        (None, "0.1.0", None),
        ("garbage", "0.1.0", None),
        ("1.0.0", "garbage", None),
        ("1.0.0-final-x", "0.1.0", None),  # a prefix that parses is not enough
    ],
)
def test_newer_compares_releases_numerically(latest, installed, expected):
    assert upgrade.newer(latest, installed) is expected


def test_pre_releases_sort_before_their_release_and_posts_after():
    order = [
        "1.0.0.dev1",
        "1.0.0a1",
        "1.0.0a2",
        "1.0.0b1",
        "1.0.0rc1",
        "1.0.0",
        "1.0.0.post1",
        "1.0.1a1",
        "1.0.1",
    ]
    for older, newest in zip(order, order[1:], strict=False):
        assert upgrade.newer(newest, older) is True, (older, newest)
        assert upgrade.newer(older, newest) is False, (older, newest)


def test_pypi_out_of_reach_is_unknown():
    assert upgrade.latest_version("http://127.0.0.1:9/pypi/ctxmode/json", timeout=1.0) is None


def test_pypi_that_never_answers_is_unknown():
    """A server that accepts the connection and says nothing: the timeout gives up."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/pypi/ctxmode/json"
        assert upgrade.latest_version(url, timeout=0.2) is None

"""How ctxmode is installed (editable checkout, pipx, uv tool, pip; from the index, a
repository or a local path) and the command that upgrades it, judged from the running
interpreter."""

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ctxmode import settings

if TYPE_CHECKING:
    from importlib.metadata import Distribution

PACKAGE = "ctxmode"
EDITABLE_ADVICE = "update the checkout yourself (git pull, pip install -e .)"


class Install(NamedTuple):
    """How ctxmode is installed and the command that upgrades it (empty: none can)."""

    method: str  # plugin | editable | pipx | uv-tool | venv | user | system | unknown
    command: list[str]
    detail: str

    @property
    def development(self) -> bool:
        """An editable checkout without a command: its owner updates the code, `ctxmode
        upgrade` only runs the step after it (migrations, setup)."""
        return self.method == "editable" and not self.command


class Facts(NamedTuple):
    """What detection looks at; `Facts.current` reads them from the running interpreter."""

    prefix: str
    base_prefix: str
    executable: str
    installed: bool  # a ctxmode distribution was found
    direct_url: dict[str, Any] | None  # its direct_url.json (PEP 610)
    location: str | None  # the directory it is installed into (site-packages)
    user_base: str | None  # pip --user's base directory
    stdlib: str  # where a PEP 668 EXTERNALLY-MANAGED marker would be
    pipx_home: str | None = None
    uv_tool_dir: str | None = None

    @classmethod
    def current(cls) -> "Facts":
        import site
        import sysconfig

        dist = distribution()
        direct_url: dict[str, Any] | None = None
        location: str | None = None
        if dist is not None:
            try:
                loaded = json.loads(dist.read_text("direct_url.json") or "null")
            except ValueError:
                loaded = None
            direct_url = loaded if isinstance(loaded, dict) else None
            location = str(dist.locate_file(""))
        return cls(
            prefix=sys.prefix,
            base_prefix=sys.base_prefix,
            executable=sys.executable,
            installed=dist is not None,
            direct_url=direct_url,
            location=location,
            user_base=site.getuserbase(),
            stdlib=sysconfig.get_path("stdlib"),
            pipx_home=os.environ.get("PIPX_HOME") or None,
            uv_tool_dir=os.environ.get("UV_TOOL_DIR") or None,
        )


def distribution() -> "Distribution | None":
    """The installed ctxmode distribution; an installed one (it has an INSTALLER or a
    direct_url.json) wins over a source tree's ``ctxmode.egg-info`` on sys.path."""
    from importlib import metadata

    found = list(metadata.distributions(name=PACKAGE))
    for dist in found:
        if dist.read_text("INSTALLER") is not None or dist.read_text("direct_url.json"):
            return dist
    return found[0] if found else None


def _under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def _local_path(url: str) -> str:
    """A ``file:`` URL as a local path (percent-encoding undone); other URLs as they are."""
    if not url.startswith("file:"):
        return url
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    return url2pathname(urlparse(url).path)


def _editable_checkout(direct_url: dict[str, Any] | None) -> Path | None:
    if not direct_url or not (direct_url.get("dir_info") or {}).get("editable"):
        return None
    url = str(direct_url.get("url", ""))
    if not url.startswith("file:"):
        return None
    return Path(_local_path(url))


def _vcs_requirement(direct_url: dict[str, Any]) -> str | None:
    """What pip installs again for a PEP 610 VCS install: ``git+URL[@revision]``, the
    revision the user asked for (a branch or tag follows on; a commit stays put)."""
    vcs = direct_url.get("vcs_info")
    url = direct_url.get("url")
    if not isinstance(vcs, dict) or not isinstance(url, str) or not url:
        return None
    kind = vcs.get("vcs") if isinstance(vcs.get("vcs"), str) else "git"
    spec = url if url.startswith(f"{kind}+") else f"{kind}+{url}"
    revision = vcs.get("requested_revision")
    if isinstance(revision, str) and revision:
        spec += f"@{revision}"
    subdirectory = direct_url.get("subdirectory")
    if isinstance(subdirectory, str) and subdirectory:
        spec += f"#subdirectory={subdirectory}"
    return spec


def _pip(facts: Facts, *extra: str, spec: str = PACKAGE) -> list[str]:
    return [facts.executable, "-m", "pip", "install", *extra, "--upgrade", spec]


def detect(facts: Facts | None = None) -> Install:
    """How ctxmode is installed, judged from the interpreter's prefixes and PEP 610 data.

    The package index is asked only for an install that came from it (no
    direct_url.json): a checkout, a directory, an archive or a repository is upgraded
    from where it came, or not at all, never swapped for whatever PyPI calls ctxmode.
    An editable checkout gets no command whatever venv holds it: its owner updates it.
    pipx and uv tool remember their source and upgrade from it, so they keep their
    command; then plain pip.
    """
    f = Facts.current() if facts is None else facts
    plugin = from_plugin(f)
    if plugin is not None:
        return plugin
    if not f.installed:
        return Install(
            "unknown",
            [],
            "ctxmode runs from a source tree without being installed; update it the way you got it",
        )
    checkout = _editable_checkout(f.direct_url)
    if checkout is not None:
        return Install("editable", [], f"development install at {checkout}: {EDITABLE_ADVICE}")
    found = environment(f)
    direct = f.direct_url
    if direct is None:
        return found
    if found.method in ("pipx", "uv-tool"):
        url = direct.get("url")
        source = f" (from {_local_path(url)})" if isinstance(url, str) and url else ""
        return found._replace(detail=f"{found.detail}{source}")
    spec = _vcs_requirement(direct)
    if spec is not None:
        found = environment(f, spec)
        if not found.command:
            return found
        return found._replace(detail=f"{found.detail}, installed from {spec}")
    url = direct.get("url")
    where = _local_path(url) if isinstance(url, str) and url else "a direct URL"
    return Install(
        found.method,
        [],
        f"installed from {where}: reinstall from there (pip install --upgrade {where})",
    )


def from_plugin(f: Facts) -> Install | None:
    """ctxmode running from a host plugin's own environment (``$CTXMODE_PLUGIN``): the host's
    plugin manager updates it, and the new version builds a new environment."""
    from ctxmode import platforms

    host = settings.plugin()
    if not host:
        return None
    adapter = platforms.load(host) if host in platforms.PLATFORMS else None
    update = getattr(adapter, "PLUGIN_UPDATE", None)
    how = (
        update.format(marketplace=PACKAGE, id=f"{PACKAGE}@{PACKAGE}")
        if update
        else f"update the {PACKAGE} plugin in {host}"
    )
    return Install(
        "plugin",
        [],
        f"the {host} plugin's own environment {f.prefix}: update the plugin ({how}), "
        f"then restart {host}; the new version builds its own environment on first use",
    )


def environment(f: Facts, spec: str = PACKAGE) -> Install:
    """`detect` for the environment ctxmode is installed into, its source aside: pipx and
    uv tool venvs, then plain pip installing `spec`. Doctor names it even for a checkout."""
    prefix = Path(f.prefix)
    if prefix.parent.name == "venvs" and (
        (f.pipx_home is not None and _under(prefix, Path(f.pipx_home)))
        or any(part in ("pipx", ".pipx") for part in prefix.parts[:-2])
    ):
        return Install("pipx", ["pipx", "upgrade", prefix.name], f"pipx venv {prefix}")
    if (f.uv_tool_dir is not None and prefix.parent == Path(f.uv_tool_dir)) or (
        prefix.parent.name == "tools" and "uv" in prefix.parts[:-2]
    ):
        return Install("uv-tool", ["uv", "tool", "upgrade", prefix.name], f"uv tool {prefix}")
    if f.prefix != f.base_prefix:
        if _uv_venv(prefix):
            command = ["uv", "pip", "install", "--python", f.executable, "--upgrade", spec]
            return Install("venv", command, f"uv-managed virtualenv {prefix}")
        return Install("venv", _pip(f, spec=spec), f"pip in the virtualenv {prefix}")
    managed = Path(f.stdlib, "EXTERNALLY-MANAGED").exists()
    refusal = (
        f"; this Python is externally managed (PEP 668) and pip refuses to change it: "
        f"install ctxmode with pipx (pipx install {PACKAGE}) or uv (uv tool install {PACKAGE})"
    )
    if f.location and f.user_base and _under(Path(f.location), Path(f.user_base)):
        if managed:
            return Install("user", [], f"pip --user under {f.user_base}{refusal}")
        return Install("user", _pip(f, "--user", spec=spec), f"pip --user under {f.user_base}")
    if managed:
        return Install("system", [], f"pip into the system Python {f.prefix}{refusal}")
    return Install("system", _pip(f, spec=spec), f"pip into the system Python {f.prefix}")


def _uv_venv(prefix: Path) -> bool:
    """Virtualenvs made by uv have no pip; their pyvenv.cfg names uv."""
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return False
    return any(line.split("=")[0].strip() == "uv" for line in text.splitlines())


def current_install() -> Install:
    """`detect` for this interpreter, with ``CTXMODE_UPGRADE_COMMAND`` applied.

    Raises:
        UsageError: the override is not a JSON list of strings.
    """
    found = detect()
    settings.require_valid(settings.UPGRADE_COMMAND)
    command = settings.upgrade_command()
    if command is None:
        return found
    name = settings.UPGRADE_COMMAND.name
    return Install(found.method, command, f"{found.detail}; command set by {name}")

"""The package as a whole: its import cost and its public names."""

import ast
import subprocess
import sys
from importlib import import_module
from inspect import ismodule
from pathlib import Path

from ctxmode import security


def test_importing_security_loads_nothing_heavy():
    probe = (
        "import sys, ctxmode.security\n"
        "heavy = {'typer', 'rich', 'mcp', 'pydantic', 'psutil', 'platformdirs'}\n"
        "front = ('ctxmode.cli', 'ctxmode.server')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(front)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, encoding="utf-8", check=True
    )
    assert out.stdout.strip() == "[]"


# The modules in layers: each may import at module level only the ones before it.
LAYERS = "model settings words shell expand code readings commands paths named messages".split()


def test_the_package_exports_every_public_name_it_has():
    """Every name of `__all__` resolves (each loaded from its module on first use), and
    each is the public name of the module it comes from."""
    for name in security.__all__:
        value = getattr(security, name)
        home = security._HOMES[name]
        assert getattr(import_module(f"ctxmode.security.{home}"), name) is value
    assert set(security.__all__) == set(security._HOMES)
    public = {n for n, v in vars(security).items() if not n.startswith("_") and not ismodule(v)}
    assert public - {"TYPE_CHECKING", "Any"} <= set(security.__all__)


def test_a_bash_check_loads_only_the_command_checks():
    probe = (
        "import sys\n"
        "from ctxmode.security import check_command, load_policy\n"
        "print(sorted(m for m in sys.modules if m.startswith('ctxmode.security.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, encoding="utf-8", check=True
    )
    loaded = {m.rsplit(".", 1)[1] for m in eval(out.stdout)}  # noqa: S307 - our own output
    assert not loaded & {"paths", "named", "messages"}


def test_modules_import_only_lower_layers():
    """No import cycle: a module's top-level imports reach only the layers below it."""
    package = Path(security.__file__).parent
    assert sorted(p.stem for p in package.glob("*.py")) == sorted([*LAYERS, "__init__"])
    for layer, name in enumerate(LAYERS):
        tree = ast.parse((package / f"{name}.py").read_text(encoding="utf-8"))
        imported = {
            node.module.rsplit(".", 1)[1]
            for node in tree.body
            if isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("ctxmode.security.")
        }
        assert all(LAYERS.index(m) < layer for m in imported), (name, imported)

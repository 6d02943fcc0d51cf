"""The package's layering, read from the source: no import cycles between ctxmode's
parts, the hook front door never reaches into the CLI, the session store never into the
hook handlers, and host facts live in the platform descriptors."""

import ast
import re
from pathlib import Path

import pytest

import ctxmode
from ctxmode.platforms import PLATFORMS, descriptors

ROOT = Path(ctxmode.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every ctxmode module `name` imports, at module level or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets = [base, *(f"{base}.{a.name}" for a in node.names)]
        out.update(t for t in targets if t in modules and t != name)
    return out


def _part(module: str) -> str:
    """``ctxmode.hooks.entry`` -> ``hooks``; a top-level module is its own part."""
    return module.split(".")[1] if module.count(".") else module


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if name == "ctxmode" or "." not in name:
            continue
        src = _part(name)
        for target in _imports(name, path, modules):
            if target != "ctxmode" and _part(target) != src:
                graph.setdefault(src, set()).add(_part(target))
    return graph


def _module_graph() -> dict[str, set[str]]:
    """Module to modules it imports; importing one's own package (its ``__init__``, which
    Python runs first anyway) is not an edge."""
    modules = _modules()
    return {
        name: {t for t in _imports(name, path, modules) if not name.startswith(t + ".")}
        for name, path in modules.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    done: set[str] = set()
    found: list[str] = []

    def visit(node: str, trail: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in trail:
                found.append(" -> ".join([*trail[trail.index(nxt) :], nxt]))
            elif nxt not in done:
                visit(nxt, [*trail, nxt])
        done.add(node)

    for start in sorted(graph):
        if start not in done:
            visit(start, [start])
    return sorted(set(found))


def test_no_import_cycles_between_the_parts_of_ctxmode():
    assert not _cycles(_graph())


def test_no_import_cycles_between_modules():
    """Deferred imports count too: a cycle hidden in a function is still a cycle."""
    assert not _cycles(_module_graph())


@pytest.mark.parametrize(
    ("part", "forbidden"),
    [
        ("hooks", "cli"),
        ("session", "hooks"),
        ("session", "cli"),
        ("platforms", "hooks"),
        ("platforms", "session"),
        ("hookevent", "platforms"),
    ],
)
def test_lower_layers_do_not_import_higher_ones(part, forbidden):
    assert forbidden not in _graph().get(part, set())


# Host names may appear in their own platform module, in setup (each target names its file
# formats) and in the docs generator; anywhere else a host fact belongs in its descriptor.
_HOST_NAME = re.compile(r"""["'](""" + "|".join(map(re.escape, PLATFORMS)) + r""")["']""")
_ALLOWED = ("platforms/", "setup/", "cli/", "doctor/")


def test_consumers_keep_no_per_platform_sets():
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in ROOT.rglob("*.py")
        if not str(path.relative_to(ROOT)).startswith(_ALLOWED)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _HOST_NAME.search(line)
    ]
    assert not offenders, offenders


def test_every_platform_declares_its_descriptor():
    hosts = descriptors()
    assert [h.name for h in hosts] == list(PLATFORMS)
    for host in hosts:  # an MCP-only host (Zed, Antigravity) has no hook events at all
        assert not host.events or set(host.events.values()) >= {"pre_tool", "post_tool"}, host

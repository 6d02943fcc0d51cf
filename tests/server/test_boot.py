"""`ctxmode serve` start-up: the opening is answered, and the readiness marker published,
before and without the MCP SDK.

Two guards that the first answers never wait for the SDK: the imports of `boot` (outside
the background `_load`) reach only the standard library and light ctxmode modules, and a
real `ctxmode serve` whose SDK cannot be imported still answers the opening.
"""

import ast
import importlib.util
import json
import os
import select
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from ctxmode.server import boot, direct, early, pipes

from .support import CALL_S, EXIT_WITHIN_S, INIT, RawServer, marker, start_process

# Third-party modules the walked code imports inside functions, only elsewhere than
# Linux: the user data dir (macOS, Windows) and the pid check (Windows). Both are light.
# The standard library's own SHA-256 module under its Python 3.12+ name (`ctxmode.digest`).
ELSEWHERE = {"platformdirs", "psutil", "_sha2"}
HEAVY = ("mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "typer", "rich", "httpx2")


def _imports(module: str, skip: tuple[str, ...] = ()) -> list[str]:
    """Every module `module` imports, at any depth of its code but `skip`'s functions."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    found: list[str] = []

    class Visitor(ast.NodeVisitor):
        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            if node.name not in skip:
                self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.extend(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            assert node.level == 0 and node.module is not None, "absolute imports only"
            found.append(node.module)
            package = importlib.util.find_spec(node.module)
            if node.module.startswith("ctxmode") and package and package.submodule_search_locations:
                for alias in node.names:  # `from ctxmode.server import early`: a module
                    full = f"{node.module}.{alias.name}"
                    if importlib.util.find_spec(full):
                        found.append(full)

    Visitor().visit(tree)
    return found


def test_start_up_imports_only_the_standard_library_and_light_ctxmode_modules():
    reached: set[str] = set()
    outside: set[str] = set()
    # What the background loads (the core, the SDK) and the call that waits for them.
    skips = {
        "ctxmode.server.boot": ("_load_core", "_load_sdk"),
        "ctxmode.server.direct": ("_run",),
        "ctxmode.server.upkeep": ("reap_leftovers", "collect_if_due"),  # 0.5 s and 60 s on
    }
    todo = ["ctxmode.server.boot"]
    while todo:
        module = todo.pop()
        if module in reached:
            continue
        reached.add(module)
        parts = module.split(".")
        todo.extend(".".join(parts[:n]) for n in range(1, len(parts)))  # packages
        for name in _imports(module, skips.get(module, ())):
            if name.split(".")[0] == "ctxmode":
                todo.append(name)
            elif name.split(".")[0] not in sys.stdlib_module_names:
                outside.add(name)
    assert outside <= ELSEWHERE
    assert not {m for m in reached if m.startswith(("ctxmode.cli", "ctxmode.store"))}
    assert reached & {"ctxmode.server.app", "ctxmode.server.tools"} == set()


def _read_line(fd: int) -> dict[str, Any]:
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], CALL_S)
        assert ready, "no answer"
        line += os.read(fd, 1)
    return json.loads(line)


def test_the_opening_is_answered_while_the_core_is_still_loading():
    server_in, client_out = os.pipe()
    client_in, server_out = os.pipe()
    loaded_r, loaded_w = os.pipe()  # never written: the core is still loading
    wire = pipes.Wire(server_in, server_out, -1, -1)
    opening = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ]
    for_the_sdk = {"jsonrpc": "2.0", "id": 2, "method": "bogus/method"}
    lines = [json.dumps(m).encode() + b"\n" for m in [*opening, for_the_sdk]]

    def no_core() -> Any:
        raise AssertionError("no tool call was sent")

    handed: list[Any] = []
    calls = direct.Calls(wire, no_core)
    worker = threading.Thread(
        target=lambda: handed.append(
            direct.serve(wire, calls, early.tool_dicts(), loaded_r, lambda: None)
        )
    )
    worker.start()
    try:
        os.write(client_out, b"".join(lines))
        first, second = _read_line(client_in), _read_line(client_in)
        worker.join(CALL_S)
    finally:
        for fd in (client_out, server_in, server_out, client_in, loaded_r, loaded_w):
            os.close(fd)
    assert first["id"] == 0 and first["result"]["serverInfo"]["name"] == "ctxmode"
    assert second["id"] == 1 and len(second["result"]["tools"]) == 11
    (ending,) = handed
    assert not ending.eof
    # The SDK reads again what shaped the session (not the stateless list), then the rest.
    assert ending.prefix == lines[0] + lines[1] + lines[3]
    assert ending.answered == [first]


def test_a_failed_load_is_raised_where_the_server_waits_for_it():
    def load() -> None:
        raise ImportError("no SDK")

    loader = boot._Loader(load)
    loader.start()
    with pytest.raises(ImportError, match="no SDK"):
        loader.value()


# Stands in for a package the early answers must not need: it never finishes importing
# until the test creates the gate file, and then fails.
BLOCKED = """\
import os, time
while not os.path.exists({gate!r}):
    time.sleep(0.01)
raise ImportError("the test blocked this import")
"""


def test_serve_answers_tool_calls_without_the_sdk_and_loads_it_only_when_needed(
    tmp_path, project, data_root, started
):
    shadow, gate = tmp_path / "shadow", tmp_path / "gate"
    for name in HEAVY:
        (shadow / name).mkdir(parents=True)
        (shadow / name / "__init__.py").write_text(BLOCKED.format(gate=str(gate)), "utf-8")
    proc = start_process(
        tmp_path,
        [sys.executable, "-m", "ctxmode", "serve"],  # what hosts run
        data_root,
        PYTHONPATH=str(shadow),
        CTXMODE_PROJECT_DIR=str(project),
    )
    server = RawServer(proc)
    started.append(server)
    server.request(0, "initialize", INIT)
    assert server.response(0)["result"]["serverInfo"]["name"] == "ctxmode"
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.request(1, "tools/list")
    assert len(server.response(1)["result"]["tools"]) == 11
    server.request(2, "tools/call", {"name": "ctx_index", "arguments": {"content": "# A\nb"}})
    result = server.response(2)["result"]
    assert not result["isError"] and result["content"][0]["text"].startswith("Indexed 1")
    body = json.loads(marker(data_root, proc.pid).read_text(encoding="utf-8"))
    assert (body["state"], Path(body["project_dir"])) == ("ready", project)

    server.request(3, "bogus/method")  # for the SDK, which cannot load
    gate.touch()
    assert proc.wait(EXIT_WITHIN_S) != 0
    assert "the test blocked this import" in (tmp_path / "server.stderr").read_text("utf-8")
    assert list((data_root / "servers").iterdir()) == []  # no marker, no temporary file

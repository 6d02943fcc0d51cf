"""Pi and Oh My Pi: the shim contract (`ctxmode.platforms.jsplugin`) and the extension shim
``pi_extension.js``, run by node against a fake ctxmode (hooks and ``serve``)."""

import json
import shutil
from pathlib import Path

import pytest

from ctxmode.hookevent import ALLOW, RECORD, HookDecision
from ctxmode.platforms import omp, pi
from ctxmode.setup.command import Command
from ctxmode.setup.jsplugins import baked

from .support import answer, fixture, run_shim


def _parse(module, fixture_id, **changes):
    return module.parse(fixture_id.split(".")[1], {**fixture(fixture_id), **changes}, {})


def test_tool_events_become_canonical_events():
    event = _parse(pi, "pi.tool_call.shell-curl")
    assert (event.platform, event.event, event.tool, event.session_id) == (
        "pi",
        "pre_tool",
        "Bash",
        "019b2f4e-6c1a-7d3e-8f20-5a9b7c1d2e3f",
    )
    assert event.command.startswith("curl -s https://api.github.com")
    assert str(event.project_dir) == "/home/dev/projects/acme-api"
    write = _parse(pi, "pi.tool_result.write")
    assert (write.event, write.tool, write.paths) == (
        "post_tool",
        "Write",
        ("/home/dev/projects/acme-api/src/acme/notes.md",),
    )
    failed = _parse(pi, "pi.tool_result.shell-failing-test")
    assert failed.event == "post_tool_failure" and "1 failed" in failed.error
    own = _parse(pi, "pi.tool_result.ctx-execute")
    assert (own.tool, own.mcp_tool) == ("ctx", "ctx_execute")
    assert _parse(pi, "pi.tool_call.shell-curl", tool_name="find").tool == "Glob"


def test_session_starts_by_source():
    assert _parse(pi, "pi.session_start.startup").source == "startup"
    assert _parse(pi, "pi.session_start.resume").source == "resume"
    assert _parse(pi, "pi.session_start.reload") is None
    compacted = _parse(pi, "pi.session_compact.after")
    assert (compacted.event, compacted.source) == ("session_start", "compact")
    assert _parse(pi, "pi.session_before_compact.manual").event == "pre_compact"
    prompt = _parse(pi, "pi.before_agent_start.prompt")
    assert (prompt.event, prompt.prompt) == (
        "prompt_submit",
        "Add email validation to create_user and run the tests",
    )


def test_omp_names_mcp_tools_and_skips_device_writes():
    own = _parse(omp, "omp.tool_result.mcp-ctx-execute")
    assert (own.tool, own.mcp_tool) == ("ctx", "ctx_execute")
    other = _parse(omp, "omp.tool_result.mcp-ctx-execute", tool_name="mcp__github_search_issues")
    assert (other.tool, other.mcp_server, other.mcp_tool) == ("mcp", "github", "search_issues")
    assert _parse(omp, "omp.tool_call.xd-device-write") is None
    assert _parse(omp, "omp.session_switch.resume").source == "resume"
    assert omp.mcp_name("mcp__ctxmode__odd") is None


def test_answers():
    event = _parse(pi, "pi.tool_call.shell-curl")
    assert answer(pi.render(event, HookDecision("deny", reason="r"))) == {
        "decision": "deny",
        "reason": "r",
    }
    assert answer(pi.render(event, HookDecision("ask", reason="sure?"))) == {
        "decision": "ask",
        "reason": "sure?",
    }
    out = answer(pi.render(event, HookDecision("modify", updated_input={"command": "echo x"})))
    assert out == {"decision": "modify", "updatedInput": {"command": "echo x"}}
    assert answer(pi.render(event, HookDecision("context", context="n"))) == {
        "decision": "context",
        "additionalContext": "n",
    }
    assert answer(pi.render(event, ALLOW)) == {"decision": "allow"}
    start = _parse(pi, "pi.session_start.startup")
    assert answer(pi.render(start, HookDecision("context", context="ROUTING"))) == {
        "decision": "context",
        "additionalContext": "ROUTING",
    }
    compact = _parse(pi, "pi.session_before_compact.manual")  # the shim ignores it
    assert answer(pi.render(compact, RECORD)) == {"decision": "context", "additionalContext": ""}
    assert answer(omp.noop("tool_call")) == {"decision": "allow"}


# -- the extension, run by node against a fake ctxmode ------------------------------------------

FAKE_CTXMODE = """\
import json, os, sys
log = open(os.environ["FAKE_LOG"], "a", encoding="utf-8")
if sys.argv[1] == "serve":
    log.write(json.dumps({"serve": os.getcwd()}) + "\\n")
    log.flush()
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg["method"]
        if method == "initialize":
            name = msg["params"]["clientInfo"]["name"]
            log.write(json.dumps({"client": name}) + "\\n")
            log.flush()
            result = {"capabilities": {"tools": {}}, "serverInfo": {"name": "ctxmode"}}
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"code": {"type": "string"}}}
            tool = {"name": "ctx_execute", "description": "run", "inputSchema": schema}
            result = {"tools": [tool]}
        elif method == "tools/call":
            code = msg["params"]["arguments"].get("code")
            result = {"content": [{"type": "text", "text": "45" if code else "no code"}],
                      "isError": not code}
        else:
            result = {}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    log.write(json.dumps({"serve": "exited"}) + "\\n")
    sys.exit(0)
event = sys.argv[3]
payload = json.load(sys.stdin)
log.write(json.dumps({"platform": sys.argv[2], "event": event, "payload": payload}) + "\\n")
command = str(payload.get("tool_input", {}).get("command", ""))
answers = {
    "session_start": {"decision": "context", "additionalContext": "ROUTING"},
    "session_compact": {"decision": "context", "additionalContext": "AFTER-COMPACT"},
    "tool_result": {"decision": "context", "additionalContext": "nudge"},
}
answer = answers.get(event, {"decision": "allow"})
if event == "tool_call" and "curl" in command:
    answer = {"decision": "deny", "reason": "use ctx_fetch_and_index"}
elif event == "tool_call" and "wget" in command:
    answer = {"decision": "modify", "updatedInput": {"command": "echo use ctx_execute"}}
elif event == "tool_call" and "rm" in command:
    answer = {"decision": "ask", "reason": "really?"}
elif event == "tool_call" and "grep" in command:
    answer = {"decision": "context", "additionalContext": "grep nudge"}
print(json.dumps(answer))
"""

HARNESS = """\
import { pathToFileURL } from "node:url";
const mod = await import(pathToFileURL(process.argv[2]).href);
const handlers = {}, tools = {}, sent = [];
const pi = {
  on: (name, fn) => { handlers[name] = fn; },
  registerTool: (tool) => { tools[tool.name] = tool; },
  sendMessage: (message) => { sent.push(message); },
};
mod.default(pi);
const entries = JSON.parse(process.argv[3]);
const ctx = {
  cwd: process.argv[4],
  hasUI: false,
  sessionManager: { getSessionId: () => "sess-1", getEntries: () => entries },
};
const out = { events: Object.keys(handlers).sort() };
await handlers.session_start({ reason: "startup" }, ctx);
out.start = await handlers.before_agent_start({ prompt: "do it" }, ctx);
out.tools = Object.keys(tools);
out.second = (await handlers.before_agent_start({ prompt: "again" }, ctx)) ?? null;
if (tools.ctx_execute) {
  out.run = await tools.ctx_execute.execute("call_0", { code: "print(45)" }, undefined);
  try { await tools.ctx_execute.execute("call_1", {}, undefined); out.failed = "no"; }
  catch (e) { out.failed = e.message; }
}
const call = (id, command) => ({ toolCallId: id, toolName: "bash", input: { command } });
out.curl = await handlers.tool_call(call("c1", "curl x"), ctx);
const wget = call("c2", "wget -qO- x");
out.wget = [await handlers.tool_call(wget, ctx), wget.input];
out.rm = await handlers.tool_call(call("c3", "rm -rf build"), ctx);
out.grep = (await handlers.tool_call(call("c4", "grep -r x"), ctx)) ?? null;
out.result = await handlers.tool_result(
  { toolCallId: "c4", toolName: "bash", input: { command: "grep -r x" },
    content: [{ type: "text", text: "hit" }], isError: false }, ctx);
out.compact = (await handlers.session_before_compact({}, ctx)) ?? null;
await handlers.session_compact({}, ctx);
out.sent = sent;
await handlers.session_shutdown({}, ctx);
console.log(JSON.stringify(out));
"""

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _installed(platform: str) -> str:
    """The extension as `ctxmode setup <platform>` writes it."""
    source, warnings = baked("pi_extension.js", Command(), {"PLATFORM": platform})
    assert source and not warnings
    return source


def _run(tmp_path: Path, source: str, entries: list[dict]) -> tuple[dict, list[dict]]:
    return run_shim(tmp_path, source, HARNESS, FAKE_CTXMODE, json.dumps(entries), str(tmp_path))


@needs_node
def test_pi_extension_bridges_the_server_and_applies_every_answer(tmp_path):
    out, log = _run(tmp_path, _installed("pi"), [])
    assert {"tool_call", "tool_result", "before_agent_start", "session_compact"} <= set(
        out["events"]
    )
    assert out["tools"] == ["ctx_execute"]
    assert out["start"] == {
        "message": {"customType": "ctxmode", "content": "ROUTING", "display": False}
    }
    assert out["second"] is None  # the session start is said once
    assert out["run"] == {"content": [{"type": "text", "text": "45"}], "details": {}}
    assert out["failed"] == "no code"
    assert out["curl"] == {"block": True, "reason": "use ctx_fetch_and_index"}
    assert out["wget"] == [
        {"input": {"command": "echo use ctx_execute"}},
        {"command": "echo use ctx_execute"},
    ]
    assert out["rm"] == {"block": True, "reason": "really?"}  # no UI to ask in
    assert out["grep"] is None
    assert out["result"] == {
        "content": [
            {"type": "text", "text": "hit"},
            {"type": "text", "text": "grep nudge\n\nnudge"},
        ]
    }
    assert out["compact"] is None
    assert out["sent"] == [{"customType": "ctxmode", "content": "AFTER-COMPACT", "display": False}]
    assert {"client": "pi-ctxmode"} in log
    assert log[0] == {"serve": str(tmp_path)}
    assert {"serve": "exited"} in log  # session_shutdown closed the server's stdin
    hooks = [x for x in log if "event" in x]
    events = [h["event"] for h in hooks]
    assert events[:4] == ["session_start", "before_agent_start", "before_agent_start", "tool_call"]
    assert hooks[0]["payload"] == {
        "hook_event_name": "session_start",
        "session_id": "sess-1",
        "cwd": str(tmp_path),
        "source": "startup",
    }
    result = next(h["payload"] for h in hooks if h["event"] == "tool_result")
    assert result["tool_response"] == "hit" and result["is_error"] is False


@needs_node
def test_omp_extension_uses_the_hosts_mcp_and_resumes(tmp_path):
    source = _installed("omp")
    history = [{"type": "message", "message": {"role": "user"}}]
    out, log = _run(tmp_path, source, history)
    assert out["tools"] == []  # OMP starts the server from its mcp.json
    assert not any("serve" in x for x in log)
    hooks = [x for x in log if "event" in x]
    assert hooks[0]["payload"]["source"] == "resume"  # a session opened with history
    assert {h["platform"] for h in hooks} == {"omp"}

"""OpenClaw: the shim contract (`ctxmode.platforms.jsplugin`) and the gateway plugin
``openclaw_plugin.js``, run by node against a fake ctxmode."""

import shutil

import pytest

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import openclaw
from ctxmode.setup.command import Command
from ctxmode.setup.jsplugins import baked

from .support import answer, fixture, run_shim


def _parse(fixture_id, **changes):
    return openclaw.parse(fixture_id.split(".")[1], {**fixture(fixture_id), **changes}, {})


def test_hooks_become_canonical_events():
    curl = _parse("openclaw.before_tool_call.shell-curl")
    assert (curl.event, curl.tool, curl.session_id) == (
        "pre_tool",
        "Bash",
        "5b2c8e41-9d7a-4f36-b0e2-7c41a9d3e58f",
    )
    own = _parse("openclaw.after_tool_call.mcp-ctx-execute")
    assert (own.event, own.tool, own.mcp_server, own.mcp_tool) == (
        "post_tool",
        "ctx",
        "ctxmode",
        "ctx_execute",
    )
    other = _parse("openclaw.after_tool_call.mcp-ctx-execute", tool_name="docs__read_docs")
    assert (other.tool, other.mcp_server, other.mcp_tool) == ("mcp", "docs", "read_docs")
    assert _parse("openclaw.after_tool_call.shell-failing-test").event == "post_tool_failure"
    assert _parse("openclaw.before_tool_call.tool-call-wrapper") is None
    assert _parse("openclaw.before_prompt_build.prompt").event == "prompt_submit"
    assert _parse("openclaw.before_compaction.manual").event == "pre_compact"
    after = _parse("openclaw.after_compaction.after")
    assert (after.event, after.source) == ("session_start", "compact")


def test_ask_is_an_approval_request_and_nudges_are_dropped():
    curl = _parse("openclaw.before_tool_call.shell-curl")
    assert answer(openclaw.render(curl, HookDecision("ask", reason="sure?"))) == {
        "decision": "ask",
        "reason": "sure?",
    }
    assert answer(openclaw.render(curl, HookDecision("context", context="nudge"))) == {
        "decision": "allow"
    }
    assert openclaw.HOST.system_routing


# -- the plugin, run by node against a fake ctxmode -------------------------------------------

FAKE_CTXMODE = """\
import json, os, sys
payload = json.load(sys.stdin)
event = sys.argv[3]
with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"event": event, "payload": payload}) + "\\n")
command = str(payload.get("tool_input", {}).get("command", ""))
answer = {"decision": "allow"}
if event == "session_start":
    answer = {"decision": "context", "additionalContext": "ROUTING " + payload["source"]}
elif event == "after_compaction":
    answer = {"decision": "context", "additionalContext": "AFTER-COMPACT"}
elif event == "before_tool_call" and "curl" in command:
    answer = {"decision": "deny", "reason": "use ctx_fetch_and_index"}
elif event == "before_tool_call" and "wget" in command:
    answer = {"decision": "modify", "updatedInput": {"command": "echo use ctx_execute"}}
elif event == "before_tool_call" and "rm" in command:
    answer = {"decision": "ask", "reason": "really?"}
print(json.dumps(answer))
"""

HARNESS = """\
import { pathToFileURL } from "node:url";
const plugin = (await import(pathToFileURL(process.argv[2]).href)).default;
const handlers = {};
plugin.register({ on: (name, fn) => { handlers[name] = fn; } });
const ctx = { sessionId: "s1", sessionKey: "agent:main:explicit:s1", workspaceDir: "/w" };
const out = { id: plugin.id, hooks: Object.keys(handlers).sort() };
out.first = await handlers.before_prompt_build({ prompt: "p", messages: [] }, ctx);
out.second = await handlers.before_prompt_build({ prompt: "q", messages: [1] }, ctx);
const other = { ...ctx, sessionId: "s2" };
out.resumed = await handlers.before_prompt_build({ prompt: "r", messages: [1, 2] }, other);
const tool = (command, toolName = "exec") => ({ toolName, toolCallId: "c", params: { command } });
out.curl = await handlers.before_tool_call(tool("curl x"), ctx);
out.wget = await handlers.before_tool_call(tool("wget -qO- x"), ctx);
out.rm = await handlers.before_tool_call(tool("rm -rf build"), ctx);
out.ls = (await handlers.before_tool_call(tool("ls"), ctx)) ?? null;
out.wrapper = (await handlers.before_tool_call(tool("curl x", "tool_call"), ctx)) ?? null;
await handlers.after_tool_call({ ...tool("false"), result: { content: [{ type: "text",
  text: "boom" }], details: { exitCode: 1 } } }, ctx);
await handlers.before_compaction({ messageCount: 3 }, ctx);
await handlers.after_compaction({ messageCount: 1, compactedCount: 2 }, ctx);
out.afterCompact = await handlers.before_prompt_build({ prompt: "s", messages: [1] }, ctx);
console.log(JSON.stringify(out));
"""

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@needs_node
def test_plugin_applies_every_answer(tmp_path):
    source, warnings = baked("openclaw_plugin.js", Command(), {})
    assert source and not warnings
    out, calls = run_shim(tmp_path, source, HARNESS, FAKE_CTXMODE)
    assert out["id"] == "ctxmode"
    assert {"before_tool_call", "after_tool_call", "before_prompt_build"} <= set(out["hooks"])
    # the start context goes into the system prompt of every turn of the session
    assert out["first"] == out["second"] == {"appendSystemContext": "ROUTING startup"}
    assert out["resumed"] == {"appendSystemContext": "ROUTING resume"}
    assert out["curl"] == {"block": True, "blockReason": "use ctx_fetch_and_index"}
    assert out["wget"] == {"params": {"command": "echo use ctx_execute"}}
    assert out["rm"] == {
        "requireApproval": {"title": "ctxmode", "description": "really?", "severity": "warning"}
    }
    assert out["ls"] is None and out["wrapper"] is None
    assert out["afterCompact"] == {"appendSystemContext": "AFTER-COMPACT"}
    events = [c["event"] for c in calls]
    assert events.count("session_start") == 2  # once per session in this process
    failed = next(c["payload"] for c in calls if c["event"] == "after_tool_call")
    assert failed["is_error"] is True and failed["tool_response"] == "boom"
    assert failed["cwd"] == "/w" and failed["session_id"] == "s1"

"""OpenCode: the synthetic shim contract and the JS plugin shim."""

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode.hookevent import ALLOW, RECORD, HookDecision
from ctxmode.platforms import opencode

from .support import answer, fixture

PLUGIN = Path(opencode.__file__).with_name("opencode_plugin.js")


def _parse(fixture_id, event=None, **changes):
    parsed = opencode.parse(
        event or fixture_id.split(".")[1], {**fixture(fixture_id), **changes}, {}
    )
    assert parsed is not None
    return parsed


def test_shim_payload_becomes_an_event():
    event = _parse("opencode.pretooluse.shell-curl")
    assert (event.event, event.tool, event.native_tool) == ("pre_tool", "Bash", "bash")
    assert event.session_id == "ses_5f2a9c1e7b3dFqK8mN2pR4sT6v"
    assert str(event.project_dir) == "/home/dev/projects/acme-api"


@pytest.mark.parametrize(
    ("name", "tool", "server", "leaf"),
    [("ctxmode_ctx_search", "ctx", "ctxmode", "ctx_search"),
     ("context-mode_ctx_execute", "ctx", "context-mode", "ctx_execute"),
     ("github_list_issues", "mcp", "github", "list_issues"),
     ("apply_patch", "Edit", None, None), ("webfetch", "WebFetch", None, None),
     ("todowrite", "Task", None, None), ("task", "Agent", None, None)],
)  # fmt: skip
def test_opencode_tool_names(name, tool, server, leaf):
    event = _parse("opencode.pretooluse.shell-curl", tool_name=name)
    assert (event.tool, event.mcp_server, event.mcp_tool) == (tool, server, leaf)


def test_opencode_hook_names_are_accepted_as_events():
    assert _parse("opencode.precompact.session-compacting").event == "pre_compact"
    assert _parse("opencode.pretooluse.shell-curl", "tool.execute.before").event == "pre_tool"


def test_non_zero_bash_exit_is_a_failure():
    event = _parse(
        "opencode.pretooluse.shell-curl", "posttooluse", output="boom", metadata={"exit": 1}
    )
    assert (event.event, event.error) == ("post_tool_failure", "boom")


def test_decisions():
    event = _parse("opencode.pretooluse.shell-curl")
    assert answer(opencode.render(event, HookDecision("deny", reason="r"))) == {
        "decision": "deny",
        "reason": "r",
    }
    out = answer(opencode.render(event, HookDecision("ask", reason="r")))
    assert out["decision"] == "deny"
    out = answer(opencode.render(event, HookDecision("modify", updated_input={"command": "echo"})))
    assert out == {
        "decision": "modify",
        "updatedInput": {"command": "echo", "description": "Check the latest OpenCode release"},
    }
    out = answer(opencode.render(event, HookDecision("context", context="n")))
    assert out == {"decision": "context", "additionalContext": "n"}
    assert answer(opencode.render(event, ALLOW)) == {"decision": "allow"}


def test_compaction_always_answers_context():
    event = _parse("opencode.precompact.session-compacting")
    assert answer(opencode.render(event, RECORD)) == {
        "decision": "context",
        "additionalContext": "",
    }
    out = answer(opencode.render(event, HookDecision("context", context="<snapshot/>")))
    assert out == {"decision": "context", "additionalContext": "<snapshot/>"}


def test_noop_allows():
    assert answer(opencode.noop("pretooluse")) == {"decision": "allow"}


# -- the JS shim, run by node against a fake ctxmode -------------------------------------------

FAKE_CTXMODE = """\
import json, os, sys
event = sys.argv[3]
payload = json.load(sys.stdin)
with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"event": event, "payload": payload}) + "\\n")
command = str(payload.get("tool_input", {}).get("command", ""))
if event == "pretooluse" and "curl" in command:
    answer = {"decision": "deny", "reason": "use ctx_fetch_and_index"}
elif event == "pretooluse" and "wget" in command:
    answer = {"decision": "modify", "updatedInput": {"command": "echo use ctx_execute"}}
elif event == "posttooluse":
    answer = {"decision": "context", "additionalContext": "nudge"}
elif event == "precompact":
    answer = {"decision": "context", "additionalContext": "<snapshot/>"}
elif event == "sessionstart":
    answer = {"decision": "context", "additionalContext": "ROUTING"}
else:
    answer = {"decision": "allow"}
print(json.dumps(answer))
"""

HARNESS = """\
import { pathToFileURL } from "node:url";
const mod = await import(pathToFileURL(process.argv[2]).href);
const exported = Object.keys(mod);
const hooks = await mod.CtxmodePlugin({ directory: "/home/dev/projects/acme-api" });
const out = { exported };
const s = { sessionID: "ses_1", callID: "call_1" };
try {
  await hooks["tool.execute.before"]({ ...s, tool: "bash" }, { args: { command: "curl x" } });
  out.curl = "passed";
} catch (e) { out.curl = "threw: " + e.message; }
const wget = { args: { command: "wget -qO- x", description: "d" } };
await hooks["tool.execute.before"]({ ...s, tool: "bash" }, wget);
out.wget = wget.args;
const ls = { args: { command: "ls" } };
await hooks["tool.execute.before"]({ ...s, tool: "bash" }, ls);
out.ls = ls.args;
const read = { title: "", output: "file text", metadata: {} };
await hooks["tool.execute.after"]({ ...s, tool: "read", args: { filePath: "a" } }, read);
out.read = read.output;
const bash = { title: "", output: "ok", metadata: { exit: 0 } };
await hooks["tool.execute.after"]({ ...s, tool: "bash", args: { command: "ls" } }, bash);
out.bash = bash.output;
const compacting = { context: [] };
await hooks["experimental.session.compacting"]({ sessionID: "ses_1" }, compacting);
out.compacting = compacting.context;
const first = { system: ["HEADER", "rest"] };
await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1" }, first);
const second = { system: ["HEADER", "ROUTING", "rest"] };
await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1" }, second);
out.system = [first.system, second.system];
await hooks["chat.message"]({ sessionID: "ses_1" },
  { message: {}, parts: [{ type: "text", text: "fix the bug" }] });
console.log(JSON.stringify(out));
"""

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _run_shim(tmp_path: Path, ctxmode_bin: str) -> dict:
    harness = tmp_path / "harness.mjs"
    harness.write_text(HARNESS, encoding="utf-8")
    env = {**os.environ, "CTXMODE_BIN": ctxmode_bin, "FAKE_LOG": str(tmp_path / "log.jsonl")}
    proc = subprocess.run(
        ["node", str(harness), str(PLUGIN)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout)


@needs_node
def test_shim_applies_every_answer(tmp_path):
    fake = tmp_path / "ctxmode"
    fake.write_text(f"#!{sys.executable}\n{FAKE_CTXMODE}", encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = _run_shim(tmp_path, str(fake))
    assert out["exported"] == ["CtxmodePlugin"]
    assert out["curl"] == "threw: use ctx_fetch_and_index"
    assert out["wget"] == {"command": "echo use ctx_execute", "description": "d"}
    assert out["ls"] == {"command": "ls"}
    assert out["read"] == "file text\n\nnudge"
    assert out["bash"] == "ok"
    assert out["compacting"] == ["<snapshot/>"]
    assert out["system"] == [["HEADER", "ROUTING", "rest"], ["HEADER", "ROUTING", "rest"]]
    calls = [
        json.loads(line)
        for line in (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    events = [c["event"] for c in calls]
    assert events.count("sessionstart") == 1
    before = calls[0]["payload"]
    assert before == {
        "hook_event_name": "tool.execute.before",
        "session_id": "ses_1",
        "cwd": "/home/dev/projects/acme-api",
        "call_id": "call_1",
        "tool_name": "bash",
        "tool_input": {"command": "curl x"},
    }
    prompt = next(c["payload"] for c in calls if c["event"] == "userpromptsubmit")
    assert prompt["prompt"] == "fix the bug"


@needs_node
def test_shim_lets_calls_through_when_ctxmode_is_missing(tmp_path):
    out = _run_shim(tmp_path, str(tmp_path / "no-such-ctxmode"))
    assert out["curl"] == "passed"
    assert out["wget"] == {"command": "wget -qO- x", "description": "d"}
    assert out["compacting"] == []
    assert out["system"][0] == ["HEADER", "rest"]


@needs_node
def test_shim_round_trips_through_the_real_hook(tmp_path):
    wrapper = tmp_path / "ctxmode"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ctxmode "$@"\n', encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    out = _run_shim(tmp_path, str(wrapper))
    assert out["ls"] == {"command": "ls"}  # a real answer, parsed and applied as allow


def test_shim_keeps_the_line_setup_bakes_the_command_into():
    # ctxmode setup --command replaces the "ctxmode" fallback in exactly this expression.
    assert 'process.env.CTXMODE_BIN || "ctxmode"' in PLUGIN.read_text(encoding="utf-8")

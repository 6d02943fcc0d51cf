"""What the real hosts showed, as regression tests through real `ctxmode hook` processes:
injection discipline (the routing block once per conversation, only where ctxmode's tools
exist), host-added context kept out of recorded prompts, Gemini's every-turn PreCompress,
URLs read from values rather than JSON text, and the MCP work in the resume snapshot."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxmode import readiness

TAG = "<context_window_protection>"


class Host:
    """A fake machine for one host: HOME, a project, ctxmode's data root."""

    def __init__(self, tmp: Path, platform: str) -> None:
        self.platform = platform
        self.home = tmp / "home"
        self.project = tmp / "proj"
        self.data = tmp / "data"
        for d in (self.home, self.project, self.data):
            d.mkdir(exist_ok=True)

    def env(self) -> dict[str, str]:
        keep = ("PATH", "LANG", "SYSTEMROOT")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(HOME=str(self.home), CTXMODE_DIR=str(self.data))
        return env

    def hook(self, event: str, payload: dict[str, Any]) -> str:
        payload = {"cwd": str(self.project), **payload}
        done = subprocess.run(
            [sys.executable, "-m", "ctxmode", "hook", self.platform, event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def context(self, event: str, payload: dict[str, Any]) -> str:
        out = self.hook(event, payload)
        if not out.strip():
            return ""
        return json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", "")

    def events(self, session: str) -> list[dict[str, Any]]:
        done = subprocess.run(
            [sys.executable, "-m", "ctxmode", "session", "events", "--session", session,
             "--json", "--project", str(self.project)],
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=60,
            check=True,
        )  # fmt: skip
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    def register_mcp(self) -> None:
        servers = {"mcpServers": {"ctxmode": {"command": "ctxmode", "args": ["serve"]}}}
        (self.project / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")


@pytest.fixture
def claude(tmp_path) -> Host:
    host = Host(tmp_path, "claude-code")
    host.register_mcp()
    return host


def start(host: Host, source: str, session: str = "s-1", **extra: Any) -> str:
    payload = {"hook_event_name": "SessionStart", "session_id": session, "source": source}
    return host.context("sessionstart", {**payload, **extra})


# -- the routing block: once per conversation ------------------------------------------


def test_routing_block_once_per_conversation_again_after_a_real_compaction(claude):
    assert TAG in start(claude, "startup")
    assert TAG not in start(claude, "resume"), "a resumed conversation still holds it"
    assert TAG in start(claude, "compact"), "a compacted context lost it"
    assert TAG not in start(claude, "resume")
    assert TAG in start(claude, "clear")


def test_a_resume_under_a_new_id_checks_the_transcript(claude, tmp_path):
    held = tmp_path / "held.jsonl"
    held.write_text(json.dumps({"content": f"{TAG}\nTool output…"}) + "\n", encoding="utf-8")
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text('{"content": "hello"}\n', encoding="utf-8")
    assert TAG not in start(claude, "resume", "s-2", transcript_path=str(held))
    assert TAG in start(claude, "resume", "s-3", transcript_path=str(fresh))


def test_no_tool_names_where_no_ctxmode_server_is_registered(tmp_path):
    host = Host(tmp_path, "claude-code")  # no .mcp.json
    other = {"projects": {"/elsewhere": {"mcpServers": {"ctxmode": {"command": "ctxmode"}}}}}
    (host.home / ".claude.json").write_text(json.dumps(other), encoding="utf-8")
    assert start(host, "startup") == ""
    read = {"hook_event_name": "PreToolUse", "session_id": "s-1", "tool_name": "Grep"}
    assert "ctx_" not in host.hook("pretooluse", {**read, "tool_input": {"pattern": "x"}})
    mine = {"projects": {str(host.project): {"mcpServers": {"ctxmode": {"command": "x"}}}}}
    (host.home / ".claude.json").write_text(json.dumps(mine), encoding="utf-8")
    assert TAG in start(host, "startup", "s-2")


def test_a_curl_is_not_redirected_to_a_server_this_host_cannot_call(tmp_path):
    host = Host(tmp_path, "claude-code")
    (host.home / ".claude.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    other = tmp_path / "other-project"
    other.mkdir()
    marker = readiness.write_marker(host.data, other)  # a server, for another project
    try:
        payload = {
            "hook_event_name": "PreToolUse",
            "session_id": "s-1",
            "tool_name": "Bash",
            "tool_input": {"command": "curl https://example.com/page"},
        }
        assert host.hook("pretooluse", payload).strip() == ""
        host.register_mcp()
        assert "redirected to ctx_fetch_and_index" in host.hook("pretooluse", payload)
    finally:
        readiness.remove_marker(marker)


# -- what gets recorded -------------------------------------------------------------------


def test_gemini_prompt_is_recorded_without_the_hook_context_it_carries(tmp_path):
    host = Host(tmp_path, "gemini-cli")
    prompt = "<hook_context>&lt;context_window_protection&gt;…</hook_context>\n\ndo the task"
    host.hook(
        "BeforeAgent", {"hook_event_name": "BeforeAgent", "session_id": "g", "prompt": prompt}
    )
    prompts = [e["data"] for e in host.events("g") if e["type"] == "user_prompt"]
    assert prompts == ["do the task"]


def test_urls_from_a_quoted_curl_are_recorded_once_and_clean(claude):
    url = "http://docs.example:8080/curl-target"
    claude.hook(
        "posttooluse",
        {
            "hook_event_name": "PostToolUse",
            "session_id": "u",
            "tool_name": "Bash",
            "tool_input": {"command": f'curl -s "{url}" && echo "see {url}"'},
            "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False},
        },
    )
    refs = [e["data"] for e in claude.events("u") if e["type"] == "external_ref"]
    assert refs == [url]


# -- Gemini's every-turn PreCompress ------------------------------------------------------


def _gemini_turn(host: Host, session: str) -> str:
    prompt = {"hook_event_name": "BeforeAgent", "session_id": session, "prompt": "go"}
    out = host.hook("BeforeAgent", prompt)
    return out + host.hook(
        "AfterTool",
        {
            "hook_event_name": "AfterTool",
            "session_id": session,
            "tool_name": "write_file",
            "tool_input": {"file_path": str(host.project / "notes.txt"), "content": "x"},
            "tool_response": {"llmContent": "ok"},
        },
    )


def test_gemini_auto_precompress_is_not_a_compaction(tmp_path):
    host = Host(tmp_path, "gemini-cli")
    _gemini_turn(host, "g")
    for _ in range(3):
        host.hook(
            "PreCompress", {"hook_event_name": "PreCompress", "session_id": "g", "trigger": "auto"}
        )
        assert "<session_resume" not in _gemini_turn(host, "g")
    types = [e["type"] for e in host.events("g")]
    assert "compaction_summary" not in types
    host.hook(
        "PreCompress", {"hook_event_name": "PreCompress", "session_id": "g", "trigger": "manual"}
    )
    assert "<session_resume" in _gemini_turn(host, "g"), "a real /compress is restored"
    assert "<session_resume" not in _gemini_turn(host, "g"), "and only once"


# -- the snapshot names what was indexed ---------------------------------------------------


def test_the_resume_snapshot_names_what_the_session_indexed(claude):
    claude.hook(
        "userpromptsubmit",
        {"hook_event_name": "UserPromptSubmit", "session_id": "m", "prompt": "research"},
    )
    claude.hook(
        "posttooluse",
        {
            "hook_event_name": "PostToolUse",
            "session_id": "m",
            "tool_name": "mcp__ctxmode__ctx_fetch_and_index",
            "tool_input": {"url": "https://docs.example/guide", "source": "guide"},
            "tool_response": [{"type": "text", "text": "Fetched and indexed 3 sections"}],
        },
    )
    snapshot = start(claude, "resume", "m")
    assert "<indexed" in snapshot and "guide (https://docs.example/guide)" in snapshot

"""Kimi Code: Claude's snake_case payload, deny-only PreToolUse, the prompt's `message`."""

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import kimi

from .support import answer, fixture, silent


def _parse(fixture_id, event=None, **changes):
    payload = {**fixture(fixture_id), **changes}
    parsed = kimi.parse(event or fixture_id.split(".")[1], payload, {})
    assert parsed is not None
    return parsed


def test_payload_and_tool_names():
    event = _parse("kimi.pretooluse.shell-curl")
    assert (event.tool, event.session_id) == ("Bash", "session_491b2c7e0f5d4a3b")
    assert str(event.project_dir) == "/home/dev/projects/acme-api"
    fetch = _parse("kimi.pretooluse.shell-curl", tool_name="FetchURL", tool_input={"url": "x"})
    assert fetch.tool == "WebFetch"
    own = _parse("kimi.pretooluse.mcp-own-ctx-execute")
    assert (own.tool, own.mcp_server, own.mcp_tool) == ("ctx", "ctxmode", "ctx_execute")


def test_prompt_as_content_parts_and_failures():
    prompt = _parse("kimi.userpromptsubmit.content-parts")
    assert prompt.prompt == "Add email validation to the user endpoint"
    failed = _parse("kimi.posttoolusefailure.shell-failing-test")
    assert failed.event == "post_tool_failure"
    assert failed.error and "test_create_user_rejects_bad_email" in failed.error
    assert _parse("kimi.posttooluse.write").tool_response == "Wrote 30 bytes to notes.txt"


def test_only_a_deny_leaves_pre_tool_use():
    event = _parse("kimi.pretooluse.shell-curl")
    redirect = HookDecision("modify", reason="use ctx", updated_input={"command": "echo use ctx"})
    out = answer(kimi.render(event, redirect))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "use ctx"
    asked = answer(kimi.render(event, HookDecision("ask", reason="sure?")))
    assert asked["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert silent(kimi.render(event, HookDecision("context", context="tip")))
    assert silent(kimi.render(event, HookDecision()))


def test_context_rides_on_the_prompt_only():
    prompt = _parse("kimi.userpromptsubmit.content-parts")
    assert answer(kimi.render(prompt, HookDecision("context", context="snap"))) == {
        "message": "snap"
    }
    post = _parse("kimi.posttooluse.write")
    assert silent(kimi.render(post, HookDecision("context", context="snap")))
    assert silent(kimi.noop("pretooluse"))


def test_a_pending_snapshot_waits_for_the_prompt(tmp_path, monkeypatch):
    """Kimi drops PostToolUse answers: a snapshot taken there would be lost."""
    from session.support import bash, hook_event, open_db

    from ctxmode.hooks import capture

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CTXMODE_INJECT", raising=False)
    with open_db() as sdb:
        sdb.upsert_resume("s1", "<session_resume/>", 3)
    assert capture.handle(bash("ls", platform="kimi")).kind == "record"
    prompt = hook_event(platform="kimi", event="prompt_submit", prompt="go on")
    decision = capture.handle(prompt)
    assert decision.kind == "context" and "<session_resume/>" in (decision.context or "")

"""JetBrains Copilot on the GitHub Copilot runtime."""

import json
from pathlib import Path

import pytest

from ctxmode.hookevent import HookDecision
from ctxmode.platforms import jetbrains_copilot

from .support import answer, fixture, fixture_env, silent

ENV = fixture_env("jetbrains-copilot.pretooluse.shell-curl")
CAMEL = "jetbrains-copilot.pretooluse.shell-wget-camelcase"


def _parse(fixture_id, event=None, env=None, **changes):
    payload = {**fixture(fixture_id), **changes}
    parsed = jetbrains_copilot.parse(event or fixture_id.split(".")[1], payload, env or ENV)
    assert parsed is not None
    return parsed


def test_pascal_case_payload_uses_claude_tool_names():
    event = _parse("jetbrains-copilot.pretooluse.shell-curl")
    assert (event.event, event.tool) == ("pre_tool", "Bash")
    assert event.session_id == "5e7d9c1b-2a3f-4b6c-8d0e-1f2a3b4c5d6e"
    assert event.project_dir == Path("/home/dev/IdeaProjects/acme-api")


def test_camel_case_payload_with_json_string_args():
    event = _parse(CAMEL)
    assert (event.tool, event.native_tool) == ("Bash", "bash")
    assert event.tool_input["command"].startswith("wget -qO-")
    assert event.session_id == "5e7d9c1b-2a3f-4b6c-8d0e-1f2a3b4c5d6e"


@pytest.mark.parametrize(
    ("args", "expected"),
    [({"command": "ls"}, {"command": "ls"}), ("not json", {}), ("[1]", {}), (None, {})],
)
def test_tool_args_as_object_or_string(args, expected):
    assert _parse(CAMEL, toolArgs=args).tool_input == expected


def test_project_dir_from_the_ide_when_the_payload_has_no_cwd():
    payload = fixture(CAMEL)
    del payload["cwd"]
    event = jetbrains_copilot.parse("pretooluse", payload, ENV)
    assert event is not None and event.project_dir == Path("/home/dev/IdeaProjects/acme-api")


def test_failed_tool_results_are_failures():
    result = {"result_type": "failure", "text_result_for_llm": "patch did not apply"}
    event = _parse("jetbrains-copilot.posttooluse.edit", tool_result=result)
    assert (event.event, event.error) == ("post_tool_failure", "patch did not apply")
    assert _parse("jetbrains-copilot.posttooluse.edit").event == "post_tool"
    failed = _parse(
        "jetbrains-copilot.posttooluse.edit", "posttoolusefailure", error={"message": "boom"}
    )
    assert (failed.event, failed.error) == ("post_tool_failure", "boom")


def test_redirect_is_a_flat_deny():
    event = _parse(CAMEL)
    redirect = "use ctx_fetch_and_index(url) instead"
    decision = HookDecision("modify", updated_input={"command": f"echo '{redirect}'"})
    out = answer(jetbrains_copilot.render(event, decision))
    assert (out["permissionDecision"], out["permissionDecisionReason"]) == ("deny", redirect)
    assert "modifiedArgs" not in out
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_subagent_prompt_rewrite_is_modified_args():
    event = _parse(
        "jetbrains-copilot.pretooluse.shell-curl",
        tool_name="Agent",
        tool_input={"prompt": "p", "description": "d"},
    )
    decision = HookDecision("modify", updated_input={"prompt": "p + block"})
    out = answer(jetbrains_copilot.render(event, decision))
    assert out["permissionDecision"] == "allow"
    assert out["modifiedArgs"] == {"prompt": "p + block", "description": "d"}


def test_session_start_context_is_flat_and_nested():
    event = _parse("jetbrains-copilot.sessionstart.startup")
    assert event.source == "startup"
    out = answer(jetbrains_copilot.render(event, HookDecision("context", context="c")))
    assert out["additionalContext"] == out["hookSpecificOutput"]["additionalContext"] == "c"


def test_every_answer_exits_0():
    event = _parse("jetbrains-copilot.pretooluse.shell-safe")
    for decision in (HookDecision("deny", reason="r"), HookDecision("ask", reason="r")):
        assert jetbrains_copilot.render(event, decision).exit_code == 0
    assert silent(jetbrains_copilot.noop("pretooluse"))
    assert json.loads(jetbrains_copilot.render(event, HookDecision("ask", reason="r")).stdout or "")

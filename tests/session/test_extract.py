"""Event extraction (ctxmode.session.extract): tool calls of every host shape, prompts in
any language, turn ends."""

import json

import pytest

from ctxmode.session.extract import (
    is_error,
    is_rule_file,
    prompt_events,
    response_text,
    stop_events,
    tool_events,
)

from .support import bash, hook_event


def _pairs(events):
    return [(e.type, e.data) for e in events]


def _types(events):
    return [e.type for e in events]


# --------------------------------------------------------------------------- files (59)


def test_edit_write_and_read_become_file_events():
    edit = hook_event(tool="Edit", tool_input={"file_path": "/p/a.py", "old_string": "x"})
    write = hook_event(tool="Write", tool_input={"file_path": "/p/new.py", "content": "x"})
    read = hook_event(tool="Read", tool_input={"file_path": "/p/b.py"}, tool_response="text")
    assert _pairs(tool_events(edit)) == [("file_edit", "/p/a.py")]
    assert _pairs(tool_events(write)) == [("file_write", "/p/new.py")]
    assert _pairs(tool_events(read)) == [("file_read", "/p/b.py")]


def test_reading_claude_md_yields_rule_rule_content_and_file_read():
    event = hook_event(
        tool="Read",
        tool_input={"file_path": "/p/CLAUDE.md"},
        tool_response={"type": "text", "file": {"filePath": "/p/CLAUDE.md", "content": "# Rules"}},
    )
    assert _pairs(tool_events(event)) == [
        ("rule", "/p/CLAUDE.md"),
        ("rule_content", "# Rules"),
        ("file_read", "/p/CLAUDE.md"),
    ]


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        # VS Code replace_string_in_file, JetBrains Edit, Gemini replace (adapters: Edit)
        ("Edit", {"filePath": "/p/users.py", "oldString": "a", "newString": "b"}, "file_edit"),
        ("Edit", {"path": "/p/UserService.java", "old_str": "a", "new_str": "b"}, "file_edit"),
        # Kiro fs_write: str_replace edits, create writes (even if an adapter says Write)
        ("Write", {"command": "str_replace", "path": "/p/users.py", "old_str": "a"}, "file_edit"),
        ("Write", {"command": "create", "path": "/p/new.py", "file_text": "x"}, "file_write"),
        ("NotebookEdit", {"notebook_path": "/p/n.ipynb", "new_source": "x"}, "file_edit"),
    ],
)
def test_host_specific_edit_inputs_are_normalised(tool, tool_input, expected):
    path = next(v for k, v in tool_input.items() if "path" in k.lower())
    assert _pairs(tool_events(hook_event(tool=tool, tool_input=tool_input))) == [(expected, path)]


def test_apply_patch_targets_become_edits_and_writes():
    patch = (
        "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: src/new.py\n+z\n"
        "*** Delete File: src/old.py\n*** End Patch\n"
    )
    event = hook_event(tool="Edit", native_tool="apply_patch", tool_input={"command": patch})
    assert _pairs(tool_events(event)) == [
        ("file_edit", "src/a.py"),
        ("file_write", "src/new.py"),
        ("file_edit", "src/old.py"),
    ]


def test_a_failed_apply_patch_records_only_the_error():
    patch = "*** Begin Patch\n*** Update File: src/a.py\n*** End Patch\n"
    event = hook_event(
        "post_tool_failure", tool="Edit", tool_input={"patch": patch}, error="hunk failed"
    )
    assert _types(tool_events(event)) == ["error_tool"]


def test_glob_and_grep_record_their_patterns():
    glob = hook_event(tool="Glob", tool_input={"pattern": "**/*.py"})
    grep = hook_event(tool="Grep", tool_input={"pattern": "def main", "path": "src"})
    assert _pairs(tool_events(glob)) == [("file_glob", "**/*.py")]
    assert _pairs(tool_events(grep)) == [("file_search", "def main in src")]


def test_a_plan_file_write_is_also_a_plan_event():
    event = hook_event(tool="Write", tool_input={"file_path": "/h/.claude/plans/auth.md"})
    assert ("plan_file_write", "plan file: auth.md") in _pairs(tool_events(event))


# --------------------------------------------------------------------------- shell (59)


def test_cd_to_a_quoted_directory_records_the_cwd():
    assert ("cwd", "/p/my dir") in _pairs(tool_events(bash('cd "/p/my dir" && ls')))


def test_git_commit_records_the_operation_and_its_message():
    events = tool_events(bash('git commit -m "fix(users): validate email"'))
    assert _pairs(events) == [("git", "commit: fix(users): validate email")]


def test_several_git_operations_in_one_command_are_each_recorded():
    events = tool_events(bash("git add -A && git commit -am wip && git push origin main"))
    assert [d.split(":")[0] for t, d in _pairs(events) if t == "git"] == ["add", "commit", "push"]


def test_read_only_git_commands_are_recorded_as_unimportant():
    (event,) = tool_events(bash("git status --short"))
    assert (event.type, event.data) == ("git", "status")
    assert event.priority == 4


def test_export_of_a_secret_is_stored_masked():
    events = tool_events(bash("export TOKEN=secret && npm install"))
    assert ("env", "export TOKEN=*** && npm install") in _pairs(events)
    assert "secret" not in json.dumps(_pairs(events))


@pytest.mark.parametrize(
    "response",
    [
        {"stdout": "", "stderr": "boom", "exit_code": 2},
        {"is_error": True, "stdout": "boom"},
        "Exit code: 1\nWall time: 2.3 seconds\nOutput:\nboom",  # Codex
    ],
)
def test_a_failed_shell_command_is_an_error(response):
    event = bash("pytest -q", response)
    assert is_error(event)
    error = next(e for e in tool_events(event) if e.type == "error_tool")
    assert error.data.startswith("$ pytest -q\n")


@pytest.mark.parametrize(
    "response",
    [
        {"llmContent": "Output: done\nError: (none)\nExit Code: 0", "returnDisplay": "done"},
        {"stdout": "1 failed? no: 0 failed, error: none", "stderr": ""},
        "[main 3e9a1f2] fix exit code 1 handling",
    ],
)
def test_a_successful_shell_command_is_not_an_error(response):
    assert not is_error(bash("make", response))


def test_post_tool_failure_records_the_error_text_with_the_command():
    event = hook_event(
        "post_tool_failure",
        tool="Bash",
        tool_input={"command": "pytest tests/test_users.py -q"},
        error="Exit code 1\nFAILED tests/test_users.py::test_create_user_rejects_bad_email",
    )
    (error,) = [e for e in tool_events(event) if e.type == "error_tool"]
    assert "test_create_user_rejects_bad_email" in error.data
    assert error.data.startswith("$ pytest tests/test_users.py -q")


def test_a_huge_error_keeps_its_head_and_tail():
    output = "START\n" + "noise line\n" * 5000 + "FAILED test_x - assert 1 == 2\n"
    (error,) = [
        e for e in tool_events(bash("pytest", output + "Exit code: 1")) if e.type == "error_tool"
    ]
    assert "START" in error.data and "FAILED test_x" in error.data
    assert len(error.data) < 5000


# --------------------------------------------------------------------------- tasks, agents


def test_task_tools_record_their_input_as_json():
    update = hook_event(
        tool="Task", native_tool="TaskUpdate", tool_input={"taskId": "2", "status": "completed"}
    )
    create = hook_event(
        tool="Task",
        native_tool="TaskCreate",
        tool_input={"subject": "Write tests"},
        tool_response={"task": {"id": "7"}},
    )
    todo = hook_event(
        tool="Task", native_tool="TodoWrite", tool_input={"todos": [{"content": "a"}]}
    )
    assert _pairs(tool_events(update)) == [
        ("task_update", '{"taskId": "2", "status": "completed"}')
    ]
    assert json.loads(tool_events(create)[0].data) == {"subject": "Write tests", "taskId": "7"}
    assert tool_events(todo)[0].type == "task"


def test_a_sub_agent_with_a_response_is_completed_with_its_finding():
    event = hook_event(
        tool="Agent",
        tool_input={"description": "find the bug", "prompt": "long prompt"},
        tool_response=[{"type": "text", "text": "The bug is in auth.py"}],
    )
    assert _pairs(tool_events(event)) == [
        ("subagent_completed", "[completed] find the bug → The bug is in auth.py"),
        ("agent_finding", "The bug is in auth.py"),
    ]


def test_a_launched_sub_agent_without_response():
    event = hook_event(tool="Agent", tool_input={"prompt": "explore"}, tool_response=None)
    assert _pairs(tool_events(event)) == [("subagent_launched", "[launched] explore")]


# --------------------------------------------------------------------------- questions (60)


def test_ask_user_question_answers_come_from_the_json_response_multi_select_joined():
    question = "Which databases should we support?"
    event = hook_event(
        tool="AskUserQuestion",
        tool_input={"questions": [{"question": question, "options": [{"label": "x"}]}]},
        tool_response=json.dumps(
            {
                "questions": [{"question": question, "options": [{"label": "huge echo"}]}],
                "answers": {question: ["SQLite", "Postgres"]},
            }
        ),
    )
    assert _pairs(tool_events(event)) == [
        ("decision_question", f"Q: {question} → A: SQLite | Postgres")
    ]


def test_ask_user_question_without_parseable_answers_records_nothing():
    event = hook_event(
        tool="AskUserQuestion",
        tool_input={"questions": [{"question": "Q?"}]},
        tool_response="User answered in the UI",
    )
    assert tool_events(event) == []


# --------------------------------------------------------------------------- MCP (59)


def test_external_mcp_calls_keep_the_full_response_and_redacted_params():
    response = "line\n" * 1000
    event = hook_event(
        tool="mcp",
        native_tool="mcp__github__search_issues",
        mcp_server="github",
        mcp_tool="search_issues",
        tool_input={"query": "bug", "api_key": "k-12345"},
        tool_response=response,
    )
    events = {e.type: e for e in tool_events(event)}
    assert events["mcp"].data == f"search_issues: bug\nresponse: {response}"
    call = json.loads(events["mcp_tool_call"].data)
    assert call == {
        "tool_name": "mcp__github__search_issues",
        "params": {"query": "bug", "api_key": "[REDACTED]"},
    }


def test_mcp_params_over_2_kb_are_cut_utf8_safely():
    event = hook_event(
        tool="mcp",
        native_tool="mcp__notes__save",
        mcp_tool="save",
        tool_input={"text": "日本語" * 2000},
        tool_response="ok",
    )
    call = json.loads(next(e for e in tool_events(event) if e.type == "mcp_tool_call").data)
    assert call["truncated"] is True
    assert len(call["params_raw"].encode("utf-8")) <= 2048
    assert "\ufffd" not in call["params_raw"]


def test_own_ctx_tools_record_the_call_but_not_the_response():
    event = hook_event(
        tool="ctx",
        native_tool="mcp__ctxmode__ctx_search",
        mcp_tool="ctx_search",
        tool_input={"queries": ["x"], "source": "docs"},
        tool_response="lots of search output",
    )
    assert _pairs(tool_events(event)) == [("mcp", "ctx_search: docs")]


def test_unknown_tools_produce_no_events():
    assert tool_events(hook_event(tool="other", native_tool="Mystery", tool_input={})) == []
    assert tool_events(hook_event(tool=None, tool_input={})) == []


def test_urls_and_issue_refs_become_an_external_ref():
    event = bash(
        "gh issue view #413 && open https://example.com/docs).", "see https://localhost:3000"
    )
    (ref,) = [e for e in tool_events(event) if e.type == "external_ref"]
    assert ref.data == "https://example.com/docs, #413"


def test_plan_mode_and_skills():
    approve = hook_event(
        tool="other", native_tool="ExitPlanMode", tool_input={}, tool_response="User has approved"
    )
    skill = hook_event(tool="other", native_tool="Skill", tool_input={"skill": "pdf"})
    assert _types(tool_events(approve)) == ["plan_exit", "plan_approved"]
    assert _pairs(tool_events(skill)) == [("skill", "pdf")]


def test_missing_fields_never_raise():
    for event in ("post_tool", "post_tool_failure"):
        for tool in ("Bash", "Read", "Edit", "Write", "Task", "Agent", "AskUserQuestion", "mcp"):
            tool_events(hook_event(event, tool=tool, tool_input={}, tool_response=None))


def test_response_text_of_every_shape():
    assert response_text(None) == ""
    assert response_text({"stdout": "out", "stderr": "err"}) == "out\nerr"
    assert response_text({"content": [{"type": "text", "text": "a"}]}) == "a"
    assert response_text({"llmContent": "gemini"}) == "gemini"
    assert response_text({"text_result_for_llm": "copilot"}) == "copilot"
    assert json.loads(response_text({"success": True})) == {"success": True}


# --------------------------------------------------------------------------- prompts


def test_a_prompt_is_stored_verbatim():
    prompt = "  Refactor   the auth module.\n\nKeep the public API, add tests.  "
    events = prompt_events(prompt)
    assert events[0].type == "user_prompt"
    assert events[0].data == prompt.strip()


@pytest.mark.parametrize(
    "prompt",
    [
        "请修复登录页面的错误，并且保持现有的接口不变",
        "ログイン画面のバグを直して、既存のAPIは変えないでください",
        "로그인 페이지 버그를 고쳐 주세요, 기존 API는 유지하고",
    ],
)
def test_cjk_prompts_are_stored_verbatim_and_yield_constraints(prompt):
    events = prompt_events(prompt)
    assert ("user_prompt", prompt) in _pairs(events)
    assert ("user_constraint", prompt) in _pairs(events)
    assert ("intent", "implement") in _pairs(events)


def test_a_cjk_question_is_an_investigation_not_a_decision():
    events = prompt_events("为什么测试在 CI 上失败？")
    assert ("intent", "investigate") in _pairs(events)
    assert "decision" not in _types(events)


def test_a_goal_is_kept_verbatim():
    events = prompt_events("/goal 把所有接口迁移到 v2，保持向后兼容")
    assert ("goal", "把所有接口迁移到 v2，保持向后兼容") in _pairs(events)


@pytest.mark.parametrize(
    "prompt",
    ["<system-reminder>x</system-reminder>", "<task-notification>done", "", "   "],
)
def test_system_injected_and_empty_prompts_are_ignored(prompt):
    assert prompt_events(prompt) == []


def test_blockers_and_their_resolution():
    assert "blocker" in _types(prompt_events("Traceback (most recent call last): boom"))
    assert "blocker_resolved" in _types(prompt_events("fixed: the import error ✅"))


def test_secrets_in_prompts_are_masked():
    (prompt, *_) = prompt_events("deploy with API_KEY=abc123secret please")
    assert prompt.data == "deploy with API_KEY=*** please"


# --------------------------------------------------------------------------- stop


def test_stop_records_the_turn_end_with_its_status():
    cursor = hook_event("stop", raw={"status": "completed", "loop_count": 0})
    codex = hook_event("stop", raw={"stop_hook_active": False, "last_assistant_message": "Done."})
    assert _pairs(stop_events(cursor)) == [("turn_end", "turn ended (completed)")]
    assert _pairs(stop_events(codex)) == [("turn_end", "turn ended\nDone.")]


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("/home/dev/.qwen/QWEN.md", True),
        ("/p/.github/copilot-instructions.md", True),
        ("C:\\repo\\AGENTS.override.md", True),
        ("/p/.claude/agents/reviewer.md", True),
        ("/p/docs/notes.md", False),
        ("/p/claude.md.bak", False),
    ],
)
def test_rule_files_are_every_platforms_memory_files_and_the_known_others(path, rule):
    assert is_rule_file(path) is rule

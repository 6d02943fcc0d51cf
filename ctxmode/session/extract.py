"""Turn one hook call into the events worth remembering.

Works on the adapters' canonical tool names (`ctxmode.hookevent`) and tolerates every
host's input shapes: ``file_path`` / ``filePath`` / ``path``, Codex ``apply_patch`` text,
Kiro ``fs_write`` commands, responses as text, objects or MCP content lists. Everything
returned has been redacted (`ctxmode.session.redact`). Missing fields give fewer events,
never an error.

Prompt rules are language-independent (code-point lengths, punctuation classes of several
scripts), so Chinese, Japanese or Arabic prompts yield the same events as English ones;
prompts, goals and decisions are kept verbatim. A user constraint is a sentence that says
what must not, must only or must always be done: its markers are listed for the languages
agents are prompted in, matched as whole words where words are written apart and anywhere
in scripts written without spaces (Chinese, Japanese, Korean endings, Thai, Hindi).

A failed check (a shell command, or a tool on a path) is remembered by `check_key`; the
same check passing later (the same command, or one that covers it: ``pytest`` after
``pytest tests/test_x.py``) resolves it (`covers`), so the snapshot can say "failed, then
fixed" or "still failing".
"""

import json
import ntpath
import posixpath
import re
from collections.abc import Iterable

from ctxmode.hookevent import HookEvent
from ctxmode.lazyre import LazyPattern
from ctxmode.platforms.normalise import urls_in
from ctxmode.session.events import LOW, Event
from ctxmode.session.redact import mask_exports, redact_text, redact_value
from ctxmode.typenames import Any

ERROR_CHARS = 4000
FINDING_CHARS = 500
MCP_PARAMS_BYTES = 2048
MAX_REFS = 10
REF_SCAN_CHARS = 8192

_EDIT_COMMANDS = frozenset({"str_replace", "insert", "append", "edit", "replace", "patch"})
# Instruction files beyond the hosts' memory files (their descriptors name those): Kiro
# steering, Cursor rules, anything under .claude/, agents' memory folders.
_OTHER_RULE_FILE = LazyPattern(
    r"(?i)(?:kiro\.md|/context-mode\.mdc)$|/\.claude/|/memor(?:y|ies)/[^/]+\.md$"
)
_MEMORY_NAMES: list[frozenset[str]] = []


def is_rule_file(path: str) -> bool:
    """A file a host loads as instructions: a platform's memory file (``CLAUDE.md``,
    ``AGENTS.md``, ...), or one of `_OTHER_RULE_FILE`."""
    norm = path.replace("\\", "/")
    if not _MEMORY_NAMES:
        from ctxmode.platforms import descriptors

        names = {t.rsplit("/", 1)[-1].lower() for h in descriptors() for t in h.memory_files}
        _MEMORY_NAMES.append(frozenset(names))
    return norm.rsplit("/", 1)[-1].lower() in _MEMORY_NAMES[0] or bool(
        _OTHER_RULE_FILE.search(norm)
    )


_EXIT_CODE = LazyPattern(
    r"(?im)^\W{0,3}(?:exit(?:ed with)? (?:code|status)|process exited with code)\s*:?\s*"
    r"(-?[1-9]\d*)\b"
)
_CD = LazyPattern(r"""(?:^|&&|\|\||;|\n)\s*cd\s+(?:"([^"]+)"|'([^']+)'|([^\s;&|]+))""")
_GIT = LazyPattern(  # git [global options] <subcommand> <rest of that command>
    r"(?:^|&&|\|\||;|\||\n|\$\(|`)\s*git\s+"
    r"((?:-[Cc]\s+\S+\s+|--?[\w-]+(?:=\S+)?\s+)*)"
    r"([a-z][\w-]*)([^;&|\n`]*)"
)
_GIT_MUTATING = frozenset(
    {
        "commit", "merge", "rebase", "stash", "push", "pull", "reset", "add", "cherry-pick",
        "tag", "fetch", "clone", "worktree", "checkout", "switch", "revert", "restore", "rm",
        "mv", "init", "am", "apply",
    }
)  # fmt: skip
_GIT_READ_ONLY = frozenset({"log", "diff", "status", "branch", "show", "blame", "remote"})
_COMMIT_MESSAGE = LazyPattern(
    r"""(?:^|\s)-(?:[a-zA-Z]*m)\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))"""
)
_ENV_COMMAND = LazyPattern(
    r"""(?x)(?:^|&&|\|\||;|\n)\s*(?:
        source\s+\S*activate | \.\s+\S*activate | export\s+[A-Za-z_]\w*= | nvm\s+use
      | pyenv\s+(?:shell|local|global) | conda\s+activate | rbenv\s | npm\s+(?:install|ci|i)\b
      | pip3?\s+install | uv\s+(?:pip\s+install|add|sync) | poetry\s+(?:install|add)
      | bun\s+(?:install|add) | yarn\s+(?:add|install) | pnpm\s+(?:add|install)
      | cargo\s+(?:install|add) | go\s+(?:install|get) | rustup\s | asdf\s | volta\s
      | deno\s+install
    )"""
)
_ISSUE_REF = LazyPattern(r"(?<![\w&#/])#(\d{1,6})\b")
_FETCHED = LazyPattern(r"Fetched and indexed.*?\((\d+(?:\.\d+)?)\s*KB\)")
_CONSTRAINT = LazyPattern(
    r"(?i)not supported|cannot|does not support|refused|permission denied|incompatible"
)
_PLAN_PATH = LazyPattern(r"[/\\]\.claude[/\\]plans[/\\]")

# Prompts
_SYSTEM_PROMPT_PREFIXES = (
    "<task-notification>", "<system-reminder>", "<context_guidance>", "<tool-result>",
)  # fmt: skip
_QUESTION = frozenset("?？؟¿")
_SEPARATORS = frozenset(",;，；、،")
_CLAUSE_END = LazyPattern(r"[.!\n。！]")
_RESOLVED_MARKS = ("✓", "✔", "✅", "☑", "🎉")
_BLOCKER = LazyPattern(r"Error:|Exception:|Traceback|\bat \S+ ?\(.*:\d+:\d+\)")
_WORDS = LazyPattern(r"[^\W\d_]+(?:\s+)[^\W\d_]+|[^\W\d_]{6,}")
_GOAL = LazyPattern(r"(?is)^\s*(?:/goal\b|goal\s*[:：])\s*(.+)$")
# Constraint markers: negation, restriction ("only"), obligation ("must", "always") and
# preservation ("keep", "unchanged"), whole words (en de fr es pt it nl pl ru uk tr vi id el
# ar he)...
_CONSTRAINT_WORDS = LazyPattern(
    r"""(?ix)(?<!\w)(?:
        never | don'?t | do\ not | does\ not | doesn'?t | not | no | only | must | mustn'?t
      | should | shouldn'?t | always | avoid | keep | instead | without | unchanged | untouched
      | make\ sure | ensure | prefer | leave | stick\ to | rather\ than | can'?t | cannot
      | nicht | kein | keine | keinen | keinem | keiner | nie | niemals | nur | immer | muss
      | müssen | soll | sollen | ohne | statt | anstatt | unverändert | beibehalten
      | ne | n' | pas | jamais | seulement | uniquement | toujours | doit | doivent | faut
      | sans | garde | gardez | conserve[rz]? | surtout
      | nunca | jamás | solo | sólo | solamente | únicamente | siempre | debe | deben | sin
      | mantén | mantener | mantenga | evita | evitar
      | não | jamais | apenas | somente | só | sempre | devem? | sem | mantenha | manter | evite
      | non | mai | soltanto | sempre | devono | senza | mantieni
      | niet | geen | nooit | alleen | altijd | moet | moeten | zonder
      | nie | nigdy | tylko | zawsze | musi | muszą | bez
      | не | нельзя | никогда | только | всегда | должен | должна | должно | должны | без
      | вместо | оставь | оставьте | сохрани | сохраните | ніколи | тільки | лише | завжди
      | asla | sadece | yalnızca | mutlaka | değiştirme | dokunma
      | không | đừng | chỉ | luôn | phải | jangan | hanya | selalu | harus | tanpa | tetap
      | μην | δεν | μόνο | πάντα | ποτέ | πρέπει | χωρίς
      | لا | فقط | دائما | دائمًا | يجب | بدون | أبدا | אל | לא | רק | תמיד | חייב | בלי
    )(?!\w)"""
)
# ...and anywhere in text written without spaces (zh ja ko th hi).
_CONSTRAINT_MARKS = (
    "不要", "别", "別", "不能", "不许", "不准", "不得", "禁止", "只", "仅", "僅", "必须", "必須",
    "务必", "務必", "一定要", "保持", "避免", "不用", "勿", "而不是", "不可", "永远", "总是",
    "總是", "始终", "始終",
    "ないで", "ないこと", "ないように", "ません", "だけ", "のみ", "必ず", "常に", "絶対",
    "べき", "ずに", "維持", "そのまま", "変えない", "触らない",
    "마세요", "마십시오", "지 마", "지마", "말고", "말 것", "않도록", "않게", "절대", "반드시",
    "금지", "항상", "유지", "그대로",
    "ห้าม", "อย่า", "เท่านั้น", "ต้อง", "เสมอ",
    "मत", "नहीं", "केवल", "सिर्फ", "हमेशा", "बिना",
)  # fmt: skip
_SENTENCE = LazyPattern(r"(?<=[.!?;])\s+|(?<=[。！？；!?])|\n+")
CONSTRAINT_CHARS = 300


# --------------------------------------------------------------------------- helpers


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def response_text(value: Any) -> str:
    """The readable text of a tool response, whatever shape the host sent."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [
            item["text"]
            for item in value
            if isinstance(item, dict) and isinstance(item.get("text"), str)
        ]
        if texts:
            return "\n".join(texts)
        return _dumps(value)
    if isinstance(value, dict):
        content = value.get("content")
        if isinstance(content, list):
            text = response_text(content)
            if text:
                return text
        streams = [_str(value.get(k)) for k in ("stdout", "stderr") if _str(value.get(k))]
        if streams:
            return "\n".join(streams)
        for key in (
            "output", "llmContent", "text_result_for_llm", "textResultForLlm", "result",
            "text", "content", "message", "error",
        ):  # fmt: skip
            found = value.get(key)
            if isinstance(found, str) and found:
                return found
        file = value.get("file")
        if isinstance(file, dict) and isinstance(file.get("content"), str):
            return str(file["content"])
        return _dumps(value)
    return str(value)


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _file_content(response: Any) -> str:
    """A Read response's file text (Claude sends ``{"file": {"content": …}}``)."""
    if isinstance(response, dict):
        file = response.get("file")
        if isinstance(file, dict) and isinstance(file.get("content"), str):
            return str(file["content"])
    return response_text(response)


def _flag(container: Any, *keys: str) -> bool:
    return isinstance(container, dict) and any(container.get(k) is True for k in keys)


def is_error(event: HookEvent) -> bool:
    """Whether a completed tool call failed (flags first; for shells, a non-zero exit)."""
    if event.event == "post_tool_failure" or event.error or _str(event.raw.get("error_message")):
        return True
    response = event.tool_response
    if _flag(response, "is_error", "isError") or _flag(event.raw, "is_error", "isError"):
        return True
    if _flag(event.raw.get("tool_output"), "is_error", "isError"):
        return True
    if isinstance(response, dict):
        if response.get("success") is False or response.get("result_type") in ("failure", "error"):
            return True
        for key in ("exit_code", "exitCode", "returncode", "returnCode"):
            code = response.get(key)
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                return True
    if event.tool == "Bash":
        text = response_text(response)
        sample = text if len(text) <= 32_768 else f"{text[:16_384]}\n{text[-16_384:]}"
        return _EXIT_CODE.search(sample) is not None
    return False


def error_text(event: HookEvent) -> str:
    return (
        (event.error or "").strip()
        or _str(event.raw.get("error_message")).strip()
        or response_text(event.tool_response).strip()
    )


def _head_tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit // 4
    return f"{text[:head]}\n…\n{text[len(text) - (limit - head) :]}"


def failure_detail(text: str, root: str | None = None) -> str:
    """What a failed call's output says failed: a test run's count line and failures (each
    id with its assertion), a compiler's or linter's diagnostics, a traceback's exception
    (`ctxmode.outline`, loaded only when a call failed); else its head and tail. Paths under
    `root` (the project) are shown relative to it.

    An outline is stored as ``[<kind>] <count lines joined by " | ">``, then each item's
    header and its indented details, so it reads back the same for every runner
    (`ctxmode.session.failures`)."""
    from ctxmode.outline import Outline, outline, render

    if root:
        text = text.replace(root.rstrip("/") + "/", "")
    found = outline(text)
    if found is None or not found.items:
        return _head_tail(text, ERROR_CHARS)
    counts = " | ".join(" ".join(c.split()) for c in found.counts)
    marker = f"{OUTLINE_MARK}{found.kind}] {counts}".rstrip()
    items = render(Outline(found.kind, [], found.items, found.noun), ERROR_CHARS - len(marker))
    return f"{marker}\n{items}"


OUTLINE_MARK = "[outline:"  # the first line of a stored outline: [outline:<kind>] counts


def _label(event: HookEvent) -> str:
    """What was called, in one line: the command, the path, or the tool name."""
    command = event.command or ""
    if command.strip():
        return f"$ {command.strip()}"
    path = event.paths[0] if event.paths else ""
    tool = event.tool or event.native_tool or "tool"
    return f"{tool} {path}" if path else tool


def _native(event: HookEvent) -> str:
    return re.sub(r"[^a-z0-9]", "", (event.native_tool or "").lower())


def _redacted(events: Iterable[Event]) -> list[Event]:
    return [e._replace(data=redact_text(e.data)) for e in events if e.data.strip()]


# --------------------------------------------------------------------------- tools


_ABSOLUTE = LazyPattern(r"^(?:[/~\\]|[A-Za-z]:[\\/])")


def _anchored(path: str, cwd: str | None) -> str:
    """`path` as the call's cwd makes it: a relative path joined to the cwd, so the same file
    reached from a subfolder is one file."""
    if not cwd or not path or _ABSOLUTE.match(path) or not _ABSOLUTE.match(cwd):
        return path
    if "\\" in cwd and "/" not in cwd:
        return ntpath.normpath(ntpath.join(cwd, path))
    return posixpath.normpath(posixpath.join(cwd, path))


def _file_events(event: HookEvent, failed: bool) -> list[Event]:
    tool, tool_input = event.tool, event.tool_input
    out: list[Event] = []
    if event.patch:
        if failed:
            return out
        for op, relative in event.patch:
            target = _anchored(relative, event.cwd)
            out.append(Event("file_write" if op == "Add" else "file_edit", target))
            if _PLAN_PATH.search(target):
                out.append(Event("plan_file_write", f"plan file: {_basename(target)}"))
        return out
    if failed:
        return out
    paths = [_anchored(p, event.cwd) for p in event.paths]
    if tool == "Read":
        for path in paths:
            if is_rule_file(path):
                out.append(Event("rule", path))
                content = _file_content(event.tool_response)
                if content.strip():
                    out.append(Event("rule_content", content))
            out.append(Event("file_read", path))
    elif tool in ("Edit", "NotebookEdit", "Write"):
        path = paths[0] if paths else ""
        if path:
            command = _str(tool_input.get("command")).lower()
            edits = (
                tool != "Write"
                or command in _EDIT_COMMANDS
                or any(k in tool_input for k in ("old_str", "old_string", "oldString", "edits"))
            )
            out.append(Event("file_edit" if edits else "file_write", path))
            if _PLAN_PATH.search(path):
                out.append(Event("plan_file_write", f"plan file: {_basename(path)}"))
    elif tool == "Glob":
        pattern = _str(tool_input.get("pattern")) or _str(tool_input.get("glob"))
        if pattern:
            out.append(Event("file_glob", pattern))
    elif tool == "Grep":
        pattern = _str(tool_input.get("pattern")) or _str(tool_input.get("query"))
        where = (event.paths[0] if event.paths else "") or _str(tool_input.get("dir_path"))
        if pattern:
            out.append(Event("file_search", f"{pattern} in {where}" if where else pattern))
    return out


def _basename(path: str) -> str:
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1] or path


def _shell_events(command: str) -> list[Event]:
    out: list[Event] = []
    cd = _CD.search(command)
    if cd:
        target = next(g for g in cd.groups() if g)
        out.append(Event("cwd", target))
    seen: set[str] = set()
    for match in _GIT.finditer(command):
        op, rest = match.group(2), match.group(3).strip()
        if op in seen or len(seen) >= 3:
            continue
        seen.add(op)
        if op in _GIT_MUTATING:
            detail = ""
            if op == "commit":
                message = _COMMIT_MESSAGE.search(" " + rest)
                if message:
                    detail = next((g for g in message.groups() if g is not None), "")
            elif op in ("checkout", "switch", "merge", "rebase", "push", "pull", "reset", "tag"):
                detail = rest
            out.append(Event("git", f"{op}: {detail[:200]}" if detail else op))
        elif op in _GIT_READ_ONLY:
            out.append(Event("git", op, importance=LOW))
    if _ENV_COMMAND.search(command):
        out.append(Event("env", mask_exports(command.strip())))
    return out


def _task_event(event: HookEvent) -> Event:
    native = _native(event)
    kind = "task_create" if "create" in native else "task_update" if "update" in native else "task"
    body = dict(event.tool_input)
    response = event.tool_response
    if kind == "task" and not isinstance(body.get("todos"), list) and isinstance(response, dict):
        # TodoWrite's response carries the list as it stands (oldTodos/newTodos).
        todos = response.get("newTodos")
        if isinstance(todos, list):
            body["todos"] = todos
    if kind == "task_create" and "taskId" not in body:
        found = None
        if isinstance(response, dict):
            task = response.get("task")
            found = response.get("taskId") or response.get("id")
            if found is None and isinstance(task, dict):
                found = task.get("id") or task.get("taskId")
        if isinstance(found, str | int) and not isinstance(found, bool):
            body["taskId"] = str(found)
    return Event(kind, _dumps(redact_value(body)))


def _agent_events(event: HookEvent) -> list[Event]:
    tool_input = event.tool_input
    prompt = ""
    for key in ("description", "prompt", "request", "objective", "question", "query", "task"):
        prompt = _str(tool_input.get(key)).strip()
        if prompt:
            break
    response = response_text(event.tool_response).strip()
    if not response:
        return [Event("subagent_launched", f"[launched] {prompt[:300]}")]
    return [
        Event("subagent_completed", f"[completed] {prompt[:200]} → {response[:300]}"),
        Event("agent_finding", response[:FINDING_CHARS]),
    ]


def _answers(response: Any) -> dict[str, str]:
    data = response
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return {}
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, dict):
        return {}
    out: dict[str, str] = {}
    for question, answer in answers.items():
        if isinstance(answer, list):
            out[str(question)] = " | ".join(str(a) for a in answer)
        elif answer is not None:
            out[str(question)] = str(answer)
    return out


def _question_event(event: HookEvent) -> Event | None:
    questions = event.tool_input.get("questions")
    asked = [
        _str(q.get("question")).strip()
        for q in (questions if isinstance(questions, list) else [])
        if isinstance(q, dict)
    ]
    asked = [q for q in asked if q] or [_str(event.tool_input.get("question")).strip()]
    answers = _answers(event.tool_response)
    lines = [f"Q: {q} → A: {answers[q]}" for q in asked if q and q in answers]
    if not lines and answers:
        if asked[0]:
            lines.append(f"Q: {asked[0]} → A: {' | '.join(answers.values())}")
        else:
            lines.append(f"answer: {' | '.join(answers.values())}")
    return Event("decision_question", "\n".join(lines)) if lines else None


def _mcp_events(event: HookEvent) -> list[Event]:
    native = event.native_tool or event.mcp_tool or "mcp"
    leaf = event.mcp_tool or native.split("__")[-1].split("/")[-1]
    first = next(
        (v.strip() for v in event.tool_input.values() if isinstance(v, str) and v.strip()), ""
    )
    head = f"{leaf}: {first[:300]}" if first else leaf
    if event.tool == "ctx":
        indexed = _indexed_event(leaf, event) if not is_error(event) else None
        return [Event("mcp", head)] + ([indexed] if indexed is not None else [])
    response = response_text(event.tool_response)
    data = f"{head}\nresponse: {response}" if response.strip() else head
    params = redact_value(event.tool_input)
    call = _dumps({"tool_name": native, "params": params})
    if len(call.encode("utf-8")) > MCP_PARAMS_BYTES:
        raw = _dumps(params).encode("utf-8")[:MCP_PARAMS_BYTES].decode("utf-8", "ignore")
        call = _dumps({"tool_name": native, "params_raw": raw, "truncated": True})
    return [Event("mcp", data), Event("mcp_tool_call", call)]


def _indexed_event(leaf: str, event: HookEvent) -> Event | None:
    """What a ctx call put in the knowledge base, by source label (and URL), so a resumed
    session searches it instead of fetching or indexing it again."""
    args = event.tool_input
    items: list[str] = []
    if leaf == "ctx_fetch_and_index":
        requests = args.get("requests")
        calls = [r for r in requests if isinstance(r, dict)] if isinstance(requests, list) else []
        for call in calls or [args]:
            url, label = _str(call.get("url")).strip(), _str(call.get("source")).strip()
            if url:
                items.append(f"{label} ({url})" if label and label != url else url)
    elif leaf == "ctx_index":
        label = _str(args.get("source")).strip() or _str(args.get("path")).strip()
        items.append(label or "inline content")
    elif leaf == "ctx_batch_execute":
        commands = args.get("commands")
        for command in commands if isinstance(commands, list) else []:
            if isinstance(command, dict):
                label = _str(command.get("label")).strip() or _str(command.get("command"))[:60]
                if label:
                    items.append(label)
    if not items:
        return None
    return Event("indexed", f"{leaf}: {', '.join(items[:8])}")


_PLAN_REJECTED = (
    "rejected", "decline", "denied", "not approved", "doesn't want to proceed",
    "does not want to proceed",
)  # fmt: skip
_PLAN_PATH_KEYS = ("plan_path", "planPath", "plan_file", "planFile", "file_path", "path")
PLAN_FILE_BYTES = 65_536
PLAN_CHARS = 8_000


def _plan_text(event: HookEvent) -> str:
    """The plan put to the user: ExitPlanMode's ``plan`` (Claude Code, Qwen Code), else
    the plan file the call names (Gemini CLI's ``plan_path``), read if it is small."""
    for container in (event.tool_input, event.tool_response):
        if isinstance(container, dict) and _str(container.get("plan")).strip():
            return _str(container.get("plan")).strip()
    for key in _PLAN_PATH_KEYS:
        path = _str(event.tool_input.get(key)).strip()
        if not path:
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read(PLAN_FILE_BYTES + 1)
        except OSError:
            return f"plan file: {path}"
        if len(data) <= PLAN_FILE_BYTES:
            return data.decode("utf-8", "replace").strip() or f"plan file: {path}"
        return f"plan file: {path}"
    return ""


def _plan_events(event: HookEvent, native: str, failed: bool) -> list[Event]:
    if native == "enterplanmode":
        return [Event("plan_enter", "entered plan mode")]
    allowed = event.tool_input.get("allowedPrompts")
    prompts = [
        _str(p.get("prompt")) if isinstance(p, dict) else _str(p)
        for p in (allowed if isinstance(allowed, list) else [])
    ]
    prompts = [p for p in prompts if p]
    out = [
        Event(
            "plan_exit",
            f"exited plan mode (allowed: {', '.join(prompts)})" if prompts else "exited plan mode",
        )
    ]
    response = response_text(event.tool_response)
    lowered = response.lower()
    if failed or any(w in lowered for w in _PLAN_REJECTED):
        out.append(
            Event("plan_rejected", f"plan rejected: {(error_text(event) or response)[:300]}")
        )
        return out
    # The call completed: the user approved the plan (a turned-down plan fails, or never
    # reaches PostToolUse at all).
    out.append(Event("plan_approved", "plan approved by user"))
    plan = _plan_text(event)
    if plan:
        out.append(Event("plan_text", plan[:PLAN_CHARS]))
    return out


def _refs(event: HookEvent, with_response: bool) -> Event | None:
    response = response_text(event.tool_response) if with_response else ""
    text = "\n".join(v for v in event.tool_input.values() if isinstance(v, str))
    text += "\n" + response[:REF_SCAN_CHARS]
    refs: list[str] = []
    for url in [*event.urls, *urls_in(response[:REF_SCAN_CHARS])]:
        url = url.rstrip("\"'})],;.\\")
        host = url.split("://", 1)[1].split("/", 1)[0].split(":", 1)[0].lower()
        if host in ("localhost", "127.0.0.1", "0.0.0.0", "[::1]") or url in refs:
            continue
        refs.append(url)
    for number in _ISSUE_REF.findall(text):
        if f"#{number}" not in refs:
            refs.append(f"#{number}")
    if not refs:
        return None
    fetched = _FETCHED.search(response)
    avoided = int(float(fetched.group(1)) * 1024) if fetched else 0
    return Event("external_ref", ", ".join(refs[:MAX_REFS]), bytes_avoided=avoided)


def tool_events(event: HookEvent) -> list[Event]:
    """Events of a completed (or failed) tool call, redacted."""
    tool = event.tool or "other"
    native = _native(event)
    failed = is_error(event)
    out = _file_events(event, failed)
    if tool == "Bash":
        out.extend(_shell_events(event.command or ""))
    elif tool == "Task" or native in ("todowrite", "taskcreate", "taskupdate", "writetodos"):
        out.append(_task_event(event))
    elif tool == "Agent" and not failed:
        out.extend(_agent_events(event))
    elif tool == "AskUserQuestion":
        question = _question_event(event)
        if question is not None:
            out.append(question)
    elif tool in ("mcp", "ctx"):
        out.extend(_mcp_events(event))
    elif native in ("enterplanmode", "exitplanmode"):
        out.extend(_plan_events(event, native, failed))
    elif native in ("skill", "activateskill"):
        name = _str(event.tool_input.get("skill")) or _str(event.tool_input.get("name"))
        if name:
            args = _str(event.tool_input.get("args"))
            out.append(Event("skill", f"{name}: {args}" if args else name))
    elif native == "enterworktree":
        name = _str(event.tool_input.get("name")) or "unnamed"
        out.append(Event("worktree", f"entered worktree: {name}"))
    if failed:
        text = error_text(event)
        root = str(event.project_dir) if event.project_dir else None
        out.append(Event("error_tool", f"{_label(event)}\n{failure_detail(text, root)}"))
        found = _CONSTRAINT.search(text)
        if found and ("Error" in text or event.tool != "Bash"):
            start = max(0, found.start() - 50)
            out.append(Event("constraint", text[start : found.end() + 200].strip()))
    if tool not in ("Read", "Grep", "Glob", "Edit", "Write", "NotebookEdit", "Task"):
        ref = _refs(event, with_response=tool != "ctx")
        if ref is not None:
            out.append(ref)
    return _redacted(out)


# --------------------------------------------------------------------------- checks

CheckKey = tuple[str, tuple[str, ...], tuple[str, ...]]
"""(program, its other words, the paths it targets)."""

_SEGMENT = LazyPattern(r"&&|\|\||[;|\n]")
_ASSIGNMENT = LazyPattern(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NOT_A_RUN = frozenset(
    {"cd", "export", "source", ".", "set", "unset", "echo", "printf", "true", "pushd", "popd"}
)
_PREFIXES = frozenset({"env", "time", "sudo", "nohup", "nice", "timeout", "exec", "command"})
_RUNNERS = frozenset({"npx", "bunx", "uvx", "pipx", "dlx"})
_RUN_WORDS = frozenset({"run", "exec", "x"})  # uv run, poetry run, pnpm exec, bun x ...
_RUN_PROGRAMS = frozenset({"uv", "poetry", "pnpm", "pdm", "hatch", "rye", "bundle", "bun"})


def _pathish(word: str) -> bool:
    return "/" in word or "::" in word or ("." in word.strip(".") and not word[0].isdigit())


def check_key(command: str) -> CheckKey | None:
    """What a shell command checks, to match a later run against an earlier failure: its
    program (``.venv/bin/pytest``, ``python -m pytest`` and ``uv run pytest`` are all
    ``pytest``), its other words and the paths it names; None when it runs nothing."""
    for segment in _SEGMENT.split(command):
        words = [
            w.strip("\"'")
            for w in segment.split()
            if not any(c in w for c in "<>") and w.strip("\"'")
        ]
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _PREFIXES):
            words = words[1:]
        if not words or words[0] in _NOT_A_RUN:
            continue
        program = words[0].rsplit("/", 1)[-1]
        rest = words[1:]
        if program.startswith("python") and len(rest) >= 2 and rest[0] == "-m":
            program, rest = rest[1], rest[2:]
        elif program in _RUNNERS and rest:
            program, rest = rest[0].rsplit("/", 1)[-1], rest[1:]
        elif len(rest) >= 2 and rest[0] in _RUN_WORDS and program in _RUN_PROGRAMS:
            program, rest = rest[1].rsplit("/", 1)[-1], rest[2:]
        args = [w for w in rest if not w.startswith("-")]
        # A test id (``tests/test_a.py::test_b``) stays whole: a run of one test passing
        # does not show the others of its file fixed.
        paths = tuple(sorted({_selector(w) for w in args if _pathish(w)}))
        others = tuple(sorted({w for w in args if not _pathish(w)}))
        return program, others, paths
    return None


def _selector(word: str) -> str:
    path, sep, test = word.partition("::")
    return path.rstrip("/") + sep + test


def _holds(scope: str, path: str) -> bool:
    """Whether a run on `scope` (a folder, a file or a test id) runs what `path` names."""
    return path == scope or path.startswith((scope + "/", scope + "::"))


def tool_check_key(tool: str, paths: Iterable[str]) -> CheckKey:
    """What a failed non-shell tool call checks: that tool on those paths."""
    return f"tool:{tool}", (), tuple(sorted(paths))


def label_key(label: str) -> CheckKey | None:
    """The check key of a failure's first line (``$ command`` or ``Tool path``)."""
    if label.startswith("$ "):
        return check_key(label[2:])
    tool, _, path = label.partition(" ")
    return tool_check_key(tool, [path] if path else []) if tool else None


def covers(passed: CheckKey, failed: CheckKey) -> bool:
    """Whether a check that passed shows a failed one fixed: the same program and words,
    and no paths (everything) or paths that hold every path that failed (a bare word of
    the passing run may be a folder of the failing one: ``pytest tests``)."""
    if passed[0] != failed[0]:
        return False
    extra = set(passed[1]) - set(failed[1])
    folders = {w for w in extra if any(f.startswith(w + "/") for f in failed[2])}
    if set(passed[1]) - folders != set(failed[1]):
        return False
    scope = set(passed[2]) | folders
    if not scope:
        return True
    return all(any(_holds(p, f) for p in scope) for f in failed[2] or ("",))


def passed_check(event: HookEvent) -> tuple[CheckKey, str] | None:
    """The check a successful tool call ran, with its label; None for calls that check
    nothing (a shell command that only changes directory, a tool without paths)."""
    if event.event != "post_tool" or is_error(event):
        return None
    if event.tool == "Bash":
        key = check_key(event.command or "")
        return (key, _label(event)) if key is not None else None
    if event.paths and event.tool in ("Edit", "Write", "NotebookEdit", "Read"):
        return tool_check_key(event.tool, event.paths[:1]), _label(event)
    return None


# --------------------------------------------------------------------------- prompts


def is_system_prompt(prompt: str) -> bool:
    return prompt.lstrip().startswith(_SYSTEM_PROMPT_PREFIXES)


def _is_constraint(sentence: str) -> bool:
    if any(ch in _QUESTION for ch in sentence) or not any(ch.isalpha() for ch in sentence):
        return False
    return any(m in sentence for m in _CONSTRAINT_MARKS) or bool(_CONSTRAINT_WORDS.search(sentence))


def user_constraint(prompt: str) -> str:
    """The prompt's constraints, verbatim: the whole prompt when it is short and asks
    nothing, else its sentences that carry a constraint marker; "" when it has none."""
    text = prompt.strip()
    sentences = [p.strip() for p in _SENTENCE.split(text) if p and p.strip()]
    kept = [p for p in sentences if _is_constraint(p)]
    if not kept:
        return ""
    if len(text) <= CONSTRAINT_CHARS and not any(ch in _QUESTION for ch in text):
        return text
    return " … ".join(kept)[: CONSTRAINT_CHARS * 2]


def prompt_events(prompt: str) -> list[Event]:
    """Events of one user prompt (verbatim, redacted); none for system-injected text."""
    text = prompt.strip()
    if not text or is_system_prompt(text):
        return []
    out = [Event("user_prompt", text)]
    goal = _GOAL.match(text)
    if goal and goal.group(1).strip():
        out.append(Event("goal", goal.group(1).strip()))
    has_letter = any(ch.isalpha() for ch in text)
    has_question = any(ch in _QUESTION for ch in text)
    length = len(text)
    if any(m in text for m in _RESOLVED_MARKS) or text.lower().startswith(("fixed:", "resolved:")):
        out.append(Event("blocker_resolved", text))
    elif _BLOCKER.search(text):
        out.append(Event("blocker", text))
    constraint = user_constraint(text)
    if constraint:
        out.append(Event("user_constraint", constraint))
    if (
        not has_question
        and has_letter
        and any(ch in _SEPARATORS for ch in text)
        and 15 <= length <= 500
        and constraint != text
    ):
        out.append(Event("decision", text))
    first = _CLAUSE_END.split(text, maxsplit=1)[0].strip()
    if (
        8 <= len(first) <= 120
        and not any(ch in _QUESTION for ch in first)
        and not any(ch in _SEPARATORS for ch in first)
        and any(ch.isalpha() for ch in first)
        and _WORDS.search(first)
    ):
        out.append(Event("role", first))
    if has_question:
        out.append(Event("intent", "investigate"))
    elif length < 60 and has_letter:
        out.append(Event("intent", "implement"))
    return _redacted(out)


def failure_events(event: HookEvent) -> list[Event]:
    """Events of a failed tool call (PostToolUseFailure)."""
    return tool_events(event)


def stop_events(event: HookEvent) -> list[Event]:
    """The end of an agent turn (Stop): its status and the start of the last reply."""
    raw = event.raw
    status = _str(raw.get("status")) or ("stop hook active" if raw.get("stop_hook_active") else "")
    data = f"turn ended ({status})" if status else "turn ended"
    last = _str(raw.get("last_assistant_message")) or _str(raw.get("text"))
    if last.strip():
        data += f"\n{last.strip()[:FINDING_CHARS]}"
    return _redacted([Event("turn_end", data)])


__all__ = [
    "check_key",
    "covers",
    "error_text",
    "failure_events",
    "is_error",
    "is_system_prompt",
    "label_key",
    "passed_check",
    "prompt_events",
    "response_text",
    "stop_events",
    "tool_events",
    "user_constraint",
]

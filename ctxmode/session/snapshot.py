"""The resume snapshot: a session's state as well-formed XML within a byte budget.

Built at PreCompact from the session's events, injected when the session starts again.
The budget (`DEFAULT_BUDGET` bytes, ``CTXMODE_SNAPSHOT_BYTES`` to change) is filled in order
of importance: the last request (always kept, shortened if it must be), the user's
constraints and decisions (verbatim, the first ones and the latest), the approved plan,
errors (still failing first, then failed-then-fixed), the goal, pending tasks, the sources
indexed or fetched, files, git, earlier prompts, rules, environment, sub-agents, skills,
roles, intent. A section that does not fit keeps fewer items or is left out; the output
never exceeds the budget. All text is XML-escaped (``& < > " '``) and characters
XML cannot carry are dropped, so the result always parses.

Layout (sections only when non-empty)::

    <session_resume events="N" compact_count="K" generated_at="ISO">
    <how_to_search>…</how_to_search>
    <goal>…</goal>
    <decisions count="N">…
    For full details: ctx_search(queries: ["…"], source: "session-events")
    </decisions>
    <plan status="…"> <errors failing="N" fixed="M"> <task_state> <files>
    <indexed search_with="…"> <git> <rules> <environment> <subagents> <skills> <roles>
    <intent mode="…"/> <recent_user_messages> <last_request>
    <continue_from>…</continue_from>
    </session_resume>
"""

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctxmode import paths, settings
from ctxmode.session.events import LOW, StoredEvent
from ctxmode.session.failures import (
    ITEM_BYTES,
    MAX_FAILING,
    MAX_FIXED,
    failure_items,
)

DEFAULT_BUDGET = settings.SNAPSHOT_BYTES.default
MIN_BUDGET = settings.SNAPSHOT_MIN_BYTES
MAX_BUDGET = settings.SNAPSHOT_MAX_BYTES
SEARCH_SOURCE = "session-events"
MAX_FILES = 10
MAX_CHANGED_FILES = 20
MAX_DECISIONS = 8
FIRST_DECISIONS = 3  # of MAX_DECISIONS, the session's first ones: the rest are the latest
MAX_QUERIES = 3  # upstream: up to 4 of up to 80 characters; bytes are scarce here
QUERY_CHARS = 40
ELLIPSIS = "…"

HOW_TO_SEARCH = (
    "Sections summarise earlier work in this session. For FULL DETAILS run the exact call a "
    "section shows. Do NOT ask the user to re-explain. Do NOT invent queries."
)
CONTINUE = "Continue with the last request. Do NOT ask the user to repeat it."

_DONE = frozenset({"completed", "complete", "done", "deleted", "failed", "cancelled", "canceled"})
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_QUERY_JUNK = re.compile(r"[^\w\s./:@#+-]+")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}
_ESCAPE = re.compile("[&<>\"']")
_WORDISH = re.compile(r"\w")  # rule lines (=====, -----) carry none


def escape(text: str) -> str:
    """XML-escape text (all five specials) and drop what XML 1.0 cannot hold."""
    text = _SURROGATE.sub("\ufffd", _INVALID_XML.sub("", text))
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group(0)], text)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def fit(text: str, limit: int) -> str:
    """`text` escaped, cut (with an ellipsis) to at most `limit` UTF-8 bytes."""
    escaped = escape(text)
    if _size(escaped) <= limit:
        return escaped
    room = limit - _size(ELLIPSIS)
    out: list[str] = []
    used = 0
    for ch in text:
        piece = escape(ch)
        n = _size(piece)
        if used + n > room:
            break
        out.append(piece)
        used += n
    return "".join(out).rstrip() + ELLIPSIS if room > 0 else ""


def _line(text: str) -> str:
    return " ".join(text.split())


def _query(text: str) -> str:
    """A search query from free text: plain words, cut at a word boundary."""
    words = " ".join(_QUERY_JUNK.sub(" ", text).split())
    if len(words) <= QUERY_CHARS:
        return words
    cut = words[: QUERY_CHARS + 1].rsplit(" ", 1)[0]
    return (cut if len(cut) >= QUERY_CHARS // 2 else words[:QUERY_CHARS]).strip()


@dataclass
class Section:
    """One block of the snapshot, its items most important first."""

    tag: str
    items: list[str]
    queries: list[str] = field(default_factory=list)
    item_bytes: int = 200
    attrs: dict[str, str] = field(default_factory=dict)
    search: bool = True
    max_items: int = 10
    child: str | None = None  # wrap each item in <child>…</child>
    multiline: bool = False  # keep the items' own line breaks
    shorten: bool = False  # its one text may be cut to the room left (else items are whole)

    def render(self, allowance: int, search_tool: str) -> str | None:
        """The largest rendering within `allowance` bytes, None if not even one item fits."""
        attrs = "".join(f' {k}="{escape(v)}"' for k, v in self.attrs.items())
        open_tag, close_tag = f"<{self.tag}{attrs}>", f"</{self.tag}>"
        call = self._call(search_tool) if self.search else ""
        fixed = _size(open_tag) + _size(close_tag) + 1 + (_size(call) + 1 if call else 0)
        wrap_open = f"<{self.child}>" if self.child else ""
        wrap_close = f"</{self.child}>" if self.child else ""
        wrap = _size(wrap_open) + _size(wrap_close) + 1  # + newline
        lines: list[str] = []
        used = fixed
        for item in self.items[: self.max_items]:
            text = item if self.multiline else _line(item)
            body = fit(text, self.item_bytes)
            room = allowance - used - wrap
            if _size(body) > room:
                # An item fits whole or is left out: a path cut to its first characters is
                # no path. Only a verbatim text the section exists for is shortened.
                if not (self.shorten and not lines and room >= 16):
                    continue
                body = fit(text, room)
            lines.append(f"{wrap_open}{body}{wrap_close}")
            used += wrap + _size(body)
        if not lines:
            return None
        if len(lines) == 1 and not call and not self.child:
            return f"{open_tag}{lines[0]}{close_tag}"  # one verbatim text: no padding
        body = "\n".join(lines)
        return f"{open_tag}\n{body}\n{call + chr(10) if call else ''}{close_tag}"

    def _call(self, search_tool: str) -> str:
        queries: list[str] = []
        for raw in self.queries:
            q = _query(raw)
            if q and q not in queries:
                queries.append(q)
            if len(queries) == MAX_QUERIES:
                break
        if not queries:
            return ""
        listed = ", ".join(json.dumps(q, ensure_ascii=False) for q in queries)
        return escape(
            f'For full details: {search_tool}(queries: [{listed}], source: "{SEARCH_SOURCE}")'
        ).replace("&quot;", '"')


# --------------------------------------------------------------------------- sections


def _of(events: Sequence[StoredEvent], *types: str) -> list[StoredEvent]:
    return [e for e in events if e.type in types]


def _unique_newest(values: Sequence[str]) -> list[str]:
    out: list[str] = []
    for value in reversed(values):
        if value.strip() and value not in out:
            out.append(value)
    return out


def _display_root(project_dir: Path | None) -> str | None:
    """What paths are shown relative to: the work tree holding the project (a host started
    in a package folder still edits files all over the repository), else the project."""
    if project_dir is None:
        return None
    root = paths.git_root(project_dir) or project_dir
    return paths.normalize_path(str(root)).rstrip("/") + "/"


def _display_path(path: str, root: str | None) -> str:
    norm = paths.normalize_path(path)
    if root is not None and norm.startswith(root):
        norm = norm[len(root) :]
    else:
        norm = paths.home_relative(norm)
    if len(norm) > 80:
        norm = ELLIPSIS + "/" + "/".join(norm.split("/")[-3:])
    return norm


def _basename(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").split("/")[-1]


def _files(events: Sequence[StoredEvent], project_dir: Path | None) -> Section | None:
    ops: dict[str, dict[str, int]] = {}
    last_seen: dict[str, int] = {}
    names = {"file_read": "read", "file_edit": "edit", "file_write": "write"}
    for e in _of(events, *names):
        counts = ops.setdefault(e.data, {})
        counts[names[e.type]] = counts.get(names[e.type], 0) + 1
        last_seen[e.data] = e.id
    if not ops:
        return None
    # Files the session changed first (most recent first), then those it only read: every
    # changed file up to MAX_CHANGED_FILES (the budget keeps whole items), reads up to MAX_FILES.
    changed = sum(1 for p in ops if "edit" in ops[p] or "write" in ops[p])
    recent = sorted(
        ops, key=lambda p: ("edit" in ops[p] or "write" in ops[p], last_seen[p]), reverse=True
    )[: max(MAX_FILES, min(changed, MAX_CHANGED_FILES))]
    root = _display_root(project_dir)
    items = [
        f"{_display_path(p, root)} ("
        + ", ".join(f"{op}×{n}" for op, n in sorted(ops[p].items(), key=lambda kv: -kv[1]))
        + ")"
        for p in recent
    ]
    return Section(
        "files",
        items,
        queries=[_basename(p) for p in recent],
        item_bytes=120,
        max_items=len(items),
        attrs={"count": str(len(ops))},
    )


def _errors(events: Sequence[StoredEvent]) -> Section | None:
    """Still failing (newest first), then failed-then-fixed, each saying what failed
    (`ctxmode.session.failures`)."""
    kinds = ("error_tool", "blocker", "blocker_resolved", "error_fixed", "check_passed")
    lines, failing, fixed = failure_items(_of(events, *kinds))
    if not lines:
        return None
    return Section(
        "errors",
        lines,
        queries=[i.split(": ", 1)[1].split(" → ")[0].split(": ")[0].lstrip("$ ") for i in lines],
        item_bytes=ITEM_BYTES + 40,
        max_items=MAX_FAILING + MAX_FIXED,
        attrs={"failing": str(failing), "fixed": str(fixed)},
    )


def _decisions(events: Sequence[StoredEvent], last_prompt: str) -> Section | None:
    """The user's constraints (the latest first, then the session's first ones), then
    answered questions and other decisions (newest first), each verbatim and once."""
    last = last_prompt.strip()
    constraints: list[str] = []
    for e in _of(events, "user_constraint"):
        if e.data.strip() and e.data not in constraints and e.data.strip() != last:
            constraints.append(e.data)
    first = constraints[:FIRST_DECISIONS]
    latest = constraints[FIRST_DECISIONS:][-(MAX_DECISIONS - FIRST_DECISIONS) :]
    values = [e.data for e in _of(events, "decision", "decision_question")]
    others = [
        v for v in _unique_newest(values) if v.strip() != last and not _within(v, constraints)
    ]
    items = latest[::-1] + first[::-1] + others
    if not items:
        return None
    return Section(
        "decisions",
        items,
        queries=items,
        item_bytes=200,
        attrs={"count": str(len(items))},
        max_items=MAX_DECISIONS + 2,
    )


def _within(text: str, shown: Sequence[str]) -> bool:
    """Whether `text` is one of `shown`, or part of one, or holds one."""
    return any(text in s or s in text for s in shown if s)


def _rules(events: Sequence[StoredEvent], project_dir: Path | None) -> Section | None:
    files = _unique_newest([e.data for e in _of(events, "rule")])
    if not files:
        return None
    root = _display_root(project_dir)
    items = [_display_path(p, root) for p in files]
    return Section(
        "rules",
        items,
        queries=[_basename(p) for p in files],
        item_bytes=120,
        attrs={"count": str(len(items))},
    )


def _git(events: Sequence[StoredEvent]) -> Section | None:
    chosen = _of(events, "git")
    important = [e.data for e in chosen if e.priority < LOW]
    other = [e.data for e in chosen if e.priority >= LOW]
    items = _unique_newest(important) + [v for v in _unique_newest(other) if v not in important]
    if not items:
        return None
    return Section(
        "git",
        items,
        queries=["git " + i.split(":")[0] for i in items],
        item_bytes=140,
        max_items=5,
        attrs={"count": str(len(items))},
    )


def _task_state(events: Sequence[StoredEvent]) -> Section | None:
    todos: list[tuple[str, str]] = []
    creates: list[dict[str, object]] = []
    updates: dict[str, dict[str, object]] = {}
    for e in _of(events, "task", "task_create", "task_update"):
        try:
            body = json.loads(e.data)
        except ValueError:
            continue
        if not isinstance(body, dict):
            continue
        if e.type == "task" and isinstance(body.get("todos"), list):
            todos = [
                (str(t.get("content") or t.get("subject") or ""), str(t.get("status") or ""))
                for t in body["todos"]
                if isinstance(t, dict)
            ]
        elif e.type == "task_create" or ("subject" in body and "taskId" not in body):
            creates.append(body)
        elif body.get("taskId") is not None:
            updates.setdefault(str(body["taskId"]), {}).update(body)
    numeric = sorted((k for k in updates if k.isdigit()), key=int)
    listed: list[tuple[str, str]] = []
    for index, body in enumerate(creates):
        task_id = str(body.get("taskId") or (numeric[index] if index < len(numeric) else ""))
        status = str(updates.get(task_id, {}).get("status") or body.get("status") or "pending")
        subject = str(updates.get(task_id, {}).get("subject") or body.get("subject") or "")
        listed.append((subject, status))
    listed += [(c, s or "pending") for c, s in todos]
    # Open work first; what was finished after it, so the agent neither redoes nor forgets it.
    open_items = [f"[{s}] {c}" for c, s in listed if c and s.lower() not in _DONE]
    done_items = [
        f"[{s}] {c}" for c, s in listed if c and s.lower() in _DONE and s.lower() != "deleted"
    ]
    if not open_items and not done_items:
        return None
    return Section(
        "task_state",
        open_items + done_items,
        queries=[p.split("] ", 1)[-1] for p in open_items or done_items],
        item_bytes=140,
        attrs={"count": str(len(open_items)), "done": str(len(done_items))},
    )


def _environment(events: Sequence[StoredEvent]) -> Section | None:
    items: list[str] = []
    cwd = _of(events, "cwd")
    if cwd:
        items.append(f"cwd: {cwd[-1].data}")
    items += _unique_newest([e.data for e in _of(events, "env", "worktree")])
    if not items:
        return None
    return Section("environment", items, queries=items, item_bytes=160)


def _plan(events: Sequence[StoredEvent]) -> Section | None:
    chosen = _of(events, "plan_enter", "plan_exit", "plan_approved", "plan_rejected")
    files = _unique_newest([e.data for e in _of(events, "plan_file_write")])
    texts = _of(events, "plan_text")
    if not chosen and not files and not texts:
        return None
    last = chosen[-1].type if chosen else ""
    if texts and last in ("plan_approved", "plan_exit"):
        # The approved plan itself, line by line: the best summary of the work there is.
        lines = [ln.rstrip() for ln in texts[-1].data.splitlines() if _WORDISH.search(ln)]
        return Section(
            "plan",
            lines,
            item_bytes=150,
            max_items=16,
            attrs={"status": "approved by the user: carry it out"},
            search=False,
        )
    status = {
        "plan_enter": "ACTIVE (in planning phase)",
        "plan_exit": "COMPLETED (exited plan mode)",
        "plan_approved": "APPROVED by the user: carry it out",
        "plan_rejected": "REJECTED by the user: do not carry it out",
    }
    items = ([f"status: {status[last]}"] if last else []) + files
    return Section("plan", items, queries=["plan", *files], item_bytes=160)


def _indexed(events: Sequence[StoredEvent], search_tool: str) -> Section | None:
    """What the session put in the knowledge base: search it rather than fetch again."""
    items = _unique_newest([e.data for e in _of(events, "indexed")])
    if not items:
        return None
    return Section(
        "indexed",
        items,
        item_bytes=200,
        search=False,
        max_items=6,
        attrs={"search_with": f'{search_tool}(queries: [...], source: "<label>")'},
    )


def _subagents(events: Sequence[StoredEvent]) -> Section | None:
    items = _unique_newest([e.data for e in _of(events, "subagent_completed", "subagent_launched")])
    if not items:
        return None
    return Section(
        "subagents",
        items,
        queries=[i.split("] ", 1)[-1] for i in items],
        item_bytes=160,
        max_items=3,
        attrs={"count": str(len(items))},
    )


def _skills(events: Sequence[StoredEvent]) -> Section | None:
    counts: dict[str, int] = {}
    for e in _of(events, "skill"):
        name = e.data.split(":", 1)[0].strip()
        if name:
            counts[name] = counts.get(name, 0) + 1
    if not counts:
        return None
    items = [f"{name} ({n}×)" for name, n in reversed(counts.items())]
    return Section(
        "skills",
        items,
        queries=list(reversed(counts)),
        item_bytes=80,
        attrs={"count": str(len(items))},
    )


def _roles(events: Sequence[StoredEvent]) -> Section | None:
    items = _unique_newest([e.data for e in _of(events, "role")])
    if not items:
        return None
    return Section("roles", items, queries=items, item_bytes=130, attrs={"count": str(len(items))})


def _recent_messages(prompts: Sequence[str], shown: Sequence[str]) -> Section | None:
    """The user's earlier messages not shown in another section, newest first."""
    earlier = [p for p in _unique_newest(prompts[:-1]) if not _within(p, shown)][:4]
    if not earlier:
        return None
    return Section(
        "recent_user_messages",
        earlier,
        item_bytes=200,
        attrs={"count": str(len(earlier))},
        search=False,
        child="message",
    )


def build_snapshot(
    events: Sequence[StoredEvent],
    *,
    compact_count: int = 1,
    budget: int | None = None,
    search_tool: str = "ctx_search",
    project_dir: Path | None = None,
    generated_at: str | None = None,
    event_count: int | None = None,
) -> str:
    """The resume snapshot of a session's events, at most `budget` UTF-8 bytes."""
    budget = settings.snapshot_bytes() if budget is None else max(budget, MIN_BUDGET)
    stamp = generated_at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    count = len(events) if event_count is None else event_count
    header = (
        f'<session_resume events="{count}" compact_count="{compact_count}"'
        f' generated_at="{escape(stamp)}">'
    )
    how = f"<how_to_search>{escape(HOW_TO_SEARCH)}</how_to_search>"
    footer = "</session_resume>"
    prompts = [e.data for e in _of(events, "user_prompt")]
    last_prompt = prompts[-1] if prompts else ""
    goals = [e.data for e in _of(events, "goal")]
    intents = _of(events, "intent")

    left = budget - sum(_size(p) + 1 for p in (header, how, footer))

    rendered: dict[str, str] = {}

    def place(key: str, section: Section | None, share: float) -> None:
        nonlocal left
        if section is None or left <= 0:
            return
        allowance = min(left - 1, int(budget * share))
        text = section.render(allowance, search_tool)
        if text is not None and _size(text) + 1 <= left:
            rendered[key] = text
            left -= _size(text) + 1

    if last_prompt:
        request = Section(
            "last_request",
            [last_prompt],
            item_bytes=max(300, int(budget * 0.3)),
            search=False,
            multiline=True,
            shorten=True,
        )
        place("last_request", request, 1.0)
        continue_line = f"<continue_from>{escape(CONTINUE)}</continue_from>"
        if "last_request" in rendered and _size(continue_line) + 1 <= left:
            rendered["continue_from"] = continue_line
            left -= _size(continue_line) + 1
    if goals:
        goal = Section(
            "goal",
            [goals[-1]],
            item_bytes=max(200, int(budget * 0.15)),
            search=False,
            shorten=True,
        )
        place("goal", goal, 1.0)
    decisions = _decisions(events, last_prompt)
    shown = [*(decisions.items if decisions else []), last_prompt]
    builders: list[tuple[str, Callable[[], Section | None], float]] = [
        ("decisions", lambda: decisions, 0.35),
        ("plan", lambda: _plan(events), 0.3),
        ("errors", lambda: _errors(events), 0.25),
        ("task_state", lambda: _task_state(events), 0.2),
        ("indexed", lambda: _indexed(events, search_tool), 0.15),
        ("files", lambda: _files(events, project_dir), 0.2),
        ("git", lambda: _git(events), 0.12),
        ("recent_user_messages", lambda: _recent_messages(prompts, shown), 0.2),
        ("rules", lambda: _rules(events, project_dir), 0.1),
        ("environment", lambda: _environment(events), 0.1),
        ("subagents", lambda: _subagents(events), 0.1),
        ("skills", lambda: _skills(events), 0.08),
        ("roles", lambda: _roles(events), 0.08),
    ]
    built = {key: build() for key, build, _ in builders}
    for key, _, share in builders:
        place(key, built[key], share)
    # What the shares left unused goes to the sections that had more to show, in order.
    for key, _, _ in builders:
        section = built[key]
        if section is None or left <= 0:
            continue
        before = _size(rendered[key]) + 1 if key in rendered else 0
        text = section.render(before + left - 1, search_tool)
        if text is not None and _size(text) + 1 > before:
            rendered[key] = text
            left -= _size(text) + 1 - before
    if intents:
        intent = f'<intent mode="{escape(_line(intents[-1].data)[:40])}"/>'
        if _size(intent) + 1 <= left:
            rendered["intent"] = intent
            left -= _size(intent) + 1

    order = [
        "goal", "decisions", "plan", "errors", "task_state", "files", "indexed", "git", "rules",
        "environment", "subagents", "skills", "roles", "intent", "recent_user_messages",
        "last_request", "continue_from",
    ]  # fmt: skip
    return "\n".join([header, how, *(rendered[k] for k in order if k in rendered), footer])

"""The event catalogue: every event type with its category, importance and public kind.

Importance runs from 1 (keep longest: the user's prompts, goals, decisions and
constraints, approved plans, tasks, rules, failures not yet fixed) to 4 (first to go: intents,
raw MCP parameters, latencies). Routine file events sit in between (edits 2, reads 3), so
however long a session runs, what the user decided outlives what the agent touched. When a
session holds more than `MAX_EVENTS_PER_SESSION` events the *least* important, then oldest,
are evicted (upstream evicted the most important first). A failure that is fixed drops to 3
(`ctxmode.session.db.SessionDB.resolve_failures`); its ``error_fixed`` record stays at 2.

The public *kind* is the small vocabulary `ctxmode session events --json` prints and the
hook fixtures check: file_read, file_edit, file_write, git, error, task, prompt, snapshot,
session, rule. Types outside it print under their own name.
"""

from ctxmode.digest import sha256_hex
from ctxmode.typenames import NamedTuple

MAX_EVENTS_PER_SESSION = 1000
DEDUPE_WINDOW = 5
MAX_DATA_CHARS = 65_536  # one event's text; longer text keeps its head and tail

CRITICAL, HIGH, NORMAL, LOW = 1, 2, 3, 4


class EventType(NamedTuple):
    category: str
    importance: int
    kind: str


CATALOGUE: dict[str, EventType] = {
    # the user's own words
    "user_prompt": EventType("prompt", CRITICAL, "prompt"),
    "goal": EventType("goal", CRITICAL, "prompt"),
    "decision": EventType("decision", CRITICAL, "decision"),
    "user_constraint": EventType("decision", CRITICAL, "decision"),
    "role": EventType("role", NORMAL, "role"),
    "intent": EventType("intent", LOW, "intent"),
    "blocker": EventType("blocked-on", CRITICAL, "error"),
    "blocker_resolved": EventType("blocked-on", HIGH, "blocker_resolved"),
    # files
    "file_edit": EventType("file", HIGH, "file_edit"),
    "file_write": EventType("file", HIGH, "file_write"),
    "file_read": EventType("file", NORMAL, "file_read"),
    "file_glob": EventType("file", NORMAL, "file_search"),
    "file_search": EventType("file", NORMAL, "file_search"),
    "rule": EventType("rule", CRITICAL, "rule"),
    "rule_content": EventType("rule", HIGH, "rule"),
    # work state
    "task": EventType("task", CRITICAL, "task"),
    "task_create": EventType("task", CRITICAL, "task"),
    "task_update": EventType("task", CRITICAL, "task"),
    "plan_approved": EventType("plan", CRITICAL, "plan"),
    "plan_text": EventType("plan", CRITICAL, "plan"),
    "plan_enter": EventType("plan", HIGH, "plan"),
    "plan_exit": EventType("plan", HIGH, "plan"),
    "plan_rejected": EventType("plan", HIGH, "plan"),
    "plan_file_write": EventType("plan", HIGH, "plan"),
    "decision_question": EventType("decision", CRITICAL, "decision"),
    "git": EventType("git", HIGH, "git"),
    "error_tool": EventType("error", CRITICAL, "error"),
    "error_fixed": EventType("error", HIGH, "error_fixed"),
    "check_passed": EventType("error", HIGH, "error_fixed"),
    "constraint": EventType("constraint", HIGH, "constraint"),
    "cwd": EventType("cwd", HIGH, "cwd"),
    "env": EventType("env", HIGH, "env"),
    "worktree": EventType("env", HIGH, "env"),
    "skill": EventType("skill", HIGH, "skill"),
    "subagent_completed": EventType("subagent", HIGH, "subagent"),
    "subagent_launched": EventType("subagent", NORMAL, "subagent"),
    "agent_finding": EventType("subagent", NORMAL, "subagent"),
    "mcp": EventType("mcp", NORMAL, "mcp"),
    "indexed": EventType("indexed", CRITICAL, "indexed"),
    "mcp_tool_call": EventType("mcp_tool_call", LOW, "mcp"),
    "external_ref": EventType("external-ref", NORMAL, "external_ref"),
    # PreToolUse → PostToolUse markers
    "rejected": EventType("rejected-approach", HIGH, "rejected"),
    "bash_redirected": EventType("redirect", NORMAL, "redirect"),
    "webfetch_redirected": EventType("redirect", NORMAL, "redirect"),
    "read_redirected": EventType("redirect", NORMAL, "redirect"),
    "tool_latency": EventType("latency", LOW, "latency"),
    # lifecycle (written by the hooks themselves)
    "session_start": EventType("session", NORMAL, "session"),
    "resumed_from": EventType("session", CRITICAL, "session"),
    "turn_end": EventType("session", LOW, "session"),
    "agent_reply": EventType("session", LOW, "session"),
    "session_end": EventType("session", LOW, "session"),
    "compaction_summary": EventType("compaction", NORMAL, "snapshot"),
    "snapshot_built": EventType("compaction", NORMAL, "snapshot"),
    "snapshot_consumed": EventType("session-resume", NORMAL, "snapshot"),
    # written by the MCP server
    "sandbox_execute": EventType("sandbox", NORMAL, "sandbox"),
    "index_write": EventType("sandbox", NORMAL, "sandbox"),
    "cache_hit": EventType("cache", LOW, "cache"),
}

_UNKNOWN = EventType("other", LOW, "other")


def type_info(event_type: str) -> EventType:
    """Category, importance and kind of a type (unknown types: least important)."""
    return CATALOGUE.get(event_type) or EventType(_UNKNOWN.category, LOW, event_type)


def kind_of(event_type: str) -> str:
    """The public kind `ctxmode session events` prints for an internal type."""
    info = CATALOGUE.get(event_type)
    return info.kind if info else event_type


def data_hash(data: str) -> str:
    """First 16 hex characters of SHA-256 of the data, upper case (upstream's dedupe key)."""
    return sha256_hex(data.encode("utf-8", "surrogatepass"))[:16].upper()


def clip(text: str, limit: int = MAX_DATA_CHARS) -> str:
    """`text` cut to `limit` characters, keeping the head and the tail around a marker."""
    if len(text) <= limit:
        return text
    marker = f"\n… [{len(text) - limit} characters cut] …\n"
    head = (limit - len(marker)) // 3
    tail = limit - len(marker) - head
    return text[:head] + marker + text[len(text) - tail :]


class Event(NamedTuple):
    """One thing worth remembering, before it is stored."""

    type: str
    data: str
    importance: int | None = None  # None: the catalogue's
    bytes_avoided: int = 0
    bytes_returned: int = 0

    @property
    def category(self) -> str:
        return type_info(self.type).category

    @property
    def priority(self) -> int:
        return self.importance if self.importance is not None else type_info(self.type).importance

    @property
    def kind(self) -> str:
        return kind_of(self.type)


class StoredEvent(NamedTuple):
    """An event as the session database holds it."""

    id: int
    session_id: str
    type: str
    category: str
    priority: int
    data: str
    source_hook: str
    project_dir: str
    bytes_avoided: int
    bytes_returned: int
    created_at: str

    @property
    def kind(self) -> str:
        return kind_of(self.type)


def snapshot_consumed(snapshot: str, how: str) -> Event:
    """The event recording that a resume snapshot was injected (`how`: when, from where)."""
    size = len(snapshot.encode("utf-8"))
    return Event(
        "snapshot_consumed", f"Snapshot of {size} bytes injected {how}.", bytes_returned=size
    )

"""The ctx_* tool definitions an agent sees: names, argument names and meanings as upstream
context-mode has them, described tersely.

Every agent pays for this list on every turn, so descriptions are contracts, not essays:
what the tool does, when to use it instead of the host's own tools, and the limits.
"""

from dataclasses import dataclass
from typing import Any

from ctxmode.executor.runtimes import LANGUAGES


@dataclass(frozen=True)
class ToolDef:
    name: str
    title: str
    description: str
    schema: dict[str, Any]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False


def _obj(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def _s(description: str = "", **extra: Any) -> dict[str, Any]:
    return {"type": "string", **({"description": description} if description else {}), **extra}


_LANGUAGE = _s(enum=list(LANGUAGES))
_TIMEOUT = {"type": "number", "description": "ms; default 120000"}
_INTENT = _s("what you look for: output over 5KB returns only matching sections")
_CWD = _s("working folder: inside the project or one of its git worktrees")


def _GLOBS(description: str) -> dict[str, Any]:  # noqa: N802 (a schema constant's maker)
    return {"type": "array", "items": {"type": "string"}, "description": description}


TOOLS: list[ToolDef] = [
    ToolDef(
        "ctx_execute",
        "Run code (executes the given code)",
        "Run code in a sandbox; only what it prints enters context. Use instead of Bash for "
        "anything with long output: tests, builds, logs, git, APIs, data. Print only the "
        "answer. Every language runs in the project directory (relative paths are the "
        "project's; the script itself and $TMPDIR are in a temp dir). Output over 100KB is "
        "indexed for ctx_search. Permission rules are checked on "
        "the text (commands, files named), so names built at run time escape them, unless "
        "the server runs with CTXMODE_ISOLATE=1: then denied files are hidden and the "
        "network is off by default.",
        _obj(
            ["language", "code"],
            language=_LANGUAGE,
            code=_s(),
            timeout=_TIMEOUT,
            background={"type": "boolean", "description": "on timeout keep it running"},
            cwd=_CWD,
            intent=_INTENT,
        ),
        destructive=True,
        open_world=True,
    ),
    ToolDef(
        "ctx_execute_file",
        "Run code over a file (executes code, reads the file)",
        "Process a file without reading it into context: the code gets FILE_CONTENT and "
        "FILE_CONTENT_PATH (file_content in Elixir/Rust); only its output returns. Runs in "
        "the project directory, as ctx_execute. Use instead of Read for logs, CSV, JSON, "
        "test output.",
        _obj(
            ["path", "language", "code"],
            path=_s("absolute or relative to the project"),
            language=_LANGUAGE,
            code=_s(),
            timeout=_TIMEOUT,
            intent=_INTENT,
        ),
        destructive=True,
        open_world=True,
    ),
    ToolDef(
        "ctx_batch_execute",
        "Run shell commands and search their output (executes commands)",
        "Run shell commands in the project directory, index all output, and answer queries "
        "on it in one call. Best "
        "first research step: send every command and question at once. Serial commands "
        "share the timeout; concurrency up to 8 for I/O-bound ones. Checked and confined "
        "as ctx_execute.",
        _obj(
            ["commands", "queries"],
            commands={
                "type": "array",
                "minItems": 1,
                "items": _obj(["label", "command"], label=_s(), command=_s()),
            },
            queries={"type": "array", "minItems": 1, "items": _s()},
            timeout=_TIMEOUT,
            concurrency={"type": "integer", "minimum": 1, "maximum": 8},
            cwd=_CWD,
            query_scope=_s(
                "batch (default): answer from this batch's output; global: the whole "
                "knowledge base",
                enum=["batch", "global"],
            ),
        ),
        destructive=True,
        open_world=True,
    ),
    ToolDef(
        "ctx_index",
        "Index Content",
        "Index docs, notes or a file into the project knowledge base for ctx_search. "
        "Markdown splits by heading, code by definition; an indexed path is re-read when "
        "it changes. Not for logs or test output: use ctx_execute_file.",
        _obj(
            [],
            content=_s("text to index, or give path"),
            path=_s("file or directory read server-side; never enters context"),
            source=_s("label"),
            include=_GLOBS("directory: only files matching these globs"),
            exclude=_GLOBS("directory: skip files and folders matching these globs"),
            maxDepth={"type": "integer", "minimum": 0, "description": "directory: depth"},
            maxFiles={"type": "integer", "minimum": 1, "description": "directory: files"},
            extensions=_GLOBS("directory: only these extensions (.md, py)"),
            respectGitignore={"type": "boolean", "description": "default true"},
            followSymlinks={"type": "boolean", "description": "default false"},
        ),
        # Indexing the same content or path again leaves the same knowledge base.
        idempotent=True,
    ),
    ToolDef(
        "ctx_search",
        "Search Indexed Content",
        "Search the knowledge base (indexed files, URLs, command output). Put all questions "
        "in one call; 2-4 specific terms each. Returns source, lines, title and the "
        "matching lines.",
        _obj(
            ["queries"],
            queries={"type": "array", "items": _s()},
            limit={"type": "number", "description": "per query, default 3"},
            source=_s("only labels containing this"),
            contentType=_s(enum=["code", "prose"]),
            sort=_s(enum=["relevance", "timeline"]),
            project=_s("global: every project's knowledge base; or a project's absolute path"),
        ),
        read_only=True,
        # A repeated search changes nothing more (stale files it re-reads are re-read once).
        idempotent=True,
    ),
    ToolDef(
        "ctx_fetch_and_index",
        "Fetch & Index URL(s)",
        "Fetch URLs server-side (HTML to markdown, JSON, text), index them and return a "
        "short preview; then ctx_search them. Use instead of WebFetch or curl. Cached 24h "
        "unless force.",
        _obj(
            [],
            url=_s(),
            source=_s("label"),
            requests={
                "type": "array",
                "minItems": 1,
                "items": _obj(["url"], url=_s(), source=_s()),
            },
            concurrency={"type": "integer", "minimum": 1, "maximum": 8},
            force={"type": "boolean"},
            ttl={
                "type": "integer",
                "minimum": 0,
                "description": "ms a fetched page stays fresh (default 24h); 0 refetches",
            },
        ),
        open_world=True,
    ),
    ToolDef(
        "ctx_stats",
        "Session Statistics",
        "What ctxmode kept out of context this session and project: bytes returned vs "
        "kept in the sandbox per tool, events captured. Read-only, no parameters. Show "
        "the user the full output.",
        _obj([]),
        read_only=True,
        idempotent=True,
    ),
    ToolDef(
        "ctx_doctor",
        "Run Diagnostics",
        "Check ctxmode's health: Python, SQLite FTS5, runtimes, storage, databases, hook "
        "and MCP registration, server. [OK]/[INFO]/[WARN]/[FAIL] lines with fixes; "
        "redacted, safe to paste into a bug report.",
        _obj([]),
        read_only=True,
        idempotent=True,
    ),
    ToolDef(
        "ctx_upgrade",
        "Upgrade ctxmode",
        "Returns the shell command that upgrades ctxmode the way it was installed (pipx, "
        "uv, pip), migrates its databases and refreshes hook settings. Run it with your "
        "shell tool, then tell the user to restart the agent.",
        _obj([]),
        # Not read-only: what it returns is a command that installs software.
        idempotent=True,
    ),
    ToolDef(
        "ctx_purge",
        "Purge Knowledge Base",
        "DESTRUCTIVE, cannot be undone. scope project: delete this project's knowledge "
        "base, session events and stats. sessionId (scope session): only that session's "
        "events and indexed chunks. Ask the user which scope first; ctx_stats previews.",
        _obj(
            ["confirm"],
            confirm={"type": "boolean", "description": "must be true"},
            scope=_s(enum=["project", "session"]),
            sessionId=_s("one session (implies scope session)"),
        ),
        destructive=True,
        idempotent=True,
    ),
    ToolDef(
        "ctx_insight",
        "Open Insight Dashboard",
        "Write a local HTML dashboard (savings over time, per-tool use, events by "
        "category, most-touched files) and open it; with port, serve it on 127.0.0.1.",
        _obj(
            [],
            port={"type": "integer", "minimum": 1, "maximum": 65535},
            open={"type": "boolean", "description": "open a browser; default true"},
        ),
        idempotent=True,
        open_world=True,  # it opens the user's browser
    ),
]

"""The commands of the CLI by name: where each one lives, and the line `ctxmode --help` shows.

Importing this module costs nothing (no Typer, no command module). The Typer app imports a
command's module only when that command runs, its help is shown or its parameters are
completed (pip's ``commands_dict``); listing the commands (``ctxmode --help``, completing a
command name) uses the summaries below. A test keeps each summary equal to the first
paragraph of the command's help.
"""

from typing import NamedTuple


class Command(NamedTuple):
    module: str
    attr: str  # the command function, or the Typer app of a group
    summary: str  # the first paragraph of its help
    group: bool = False
    cls: str | None = None  # a TyperCommand subclass in the same module


_C = "ctxmode.cli.commands."

# In `ctxmode --help` order.
COMMANDS: dict[str, Command] = {
    "index": Command(_C + "index", "index", "Index files, directories or stdin for search."),
    "search": Command(
        _C + "search",
        "search",
        "Search indexed content: exact words, identifiers, fragments, typos, CJK.",
        cls="QueryCommand",
    ),
    "sources": Command(
        _C + "sources", "sources", "List indexed sources with their chunk counts and sizes."
    ),
    "execute": Command(
        _C + "execute", "execute_command", "Run code in a sandbox and print what it printed."
    ),
    "execute-file": Command(
        _C + "execute",
        "execute_file_command",
        "Process a file in the sandbox: the file's text never reaches your context.",
    ),
    "serve": Command(
        _C + "serve", "serve", "Run the MCP server on stdin/stdout: the ctx_* tools for your agent."
    ),
    "hook": Command(
        _C + "hook",
        "hook",
        "Entry point for agents' hook settings: reads the event on stdin, answers on stdout.",
    ),
    "setup": Command(
        _C + "setup",
        "setup",
        "Register ctxmode's hooks and MCP server in a host agent's settings.",
    ),
    "uninstall": Command(
        _C + "setup",
        "uninstall",
        "Remove what `ctxmode setup` registered for a host agent, and nothing else.",
    ),
    "stats": Command(
        _C + "stats",
        "stats",
        "Show what ctxmode kept out of the agent's context: this session, this project.",
    ),
    "statusline": Command(
        _C + "stats",
        "statusline",
        "Print one status-bar line with this session's and all projects' savings.",
    ),
    "insight": Command(
        _C + "insight", "insight", "Open a local dashboard of what ctxmode kept out of the context."
    ),
    "purge": Command(
        _C + "purge",
        "purge_command",
        "Permanently delete stored data: the whole project (--all) or one session.",
        cls="PurgeCommand",
    ),
    "gc": Command(
        _C + "gc", "gc", "Free disk space: expire old data, drop unused projects, compact."
    ),
    "doctor": Command(
        _C + "doctor",
        "doctor",
        "Check Python, SQLite, runtimes, storage, databases, host setup and the server.",
    ),
    "upgrade": Command(
        _C + "upgrade",
        "upgrade",
        "Upgrade ctxmode the way it was installed, then migrate and set up again.",
    ),
    "policy": Command(
        _C + "policy",
        "policy_app",
        "Inspect the permission rules ctxmode enforces (Claude-style settings files).",
        group=True,
    ),
    "session": Command(
        _C + "session",
        "session_app",
        "Inspect session continuity: the events hooks recorded, per session.",
        group=True,
    ),
}

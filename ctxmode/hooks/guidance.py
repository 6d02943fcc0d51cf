"""Every text ctxmode puts in front of the model from a hook: the session-start routing
block, the redirect reasons, the nudges and the ask wording. Standard library only.

The texts are written as data handling ("output enters this conversation"), never as
orders to hide anything, and they are short: each byte is paid for in every session that
sees it. Their wording contract (ADR-0003):

* a routing redirect starts with ``redirected to <ctx tool>``, says plainly that the tool
  has full network access and ends with the call to make next;
* "Blocked" is reserved for security-policy denials (`ctxmode.security.deny_message`);
* tools are named by their leaf (``ctx_search``), plus the host's full name where it is
  known (``mcp__ctxmode__ctx_search`` on Claude Code).

``CTXMODE_INJECT=off`` turns injected guidance off (`ctxmode.settings.inject_enabled`):
`routing_block` returns ``""`` and the pre-tool router skips nudges and sub-agent blocks.
"""

import os

from ctxmode import settings
from ctxmode.hookevent import SANDBOX_TOOLS, SERVER_TOOLS
from ctxmode.platforms import descriptor

# Operator commands; listed in the main session's block only once the server has the tool.
_COMMANDS = {
    "ctx_stats": '"ctx stats" → ctx_stats, show its output verbatim.',
    "ctx_doctor": '"ctx doctor" → ctx_doctor, show its report.',
    "ctx_upgrade": '"ctx upgrade" → ctx_upgrade, run the command it returns.',
    "ctx_purge": '"ctx purge" → ctx_purge(confirm: true); irreversible, say so first.',
}

ROUTING_TAG = "<context_window_protection>"
"""The routing block's opening tag: how a prompt or transcript that holds it is known."""

LARGE_READ_BYTES = 50_000
"""A Read of a file larger than this gets a size-specific nudge (as in upstream)."""


def _prefix(platform: str) -> str | None:
    """The host's prefix of ctxmode's tool names, where its descriptor knows it."""
    host = descriptor(platform)
    if host is None:
        return None
    if host.plugin_tool_prefix and settings.plugin() == platform:
        return host.plugin_tool_prefix
    return host.tool_prefix


def tool_name(platform: str, leaf: str) -> str:
    """The name the model calls ``leaf`` by on ``platform`` (the leaf where unknown)."""
    return (_prefix(platform) or "") + leaf


def mention(platform: str, leaf: str) -> str:
    """``leaf``, followed by the host's full name in parentheses where it differs."""
    full = tool_name(platform, leaf)
    return leaf if full == leaf else f"{leaf} ({full})"


def _naming_line(platform: str) -> str:
    host, prefix = descriptor(platform), _prefix(platform)
    if host is None or prefix is None:
        return ""
    line = f"On this host they are named {prefix}<name>."
    if host.deferred_tools:
        names = ",".join(tool_name(platform, t) for t in SANDBOX_TOOLS)
        line += " If deferred, load them first: " + host.deferred_tools.format(names=names) + "."
    return line + "\n"


def routing_block(platform: str, *, subagent: bool = False) -> str:
    """The routing block for a session start (or, with ``subagent``, a sub-agent prompt).

    It names the ctx tools and when each one fits, in under 2 KB; ``""`` when injection
    is off. The sub-agent variant leaves out the operator commands and the artifact rule
    (a sub-agent reports back to its parent).
    """
    if not settings.inject_enabled():
        return ""
    commands = "" if subagent else " ".join(_COMMANDS[t] for t in _COMMANDS if t in SERVER_TOOLS)
    return (
        f"{ROUTING_TAG}\n"
        "Tool output enters this conversation in full and stays for the rest of the session. "
        "The ctxmode tools process data in a sandbox and return only what your code prints "
        "or what matches your queries.\n"
        + _naming_line(platform)
        + "- ctx_batch_execute(commands: [{label, command}], queries: [...]): first choice "
        "for research; runs shell commands, indexes their output, answers the queries in one "
        "call.\n"
        '- ctx_search(queries: ["q1", "q2"]): follow-up questions on anything indexed, all '
        'in one call; sort: "timeline" recalls earlier work.\n'
        "- ctx_execute(language, code): tests, builds, logs, git history, API calls; print "
        "only the answer.\n"
        "- ctx_execute_file(path, language, code): analyse a file without reading it in.\n"
        "- ctx_fetch_and_index(url, source): web pages, instead of WebFetch or curl (full "
        "network access); then ctx_search.\n"
        "- ctx_index(content or path, source): add docs or notes for ctx_search.\n"
        "Native tools stay right for: Read before Edit; Write/Edit for every file change "
        "(the sandbox does not keep files); Bash for git, mkdir, mv, rm, navigation and "
        "short fixed output.\n"
        + ("" if subagent else "Write long artifacts to files; reply with the path and one line.\n")
        + (f"{commands}\n" if commands else "")
        + "</context_window_protection>"
    )


# -- nudges (advisory context on an allowed call) ---------------------------------------


def read_nudge(platform: str) -> str:
    return (
        "ctxmode: reading to edit? Read is right. Reading to analyse, search or summarise? "
        f"{mention(platform, 'ctx_execute_file')}(path, language, code) processes the file "
        "in a sandbox; only what your code prints comes back."
    )


def large_read_nudge(platform: str, path: str, size: int) -> str:
    return (
        f"ctxmode: {os.path.basename(path) or path} is {_human(size)}. Read it only to edit "
        f"it; to analyse it call {mention(platform, 'ctx_execute_file')}(path, language, "
        "code) and print only the answer."
    )


def grep_nudge(platform: str) -> str:
    return (
        "ctxmode: search results can be long. To count, filter or summarise matches, run the "
        f'search with {mention(platform, "ctx_execute")}(language: "shell", code: "rg ...") '
        "and print only the answer."
    )


def bash_nudge(platform: str) -> str:
    return (
        "ctxmode: this command may print a lot. If you will process the output, use "
        f"{mention(platform, 'ctx_batch_execute')}(commands, queries) for several commands or "
        f'{mention(platform, "ctx_execute")}(language: "shell", code) for one; only what you '
        "print comes back. Bash stays right for git, mkdir, mv, rm, navigation and short "
        "fixed output."
    )


def mcp_nudge(platform: str) -> str:
    return (
        "ctxmode: external MCP results can be large. To filter or aggregate one, pass the "
        f"data through {mention(platform, 'ctx_execute')}(language, code) and print only the "
        f"answer; for documentation pages use {mention(platform, 'ctx_fetch_and_index')}"
        "(url, source), then ctx_search(queries)."
    )


# -- redirects (the original call does not run) -----------------------------------------


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def fetch_redirect(platform: str, client: str, url: str | None) -> str:
    """curl/wget printing a response: use ctx_fetch_and_index or ctx_execute instead."""
    target = f'url: "{_quoted(url)}"' if url else "url"
    return (
        f"redirected to {mention(platform, 'ctx_fetch_and_index')}: {client} would print the "
        "whole HTTP response into this conversation. ctx_fetch_and_index and ctx_execute "
        "have full network access; do not retry with curl or wget. Next: call "
        f'ctx_fetch_and_index({target}, source: "<label>"), then ctx_search(queries: [...]); '
        "or ctx_execute(language, code) to fetch and print only the answer."
    )


def inline_http_redirect(platform: str) -> str:
    """An interpreter making an HTTP request from a shell command: use ctx_execute."""
    return (
        f"redirected to {mention(platform, 'ctx_execute')}: this command prints a raw HTTP "
        "response into this conversation. ctx_execute has full network access. Next: run "
        "the same code with ctx_execute(language, code) and print only the fields you need."
    )


def build_redirect(platform: str, tool: str, command: str) -> str:
    """A build tool (gradle, maven, sbt) run from Bash: run it in ctx_execute instead."""
    code = _quoted(f"{command} 2>&1 | tail -30")
    return (
        f"redirected to {mention(platform, 'ctx_execute')}: {tool} output is long. "
        "ctx_execute runs it in the project directory with full network access. Next: call "
        f'ctx_execute(language: "shell", code: "{code}"), or grep the log for errors instead '
        "of tail."
    )


def webfetch_redirect(platform: str, urls: list[str]) -> str:
    """WebFetch: fetch with ctx_fetch_and_index and query with ctx_search."""
    if len(urls) > 1:
        listed = ", ".join(f'{{url: "{_quoted(u)}"}}' for u in urls)
        call = f"ctx_fetch_and_index(requests: [{listed}])"
    else:
        target = f'"{_quoted(urls[0])}"' if urls else "<url>"
        call = f'ctx_fetch_and_index(url: {target}, source: "<label>")'
    return (
        f"redirected to {mention(platform, 'ctx_fetch_and_index')}: it has full network "
        "access, indexes the page and keeps it out of this conversation. Do NOT use curl or "
        f"wget instead. Next: call {call}, then "
        f"{mention(platform, 'ctx_search')}(queries: [...]) for what you need."
    )


def echo_command(text: str, *, powershell: bool = False) -> str:
    """A shell command that prints ``text`` (the replacement for a redirected command)."""
    if powershell:
        return "echo '" + text.replace("'", "''") + "'"
    return "echo '" + text.replace("'", "'\"'\"'") + "'"  # as `shlex.quote` (not loaded here)


def ask_reason(rule: str, scope: str) -> str:
    """Why the user is asked to confirm: an ``ask`` permission rule matched."""
    return f"ctxmode: this matches the ask rule {rule} in your {scope} settings; confirm to run it."


def _human(size: int) -> str:
    from ctxmode.stats.model import fmt_bytes

    return fmt_bytes(size)

"""The host's permission rules, applied to what ctxmode is asked to run or read.

Agents reach the shell and the file system through ctxmode (``ctx_execute``,
``ctx_batch_execute``, ``ctx_execute_file``, ``ctx_index``), so the host's own
``permissions.deny`` rules would be one tool name away from useless. This package reads
those rules and answers, for a command, a piece of code or a file path: deny, ask, allow
or no decision. It is core code: standard library only, no printing, and the
``check_*`` functions never raise.

Decisions follow the host (Claude Code): deny, then ask, then allow, whichever file a
rule came from. A deny anywhere beats an allow anywhere, so a project-local deny
overrides a global allow. No matching rule gives `Decision.NONE`: the caller carries on
as if there were no policy.

Fail-open vs fail-closed: by default a broken settings file is skipped, and an internal
error (a bug of ours) falls back to a crude parser-free deny check of the raw text, then
to `Decision.NONE`, with the error in `Verdict.reason`: ctxmode never blocks work
because of its own fault, yet odd input cannot switch a deny rule off. With
``CTXMODE_REQUIRE_SECURITY=1`` (or upstream's ``CONTEXT_MODE_REQUIRE_SECURITY=1``) both
cases deny, with a message naming the bypass.

The modules, each importing only ones listed before it:

* `model`: the enums and named tuples the others speak in;
* `settings`: where rules come from, reading and caching the files (`load_policy`);
* `words`: the words of a simple command: wrappers peeled off, shell quoting;
* `shell`: the lexer that splits a command the way a shell runs it (`split_command`);
* `expand`: expansions the script spells out (``X=rm; $X``, ``${IFS}``, ``$(echo rm)``);
* `code`: shell escapes in code of other languages (`extract_shell_commands`), and code
  that runs what its text does not show (`dynamic_code`);
* `readings`: every text a command's segments are checked as;
* `commands`: ``Bash(...)`` rules (`check_command`, `explain_command`, `check_code`,
  `check_unchecked`) and the fail-safe fallbacks;
* `paths`: ``Read(...)`` rules (`check_path`, `explain_path`, `path_deny_check`), the
  paths they deny on disk (`denied_paths`, for isolation), and ctxmode's own data, which
  its tools never index or read (`own_data`, `refuse_own_data`);
* `named`: ``Read(...)`` rules on the files code names (`check_named_reads`), and
  `check_run`, everything checked before the sandbox runs code;
* `messages`: the wording of a deny (`deny_message`) and `enforce`.

What the text checks cannot do: see a command or a file name built at run time. They
are best effort; ``--isolate`` (`ctxmode.executor.isolate`) enforces the ``Read(...)``
deny rules and the network switch in the kernel.
"""

import importlib

from ctxmode.typenames import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.security.code import TooComplexError, extract_shell_commands
    from ctxmode.security.commands import (
        SHELL_LANGUAGES,
        check_code,
        check_command,
        check_unchecked,
        explain_command,
    )
    from ctxmode.security.messages import Surface, deny_message, enforce
    from ctxmode.security.model import (
        Decision,
        Explanation,
        Policy,
        Rule,
        RuleMatch,
        Scope,
        SettingsSource,
        SourceStatus,
        Subject,
        Verdict,
        ask_message,
    )
    from ctxmode.security.named import check_named_reads, check_run
    from ctxmode.security.paths import (
        TooManyFilesError,
        check_path,
        denied_paths,
        explain_path,
        own_data,
        path_deny_check,
        refuse_own_data,
    )
    from ctxmode.security.settings import (
        MAX_SETTINGS_BYTES,
        PolicyCache,
        claude_config_dir,
        clear_cache,
        load_policy,
        settings_sources,
    )
    from ctxmode.security.shell import MAX_DEPTH, split_command


_HOMES = {  # each name and the module that defines it, imported on first use
    "TooComplexError": "code",
    "extract_shell_commands": "code",
    "SHELL_LANGUAGES": "commands",
    "check_code": "commands",
    "check_command": "commands",
    "check_unchecked": "commands",
    "explain_command": "commands",
    "Surface": "messages",
    "deny_message": "messages",
    "enforce": "messages",
    "Decision": "model",
    "Explanation": "model",
    "Policy": "model",
    "Rule": "model",
    "RuleMatch": "model",
    "Scope": "model",
    "SettingsSource": "model",
    "SourceStatus": "model",
    "Subject": "model",
    "Verdict": "model",
    "ask_message": "model",
    "check_named_reads": "named",
    "check_run": "named",
    "TooManyFilesError": "paths",
    "check_path": "paths",
    "denied_paths": "paths",
    "explain_path": "paths",
    "own_data": "paths",
    "path_deny_check": "paths",
    "refuse_own_data": "paths",
    "MAX_SETTINGS_BYTES": "settings",
    "PolicyCache": "settings",
    "claude_config_dir": "settings",
    "clear_cache": "settings",
    "load_policy": "settings",
    "settings_sources": "settings",
    "MAX_DEPTH": "shell",
    "split_command": "shell",
}


def __getattr__(name: str) -> Any:
    """A name of the package, from its module: a hook that checks a Bash command loads
    the command checks, not the path rules or the code readers (each costs the hook
    process milliseconds, mostly compiling regular expressions)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ctxmode.security' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ctxmode.security.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "MAX_DEPTH",
    "MAX_SETTINGS_BYTES",
    "SHELL_LANGUAGES",
    "Decision",
    "Explanation",
    "Policy",
    "PolicyCache",
    "Rule",
    "RuleMatch",
    "Scope",
    "SettingsSource",
    "SourceStatus",
    "Subject",
    "Surface",
    "TooComplexError",
    "TooManyFilesError",
    "Verdict",
    "ask_message",
    "check_code",
    "check_command",
    "check_named_reads",
    "check_path",
    "check_run",
    "check_unchecked",
    "claude_config_dir",
    "clear_cache",
    "denied_paths",
    "deny_message",
    "enforce",
    "explain_command",
    "explain_path",
    "extract_shell_commands",
    "load_policy",
    "own_data",
    "path_deny_check",
    "refuse_own_data",
    "settings_sources",
    "split_command",
]

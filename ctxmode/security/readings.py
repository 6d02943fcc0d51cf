"""What each segment of a command is checked as.

A deny or ask rule is tried on several readings of each segment (`_readings`): as
written, unquoted, and without redirections, leading ``VAR=value`` assignments and
wrappers (``sudo``, ``env``, ``timeout``, ``nohup``, ``xargs`` ...). Scripts handed to
``sh -c``, ``eval``, ``python -c``, ``node -e`` and ``find -exec`` are segments too
(`_parts`), and so are the shell escapes in code handed to another interpreter.
"""

import os
import re
from typing import NamedTuple

from ctxmode.security.code import extract_shell_commands
from ctxmode.security.shell import MAX_DEPTH, _command_words, _lex, _Segment
from ctxmode.security.words import _SHELLS, _options, _peeled, _quote, peel

_SHELL_OPTION_ARGS = frozenset({"-o", "+o", "-O", "+O"})


# interpreter -> (language, options whose value is a program)
_INTERPRETERS: dict[str, tuple[str, frozenset[str]]] = {
    "python": ("python", _options("-c")),
    "node": ("javascript", _options("-e --eval -p --print")),
    "bun": ("javascript", _options("-e --eval -p --print")),
    "deno": ("javascript", _options("eval")),
    "ruby": ("ruby", _options("-e")),
    "perl": ("perl", _options("-e -E")),
    "php": ("php", _options("-r")),
}
_FIND_EXEC = _options("-exec -execdir -ok -okdir -x --exec -X --exec-batch")
_ENV_SPLIT = _options("-S --split-string")


def _readings(seg: _Segment) -> tuple[str, ...]:
    """Every text a deny or ask rule is tried on, for one segment."""
    seen = dict.fromkeys([seg.text, " ".join(w.value for w in seg.words)])
    for words in _peeled(_command_words(seg)):
        seen[" ".join(words)] = None
        if "/" in words[0]:
            seen[" ".join([os.path.basename(words[0]), *words[1:]])] = None
    return tuple(t for t in seen if t)


def _inner_scripts(seg: _Segment) -> list[tuple[str, str]]:
    """(language, code) this segment runs: ``sh -c``, ``eval``, ``python -c``, ``-exec`` ..."""
    found: list[tuple[str, str]] = []
    for words in _peeled(_command_words(seg)):
        name, args = os.path.basename(words[0]), words[1:]
        if name in _SHELLS or name in ("su", "runuser"):
            found.extend(("shell", code) for code in _shell_c_scripts(name, args))
        elif name == "eval" and args:
            found.append(("shell", " ".join(args)))
        elif name == "env":
            found.extend(("shell", v) for v in _option_values(args, _ENV_SPLIT))
        elif name == "watch":
            inner = peel(words)
            found.extend([("shell", " ".join(inner))] if inner else [])
        elif name in ("find", "fd"):
            found.extend(("shell", code) for code in _find_exec(args))
        else:
            spec = _INTERPRETERS.get(re.sub(r"[\d.]+$", "", name))
            if spec is not None:
                language, options = spec
                found.extend((language, v) for v in _option_values(args, options))
    return found


def _shell_c_scripts(name: str, args: list[str]) -> list[str]:
    if name in ("su", "runuser"):
        out = [a.split("=", 1)[1] for a in args if a.startswith("--command=")]
        return out + [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--command")]
    has_c = False
    skip_next = False
    for a in args:
        if skip_next:
            skip_next = False
        elif a in _SHELL_OPTION_ARGS:
            skip_next = True
        elif a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            has_c = True
        elif not a.startswith(("-", "+")):
            return [a] if has_c else []
    return []


def _find_exec(args: list[str]) -> list[str]:
    out: list[str] = []
    for i, a in enumerate(args):
        if a in _FIND_EXEC:
            cmd: list[str] = []
            for b in args[i + 1 :]:
                if b in (";", "+"):
                    break
                cmd.append(b)
            if cmd:
                out.append(" ".join(_quote(w) for w in cmd))
    return out


def _option_values(args: list[str], options: frozenset[str]) -> list[str]:
    out = [args[i + 1] for i, a in enumerate(args[:-1]) if a in options]
    return out + [a.split("=", 1)[1] for a in args if a.split("=", 1)[0] in options and "=" in a]


class _Part(NamedTuple):
    segment: _Segment
    readings: tuple[str, ...]


def _parts(command: str, depth: int = 0) -> list[_Part]:
    """Every segment of ``command`` with its readings, the scripts it runs included."""
    out: list[_Part] = []
    for seg in _lex(command, depth):
        out.append(_Part(seg, _readings(seg)))
        if depth >= MAX_DEPTH:
            continue
        for language, code in _inner_scripts(seg):
            if language == "shell":
                out.extend(_parts(code, depth + 1))
            else:
                for embedded in extract_shell_commands(language, code):
                    out.extend(_parts(embedded, depth + 1))
    return out

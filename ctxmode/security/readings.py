"""What each segment of a command is checked as.

A deny or ask rule is tried on several readings of each segment (`_readings`): as
written, unquoted, and without redirections, leading ``VAR=value`` assignments and
wrappers (``sudo``, ``env``, ``timeout``, ``nohup``, ``xargs`` ...). Scripts handed to
``sh -c``, ``eval``, ``python -c``, ``node -e`` and ``find -exec`` are segments too
(`_parts`), and so are the shell escapes in code handed to another interpreter.
"""

import os
import re
from collections.abc import Callable

from ctxmode.lazyre import LazyPattern
from ctxmode.security.code import dynamic_code, extract_shell_commands
from ctxmode.security.expand import ShellVars, defined_functions, expand_word
from ctxmode.security.shell import MAX_DEPTH, _command_words, _lex, _Segment
from ctxmode.security.words import _SHELLS, ASSIGNMENT, _options, _peeled, _quote, peel
from ctxmode.typenames import NamedTuple

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
    """Every text a deny or ask rule is tried on, for one segment: as written, with each
    wrapper peeled, a path's program by its name, and a command name the shell would
    expand (``{rm,-rf,x}``, ``/bin/r?``) as what it expands to."""
    seen = dict.fromkeys([seg.text, " ".join(w.value for w in seg.words)])
    for words in _peeled(_command_words(seg)):
        for expanded in _expanded_names(words):
            seen[" ".join(expanded)] = None
            if "/" in expanded[0]:
                seen[" ".join([os.path.basename(expanded[0]), *expanded[1:]])] = None
    return tuple(t for t in seen if t)


_BRACE_LIST = LazyPattern(r"^\{([^{}]*,[^{}]*)\}$")
_GLOB_CHARS = frozenset("*?[")
_NAME_GLOB_HITS = 16


def _expanded_names(words: list[str]) -> list[list[str]]:
    """`words`, and what the shell makes of a first word that is a brace list (its items
    become words) or a glob (each program it matches, on its path or in $PATH)."""
    out = [words]
    first = words[0]
    braces = _BRACE_LIST.match(first)
    if braces:
        out.append([*braces.group(1).split(","), *words[1:]])
    if _GLOB_CHARS & set(first):
        import glob

        folders = [""] if "/" in first else os.environ.get("PATH", os.defpath).split(os.pathsep)
        hits: list[str] = []
        for folder in folders:
            pattern = first if not folder else os.path.join(folder, first)
            hits.extend(glob.glob(pattern))
            if len(hits) >= _NAME_GLOB_HITS:
                break
        out.extend([hit, *words[1:]] for hit in hits[:_NAME_GLOB_HITS])
    return out


def _inner_scripts(seg: _Segment) -> list[tuple[str, str]]:
    """(language, code) this segment runs: ``sh -c``, ``eval``, ``python -c``, ``-exec`` ..."""
    found: list[tuple[str, str]] = []
    for words in _peeled(_command_words(seg)):
        name, args = os.path.basename(words[0]), words[1:]
        if name in _SHELLS or name in ("su", "runuser", "sg"):
            found.extend(("shell", code) for code in _shell_c_scripts(name, args))
        elif name in _SCHEDULERS and seg.heredoc and "-f" not in args:
            found.append(("shell", seg.heredoc))  # at now <<< 'cmd': at runs its stdin
        elif name in ("source", ".") and args[:1] and args[0] in _STDIN_FILES and seg.heredoc:
            found.append(("shell", seg.heredoc))
        elif name == "eval" and args:
            found.append(("shell", " ".join(args)))
        elif name == "trap" and args and not args[0].startswith("-"):
            found.append(("shell", args[0]))  # trap 'cmd' EXIT runs cmd
        elif name == "env":
            found.extend(("shell", v) for v in _option_values(args, _ENV_SPLIT))
        elif name == "watch":
            inner = peel(words)
            found.extend([("shell", " ".join(inner))] if inner else [])
        elif name in ("find", "fd"):
            found.extend(("shell", code) for code in _find_exec(args))
        elif name in _RUNS_COMMANDS:
            found.extend(("shell", code) for code in _RUNS_COMMANDS[name](args))
        else:
            spec = _INTERPRETERS.get(re.sub(r"[\d.]+$", "", name))
            if spec is not None:
                language, options = spec
                programs = _option_values(args, options)
                if not programs and seg.heredoc:  # python3 - <<EOF ... EOF
                    programs = [seg.heredoc]
                found.extend((language, v) for v in programs)
    return found


_SCHEDULERS = frozenset({"at", "batch"})  # they run the commands given on stdin
_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def _shell_c_scripts(name: str, args: list[str]) -> list[str]:
    if name in ("su", "runuser", "sg"):
        out = [a.split("=", 1)[1] for a in args if a.startswith("--command=")]
        out += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--command")]
        if name == "sg" and not out:  # sg GROUP 'command'
            rest = [a for a in args if a != "-"]
            out = [" ".join(rest[1:])] if len(rest) > 1 else []
        return out
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


def _option_scripts(options: frozenset[str]) -> "Callable[[list[str]], list[str]]":
    return lambda args: _option_values(args, options)


_AWK_SYSTEM = LazyPattern(r"""\bsystem\s*\(\s*"((?:[^"\\]|\\.)*)"|\|\s*getline|"([^"]*)"\s*\|""")
_SED_E = LazyPattern(r"(?:^|;|\n)\s*(?:\d+|/[^/]*/)?\s*e\s+(.+?)(?:;|$)", re.M)
_GIT_ALIAS = LazyPattern(r"^alias\.[\w.-]+=!(.*)$", re.S)
_VIM_BANG = LazyPattern(r"^\s*:?\s*!(.*)$", re.S)


_SSH_OPTION_ARGS = frozenset(
    "-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -P -p -Q -R -S -W -w".split()
)


def _ssh(args: list[str]) -> list[str]:
    """The command ``ssh [options] HOST COMMAND...`` runs (in a shell, on that host)."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        i += 2 if args[i] in _SSH_OPTION_ARGS else 1
    if i < len(args) and args[i] == "--":
        i += 1
    command = args[i + 1 :]
    return [" ".join(command)] if command else []


def _awk(args: list[str]) -> list[str]:
    """The commands an awk program runs (``system("...")``, ``"cmd" | getline``)."""
    program = next((a for a in args if not a.startswith("-")), "")
    out = []
    for m in _AWK_SYSTEM.finditer(program):
        if m.group(1) is not None:
            out.append(m.group(1))
        elif m.group(2) is not None:
            out.append(m.group(2))
    return out


def _sed(args: list[str]) -> list[str]:
    """The commands of a sed script's ``e`` command (GNU sed runs them)."""
    scripts = _option_values(args, _options("-e --expression"))
    if not scripts:  # no -e: the first word that is no option is the script
        scripts = [next((a for a in args if not a.startswith("-")), "")]
    return [m.group(1) for script in scripts for m in _SED_E.finditer(script)]


def _tar(args: list[str]) -> list[str]:
    """``--checkpoint-action=exec=CMD``, ``--to-command=CMD``, ``--use-compress-program``."""
    out = []
    for a in args:
        key, _, value = a.partition("=")
        if key == "--checkpoint-action" and value.startswith("exec="):
            out.append(value[len("exec=") :])
        elif key in ("--to-command", "--use-compress-program", "--info-script", "-F") and value:
            out.append(value)
    return out


def _git(args: list[str]) -> list[str]:
    """``git -c alias.x='!cmd' x``, ``-c core.pager=cmd``, ``-c core.sshCommand=cmd``."""
    out = []
    for value in _option_values(args, _options("-c --config-env")):
        alias = _GIT_ALIAS.match(value)
        key, _, command = value.partition("=")
        if alias:
            out.append(alias.group(1))
        elif key.lower() in ("core.pager", "core.sshcommand", "core.editor", "core.fsmonitor"):
            out.append(command)
    return out


def _vim(args: list[str]) -> list[str]:
    """``vim -c '!cmd'`` and ``+'!cmd'``."""
    commands = _option_values(args, _options("-c --cmd"))
    commands += [a[1:] for a in args if a.startswith("+")]
    return [m.group(1) for c in commands if (m := _VIM_BANG.match(c))]


def _mapfile(args: list[str]) -> list[str]:
    """``mapfile -C callback``: the callback runs as a command."""
    return _option_values(args, _options("-C"))


_RUNS_COMMANDS: "dict[str, Callable[[list[str]], list[str]]]" = {
    "script": _option_scripts(_options("-c --command")),
    "flock": _option_scripts(_options("-c --command")),
    "ssh": _ssh,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "sed": _sed,
    "tar": _tar,
    "git": _git,
    "vim": _vim,
    "vi": _vim,
    "nvim": _vim,
    "ex": _vim,
    "mapfile": _mapfile,
    "readarray": _mapfile,
}


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
    """The values `args` give `options`: ``-c VALUE``, ``--opt=VALUE``, and as getopt reads
    short options bundled (``-qc VALUE``, ``-ne SCRIPT``, node's ``-pe SCRIPT``) or with the
    value attached (``-cVALUE``); other letters of a bundle are taken for flags."""
    out: list[str] = []
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else None
        if arg in options:
            if following is not None:
                out.append(following)
        elif "=" in arg and arg.split("=", 1)[0] in options:
            out.append(arg.split("=", 1)[1])
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
            at = next((k for k in range(1, len(arg)) if f"-{arg[k]}" in options), None)
            if at is None:
                continue
            rest = arg[at + 1 :]
            # node's -pe: the rest names more options that take the value, which follows
            value = following if all(f"-{c}" in options for c in rest) else rest
            if value:
                out.append(value)
    return out


class _Part(NamedTuple):
    segment: _Segment
    readings: tuple[str, ...]
    unchecked: str | None = None  # what it runs cannot be read from the text (`_unchecked`)


_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})
_POSITIONAL_NAMES = frozenset({"$@", "$*", *(f"${d}" for d in "0123456789")})


def _literal(raw: str, variables: ShellVars) -> str | None:
    """The value of an assignment's right-hand side, when the text says what it is."""
    text, resolved = expand_word(raw, variables)
    if not resolved:
        return None
    if not text:
        return ""
    segs = _lex(": " + text)
    if len(segs) != 1 or len(segs[0].words) != 2:
        return None
    return segs[0].words[1].value


def _track(seg: _Segment, variables: ShellVars) -> None:
    """Record what ``seg`` assigns: ``X=rm``, ``export X=rm``; ``read X``, ``for X`` unknown."""
    words = [w for w in seg.words if not w.redirect]
    values = [w.value for w in words]
    if not values:
        return
    if all(ASSIGNMENT.match(v) for v in values):
        start = 0
    elif values[0] in _DECLARE:
        start = 1
    else:
        if values[0] == "alias":
            for value in values[1:]:
                name, eq, meaning = value.partition("=")
                if eq and name and not name.startswith("-"):
                    variables.aliases[name] = meaning
        elif values[0] == "for" and len(values) > 1:
            variables.assign(values[1], None)
        elif values[0] in ("read", "mapfile", "readarray", "unset"):
            for name in values[1:]:
                if not name.startswith("-"):
                    variables.assign(name, None)
        return
    for word in words[start:]:
        m = ASSIGNMENT.match(word.value)
        if m is None:
            continue
        name = m.group(0).rstrip("+=")
        append = m.group(0).endswith("+=")
        raw = word.raw.split("=", 1)[1] if "=" in word.raw else ""
        variables.assign(name, None if append else _literal(raw, variables))


def _expanded(seg: _Segment, variables: ShellVars) -> str | None:
    """``seg`` with its known expansions done (`expand_word`), None when nothing changed."""
    if "$" not in seg.text and "`" not in seg.text:
        return None
    text = " ".join(expand_word(w.raw, variables)[0] for w in seg.words)
    return None if text == seg.text else text


def _innermost(seg: _Segment) -> list[str]:
    peeled = _peeled(_command_words(seg))
    return peeled[-1] if peeled else []


def _unchecked(
    segs: tuple[_Segment, ...], index: int, functions: frozenset[str], expanded: bool
) -> tuple[str | None, str | None]:
    """(why ``segs[index]`` cannot be checked, or None; a script piped into it, or None).

    Its command name is computed at run time (``$X``, ``$(...)``, backticks, ``"$@"``
    outside a wrapper function), or a shell or interpreter reads its script from a pipe
    or a process substitution. A script piped from an ``echo`` of literal words is
    returned instead, to be checked. ``expanded``: `_expanded` rewrote the segment, and
    the rewritten command is checked on its own.
    """
    seg = segs[index]
    words = _innermost(seg)
    if not words or (len(words) == 1 and ASSIGNMENT.match(words[0])):
        return None, None
    name = os.path.basename(words[0])
    if words[0] in _POSITIONAL_NAMES:
        # A wrapper function's "$@": the calls of the script's functions are read instead.
        return (None if functions else f"runs a command named at run time ({words[0]})"), None
    if "$" in name or "`" in name:
        return (None if expanded else f"runs a command named at run time ({words[0]})"), None
    scheduler = name in _SCHEDULERS and "-f" not in words[1:]  # echo cmd | at now
    runner = scheduler or name in _SHELLS or re.sub(r"[\d.]+$", "", name) in _INTERPRETERS
    raws = [w.raw for w in seg.words if not w.redirect]
    if (runner or name in ("source", ".")) and any(r.startswith("<(") for r in raws[1:]):
        return f"runs a script produced at run time ({seg.text})", None
    if not runner or _inner_scripts(seg) or seg.heredoc:
        return None, None
    from_stdin = scheduler or any(a in ("-s", "-") for a in words[1:])
    if not from_stdin and any(not a.startswith("-") for a in words[1:]):
        return None, None  # it runs a script file
    if seg.pipeline < 0 or seg.pipeline == index:
        return None, None
    feeder = segs[max(j for j in range(index) if segs[j].pipeline == seg.pipeline)]
    fed = _innermost(feeder)
    if fed and fed[0] in ("echo", "printf") and "$" not in feeder.text and "`" not in feeder.text:
        script = " ".join(fed[1:])
        if fed[0] == "echo" or "%" not in script:
            return None, script
    return f"pipes a script into {name} ({seg.text})", None


def _parts(
    command: str,
    depth: int = 0,
    variables: ShellVars | None = None,
    functions: frozenset[str] | None = None,
) -> list[_Part]:
    """Every segment of ``command`` with its readings, the scripts it runs included.

    Known expansions (`expand_word`) add the command they expand to; a call of a shell
    function the script defines adds the command it was handed (``f() { "$@"; }; f rm``).
    """
    variables = ShellVars() if variables is None else variables
    functions = defined_functions(command) if functions is None else functions
    out: list[_Part] = []
    segs = _lex(command, depth)
    for index, seg in enumerate(segs):
        expanded = _expanded(seg, variables)
        _track(seg, variables)
        unchecked, piped = _unchecked(segs, index, functions, expanded is not None)
        out.append(_Part(seg, _readings(seg), unchecked))
        if depth >= MAX_DEPTH:
            continue
        more: list[tuple[str, str]] = []
        if expanded is not None:
            more.append(("shell", expanded))
        if piped is not None:
            more.append(("shell", piped))
        words = _innermost(seg)
        if len(words) > 1 and words[0] in functions:
            more.append(("shell", " ".join(_quote(w) for w in words[1:])))
        if words and words[0] in variables.aliases:  # alias x=rm; x -rf build
            rest = " ".join(_quote(w) for w in words[1:])
            more.append(("shell", f"{variables.aliases[words[0]]} {rest}"))
        for language, code in [*more, *_inner_scripts(seg)]:
            if language == "shell":
                out.extend(_parts(code, depth + 1, variables, functions))
                continue
            reason = dynamic_code(language, code)
            if reason is not None:
                out.append(_Part(seg, (), f"{reason} in {language} code"))
            for embedded in extract_shell_commands(language, code):
                out.extend(_parts(embedded, depth + 1))
    return out

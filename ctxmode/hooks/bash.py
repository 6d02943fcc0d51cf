"""What a shell command does, as far as routing cares: does it print an HTTP response
(curl/wget, an interpreter's inline HTTP call), run a build tool, or have structurally
bounded output? Standard library only; imported for Bash calls alone.

Commands are read with `shlex` (quotes honoured, so ``gh issue edit --body "use curl"``
runs no curl) into pipelines of simple commands. A rule looks at the *command name*,
after ``VAR=value`` assignments and wrappers (``sudo``, ``env``, ``timeout``, ``xargs``
...), so ``docker exec box curl …`` and ``ls gradle`` are not what they mention.
"""

import re
import shlex
from functools import cache, cached_property
from typing import Any, NamedTuple

_URL = re.compile(r"https?://[^\s<>\"'`)\]}]+", re.IGNORECASE)


def urls_in(text: str) -> list[str]:
    """The http(s) URLs in free text, without trailing sentence punctuation."""
    return [m.rstrip(".,;:!?") for m in _URL.findall(text)]


def shell_command(tool_input: dict[str, Any]) -> str:
    """The shell command of a Bash-like call (``command``, or Codex's ``cmd``)."""
    for key in ("command", "cmd"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            # Codex `shell`: ["bash", "-lc", "<script>"]
            words: list[str] = value
            if len(words) == 3 and _basename(words[0]) in _SHELLS and words[1].startswith("-"):
                return words[2]
            return shlex.join(words)
    return ""


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_PUNCT = "();<>|&\n"
_HEREDOC = re.compile(r"(?<!<)<<(-?)[ \t]*(['\"]?)([\w.-]+)\2")


class Command:
    """One simple command: its words (quotes removed, redirections apart).

    A plain class, not a dataclass: importing `dataclasses` costs the hook process ~8 ms.
    No ``__slots__``: the cached properties below need the instance ``__dict__``.
    """

    def __init__(
        self,
        words: list[str] | None = None,
        redirects: list[tuple[str, str, str]] | None = None,  # (fd, op, target)
        heredoc: str = "",
    ) -> None:
        self.words: list[str] = [] if words is None else words
        self.redirects: list[tuple[str, str, str]] = [] if redirects is None else redirects
        self.heredoc = heredoc

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Command)
        return (self.words, self.redirects, self.heredoc) == (
            other.words,
            other.redirects,
            other.heredoc,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaced

    def __repr__(self) -> str:
        return (
            f"Command(words={self.words!r}, redirects={self.redirects!r}, heredoc={self.heredoc!r})"
        )

    def argv(self) -> list[str]:
        """The words from the command name on: assignments and wrappers peeled off."""
        # The policy's own wrapper table (imported here: only Bash calls need it).
        from ctxmode.security.words import ASSIGNMENT, peel

        words = [w for w in self.words if w != "$"]
        i = 0
        while i < len(words) and ASSIGNMENT.match(words[i]):
            i += 1
        words = words[i:]
        for _ in range(8):
            inner = peel(words) if words else None
            if inner is None:
                break
            words = inner
        return words

    @cached_property
    def name(self) -> str:
        """The command name, lower case, without a Windows executable suffix."""
        argv = self.argv()
        name = _basename(argv[0]).lower() if argv else ""
        stem, dot, suffix = name.rpartition(".")
        return stem if dot and stem and suffix in ("exe", "bat", "cmd", "ps1") else name

    def stdout_to_file(self) -> bool:
        """Does a redirection send this command's stdout to a file?"""
        for fd, op, target in self.redirects:
            if op in ("&>", "&>>"):
                return True
            if fd not in ("", "1"):
                continue
            if op in (">", ">>", ">|"):
                return target not in ("/dev/stdout", "/dev/tty", "/dev/fd/1", "/dev/stderr")
            if op == ">&" and not target.isdigit() and target != "-":
                return True
        return False


def _basename(word: str) -> str:
    return word.lstrip("`").replace("\\", "/").rsplit("/", 1)[-1]


def _cut_heredocs(command: str) -> tuple[str, list[str]]:
    """The command without here-document bodies, and the bodies in order."""
    if "<<" not in command:
        return command, []
    lines = command.split("\n")
    kept: list[str] = []
    bodies: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        kept.append(line)
        i += 1
        for match in _HEREDOC.finditer(line):
            strip_tabs, delim = match.group(1) == "-", match.group(3)
            body: list[str] = []
            while i < len(lines):
                current = lines[i]
                i += 1
                if (current.lstrip("\t") if strip_tabs else current).rstrip("\r") == delim:
                    break
                body.append(current)
            bodies.append("\n".join(body))
    return "\n".join(kept), bodies


def pipelines(command: str) -> list[list[Command]]:
    """``command`` as pipelines of simple commands (split on ``&&``, ``||``, ``;``, ``&``,
    newlines and parentheses; ``|`` inside a pipeline). Quotes are honoured; text the
    shell lexer cannot read (an unclosed quote) is split on whitespace instead."""
    text, bodies = _cut_heredocs(command.replace("\\\n", " "))
    tokens: list[str] | None = None
    if len(text) <= _LEX_LIMIT:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=_PUNCT)
        lexer.whitespace = " \t\r"
        lexer.commenters = ""
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:
            tokens = None
    if tokens is None:
        tokens = re.findall(r"[();<>|&\n]+|[^\s();<>|&]+", text)
    result: list[list[Command]] = [[Command()]]
    pending: tuple[str, str] | None = None
    for tok in tokens:
        cmd = result[-1][-1]
        if tok and all(c in _PUNCT for c in tok):
            if "<" in tok or ">" in tok:
                fd = ""
                if cmd.words and cmd.words[-1].isdigit() and len(cmd.words[-1]) == 1:
                    fd = cmd.words.pop()
                pending = (fd, tok.replace("(", "").replace(")", "").replace(";", ""))
            elif tok in ("|", "|&"):
                result[-1].append(Command())
                pending = None
            else:
                result.append([Command()])
                pending = None
        elif pending is not None:
            fd, op = pending
            cmd.redirects.append((fd, op, tok))
            if op in ("<<", "<<-") and bodies:
                cmd.heredoc += bodies.pop(0)
            pending = None
        else:
            cmd.words.append(tok)
    return [[c for c in line if c.words] for line in result if any(c.words for c in line)]


# Structurally bounded commands (as in upstream): no control operator, and a known short output.
_CONTROL = re.compile(r"[|`\n\r]|\$\(|>>|>|<(?!<)|&(?!&)|&&|\|\||;")
_BOUNDED = (
    r"pwd",
    r"whoami",
    r"hostname(?:\s+-[a-zA-Z]+)?",
    r"uname(?:\s+-[a-zA-Z]+)?",
    r"id(?:\s+\S+)?",
    r"date(?:\s+[^\r\n]+)?",
    r"echo\s[^\r\n]*",
    r"printf\s[^\r\n]*",
    r"which\s+\S+(?:\s+\S+)*",
    r"type\s+\S+(?:\s+\S+)*",
    r"command\s+-v\s+\S+(?:\s+\S+)*",
    r"readlink(?:\s+[^\r\n]+)?",
    r"basename(?:\s+[^\r\n]+)?",
    r"dirname(?:\s+[^\r\n]+)?",
    r"realpath(?:\s+[^\r\n]+)?",
    r"cd(?:\s+[^\r\n]+)?",
    r"mkdir(?:\s+[^\r\n]+)?",
    r"touch\s+[^\r\n]+",
    r"(?:mv|cp|rm|ln)(?!.*\s-[a-zA-Z]*v)(?!.*\s--verbose\b)\s+[^\r\n]+",
    r"ls(?!.*\s-[a-zA-Z]*R)(?!.*\s--recursive)(?:\s+[^\r\n]+)?",
    r"git\s+status(?:\s+[^\r\n]+)?",
    r"git\s+rev-parse(?:\s+[^\r\n]+)?",
    r"git\s+remote(?:\s+-v|\s+show\s+\S+)?",
    r"git\s+branch(?:\s+[^\r\n]+)?",
    r"git\s+config\s+--get(?:\s+[^\r\n]+)?",
    r"git\s+diff\s+--stat(?:\s+[^\r\n]+)?",
    r"git\s+diff\s+--name-only(?:\s+[^\r\n]+)?",
    r"git\s+stash\s+list",
    r"git\s+tag(?:\s+-l(?:\s+[^\r\n]+)?)?",
    r"git\s+log\s+-\d{1,2}(?:\s+[^\r\n]+)?",
    r"[^\r\n]*?(?:^|\s)--version(?:\s[^\r\n]*)?",
    r"\S+\s+-V(?:\s[^\r\n]*)?",
)


@cache
def _bounded_re() -> re.Pattern[str]:
    return re.compile("(?:" + "|".join(_BOUNDED) + ")")


def is_bounded(command: str) -> bool:
    """Is the output of ``command`` structurally bounded (as in upstream)? Unknown: no."""
    text = command.strip()
    if not text or _CONTROL.search(text):
        return False
    return _bounded_re().fullmatch(text) is not None


class BashRoute(NamedTuple):
    """What kind of Bash command this is, for routing."""

    kind: str  # "fetch" | "inline_http" | "build" | "bounded" | "other"
    detail: str = ""  # fetch: "curl"/"wget"; build: the tool
    url: str | None = None


_INTERPRETERS = re.compile(r"(?:python|pypy)[\d.]*|node(?:js)?|deno|bun|ruby|perl|php[\d.]*")
_INLINE_HTTP = re.compile(
    r"fetch\s*\(\s*['\"`]https?:"
    r"|requests\.(?:get|post|put|patch|delete|head|request)\s*\("
    r"|httpx\.(?:get|post|put|patch|delete|stream|request)\s*\("
    r"|urlopen\s*\("
    r"|\bhttps?\.(?:get|request)\s*\("
    r"|axios(?:\.(?:get|post|put|request))?\s*\("
    r"|Net::HTTP|URI\.open\s*\("
    r"|file_get_contents\s*\(\s*['\"]https?:",
    re.IGNORECASE,
)
_BUILD_TOOLS = frozenset({"gradlew", "gradle", "mvnw", "mvn", "sbt"})
_POWERSHELL_FETCH = frozenset({"invoke-webrequest", "iwr", "invoke-restmethod", "irm"})
# Every command a rule above can apply to mentions one of these: the rest skip the lexer.
_MENTIONS = re.compile(
    r"curl|wget|gradle|mvn|sbt|iwr|irm|invoke-|fetch|requests|httpx|urlopen|https?\.|axios"
    r"|Net::HTTP|URI\.open|file_get_contents",
    re.IGNORECASE,
)
_LEX_LIMIT = 32 * 1024  # longer commands are split on whitespace: shlex is slow on 100 KB
# Commands that consume a download without printing it, and ones that cut a log short.
_CONSUMERS = frozenset({*_SHELLS, "tar", "bsdtar", "gunzip", "gzip", "xz", "zstd", "bzip2", "cpio"})
_LIMITERS = frozenset({"tail", "head", "grep", "egrep", "rg", "wc"})


def classify_bash(command: str) -> BashRoute:
    """Which routing rule applies to a shell command (security aside)."""
    if is_bounded(command):
        return BashRoute("bounded")
    if not _MENTIONS.search(command):
        return BashRoute("other")
    lines = pipelines(command)
    for line in lines:
        for i, cmd in enumerate(line):
            if (cmd.name in ("curl", "wget") and _fetch_prints(cmd, line[i + 1 :])) or (
                cmd.name in _POWERSHELL_FETCH and _cmdlet_prints(cmd, line[i + 1 :])
            ):
                urls = urls_in(" ".join(cmd.argv()))
                return BashRoute("fetch", cmd.name, urls[0] if urls else None)
    for line in lines:
        for cmd in line:
            if _INTERPRETERS.fullmatch(cmd.name) and _INLINE_HTTP.search(
                " ".join(cmd.argv()[1:]) + "\n" + cmd.heredoc
            ):
                return BashRoute("inline_http", cmd.name)
    for line in lines:
        for i, cmd in enumerate(line):
            if cmd.name in _BUILD_TOOLS and not _output_limited(cmd, line[i + 1 :]):
                return BashRoute("build", cmd.name)
    return BashRoute("other")


def _output_limited(cmd: Command, rest: list[Command]) -> bool:
    """The build's log goes to a file, or through tail/head/grep/wc."""
    if cmd.stdout_to_file():
        return True
    return bool(rest) and (rest[-1].name in _LIMITERS or rest[-1].stdout_to_file())


def _cmdlet_prints(cmd: Command, rest: list[Command]) -> bool:
    """PowerShell's web cmdlets print the response unless ``-OutFile`` takes it."""
    if any(a.lower().startswith("-outf") for a in cmd.argv()[1:]) or cmd.stdout_to_file():
        return False
    return not (rest and rest[-1].stdout_to_file())


def _fetch_prints(cmd: Command, rest: list[Command]) -> bool:
    """Would this curl/wget put a response (or a progress meter) into the conversation?

    Safe only when all hold (upstream #166): the body goes to a file (``-o``/``-O``, a
    stdout redirection, wget's default, or a pipe into an unpacker/shell or a command
    writing to a file), not to stdout (``-o -``), no verbose or trace output, and silent
    (curl ``-s``, wget ``-q`` or a log file).
    """
    curl = cmd.name == "curl"
    args = cmd.argv()[1:]
    to_file = not curl  # wget saves to a file unless told otherwise
    to_stdout = silent = verbose = False

    def target(value: str) -> None:
        nonlocal to_file, to_stdout
        if value in ("-", "/dev/stdout", "/dev/fd/1"):
            to_stdout = True
        else:
            to_file = True

    i = 0
    while i < len(args):
        arg = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            takes = (
                ("--output", "--dump-header", "--trace", "--trace-ascii")
                if curl
                else ("--output-document", "--output-file", "--append-output")
            )
            if name in takes and not eq:
                value = nxt
                i += 1
            if name in ("--output", "--output-document"):
                target(value)
            elif name in ("--remote-name", "--remote-name-all"):
                to_file = True
            elif name in ("--silent", "--no-progress-meter", "--quiet", "--no-verbose"):
                silent = True
            elif name in ("--output-file", "--append-output"):
                silent = True
            elif name in ("--verbose", "--trace", "--trace-ascii", "--server-response") or (
                name == "--dump-header" and value == "-"
            ):
                verbose = True
        elif arg.startswith("-") and len(arg) > 1:
            if not curl and arg == "-nv":
                silent = True
                i += 1
                continue
            for j, ch in enumerate(arg[1:], 1):
                rest_of = arg[j + 1 :]
                if curl and ch == "o" or not curl and ch == "O":
                    target(rest_of or nxt)
                    i += 0 if rest_of else 1
                    break
                if curl and ch == "D":
                    verbose = verbose or (rest_of or nxt) == "-"
                    i += 0 if rest_of else 1
                    break
                if not curl and ch in "oa":  # wget log file: stderr leaves the terminal
                    silent = True
                    i += 0 if rest_of else 1
                    break
                if curl and ch == "O":
                    to_file = True
                elif ch == ("s" if curl else "q"):
                    silent = True
                elif ch == "v" or (not curl and ch == "S"):
                    verbose = True
                elif curl and ch in "HdAeXFTmwxbcEKruyYzCUQPt":
                    i += 0 if rest_of else 1  # an option with a value: the rest is its value
                    break
        i += 1
    in_file = to_file and not to_stdout
    if not in_file:  # the body is on stdout: where does stdout go?
        in_file = cmd.stdout_to_file() or (
            bool(rest) and (rest[0].name in _CONSUMERS or rest[-1].stdout_to_file())
        )
    return not in_file or verbose or not silent

"""What a shell command does, as far as routing cares: does it print an HTTP response
(curl/wget, an interpreter's inline HTTP call), run a build tool, or have structurally
bounded output? Standard library only; imported for Bash calls alone.

Commands are read by the permission policy's lexer (`ctxmode.security.shell`), so routing
and the policy see the same simple commands: quotes honoured (``gh issue edit --body "use
curl"`` runs no curl), and the commands inside ``$(...)``, backticks, ``<(...)``, here-
documents fed to a shell and scripts handed to ``sh -c``/``eval`` included. A rule looks at
the *command name*, after ``VAR=value`` assignments and wrappers (``sudo``, ``env``,
``timeout``, ``xargs`` ...), so ``docker exec box curl …`` and ``ls gradle`` are not what
they mention.

Where a command's output goes decides whether it reaches the conversation
(`_output_kept`): a file, a pipe into an unpacker or a shell, or the command it flows into.
A command substitution's output counts as printed when its command shows its arguments
(``echo "$(curl …)"``, ``printf``) or only assigns them (``X=$(curl …)``: the variable is
nearly always echoed or parsed next, and variables are not followed); it is kept when a
shell runs it (``sh -c "$(curl …)"``, ``eval``, ``source <(curl …)``) and when it is just
another command's argument (``git commit -m "$(curl …)"``). Here-strings, here-documents,
``<(...)`` and ``sh -c`` scripts print wherever their command prints.
"""

import re
from functools import cache, cached_property

from ctxmode.lazyre import LazyPattern
from ctxmode.platforms.normalise import urls_in
from ctxmode.security.readings import _inner_scripts
from ctxmode.security.shell import MAX_DEPTH, Redirect, Segment, segments
from ctxmode.security.words import _SHELLS, ASSIGNMENT, peel
from ctxmode.typenames import NamedTuple


class Command:
    """One simple command of the shared lexer, and where its output goes.

    ``rest`` are the commands after it in its pipeline; ``outer`` is the command whose
    substitution, here-document or ``sh -c`` script it ran in, ``via`` how (`Segment.via`,
    or ``-c`` for a script argument). A plain class, not a dataclass: importing
    `dataclasses` costs the hook process ~8 ms. No ``__slots__``: `name` is cached in the
    instance ``__dict__``.
    """

    def __init__(self, segment: Segment) -> None:
        self.segment = segment
        self.rest: list[Command] = []
        self.outer: Command | None = None
        self.via = ""

    @property
    def text(self) -> str:
        """The command as written (`ctxmode.security.split_command` gives the same)."""
        return self.segment.text

    @property
    def words(self) -> list[str]:
        """The unquoted words, redirections left out."""
        return [w.value for w in self.segment.words if not w.redirect]

    @property
    def redirects(self) -> tuple[Redirect, ...]:
        return self.segment.redirects

    @property
    def heredoc(self) -> str:
        return self.segment.heredoc

    def argv(self) -> list[str]:
        """The words from the command name on: assignments and wrappers peeled off."""
        words = self.words
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
        name = argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower() if argv else ""
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


def commands(command: str, depth: int = 0, outer: Command | None = None) -> list[Command]:
    """Every simple command of ``command``, in the policy's order (`check_command`): each
    segment of `ctxmode.security.shell.segments`, followed by the commands of the shell
    scripts it is handed (``sh -c``, ``eval``, ``su -c``, ``env -S``, ``watch``, ``find
    -exec``). Unlike the policy, routing leaves out shell escapes in other languages' code
    (whether ``os.system`` or ``execSync`` output is printed depends on the call) and the
    scripts of a segment mentioning nothing a routing rule looks for."""
    segs = segments(command, depth)
    cmds = [Command(seg) for seg in segs]
    lines: dict[int, list[Command]] = {}
    for seg, cmd in zip(segs, cmds, strict=True):
        if seg.outer >= 0:
            cmd.outer, cmd.via = cmds[seg.outer], seg.via
        elif outer is not None:
            cmd.outer, cmd.via = outer, "-c"
        line = lines.setdefault(seg.pipeline, [])
        line.append(cmd)
    for line in lines.values():
        for i, cmd in enumerate(line):
            cmd.rest = line[i + 1 :]
    out: list[Command] = []
    for cmd in cmds:
        out.append(cmd)
        # A script that mentions nothing a routing rule looks for cannot change the route;
        # one that runs on another host (ssh) is not this machine's to route.
        if depth < MAX_DEPTH and cmd.name not in _REMOTE and _mentions(cmd.text):
            for language, code in _inner_scripts(cmd.segment):
                if language == "shell":
                    out.extend(commands(code, depth + 1, cmd))
    return out


_REMOTE = frozenset({"ssh"})

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


def _first_words(pattern: str) -> list[str]:
    """The command names a `_BOUNDED` form starts with (none for the last two forms)."""
    if pattern.startswith("(?:"):
        return pattern[3 : pattern.index(")")].split("|")
    word = pattern[: len(pattern) - len(pattern.lstrip("abcdefghijklmnopqrstuvwxyz-"))]
    return [word] if word else []


# Compiling `_BOUNDED` costs a hook ~2 ms: a command that none of its forms can match (by
# its first word, or a --version / -V) is told apart without it.
_BOUNDED_WORDS = frozenset(w for p in _BOUNDED for w in _first_words(p))


@cache
def _bounded_re() -> re.Pattern[str]:
    return re.compile("(?:" + "|".join(_BOUNDED) + ")")


def is_bounded(command: str) -> bool:
    """Is the output of ``command`` structurally bounded (as in upstream)? Unknown: no."""
    text = command.strip()
    if not text or _CONTROL.search(text):
        return False
    if text.split(None, 1)[0] not in _BOUNDED_WORDS and "-V" not in text:
        if "--version" not in text:
            return False
    return _bounded_re().fullmatch(text) is not None


class BashRoute(NamedTuple):
    """What kind of Bash command this is, for routing."""

    kind: str  # "fetch" | "inline_http" | "build" | "bounded" | "other"
    detail: str = ""  # fetch: "curl"/"wget"; build: the tool
    url: str | None = None


_INTERPRETERS = LazyPattern(r"(?:python|pypy)[\d.]*|node(?:js)?|deno|bun|ruby|perl|php[\d.]*")
_INLINE_HTTP = LazyPattern(
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
# Every command a rule above can apply to mentions one of these, case aside: the rest skip
# the lexer. (A substring test: the same as a case-blind regex, which costs a hook 1 ms to
# compile.)
_MENTIONS = (
    "curl", "wget", "gradle", "mvn", "sbt", "iwr", "irm", "invoke-", "fetch", "requests",
    "httpx", "urlopen", "http.", "https.", "axios", "net::http", "uri.open", "file_get_contents",
)  # fmt: skip


def _mentions(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _MENTIONS)


# Commands that consume a download without printing it, and ones that cut a log short.
_CONSUMERS = frozenset({*_SHELLS, "tar", "bsdtar", "gunzip", "gzip", "xz", "zstd", "bzip2", "cpio"})
_LIMITERS = frozenset({"tail", "head", "grep", "egrep", "rg", "wc"})
# Commands that run a substitution's output as a script, and ones that print their
# arguments or only assign them (the name of a bare assignment is "").
_RUN_SCRIPTS = frozenset({*_SHELLS, "eval", "source", "."})
_SHOW_ARGS = frozenset({"", "echo", "printf", "export", "local", "declare", "readonly", "typeset"})


def classify_bash(command: str) -> BashRoute:
    """Which routing rule applies to a shell command (security aside)."""
    if is_bounded(command):
        return BashRoute("bounded")
    if not _mentions(command):
        return BashRoute("other")
    cmds = commands(command)
    for cmd in cmds:
        if (cmd.name in ("curl", "wget") and _fetch_prints(cmd)) or (
            cmd.name in _POWERSHELL_FETCH and _cmdlet_prints(cmd)
        ):
            urls = urls_in(" ".join(cmd.argv()))
            return BashRoute("fetch", cmd.name, urls[0] if urls else None)
    for cmd in cmds:
        if _INTERPRETERS.fullmatch(cmd.name) and _INLINE_HTTP.search(
            " ".join(cmd.argv()[1:]) + "\n" + cmd.heredoc
        ):
            return BashRoute("inline_http", cmd.name)
    for cmd in cmds:
        if cmd.name in _BUILD_TOOLS and not _output_kept(cmd, _LIMITERS):
            return BashRoute("build", cmd.name)
    return BashRoute("other")


def _output_kept(cmd: Command, sinks: frozenset[str]) -> bool:
    """Does what ``cmd`` writes to stdout stay out of the conversation? It does when it goes
    to a file, through one of ``sinks`` down its pipeline, or into a command that keeps it
    (the module docstring has the rules for substitutions)."""
    while True:
        rest = cmd.rest
        if cmd.stdout_to_file() or (rest and rest[-1].stdout_to_file()):
            return True
        if any(c.name in sinks for c in rest):
            return True
        outer, via = cmd.outer, cmd.via
        if outer is None:
            return False
        if via == ">" or (via in ("$(", "`", "<(") and outer.name in _RUN_SCRIPTS):
            return True
        if via in ("$(", "`") and outer.name not in _SHOW_ARGS:
            return True
        cmd = outer


def _cmdlet_prints(cmd: Command) -> bool:
    """PowerShell's web cmdlets print the response unless ``-OutFile`` takes it."""
    if any(a.lower().startswith("-outf") for a in cmd.argv()[1:]):
        return False
    return not _output_kept(cmd, frozenset())


def _fetch_prints(cmd: Command) -> bool:
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
    in_file = (to_file and not to_stdout) or _output_kept(cmd, _CONSUMERS)
    return not in_file or verbose or not silent

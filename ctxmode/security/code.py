"""Shell escapes in code of other languages.

Code in other languages is scanned for shell escapes (``os.system``,
``subprocess.run([...])``, ``child_process``, backticks, ``exec.Command`` ...); each one
found (`extract_shell_commands`) is then checked as a command.
"""

import re
from functools import cache, lru_cache

from ctxmode.lazyre import LazyPattern
from ctxmode.security.shell import MAX_DEPTH
from ctxmode.security.words import _PLACEHOLDER, _quote

_Q_TRIPLE_D = '"""[\\s\\S]*?"""'
_Q_TRIPLE_S = "'''[\\s\\S]*?'''"
_Q_DOUBLE = r'"(?:[^"\\\n]|\\.)*"'
_Q_SINGLE = r"'(?:[^'\\\n]|\\.)*'"
_Q_BACK = r"`(?:[^`\\]|\\.)*`"
_STRING = (
    "([rRbBuUfF]{0,2})(" + "|".join((_Q_TRIPLE_D, _Q_TRIPLE_S, _Q_DOUBLE, _Q_SINGLE, _Q_BACK)) + ")"
)
_BACKTICKS = r"`((?:[^`\\]|\\.)*)`"

# language -> [(regex of a call up to its "(" or its first argument, style)]. Styles:
# "command": the first string argument is a command line; "argv": literal arguments
# form an argv (a lone string is a command line); "argv-1": the same after one argument;
# "bare": like argv, arguments without parentheses up to the end of the statement;
# "join": strings joined with spaces (C#); "rust": Command::new(..).arg(..).args(..);
# "literal": group 1 of the match is the command line (backticks, %x(), qx{}).
_CALLS: dict[str, tuple[tuple[str, str], ...]] = {
    "python": (
        (r"\b(?:system|popen)\s*\(", "command"),
        (
            r"\b(?:run|call|Popen|check_output|check_call|getoutput|getstatusoutput|spawn"
            r"|create_subprocess_shell|create_subprocess_exec)\s*\(",
            "argv",
        ),
        (r"\b(?:exec[lv]p?e?|posix_spawnp?)\s*\(", "argv"),
        (r"\bspawn[lv]p?e?\s*\(", "argv-1"),  # os.spawnlp(mode, file, arg0, ...)
        (r"\bexecutable\s*=\s*(?=[rRbBuU]{0,2}['\"])", "bare"),  # Popen(..., executable=...)
    ),
    "javascript": (
        (r"\b(?:exec|execSync)\s*\(", "command"),
        (r"\b(?:execFile|execFileSync|spawn|spawnSync|execa|execaSync)\s*\(", "argv"),
        (r"\bBun\.spawn(?:Sync)?\s*\(", "argv"),
        (r"(?<![\w$])\$\s*" + _BACKTICKS, "literal"),
    ),
    "ruby": (
        (r"(?<![\w.])(?:system|exec|spawn)\s*\(", "argv"),
        (r"(?<![\w.])(?:system|exec|spawn)[ \t]+(?=[\"'])", "bare"),
        (r"\b(?:IO\.popen|Open3\.(?:capture2e?|capture3|popen2e?|popen3))\s*\(", "argv"),
        (_BACKTICKS, "literal"),
        (r"%x\(((?:[^()\\]|\\.)*)\)", "literal"),
        (r"%x\{((?:[^{}\\]|\\.)*)\}", "literal"),
    ),
    "go": (
        (r"\bexec\.Command\s*\(", "argv"),
        (r"\bexec\.CommandContext\s*\(", "argv-1"),
    ),
    "php": (
        (r"(?<![\w>:$])(?:shell_exec|exec|system|passthru|popen)\s*\(", "command"),
        (r"(?<![\w>:$])proc_open\s*\(", "argv"),
        (_BACKTICKS, "literal"),
    ),
    "rust": ((r"\bCommand::new\s*\(", "rust"),),
    "perl": (
        (r"(?<![\w>$])(?:system|exec)\s*\(", "argv"),
        (r"(?<![\w>$])(?:system|exec)[ \t]+(?=[\"'])", "bare"),
        (_BACKTICKS, "literal"),
        (r"\bqx\s*\{((?:[^{}\\]|\\.)*)\}", "literal"),
        (r"\bqx\s*\(((?:[^()\\]|\\.)*)\)", "literal"),
        (r"\bqx\s*/((?:[^/\\]|\\.)*)/", "literal"),
    ),
    "r": ((r"\b(?:system|system2|shell)\s*\(", "argv"),),
    "elixir": (
        (r"\bSystem\.(?:cmd|shell)\s*\(", "argv"),
        (r":os\.cmd\s*\(", "argv"),
    ),
    "csharp": ((r"\b(?:Process\.Start|new\s+ProcessStartInfo)\s*\(", "join"),),
}
_CALLS["typescript"] = _CALLS["javascript"]
_LANGUAGES = {"js": "javascript", "ts": "typescript", "py": "python", "rb": "ruby", "cs": "csharp"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


@cache
def _call_patterns(language: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(p), style) for p, style in _CALLS.get(language, ()))


@lru_cache(maxsize=1)
def _string_re() -> re.Pattern[str]:
    return re.compile(_STRING)


@lru_cache(maxsize=1)
def _array_re() -> re.Pattern[str]:
    return re.compile(r"(&\s*|vec!\s*|c\s*(?=\()|new\s*(?:\w+\s*)?\[\s*\]\s*(?=\{))?([\[({])")


def _unquote(match: re.Match[str]) -> str:
    flags, literal = match.group(1).lower(), match.group(2)
    size = 3 if literal[:3] in ('"""', "'''") else 1
    inner = literal[size:-size]
    if "r" in flags or literal[0] == "`":
        return inner
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), inner, flags=re.S)


def _split_arguments(code: str, start: int, bare: bool = False) -> tuple[list[str], int]:
    """Top-level argument texts of a call starting at ``start`` (just past its ``(``).

    Stops at the unmatched closing bracket (``bare``: at ``;`` or a newline). Returns
    the argument texts and the index past the end.
    """
    spans: list[str] = []
    depth, i, begin, n = 0, start, start, len(code)
    string_re = _string_re()
    while i < n:
        c = code[i]
        if c in "\"'`":
            m = string_re.match(code, i)
            if m is not None:
                i = m.end()
            else:  # unterminated: the rest of the line (of the code, for a backtick)
                j = -1 if c == "`" else code.find("\n", i)
                i = n if j < 0 else j
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                spans.append(code[begin:i])
                return [s for s in spans if s.strip()], i + 1
            depth -= 1
        elif c == "," and depth == 0:
            spans.append(code[begin:i])
            begin = i + 1
        elif bare and depth == 0 and c in ";\n":
            break
        i += 1
    spans.append(code[begin:i])
    return [s for s in spans if s.strip()], i


_KEYWORD_ARG = LazyPattern(r"([A-Za-z_]\w*)\s*(?:=(?![=>])|:(?!:))\s*")


def _classify(span: str, depth: int = 0) -> tuple[str, list[str]]:
    """``("str", [value])``, ``("list", values)``, ``("kw", [])`` or ``("expr", [])``."""
    text = span.strip()
    if depth > MAX_DEPTH:
        return "expr", []
    m = _string_re().fullmatch(text)
    if m is not None:
        return "str", [_unquote(m)]
    kw = _KEYWORD_ARG.match(text)
    if kw is not None:
        if kw.group(1) in ("args", "arguments"):
            kind, values = _classify(text[kw.end() :], depth + 1)
            return ("list", values) if kind in ("str", "list") else ("kw", [])
        return "kw", []
    words = re.fullmatch(r"%[wW]([\[({<])(.*)[\])}>]", text, re.S)
    if words is not None:
        return "list", words.group(2).split()
    arr = _array_re().match(text)
    if arr is not None and (arr.group(1) or arr.group(2) == "["):
        inner, end = _split_arguments(text, arr.end())
        if end == len(text):
            values = []
            for element in inner:
                kind, found = _classify(element, depth + 1)
                values.extend(found if kind == "str" else [_PLACEHOLDER] if kind == "expr" else [])
            return "list", values
    if text.startswith("{"):
        return "kw", []
    return "expr", []


def _argv_command(args: list[str]) -> str | None:
    """The command line an argv-style call stands for, ``None`` if it is not literal."""
    classified = [_classify(a) for a in args]
    if not classified or classified[0][0] not in ("str", "list"):
        return None
    kind, words = classified[0]
    if kind == "list":
        return " ".join(_quote(w) for w in words) if any(w != _PLACEHOLDER for w in words) else None
    words = list(words)
    rest = classified[1:]
    positional = []
    for item in rest:
        if item[0] == "kw":
            break
        positional.append(item)
    if not positional:
        return words[0]  # a lone string is a command line (shell=True, system("..."))
    for kind, values in positional:
        if kind == "list":
            words.extend(values)
            break
        words.extend(values if kind == "str" else [_PLACEHOLDER])
    return " ".join(_quote(w) for w in words)


_RUST_CHAIN = LazyPattern(r"\s*\.\s*(args?)\s*\(")


def _rust_command(code: str, end: int, args: list[str]) -> tuple[str | None, int]:
    classified = [_classify(a) for a in args]
    if not classified or classified[0][0] != "str":
        return None, end
    words = list(classified[0][1])
    m = _RUST_CHAIN.match(code, end)
    while m is not None:
        more, end = _split_arguments(code, m.end())
        for kind, values in (_classify(a) for a in more[:1]):
            words.extend(values if kind in ("str", "list") else [_PLACEHOLDER])
        m = _RUST_CHAIN.match(code, end)
    return " ".join(_quote(w) for w in words), end


def _call_command(code: str, match: re.Match[str], style: str) -> tuple[str | None, int]:
    """The command line of one call site, and the index past the call."""
    if style == "literal":
        return match.group(1), match.end()
    args, end = _split_arguments(code, match.end(), bare=style == "bare")
    if style == "rust":
        return _rust_command(code, end, args)
    if style == "command":
        kind, values = _classify(args[0]) if args else ("expr", [])
        return (values[0] if kind == "str" else None), end
    if style == "join":
        strings = [v[0] for k, v in map(_classify, args) if k == "str"]
        return (" ".join(strings) if strings else None), end
    return _argv_command(args[1:] if style == "argv-1" else args), end


_PROCESS_NAMES = frozenset(
    """os subprocess posix pty system popen run call Popen check_output check_call getoutput
    getstatusoutput spawn exec execSync execFile execFileSync spawnSync execv execve execvp
    execvpe execl execle execlp execlpe""".split()
)
_CONCAT = LazyPattern(r"""(['"])((?:(?!\1)[^\\\n])*)\1\s*\+\s*(['"])((?:(?!\3)[^\\\n])*)\3""")
_GETATTR = LazyPattern(r"""\bgetattr\s*\(\s*([\w.]+(?:\([^()]*\))?)\s*,\s*(['"])(\w+)\2\s*\)""")
_SUBSCRIPT = LazyPattern(r"""\[\s*(['"])([A-Za-z_$][\w$]*)\1\s*\]""")
# ``from os import system as run`` (Python), ``const { execSync: run } = ...`` (JavaScript)
_PY_ALIAS = LazyPattern(r"\b(\w+)\s+as\s+(\w+)")
_JS_ALIAS = LazyPattern(
    r"\b(exec|execSync|execFile|execFileSync|spawn|spawnSync)\s*(?::|\bas\b)\s*(\w+)"
)
# ``vars(os)['system']``, ``os.__dict__['system']``: ``os.system``
_PY_NAMESPACE = LazyPattern(
    r"""\b(?:vars\s*\(\s*([\w.]+)\s*\)|([\w.]+)\.__dict__)\s*\[\s*(['"])(\w+)\3\s*\]"""
)


def _aliases(pattern: LazyPattern, code: str) -> str:
    """Every use of an alias of a process function or module spelt as the original."""
    found = {m.group(2): m.group(1) for m in pattern.finditer(code) if m.group(1) != m.group(2)}
    for alias, original in found.items():
        if original in _PROCESS_NAMES:
            code = re.sub(rf"(?<![\w.$]){re.escape(alias)}\b", original, code)
    return code


def _merge(m: re.Match[str]) -> str:
    text = m.group(2) + m.group(4)
    quote = "'" if "'" not in text else '"'
    return quote + text + quote


def _normalised(language: str, code: str) -> str:
    """Python or JavaScript code with literal names spelled out: ``'sys' + 'tem'`` is
    ``'system'``, ``getattr(os, 'system')`` is ``os.system``, ``cp['exec']`` is ``cp.exec``."""
    if language not in ("python", "javascript", "typescript"):
        return code
    for _ in range(16):
        code, merged = _CONCAT.subn(_merge, code)
        if not merged:
            break
    if language == "python":
        code = _PY_NAMESPACE.sub(lambda m: f"{m.group(1) or m.group(2)}.{m.group(4)}", code)
        return _aliases(_PY_ALIAS, _GETATTR.sub(r"\1.\3", code))
    return _aliases(_JS_ALIAS, _SUBSCRIPT.sub(r".\2", code))


# language -> calls that run code or reach a process API by a name the text does not hold.
_DYNAMIC: dict[str, tuple[tuple[str, str], ...]] = {
    "python": (
        (r"(?<![\w.])(?:eval|exec)\s*\(", "evaluates code built at run time"),
        (r"\b(?:__import__|import_module)\s*\(", "imports a module named at run time"),
        (
            r"\bgetattr\s*\(\s*(?:os|subprocess|posix|pty)\s*,",
            "looks a process function up by a name built at run time",
        ),
        (
            r"\b(?:os\.(?:system|popen)|subprocess\.(?:run|call|Popen|check_output|check_call"
            r"|getoutput))\b(?!\s*\()",
            "passes a process function around as a value",
        ),
    ),
    "javascript": (
        (r"(?<![\w.$])eval\s*\(", "evaluates code built at run time"),
        (r"\bnew\s+Function\s*\(", "evaluates code built at run time"),
        (r"(?<![\w.$])(?:require|import)\s*\(", "loads a module named at run time"),
        (
            r"=\s*[\w$.]*\.(?:exec|execSync|execFile|execFileSync|spawn|spawnSync)\s*(?=[;,)\n]|$)",
            "passes a process function around as a value",
        ),
    ),
}
_DYNAMIC["typescript"] = _DYNAMIC["javascript"]


@cache
def _dynamic_patterns(language: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(p), why) for p, why in _DYNAMIC.get(language, ()))


def dynamic_code(language: str, code: str) -> str | None:
    """Why ``code`` may run a command its text does not show, or None.

    Only the plain forms: ``eval``/``exec`` of a non-literal, a module imported by a
    computed name, ``getattr(os, name)`` with a computed name or ``os.system`` passed
    around as a value (Python), ``new Function`` (JavaScript). A literal argument is no
    reason (``getattr(os, 'sys' + 'tem')`` is read as ``os.system``, aliases as what
    they stand for: `extract_shell_commands`).
    """
    lang = language.lower()
    lang = _LANGUAGES.get(lang, lang)
    patterns = _dynamic_patterns(lang)
    if not patterns:
        return None
    code = _normalised(lang, code)
    for pattern, why in patterns:
        for m in pattern.finditer(code):
            args, _ = _split_arguments(code, m.end())
            if "(" not in m.group(0)[-1:] and "," not in m.group(0)[-1:]:
                return why  # no call: the function itself is the value
            if "Function" in m.group(0) or not args or _classify(args[0])[0] != "str":
                return why
    return None


class TooComplexError(ValueError):
    """The code would take too long to analyse precisely (see `extract_shell_commands`)."""


def extract_shell_commands(language: str, code: str) -> tuple[str, ...]:
    """The shell commands embedded in ``code`` of a non-shell ``language``, in order.

    A call taking a command line (``os.system("...")``) gives that line; an argv call
    (``subprocess.run(["rm", "-rf", p])``, ``spawn("rm", [...])``, ``exec.Command(...)``)
    gives its words quoted and joined, with ``$ARG`` for a non-literal argument.

    Raises:
        TooComplexError: the call sites overlap so much (thousands of unterminated or
            nested calls) that scanning them would take more than a few passes over the
            code; `check_code` then falls back to its crude check.
    """
    lang = language.lower()
    lang = _LANGUAGES.get(lang, lang)
    found: list[tuple[int, int, str]] = []
    # Defense in depth: bounded work, so hostile code cannot stall the hook into a timeout.
    budget = 8 * len(code) + 65_536
    normalised = _normalised(lang, code)
    for copy, text_of in enumerate(dict.fromkeys((code, normalised))):
        for pattern, style in _call_patterns(lang):
            for m in pattern.finditer(text_of):
                text, end = _call_command(text_of, m, style)
                budget -= end - m.start()
                if budget < 0:
                    raise TooComplexError("too many overlapping call sites to analyse")
                if text and text.strip():
                    found.append((copy, m.start(), text))
    found.sort(key=lambda item: item[:2])
    return tuple(dict.fromkeys(text for _, _, text in found))

"""Shell expansions whose result the script itself spells out.

``X=rm; $X -rf /``, ``rm${IFS}-rf /``, ``$(echo rm) -rf /`` and ``$'\\x72m' -rf /`` all
run ``rm -rf /``. `expand_word` rewrites a word as the shell would expand it, as far as
the text says: variables assigned a literal earlier in the same script (`ShellVars`),
``$IFS`` (a space), positional parameters (empty: a sandboxed script has no arguments),
``$(echo ...)`` and backticks of a literal ``echo``, and ANSI-C quoting. Whatever stays
unknown is left as written and makes the word unresolved.

Standard library only; plain text in, plain text out (no lexing here, no policy).
"""

import re

from ctxmode.lazyre import LazyPattern

# ``$NAME``, ``${NAME}``, ``$1``, ``${1}``, ``$@``, ``$*``: the forms expanded.
_VAR = LazyPattern(r"\{([A-Za-z_]\w*|[0-9@*])\}|([A-Za-z_]\w*|[0-9@*])")
_POSITIONAL = frozenset("0123456789@*")
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b"}
_ANSI.update({"f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"})
_ANSI_ESCAPE = LazyPattern(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|u[0-9A-Fa-f]{1,4}|.)", re.S)
_ECHO_WORD = LazyPattern(r"[\w@%+=:,./-]+|'[^']*'|\"[^\"$`\\]*\"")
_ECHO = LazyPattern(r"\s*echo((?:\s+(?:" + _ECHO_WORD.pattern + r"))*)\s*")
_QUOTE = "'\"'\"'"


def _ansi_c(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in "xu":
            return chr(int(esc[1:], 16))
        if esc[0] in "01234567":
            return chr(int(esc, 8) & 0xFF)
        return _ANSI.get(esc, "\\" + esc)

    return _ANSI_ESCAPE.sub(one, body)


def _single(text: str) -> str:
    """``text`` as one single-quoted shell word."""
    return "'" + text.replace("'", _QUOTE) + "'"


def _echo(script: str) -> str | None:
    """What ``script`` prints when it is one ``echo`` of literal words, else None."""
    m = _ECHO.fullmatch(script)
    if m is None:
        return None
    words = [w[1:-1] if w[:1] in "'\"" else w for w in _ECHO_WORD.findall(m.group(1))]
    if words and words[0].startswith("-"):
        return None
    return " ".join(words)


def _closing(text: str, i: int) -> int:
    """Index of the ``)`` closing a ``$(`` whose body starts at ``i``, or -1."""
    depth = 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                return -1
            i = j
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _substitution(raw: str, start: int, body: int, end: int, out: list[str]) -> tuple[int, bool]:
    """Append what the command substitution ``raw[start:end + 1]`` (its command from
    ``body``; ``end`` -1 when unterminated) prints when the text says, else it as written.

    Returns the index past it and whether its output was known.
    """
    printed = _echo(raw[body:end]) if end >= 0 else None
    if printed is None:
        end = len(raw) - 1 if end < 0 else end
        out.append(raw[start : end + 1])
        return end + 1, False
    out.append(printed)
    return end + 1, True


class ShellVars:
    """The variables a script has assigned so far (literal values, or unknown: None), and
    the aliases it has defined (``alias x=rm``: name -> what it stands for)."""

    def __init__(self) -> None:
        self.values: dict[str, str | None] = {}
        self.aliases: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        """The known value, ``""`` for a positional parameter, None when unknown."""
        if name in self.values:
            return self.values[name]
        if name in _POSITIONAL:
            return ""
        if name == "IFS":
            return " "
        return None

    def assign(self, name: str, value: str | None) -> None:
        self.values[name] = value


def expand_word(raw: str, variables: ShellVars) -> tuple[str, bool]:
    """``raw`` (shell text, quotes included) with the known expansions done.

    Returns the new text and whether every expansion in it was known. Single-quoted text
    is left alone; the result is still shell text, for the lexer to split again.
    """
    out: list[str] = []
    resolved = True
    i, n = 0, len(raw)
    dquoted = False
    while i < n:
        c = raw[i]
        if c == "\\":
            out.append(raw[i : i + 2])
            i += 2
        elif c == "'" and not dquoted:
            j = raw.find("'", i + 1)
            j = n - 1 if j < 0 else j
            out.append(raw[i : j + 1])
            i = j + 1
        elif c == '"':
            dquoted = not dquoted
            out.append(c)
            i += 1
        elif c == "$" and raw.startswith("$'", i) and not dquoted:
            j = i + 2
            while j < n and raw[j] != "'":
                j += 2 if raw[j] == "\\" else 1
            out.append(_single(_ansi_c(raw[i + 2 : j])))
            i = j + 1
        elif c == "$" and raw.startswith("$(", i) and not raw.startswith("$((", i):
            i, known = _substitution(raw, i, i + 2, _closing(raw, i + 2), out)
            resolved = resolved and known
        elif c == "`":
            i, known = _substitution(raw, i, i + 1, raw.find("`", i + 1), out)
            resolved = resolved and known
        elif c == "$":
            m = _VAR.match(raw, i + 1)
            value = variables.get(m.group(1) or m.group(2)) if m else None
            if m is None or value is None:
                resolved = resolved and m is None  # a lone "$" is literal
                out.append(raw[i : m.end() if m else i + 1])
                i = m.end() if m else i + 1
            else:
                out.append(value)
                i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out), resolved


_DEFINITION = LazyPattern(
    r"(?:^|[\s;&|(){}])(?:function\s+([A-Za-z_][\w.:-]*)|([A-Za-z_][\w.:-]*)\s*\(\s*\))"
)


def defined_functions(script: str) -> frozenset[str]:
    """The names of the shell functions ``script`` defines (``f() {...}``, ``function f``)."""
    return frozenset(a or b for a, b in _DEFINITION.findall(script))

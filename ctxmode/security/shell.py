"""Shell lexing: the simple commands a shell would run for a command line.

Commands are split the way a shell runs them (`split_command`): on ``&&``, ``||``, ``;``,
``|``, ``|&``, a lone ``&``, newlines, subshell parentheses and braces; ``$(...)``,
backticks, ``<(...)`` and here-documents fed to a shell are commands of their own;
quotes, escapes and comments are respected.
"""

import os
import re
from collections.abc import Sequence
from typing import NamedTuple

from ctxmode.security.words import _SHELLS, ASSIGNMENT, _peeled

MAX_DEPTH = 12


class _Word(NamedTuple):
    raw: str
    value: str
    redirect: bool  # a redirection operator, or the target of one


class _Segment(NamedTuple):
    """One simple command: its words as written and unquoted."""

    words: tuple[_Word, ...]

    @property
    def text(self) -> str:
        return " ".join(w.raw for w in self.words)


_LEADING_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done", "esac"}
)
_REDIRECT_OPS = ("<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">&", ">|", ">")
_TARGET_OPS = frozenset({*_REDIRECT_OPS, "&>", "&>>"})
_WORD_END = frozenset(" \t\r\n;&|<>()")
_FLAT_SPLIT = re.compile(r"\$\(|[<>]\(|[`(){}\n\r;&|]")


class _Lexer:
    """One pass over shell text; appends the segments it finds, nested ones too, to ``out``.

    Not a shell parser: it knows just enough syntax to find every place where a command
    starts. With ``emit=False`` (arithmetic) its own words are not commands, but the
    substitutions inside are.
    """

    def __init__(self, text: str, out: list[_Segment], depth: int, emit: bool = True) -> None:
        self.s = text
        self.n = len(text)
        self.out = out
        self.depth = depth
        self.emit = emit
        self.words: list[_Word] = []
        self.raw: list[str] = []
        self.val: list[str] = []
        self.started = False
        self.redirect = False
        self.expect_target = False
        self.heredocs: list[tuple[str, bool, bool]] = []
        self.line_start = len(out)

    # -- building words and segments

    def add(self, raw: str, value: str | None = None) -> None:
        self.raw.append(raw)
        self.val.append(raw if value is None else value)
        self.started = True

    def end_word(self) -> None:
        if not self.started:
            return
        value = "".join(self.val)
        redirect = self.redirect or self.expect_target
        self.expect_target = self.redirect and value.lstrip("0123456789") in _TARGET_OPS
        self.words.append(_Word("".join(self.raw), value, redirect))
        self.raw, self.val = [], []
        self.started = self.redirect = False

    def end_segment(self) -> None:
        self.end_word()
        self.expect_target = False
        words, self.words = self.words, []
        i = 0
        while i < len(words) and words[i].raw in _LEADING_KEYWORDS:
            i += 1
        if i < len(words) and self.emit:
            self.out.append(_Segment(tuple(words[i:])))

    def nested(self, text: str, emit: bool = True) -> None:
        if not text.strip():
            return
        if self.depth >= MAX_DEPTH:
            # Defense in depth: past this nesting, split on every operator and bracket,
            # quotes or not, so a deep command is over-split rather than unread.
            for piece in _FLAT_SPLIT.split(text):
                words = tuple(_Word(w, w, False) for w in piece.split())
                if words and self.emit:
                    self.out.append(_Segment(words))
            return
        _Lexer(text, self.out, self.depth + 1, emit).run()

    # -- skipping over quoted and nested text

    def closing_paren(self, open_at: int) -> int:
        """Index of the ``)`` closing the ``(`` at ``open_at``, or -1.

        Iterative, with an explicit stack of open parentheses and double quotes, so no
        nesting depth can exhaust the interpreter's recursion limit.
        """
        s, n, i = self.s, self.n, open_at
        stack: list[str] = []
        while i < n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "`":
                j = self.closing_backtick(i)
                i = n if j < 0 else j + 1
                continue
            if stack and stack[-1] == '"':
                if c == '"':
                    stack.pop()
                elif s.startswith("$(", i):
                    stack.append("(")
                    i += 1
            elif c == "'":
                j = s.find("'", i + 1)
                i = n if j < 0 else j
            elif c == '"':
                stack.append('"')
            elif c == "(":
                stack.append("(")
            elif c == ")":
                if stack:
                    stack.pop()
                if not stack:
                    return i
            i += 1
        return -1

    def closing_backtick(self, at: int) -> int:
        """Index of the backtick closing the one at ``at``, or -1."""
        i = at + 1
        while i < self.n:
            if self.s[i] == "\\":
                i += 2
            elif self.s[i] == "`":
                return i
            else:
                i += 1
        return -1

    def substitution(self, at: int) -> int:
        """``$(``, ``$((``, ``<(`` or ``>(`` at ``at``: check the inside; index past the end."""
        arithmetic = self.s.startswith("$((", at)
        close = self.closing_paren(at + 1)
        end = self.n if close < 0 else close
        inner = self.s[at + 2 : end]
        if arithmetic and inner.startswith("(") and inner.endswith(")"):
            inner = inner[1:-1]
        self.nested(inner, emit=not arithmetic)
        return self.n if close < 0 else close + 1

    def backtick(self, at: int) -> int:
        close = self.closing_backtick(at)
        inner = self.s[at + 1 : self.n if close < 0 else close]
        self.nested(inner.replace("\\`", "`").replace("\\\\", "\\"))
        return self.n if close < 0 else close + 1

    def dquoted(self, i: int, value: list[str] | None, heredoc: bool = False) -> int:
        """Scan double-quoted text (or a here-document body) from ``i``.

        Substitutions inside are checked as commands. Returns the index past the closing
        quote, or the end of the text.
        """
        s = self.s
        while i < self.n:
            c = s[i]
            if c == "\\" and i + 1 < self.n:
                nxt = s[i + 1]
                if nxt != "\n" and value is not None:
                    value.append(nxt if nxt in '"\\$`' else c + nxt)
                i += 2
                continue
            if c == '"' and not heredoc:
                return i + 1
            if s.startswith("$(", i):
                j = self.substitution(i)
            elif c == "`":
                j = self.backtick(i)
            else:
                j = i + 1
            if value is not None:
                value.append(s[i:j])
            i = j
        return self.n

    # -- the main loop

    def run(self) -> None:
        s, n = self.s, self.n
        i = 0
        while i < n:
            c = s[i]
            nxt = s[i + 1] if i + 1 < n else ""
            if c == "\\":
                if nxt == "\n":
                    i += 2  # line continuation
                else:
                    self.add(c + nxt, nxt or c)
                    i += 2
            elif c == "'":
                j = s.find("'", i + 1)
                end = n if j < 0 else j + 1
                self.add(s[i:end], s[i + 1 : n if j < 0 else j])
                i = end
            elif c == '"':
                value: list[str] = []
                j = self.dquoted(i + 1, value)
                self.add(s[i:j], "".join(value))
                i = j
            elif c == "`":
                j = self.backtick(i)
                self.add(s[i:j])
                i = j
            elif nxt == "(" and c in "$<>":
                j = self.substitution(i)
                self.add(s[i:j])
                i = j
            elif c == "#" and not self.started:
                j = s.find("\n", i)
                i = n if j < 0 else j
            elif c in "\r\n":
                self.end_segment()
                i = self.heredoc_bodies(i + 1)
                self.line_start = len(self.out)
            elif c in " \t":
                self.end_word()
                i += 1
            elif c in ";()":
                self.end_segment()
                i += 1
            elif c == "&" and nxt == ">":
                self.end_word()
                self.redirect = True
                op = "&>>" if s.startswith("&>>", i) else "&>"
                self.add(op)
                i += len(op)
            elif c == "&":
                self.end_segment()
                i += 2 if nxt == "&" else 1
            elif c == "|" and self.redirect and "".join(self.val).endswith(">"):
                self.add(c)  # >| (clobber)
                i += 1
            elif c == "|":
                self.end_segment()
                i += 2 if nxt in ("|", "&") else 1
            elif c in "<>":
                i = self.redirection(i)
            else:
                self.add(c)
                i += 1
        self.end_segment()

    def redirection(self, i: int) -> int:
        word = "".join(self.val)
        if self.started and not (word.isdigit() or (word.startswith("{") and word.endswith("}"))):
            self.end_word()
        self.redirect = True
        op = next(o for o in _REDIRECT_OPS if self.s.startswith(o, i))
        self.add(op)
        i += len(op)
        if op in ("<<", "<<-"):
            while i < self.n and self.s[i] in " \t":
                i += 1
            start = i
            while i < self.n and self.s[i] not in _WORD_END:
                if self.s[i] in "'\"":
                    j = self.s.find(self.s[i], i + 1)
                    i = self.n if j < 0 else j + 1
                else:
                    i += 1
            delim_raw = self.s[start:i]
            quoted = any(q in delim_raw for q in "'\"\\")
            delim = delim_raw.replace("'", "").replace('"', "").replace("\\", "")
            self.add(delim_raw)
            self.heredocs.append((delim, op == "<<-", quoted))
        return i

    def heredoc_bodies(self, i: int) -> int:
        """Consume the here-documents announced on the line that just ended."""
        pending, self.heredocs = self.heredocs, []
        feeds_shell: bool | None = None
        for delim, strip_tabs, quoted in pending:
            lines: list[str] = []
            while i < self.n:
                j = self.s.find("\n", i)
                line = self.s[i : self.n if j < 0 else j]
                i = self.n if j < 0 else j + 1
                if (line.lstrip("\t") if strip_tabs else line).rstrip("\r") == delim:
                    break
                lines.append(line)
            if not lines:
                continue
            body = "\n".join(lines)
            if feeds_shell is None:
                feeds_shell = _feeds_shell(self.out[self.line_start :])
            if feeds_shell:
                self.nested(body)
            elif not quoted:
                _Lexer(body, self.out, self.depth + 1).dquoted(0, None, heredoc=True)
        return i


def _feeds_shell(segments: Sequence[_Segment]) -> bool:
    """Does one of these commands run a shell that would read a script on stdin?"""
    return any(
        words and os.path.basename(words[0]) in _SHELLS
        for seg in segments
        for words in _peeled(_command_words(seg))
    )


def _lex(command: str, depth: int = 0) -> list[_Segment]:
    out: list[_Segment] = []
    _Lexer(command, out, depth).run()
    return out


def split_command(command: str) -> tuple[str, ...]:
    """The simple commands a shell would run for ``command``, as written.

    Includes the commands inside ``$(...)``, backticks, process substitutions and here-
    documents fed to a shell; leading keywords (``if``, ``then``, ``do``, ``!``, ``{``)
    are dropped. ``echo hello && sudo rm -rf /`` gives ``("echo hello", "sudo rm -rf /")``.
    """
    return tuple(seg.text for seg in _lex(command))


def _command_words(seg: _Segment) -> list[str]:
    """Unquoted words without redirections and leading ``VAR=value`` assignments."""
    words = [w.value for w in seg.words if not w.redirect]
    i = 0
    while i < len(words) - 1 and ASSIGNMENT.match(words[i]):
        i += 1
    return words[i:]

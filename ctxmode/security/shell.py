"""Shell lexing: the simple commands a shell would run for a command line.

Commands are split the way a shell runs them (`split_command`): on ``&&``, ``||``, ``;``,
``|``, ``|&``, a lone ``&``, newlines, subshell parentheses and braces; ``$(...)``,
backticks, ``<(...)`` and here-documents fed to a shell are commands of their own;
quotes, escapes and comments are respected.

This is the one shell lexer of ctxmode: the permission policy reads every `Segment` for
what runs, and hook routing (`ctxmode.hooks.bash`) reads the same segments for where their
output goes: redirections, here-document bodies, which segments share a pipeline and which
command a substitution's output flows into. Standard library only and cheap to import:
the hook process loads it for every shell command.
"""

import os
import re
from collections.abc import Sequence
from functools import lru_cache

from ctxmode.security.words import _SHELLS, ASSIGNMENT, _peeled
from ctxmode.typenames import NamedTuple

MAX_DEPTH = 12


class _Word(NamedTuple):
    raw: str
    value: str
    redirect: bool  # a redirection operator, or the target of one


class Redirect(NamedTuple):
    """One redirection: ``2>&1`` is ``("2", ">&", "1")``, ``> out`` is ``("", ">", "out")``.

    The target is unquoted; a here-document's target is its delimiter.
    """

    fd: str  # "" for the operator's default, else the digits or ``{name}`` before it
    op: str
    target: str


class Segment(NamedTuple):
    """One simple command: its words as written and unquoted, and where it sits.

    ``pipeline`` is the index (in `segments`' answer) of the first segment of the pipeline
    this one is part of: segments joined by ``|`` share it. ``outer`` is the index of the
    segment this one ran inside (-1: none) and ``via`` says how: ``$(`` or a backtick (a
    command substitution in its words), ``<(`` or ``>(``, ``<<`` (a here-document: a script
    fed to a shell, or substitutions expanded into another command's input), ``<`` or ``>``
    (a substitution in an input or output redirection, such as a here-string).
    """

    words: tuple[_Word, ...]
    redirects: tuple[Redirect, ...] = ()
    heredoc: str = ""  # the bodies of its here-documents, joined by newlines
    pipeline: int = -1
    outer: int = -1
    via: str = ""

    @property
    def text(self) -> str:
        return " ".join(w.raw for w in self.words)


_Segment = Segment  # the name the other security modules import


class _HereDoc:
    """A here-document announced on the current line, waiting for its body."""

    __slots__ = ("delim", "owner", "quoted", "strip_tabs")

    def __init__(self, delim: str, strip_tabs: bool, quoted: bool) -> None:
        self.delim = delim
        self.strip_tabs = strip_tabs
        self.quoted = quoted
        self.owner = _PENDING  # index of the segment it belongs to, once that one ends


_PENDING = -2


_LEADING_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done", "esac"}
)
_REDIRECT_OPS = ("<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">&", ">|", ">")
_WORD_END = frozenset(" \t\r\n;&|<>()")
_FLAT_SPLIT = re.compile(r"\$\(|[<>]\(|[`(){}\n\r;&|]")


class _Lexer:
    """One pass over shell text; appends the segments it finds, nested ones too, to ``out``.

    Not a shell parser: it knows just enough syntax to find every place where a command
    starts. With ``emit=False`` (arithmetic) its own words are not commands, but the
    substitutions inside are. Its segments get ``via`` and ``outer`` (a nested lexer's
    segments are adopted by the enclosing segment once that one ends).
    """

    def __init__(
        self,
        text: str,
        out: list[Segment],
        depth: int,
        emit: bool = True,
        via: str = "",
        outer: int = -1,
    ) -> None:
        self.s = text
        self.n = len(text)
        self.out = out
        self.depth = depth
        self.emit = emit
        self.via = via
        self.outer = outer
        self.words: list[_Word] = []
        self.raw: list[str] = []
        self.val: list[str] = []
        self.started = False
        self.redirect = False
        self.op: tuple[str, str, int] | None = None  # (fd, op, where its target starts in val)
        self.target_of: tuple[str, str] | None = None  # (fd, op) waiting for the next word
        self.redirects: list[Redirect] = []
        self.heredocs: list[_HereDoc] = []
        self.line_start = len(out)
        self.seg_start = len(out)
        self.pipe_head = -1

    # -- building words and segments

    def add(self, raw: str, value: str | None = None) -> None:
        self.raw.append(raw)
        self.val.append(raw if value is None else value)
        self.started = True

    def end_word(self) -> None:
        if not self.started:
            return
        value = "".join(self.val)
        redirect = self.redirect or self.target_of is not None
        if self.target_of is not None:
            self.redirects.append(Redirect(*self.target_of, value))
            self.target_of = None
        if self.op is not None:
            fd, op, at = self.op
            target = "".join(self.val[at:])
            if target:
                self.redirects.append(Redirect(fd, op, target))
            else:
                self.target_of = (fd, op)
            self.op = None
        self.words.append(_Word("".join(self.raw), value, redirect))
        self.raw, self.val = [], []
        self.started = self.redirect = False

    def end_segment(self, piped: bool = False) -> None:
        """End the current simple command; ``piped``: a ``|`` joins it to the next one."""
        self.end_word()
        if self.target_of is not None:
            self.redirects.append(Redirect(*self.target_of, ""))
            self.target_of = None
        words, self.words = self.words, []
        redirects, self.redirects = self.redirects, []
        i = 0
        while i < len(words) and words[i].raw in _LEADING_KEYWORDS:
            i += 1
        index = -1
        if i < len(words) and self.emit:
            index = len(self.out)
            head = self.pipe_head if self.pipe_head >= 0 else index
            # A here-string is the command's stdin, as a here-document's body is.
            stdin = "\n".join(r.target for r in redirects if r.op == "<<<")
            seg = Segment(tuple(words[i:]), tuple(redirects), stdin, head, self.outer, self.via)
            self.out.append(seg)
            self.adopt(self.seg_start, index, index)
            if stdin and _shell_reading_stdin(self.out, index) == index:
                self.nested(stdin, via="<<", outer=index)  # bash <<< 'script'
        if not piped:
            self.pipe_head = -1
        elif index >= 0:
            self.pipe_head = self.out[index].pipeline
        for doc in self.heredocs:
            if doc.owner == _PENDING:
                doc.owner = index
        self.seg_start = len(self.out)

    def adopt(self, start: int, end: int, outer: int, via: str | None = None) -> None:
        """Segments ``start:end`` not yet inside another ran inside segment ``outer``."""
        if outer < 0:
            return
        for j in range(start, end):
            seg = self.out[j]
            if seg.outer < 0:
                self.out[j] = seg._replace(outer=outer, via=seg.via if via is None else via)

    def nested(self, text: str, emit: bool = True, via: str = "", outer: int = -1) -> None:
        if not text.strip():
            return
        if self.depth >= MAX_DEPTH:
            # Defense in depth: past this nesting, split on every operator and bracket,
            # quotes or not, so a deep command is over-split rather than unread.
            for piece in _FLAT_SPLIT.split(text):
                words = tuple(_Word(w, w, False) for w in piece.split())
                if words and self.emit:
                    index = len(self.out)
                    self.out.append(Segment(words, pipeline=index, outer=outer, via=via))
            return
        _Lexer(text, self.out, self.depth + 1, emit, via, outer).run()

    def via_here(self, kind: str) -> str:
        """How a substitution starting now feeds its command: ``kind``, or ``<``/``>``
        inside an input or output redirection."""
        op = self.op[1] if self.op else self.target_of[1] if self.target_of else ""
        return kind if not op else "<" if op.startswith("<") else ">"

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
        kind = "$(" if self.s[at] == "$" else self.s[at : at + 2]
        self.nested(inner, emit=not arithmetic, via=self.via_here(kind))
        return self.n if close < 0 else close + 1

    def backtick(self, at: int) -> int:
        close = self.closing_backtick(at)
        inner = self.s[at + 1 : self.n if close < 0 else close]
        self.nested(inner.replace("\\`", "`").replace("\\\\", "\\"), via=self.via_here("`"))
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
                self.line_start = self.seg_start = len(self.out)
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
                self.op = ("", op, len(self.val))
                i += len(op)
            elif c == "&":
                self.end_segment()
                i += 2 if nxt == "&" else 1
            elif c == "|" and self.redirect and "".join(self.val).endswith(">"):
                self.add(c)  # >| (clobber)
                if self.op is not None:
                    self.op = (self.op[0], ">|", len(self.val))
                i += 1
            elif c == "|":
                self.end_segment(piped=nxt != "|")
                i += 2 if nxt in ("|", "&") else 1
            elif c in "<>":
                i = self.redirection(i)
            else:
                self.add(c)
                i += 1
        self.end_segment()

    def redirection(self, i: int) -> int:
        word = "".join(self.val)
        fd = word if self.started else ""
        if self.started and not (word.isdigit() or (word.startswith("{") and word.endswith("}"))):
            self.end_word()
            fd = ""
        self.redirect = True
        op = next(o for o in _REDIRECT_OPS if self.s.startswith(o, i))
        self.add(op)
        self.op = (fd, op, len(self.val))
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
            self.op = None
            self.redirects.append(Redirect(fd, op, delim))
            self.heredocs.append(_HereDoc(delim, op == "<<-", quoted))
        return i

    def heredoc_bodies(self, i: int) -> int:
        """Consume the here-documents announced on the line that just ended."""
        pending, self.heredocs = self.heredocs, []
        shell: int | None = None
        for doc in pending:
            lines: list[str] = []
            while i < self.n:
                j = self.s.find("\n", i)
                line = self.s[i : self.n if j < 0 else j]
                i = self.n if j < 0 else j + 1
                if (line.lstrip("\t") if doc.strip_tabs else line).rstrip("\r") == doc.delim:
                    break
                lines.append(line)
            if not lines:
                continue
            body = "\n".join(lines)
            if doc.owner >= 0:
                seg = self.out[doc.owner]
                text = f"{seg.heredoc}\n{body}" if seg.heredoc else body
                self.out[doc.owner] = seg._replace(heredoc=text)
            if shell is None:
                shell = _shell_reading_stdin(self.out, self.line_start)
            if shell >= 0:
                self.nested(body, via="<<", outer=shell)
            elif not doc.quoted:
                start = len(self.out)
                _Lexer(body, self.out, self.depth + 1).dquoted(0, None, heredoc=True)
                self.adopt(start, len(self.out), doc.owner, "<<")
        return i


def _shell_reading_stdin(segments: Sequence[Segment], start: int) -> int:
    """The index of the first of ``segments[start:]`` that runs a shell (which would read a
    script on stdin), or -1."""
    for i in range(start, len(segments)):
        if any(
            words and os.path.basename(words[0]) in _SHELLS
            for words in _peeled(_command_words(segments[i]))
        ):
            return i
    return -1


def segments(command: str, depth: int = 0) -> tuple[Segment, ...]:
    """Every simple command a shell would run for ``command``, nested ones first.

    A command substitution's segments come before the segment holding it, a here-document
    script's after the line announcing it. Cached: the pre-tool hook asks the policy and
    routing about the same command, and both read it from here.
    """
    return _segments(command, depth)


@lru_cache(maxsize=16)
def _segments(command: str, depth: int) -> tuple[Segment, ...]:
    out: list[Segment] = []
    _Lexer(command, out, depth).run()
    return tuple(out)


_lex = segments  # the name the other security modules import


def split_command(command: str) -> tuple[str, ...]:
    """The simple commands a shell would run for ``command``, as written.

    Includes the commands inside ``$(...)``, backticks, process substitutions and here-
    documents fed to a shell; leading keywords (``if``, ``then``, ``do``, ``!``, ``{``)
    are dropped. ``echo hello && sudo rm -rf /`` gives ``("echo hello", "sudo rm -rf /")``.
    """
    return tuple(seg.text for seg in segments(command))


def _command_words(seg: Segment) -> list[str]:
    """Unquoted words without redirections and leading ``VAR=value`` assignments."""
    words = [w.value for w in seg.words if not w.redirect]
    i = 0
    while i < len(words) - 1 and ASSIGNMENT.match(words[i]):
        i += 1
    return words[i:]

"""``Read(...)`` rules applied to the files a command or code names, and `check_run`: all
that ctxmode checks before its sandbox runs code.

A ``Read(.env)`` deny would be one ``cat .env`` away from useless in ``ctx_execute``. So
the files a command names are checked as reads: the arguments of every simple command
(those of commands that only handle names, such as ``ls``, ``rm`` or ``echo``, excepted),
input redirections (``< .env``), programs run by path, option values (``--file=.env``,
``if=.env``, ``@.env``, ``HEAD:.env``), with globs and simple braces expanded against the
file system and variables the script assigns filled in. In code of other languages every string
literal is a name (``open(".env")``, ``fs.readFileSync('.env')``, ``File.read``), but
for the lone argument of a call that only tests a name (``os.path.exists('.env')``), and
so are literals joined into one (``'.e' + 'nv'``, ``os.path.join('secrets', 'key')``,
``Path('secrets') / 'key'``). Relative names resolve against the project and against
every directory a shell script ``cd``s into.

This reads text: a name built at run time gets through. Under isolation
(`ctxmode.executor.isolate`) the denied paths are masked for real.
"""

import glob
import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path

from ctxmode.security.code import (
    _normalised,
    _split_arguments,
    _string_re,
    _unquote,
    extract_shell_commands,
)
from ctxmode.security.commands import (
    SHELL_LANGUAGES,
    _fail_closed,
    _internal_error,
    check_code,
    check_unchecked,
    too_long,
)
from ctxmode.security.model import Decision, Policy, Subject, Verdict
from ctxmode.security.paths import check_path
from ctxmode.security.readings import _inner_scripts, _innermost, _parts

# Commands that take file names without reading the files.
NAMES_ONLY = frozenset(
    """ls dir echo printf test [ [[ stat touch mkdir rmdir rm unlink chmod chown chgrp
    realpath readlink basename dirname cd pushd popd type which whereis command hash export
    unset true false find fd du df exit return local declare readonly trap wait kill sleep
    mkfifo mktemp""".split()
)
MAX_NAMES = 2000  # names checked per request: hostile input cannot make it slow
_GLOB_HITS = 256
_INPUT_OPS = frozenset({"<", "<>"})
_HOME_VAR = re.compile(r"\$(?:HOME\b|\{HOME\})")
_PWD_VAR = re.compile(r"\$(?:PWD\b|\{PWD\})|^~\+(?=/|$)")  # ~+ is $PWD too
_BRACES = re.compile(r"\{([^{}$]*,[^{}$]*)\}")
_JOIN_CALL = re.compile(
    r"\b(?:join|Join|Combine|Path|PurePath|PosixPath|joinpath|resolve|File|get|of)\s*\("
)
# Calls that only test or take apart a file's name: a literal they get names no read.
_PY_NAMES_ONLY = frozenset(
    "exists isfile isdir islink lexists remove unlink rmdir basename dirname splitext".split()
)
_NAMES_ONLY = (*sorted(_PY_NAMES_ONLY), "existsSync", "unlinkSync", "rmSync")
_PATH_CLASSES = ("Path", "PurePath", "PosixPath")
_PY_PATH_TESTS = frozenset({"exists", "is_file", "is_dir", "is_symlink", "unlink"})
_NAMES_ONLY_CALL = re.compile(rf"\b(?:{'|'.join(_NAMES_ONLY)}|exist\?|file\?|directory\?)\s*\(\s*$")
_CLOSE = re.compile(r"\s*\)")
_PATH_CALL = re.compile(rf"\b(?:{'|'.join(_PATH_CLASSES)})\s*\(\s*$")
_PATH_TEST = re.compile(rf"\s*\)\s*\.\s*(?:{'|'.join(sorted(_PY_PATH_TESTS))})\s*\(")
_STRING = r"""(?:'[^'\\\n]*'|"[^"\\\n]*")"""
_SLASH_JOIN = re.compile(rf"({_STRING})\s*\)?\s*/\s*({_STRING})")


def _braces(word: str) -> list[str]:
    """``.e{n,x}v`` -> ``.env``, ``.exv`` (at most 64 words)."""
    out = [word]
    for _ in range(4):
        grown = []
        for w in out:
            m = _BRACES.search(w)
            if m is None:
                grown.append(w)
                continue
            grown.extend(w[: m.start()] + alt + w[m.end() :] for alt in m.group(1).split(","))
        if grown == out:
            break
        out = grown[:64]
    return out


def _shell_names(word: str, cwd: str) -> list[str]:
    """The paths a shell word stands for: itself, braces and globs expanded, ``$HOME``."""
    word = _PWD_VAR.sub(lambda _: cwd, _HOME_VAR.sub(lambda _: os.path.expanduser("~"), word))
    if "$" in word or "`" in word or not word:
        return []
    out: list[str] = []
    for name in _braces(word):
        out.append(name)
        if any(c in name for c in "*?["):
            pattern = name if os.path.isabs(name) else os.path.join(cwd, name)
            out.extend(itertools.islice(glob.iglob(os.path.expanduser(pattern)), _GLOB_HITS))
    return out


def _arguments(words: list[str]) -> Iterator[str]:
    """The words of a command that may name files: operands and option values."""
    for w in words[1:]:
        if not w.startswith("-"):
            yield w
        if w.startswith("@"):
            yield w[1:]
        if "=" in w:
            yield w.split("=", 1)[1]
        if ":" in w and "://" not in w:
            yield w.rsplit(":", 1)[1]  # git show HEAD:.env, scp host:.env


def _shell_reads(code: str) -> Iterator[tuple[str, str, str]]:
    """(name, the segment naming it, the directory it resolves against) for shell code,
    and for the code of other languages that the shell code runs."""
    cwds: list[str] = [""]  # "" stands for the project: callers resolve against it
    for part in _parts(code):
        seg = part.segment
        words = _innermost(seg)
        named: list[str] = [r.target for r in seg.redirects if r.op in _INPUT_OPS]
        if words:
            if "/" in words[0]:
                named.append(words[0])
            if os.path.basename(words[0]) not in NAMES_ONLY:
                named.extend(_arguments(words))
            elif words[0] in ("cd", "pushd") and len(words) > 1:
                cwds.append(words[-1])
        for name in named:
            for cwd in cwds:
                yield name, seg.text, cwd
        for language, inner in _inner_scripts(seg):
            if language != "shell":
                for literal in _code_names(language, inner):
                    yield literal, seg.text, ""


def _names_only_use(text: str, start: int, end: int) -> bool:
    """Is the literal at ``text[start:end]`` the lone argument of a call that only looks at
    the name or the existence of a file (``os.path.exists('.env')``,
    ``Path('.env').is_file()``, ``fs.existsSync('.env')``)?"""
    before, after = text[max(0, start - 40) : start], text[end : end + 40]
    if _NAMES_ONLY_CALL.search(before) and _CLOSE.match(after):
        return True
    return bool(_PATH_CALL.search(before) and _PATH_TEST.match(after))


def _code_names(language: str, code: str) -> list[str]:
    """The string literals of ``code``, and the paths literals joined together make."""
    lang = language.lower()
    normalised = _normalised(
        {"js": "javascript", "ts": "typescript", "py": "python"}.get(lang, lang), code
    )
    string_re = _string_re()
    names = [
        _unquote(m)
        for text in dict.fromkeys((code, normalised))
        for m in string_re.finditer(text)
        if not _names_only_use(text, m.start(), m.end())
    ]
    names.extend(
        m.group(1)[1:-1] + "/" + m.group(2)[1:-1] for m in _SLASH_JOIN.finditer(normalised)
    )
    for m in _JOIN_CALL.finditer(normalised):
        args, _ = _split_arguments(normalised, m.end())
        literal = [string_re.fullmatch(a.strip()) for a in args]
        if len(args) > 1 and all(literal):
            names.append("/".join(_unquote(x) for x in literal if x))
    if lang in ("python", "py"):
        names.extend(_python_constants(code))
    return [n for n in names if n and "\n" not in n and "\0" not in n and len(n) <= 4096]


def _python_constants(code: str) -> list[str]:
    """Every string constant of Python `code` as Python reads it: escapes decoded
    (``'.\\x65nv'``, ``'\\056env'``, ``'\\N{FULL STOP}env'``), adjacent literals joined
    (``'.e' 'nv'``), backslash-newlines gone. Nothing when it does not parse."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in the code
            tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names_only: set[int] = set()  # constants only tested or named, as `_names_only_use`
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and len(node.args) == 1):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in _PY_NAMES_ONLY:
            names_only.add(id(node.args[0]))
    for node in ast.walk(tree):  # Path('.env').exists()
        if (
            isinstance(node, ast.Attribute)
            and node.attr in _PY_PATH_TESTS
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", "") in _PATH_CLASSES
            and len(node.value.args) == 1
        ):
            names_only.add(id(node.value.args[0]))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in names_only
    ]


def _names(language: str, code: str, project: Path) -> Iterator[tuple[str, str, Path]]:
    """(name, where it is named, the directory a relative name resolves against)."""
    if language.lower() in SHELL_LANGUAGES:
        for word, where, cwd in _shell_reads(code):
            base = project / os.path.expanduser(cwd) if cwd else project
            for name in _shell_names(word, str(base)):
                yield name, where, base
        return
    where = f"the {language} code"
    for name in _code_names(language, code):
        yield name, where, project
    for embedded in extract_shell_commands(language, code):
        yield from _names("shell", embedded, project)


def _too_many_names(policy: Policy, code: str) -> Verdict:
    """Ask about (deny, failing closed) code naming more files than are checked: an
    unchecked verdict naming the Read rule it could evade, which hooks turn into the
    host's own confirmation (a verdict without a rule, they let through)."""
    guarded = next(r for r in policy.rules_for("Read") if r.kind is not Decision.ALLOW)
    decision = Decision.DENY if policy.fail_closed else Decision.ASK
    head = code.strip().split("\n", 1)[0][:60] + "…"
    why = f"names more than {MAX_NAMES:,} files (the rest could not be checked)"
    return Verdict(decision, Subject.UNCHECKED, guarded, head, reason=why)


def _evaluate_named(policy: Policy, language: str, code: str, project: Path) -> Verdict:
    asked: Verdict | None = None
    seen: set[tuple[str, Path]] = set()
    for name, where, base in _names(language, code, project):
        if (name, base) in seen:
            continue
        seen.add((name, base))
        if len(seen) > MAX_NAMES:  # what follows is unread: never allowed unread
            if asked is None:
                asked = _too_many_names(policy, code)
            break
        verdict = check_path(policy, name, base)
        if verdict.decision is Decision.DENY or (verdict.decision is Decision.ASK and not asked):
            found = Verdict(verdict.decision, Subject.NAMED_PATH, verdict.rule, where, name)
            if found.denied:
                return found
            asked = found
    return asked or Verdict(Decision.NONE, Subject.NAMED_PATH)


def check_named_reads(
    policy: Policy, language: str, code: str, project_dir: Path | str | None = None
) -> Verdict:
    """Decide on the files ``code`` names with the ``Read(...)`` rules. Never raises.

    Deny when a named file matches a deny rule, else ask when one matches an ask rule,
    else NONE (an allow rule on the files says nothing about the code). Relative names
    resolve against ``project_dir`` (default: the policy's project).
    """
    blocked = _fail_closed(policy, Subject.NAMED_PATH)
    if blocked is not None:
        return blocked
    if not any(r.kind is not Decision.ALLOW for r in policy.rules_for("Read")):
        return Verdict(Decision.NONE, Subject.NAMED_PATH)
    project = Path(project_dir if project_dir is not None else policy.project_dir)
    try:
        return _evaluate_named(policy, language, code, project)
    except Exception as exc:  # never raise: see _internal_error
        return _internal_error(policy, Subject.NAMED_PATH, exc)


def check_run(
    policy: Policy, language: str, code: str, project_dir: Path | str | None = None
) -> Verdict:
    """Everything checked before the sandbox runs ``code``. Never raises.

    The ``Bash(...)`` rules (`check_code`), the ``Read(...)`` rules on the files it names
    (`check_named_reads`), and commands that cannot be read from the text while Bash deny
    or ask rules are in force (`check_unchecked`). The first deny wins, else the first
    ask in that order, else `check_code`'s answer.

    Code longer than `CHECK_MAX_CHARS` is not read while deny or ask rules are in force
    (reading 25 MB took half a minute and 2 GB): it is asked about, denied when the policy
    fails closed, with the reason.
    """
    over = too_long(policy, code, ("Bash", "Read"))
    if over is not None:
        return over
    first = check_code(policy, language, code)
    if first.denied:
        return first
    verdicts = [first, check_named_reads(policy, language, code, project_dir)]
    if not verdicts[-1].denied:
        verdicts.append(check_unchecked(policy, language, code))
    for kind in (Decision.DENY, Decision.ASK):
        found = next((v for v in verdicts if v.decision is kind), None)
        if found is not None:
            return found
    return first

"""``Read(...)`` rules: deciding on reading a file.

File paths are compared as absolute paths, in their lexical form (``..`` resolved
against the project) and their real form (symlinks followed), against globs anchored as
Claude Code documents them (``//abs``, ``~/in-home``, ``/from-root``, ``relative`` to the
project). A rule naming a directory covers everything inside it.
"""

import functools
import os
import re
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from ctxmode.security.commands import _fail_closed, _internal_error
from ctxmode.security.model import (
    _KINDS,
    Decision,
    Explanation,
    Policy,
    Rule,
    RuleMatch,
    Scope,
    Subject,
    Verdict,
)

_DRIVE = re.compile(r"[A-Za-z]:/")


def _is_abs(path: str) -> bool:
    return path.startswith("/") or bool(_DRIVE.match(path))


def _norm(path: str) -> str:
    """Lexical normalisation with ``/`` separators: ``.`` and ``..`` resolved, no symlinks."""
    drive = path[:2] if _DRIVE.match(path) else ""
    rest = os.path.normpath(path[len(drive) :]).replace("\\", "/")
    if rest.startswith("//"):
        rest = "/" + rest.lstrip("/")
    return drive + rest


def _real(path: str) -> str:
    if _DRIVE.match(path) and os.sep == "/":
        return path
    return os.path.realpath(path).replace("\\", "/")


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def _literal_dir(abs_glob: str) -> str:
    """The part of an absolute glob before its first wildcard, cut at a ``/``."""
    cut = min((i for i in (abs_glob.find("*"), abs_glob.find("?")) if i >= 0), default=-1)
    if cut < 0:
        return abs_glob
    return abs_glob[: abs_glob.rfind("/", 0, cut)] or "/"


def _anchored_globs(rule: Rule, project: str, home: str) -> list[str]:
    """The absolute globs a ``Read(...)`` rule stands for (``**/x`` stays unanchored)."""
    glob = (rule.specifier or "**").replace("\\", "/")
    if glob.endswith("/"):
        glob += "**"
    if glob.startswith("//"):
        bases = [glob[1:]]
    elif glob == "~" or glob.startswith("~/"):
        bases = [home + glob[1:]]
    elif _DRIVE.match(glob):
        bases = [glob]
    elif glob.startswith("/"):
        # Claude Code: relative to the settings file's root; upstream: absolute. Both.
        in_project = rule.scope in (Scope.LOCAL, Scope.PROJECT)
        root = project if in_project else str(rule.source.parent).replace("\\", "/")
        bases = [glob, root.rstrip("/") + glob]
    else:
        relative = glob[2:] if glob.startswith("./") else glob
        if relative.startswith("**"):
            return [relative]
        bases = [project.rstrip("/") + "/" + relative]
    out: list[str] = []
    for base in map(_norm, bases):
        out.append(base)
        literal = _literal_dir(base)
        real = _real(literal)
        if real != literal:
            out.append(real.rstrip("/") + base[len(literal.rstrip("/")) :])
    return out


@lru_cache(maxsize=2048)
def _path_regex(glob: str, fold: bool) -> re.Pattern[str]:
    drive = glob[:2] if _DRIVE.match(glob) else ""
    body = re.escape(drive) + _glob_regex(glob[len(drive) :])
    return re.compile(body, re.S | (re.I if fold else 0))


def _candidates(path: str, project: str) -> list[str]:
    """``path`` made absolute: lexical (``..`` resolved) and real (symlinks followed)."""
    text = path.strip().replace("\\", "/")
    if text == "~" or text.startswith("~/"):
        text = os.path.expanduser("~").replace("\\", "/") + text[1:]
    absolute = text if _is_abs(text) else project.rstrip("/") + "/" + text
    lexical = _norm(absolute)
    real = _real(lexical)
    # `..` after a symlink resolves differently: resolve the unnormalised name too
    return list(dict.fromkeys([lexical, real, real if absolute == lexical else _real(absolute)]))


def _with_parents(path: str) -> list[str]:
    """``/a/b/c`` -> ``/a/b/c``, ``/a/b``, ``/a``: a rule on a directory covers its files."""
    out = [path]
    while True:
        parent = path.rsplit("/", 1)[0]
        if not parent or parent == path or parent.endswith(":"):
            return out
        out.append(parent)
        path = parent


def _evaluate_path(
    policy: Policy, path: str, project_dir: Path | str | None
) -> tuple[Verdict, list[RuleMatch], list[str]]:
    def absolute(directory: Path | str) -> str:
        return _norm(os.path.abspath(directory).replace("\\", "/"))

    # Rules are anchored at the project whose settings they come from; the path at the
    # directory the caller resolves relative paths against.
    project = absolute(policy.project_dir)
    base = project if project_dir is None else absolute(project_dir)
    home = os.path.expanduser("~").replace("\\", "/")
    fold = policy.case_insensitive_paths
    forms = _candidates(path, base)
    tested = [p for form in forms for p in _with_parents(form)]
    considered: list[RuleMatch] = []
    first: dict[Decision, tuple[Rule, str]] = {}
    for rule in policy.rules_for("Read"):
        regexes = [_path_regex(g, fold) for g in _anchored_globs(rule, project, home)]
        hits = [p for p in tested if any(rx.fullmatch(p) for rx in regexes)]
        considered.append(RuleMatch(rule, tuple(dict.fromkeys(hits))))
        if hits:
            first.setdefault(rule.kind, (rule, hits[0]))
    for kind in _KINDS:
        if kind in first:
            rule, hit = first[kind]
            return Verdict(kind, Subject.PATH, rule, hit, hit), considered, forms
    return Verdict(Decision.NONE, Subject.PATH), considered, forms


def check_path(
    policy: Policy, path: str | os.PathLike[str], project_dir: Path | str | None = None
) -> Verdict:
    """Decide on reading a file with the ``Read(...)`` rules. Never raises.

    Relative paths resolve against ``project_dir`` (default: the policy's project);
    relative rules stay anchored at the policy's project. The path is tried in its
    lexical form (``..`` resolved) and its real form (symlinks followed), and through its
    parent directories, so neither ``../`` nor a symlink gets past a rule. Deny, then
    ask, then allow, else NONE.
    """
    blocked = _fail_closed(policy, Subject.PATH)
    if blocked is not None:
        return blocked
    try:
        return _evaluate_path(policy, os.fspath(path), project_dir)[0]
    except Exception as exc:  # never raise: see _internal_error
        return _internal_error(policy, Subject.PATH, exc)


def explain_path(
    policy: Policy, path: str | os.PathLike[str], project_dir: Path | str | None = None
) -> Explanation:
    """`check_path`'s verdict with the resolved forms and every Read rule's matches."""
    verdict = check_path(policy, path, project_dir)
    try:
        _, considered, forms = _evaluate_path(policy, os.fspath(path), project_dir)
    except Exception:  # the verdict already carries the error
        considered, forms = [], []
    return Explanation(
        os.fspath(path),
        Subject.PATH,
        tuple(forms),
        verdict,
        tuple(considered),
        policy.sources,
        policy.warnings,
    )


def path_deny_check(policy: Policy, project_dir: Path | str | None = None) -> Callable[[str], bool]:
    """A ``path -> denied?`` function, the shape of `ContentStore`'s ``deny`` argument:
    the ``Read(...)`` deny rules, and ctxmode's own data (`own_data`) always."""
    own = _own_roots()
    base = os.fspath(policy.project_dir if project_dir is None else project_dir)

    def denied(path: str) -> bool:
        return _inside(path, base, own) or check_path(policy, path, project_dir).denied

    return denied


def _own_roots() -> tuple[str, ...]:
    """The data root by name and by what it resolves to."""
    from ctxmode import paths

    return _roots_of(os.fspath(paths.data_root()))


@functools.lru_cache(maxsize=4)
def _roots_of(root: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_fold(r.rstrip("/") or "/") for r in (_norm(root), _real(root))))


def _fold(path: str) -> str:
    return path.casefold() if sys.platform in ("darwin", "win32") else path


def _inside(path: str | os.PathLike[str], base: str, roots: tuple[str, ...]) -> bool:
    forms = [_fold(form) for form in _candidates(os.fspath(path), base.replace("\\", "/"))]
    return any(
        form == root or form.startswith(root.rstrip("/") + "/") for form in forms for root in roots
    )


def own_data(path: str | os.PathLike[str], base: Path | str | None = None) -> bool:
    """Is `path` (absolute, or relative to `base`, default the current directory) inside
    ctxmode's data root (every project's knowledge base, session databases, logs), by its
    name or by what it resolves to? Its tools never index or read those files."""
    return _inside(path, os.fspath(base or os.getcwd()), _own_roots())


def refuse_own_data(path: str | os.PathLike[str], base: Path | str | None = None) -> None:
    """Raise when `path` is ctxmode's own data (`own_data`).

    Raises:
        PolicyDeniedError: it is.
    """
    if own_data(path, base):
        from ctxmode import paths
        from ctxmode.errors import PolicyDeniedError

        raise PolicyDeniedError(
            f"{os.fspath(path)} is ctxmode's own data (the knowledge bases, sessions and logs "
            f"under {paths.data_root()}): ctxmode's tools do not index or read it"
        )


MAX_WALK = 200_000  # entries looked at to resolve the globs of one policy


class TooManyFilesError(ValueError):
    """A ``Read(...)`` glob would need a walk over too many files to resolve."""


def _walk(top: str, regex: re.Pattern[str], depth: int | None, budget: list[int]) -> list[str]:
    """Paths under ``top`` that ``regex`` matches; a matched directory is not entered."""
    found: list[str] = []
    stack = [(top, 0)]
    while stack:
        folder, level = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        budget[0] -= len(entries)
        if budget[0] < 0:
            raise TooManyFilesError(f"more than {MAX_WALK} files under {top}")
        for entry in entries:
            path = entry.path.replace("\\", "/")
            if regex.fullmatch(path):
                found.append(path)
            elif (depth is None or level + 1 < depth) and entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, level + 1))
    return found


def denied_paths(policy: Policy) -> list[str]:
    """The existing files and directories that ``Read(...)`` deny rules deny, now.

    Globs resolve against the file system at call time; a pattern anchored nowhere
    (``**/.env``) is looked for inside the project only. A directory stands for all it
    holds, so nothing inside a listed directory is listed. Symlinks are listed with
    their targets.

    Raises:
        TooManyFilesError: resolving the globs would mean looking at more than
            `MAX_WALK` entries.
    """
    project = _norm(os.path.abspath(policy.project_dir).replace("\\", "/"))
    home = os.path.expanduser("~").replace("\\", "/")
    fold = policy.case_insensitive_paths
    budget = [MAX_WALK]
    found: list[str] = []
    for rule in policy.rules_for("Read"):
        if rule.kind is not Decision.DENY:
            continue
        for glob in _anchored_globs(rule, project, home):
            if not _is_abs(glob):
                glob = project.rstrip("/") + "/" + glob
            literal = _literal_dir(glob)
            if literal == glob:
                found.append(glob)
            elif glob == literal.rstrip("/") + "/**":
                found.append(literal)
            else:
                depth = None if "**" in glob else glob.count("/") - literal.rstrip("/").count("/")
                found.extend(_walk(literal, _path_regex(glob, fold), depth, budget))
    out: list[str] = []
    for path in dict.fromkeys(p for f in found for p in (f, _real(f)) if os.path.lexists(p)):
        if not any(path == kept or path.startswith(kept.rstrip("/") + "/") for kept in out):
            out = [k for k in out if not k.startswith(path.rstrip("/") + "/")] + [path]
    return sorted(out)

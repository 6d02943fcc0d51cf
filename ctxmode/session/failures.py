"""What failed in a session, and what was fixed since: the items of the snapshot's errors.

Failures are followed at two grains. A check (a command, or a tool on a path) fails and is
fixed as a whole when a later run covering it passes (`ctxmode.session.extract.covers`,
recorded as ``error_fixed`` by the capture hook). A test run's failures are followed test by
test: a later run of the same runner that covers a test (no path arguments, or a path that
holds the test's file, or its id) and does not list it shows it passing, whether that run
passed (``check_passed``) or failed on other tests. So ``pytest`` failing on two tests, then
``pytest tests/test_a.py`` passing, then ``pytest tests/test_b.py`` failing, reads: the test
of ``test_b`` still failing (with its assertion), the one of ``test_a`` failed then fixed.

Each item is the command with what failed: test ids, the first one's assertion or
exception, a compiler's codes and first error line (`ctxmode.outline`), else the output's
last telling lines; ``$ cmd`` alone only when the output named nothing.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxmode.session.events import StoredEvent
from ctxmode.session.extract import OUTLINE_MARK, check_key

STILL_FAILING = "STILL FAILING"
FIXED = "failed, then fixed"
ITEM_BYTES = 360  # one failed check: its command, count line, failures by name
MAX_FAILING, MAX_FIXED = 4, 3

_PREFIX = re.compile(r"^(?:FAILED|FAIL:?|ERROR:?|--- FAIL:|not ok(?: \d+)? -|✖|×|●)\s+")
_WORDISH = re.compile(r"\w")


@dataclass
class _Run:
    """One failed check as the session saw it last."""

    label: str  # "$ command" or "Tool path"
    count: str = ""  # the runner's count line
    names: list[str] = field(default_factory=list)  # what failed, in the output's order
    detail: dict[str, str] = field(default_factory=dict)  # name → its first detail line
    tail: str = ""  # the last telling lines, when the output named nothing
    tests: bool = False  # the names are test ids, followed one by one
    fixed: bool = False
    # What an earlier run of the same check listed and this one does not (a diagnostic
    # fixed since); kept for a check whose names are not followed one by one.
    resolved: list[str] = field(default_factory=list)


def _name(header: str) -> str:
    """A failure as an outline item's header names it: the test id, or the diagnostic."""
    name = _PREFIX.sub("", header.strip())
    return re.sub(r"\s+-\s+.*$", "", name) if "::" in name else name


def _is_test(kind: str) -> bool:
    return kind in ("pytest", "unittest", "jest", "vitest", "node:test", "go test", "cargo test")


def _details(text: str, header: str) -> str:
    """The first indented line under `header` in a rendered outline."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == header.strip():
            for below in lines[i + 1 :]:
                if not below.startswith((" ", "\t")):
                    return ""
                if below.strip():
                    return below.strip()
    return ""


def _parse(data: str) -> _Run:
    label, _, rest = data.strip().partition("\n")
    run = _Run(" ".join(label.split()))
    if not rest.strip():
        return run
    if rest.startswith(OUTLINE_MARK):
        _stored(run, rest)
        return run
    from ctxmode.outline import outline

    found = outline(rest)
    if found is None or not found.items:
        if not _rendered(run, rest):
            lines = [ln.strip() for ln in rest.splitlines() if len(_WORDISH.findall(ln)) >= 3]
            run.tail = " ".join(" ".join(lines[-3:]).split())
        return run
    run.count = found.counts[0] if found.counts else ""
    run.tests = _is_test(found.kind)
    for item in found.items:
        name = _name(item.header)
        if name in run.detail:
            continue
        run.names.append(name)
        first = item.details[0].strip() if item.details else _details(rest, item.header)
        run.detail[name] = " ".join(first.split())
    return run


def _stored(run: _Run, text: str) -> None:
    """Read an outline as `failure_detail` stored it: ``[outline:<kind>] <counts>``, then
    each item's header and its indented details. The detail kept is a traceback's last
    frame (where it was raised), else the first line (the assertion, the error)."""
    first, _, body = text.partition("\n")
    kind, _, counts = first[len(OUTLINE_MARK) :].partition("]")
    run.count = counts.strip().split(" | ", 1)[0]
    run.tests = _is_test(kind)
    below: dict[str, list[str]] = {}
    name = ""
    for line in body.splitlines():
        if not line.strip() or line.lstrip().startswith("[… "):
            continue
        if not line.startswith((" ", "\t")):
            name = _name(line)
            if name not in below:
                run.names.append(name)
                below[name] = []
        elif name:
            below[name].append(" ".join(line.split()))
    for name, details in list(below.items()):
        frames = [d for d in details if d.startswith('File "')] if kind == "traceback" else []
        run.detail[name] = frames[-1] if frames else details[0] if details else ""
        if details and details[0].startswith("--> "):  # rustc: where comes under the error
            where = f"{details[0][4:].strip()} {name}"
            run.names[run.names.index(name)] = where
            run.detail[where] = run.detail.pop(name)


def _rendered(run: _Run, text: str) -> bool:
    """Read an outline as ``ctxmode.outline.render`` wrote it where the outline cannot be
    found again in it (a traceback): its count line, then each item's header and indented
    details; the detail kept is a traceback's last frame, else the first line."""
    lines = text.strip().splitlines()
    if len(lines) < 2 or not _RENDERED_COUNT.match(lines[0]):
        return False
    below: dict[str, list[str]] = {}
    header = ""
    for line in lines[1:]:
        if not line.strip() or line.strip() == "…":
            continue
        if not line.startswith((" ", "\t")):
            header = " ".join(line.split())
            below.setdefault(header, [])
        elif header:
            below[header].append(" ".join(line.split()))
    for name, details in below.items():
        frames = [d for d in details if d.startswith('File "')]
        run.names.append(name)
        run.detail[name] = frames[-1] if frames else details[0] if details else ""
    return bool(run.names)


_RENDERED_COUNT = re.compile(r"^\d+ [\w ]+\(s\)")


def _scope(label: str) -> tuple[tuple[str, ...], list[str]] | None:
    """(the runner: program and its other words, what the run covers: test ids, files or
    folders, [] for everything); None for what is not a command."""
    if not label.startswith("$ "):
        return None
    key = check_key(label[2:])
    if key is None:
        return None
    targets = []
    for word in label[2:].split():
        word = word.strip("\"'")
        if word.rstrip("/") not in key[2] and word.split("::", 1)[0].rstrip("/") not in key[2]:
            continue
        while word.startswith(("./", "../")):
            word = word.split("/", 1)[1]
        if word in ("", "...") or word.endswith("/..."):
            return (key[0], *key[1]), []  # go's ./...: every package
        targets.append(word.rstrip("/"))
    return (key[0], *key[1]), targets


def _covers(targets: Sequence[str], name: str) -> bool:
    if not targets:
        return True
    path = name.split("::", 1)[0]
    for target in targets:
        if "::" in target:
            if name == target or name.startswith(target + "::"):
                return True
        elif path == target or path.startswith(target + "/") or path.endswith("/" + target):
            return True
    return False


def _brief(name: str) -> str:
    """A compiler's or linter's diagnostic as its location and code (``a.py:24
    [return-value]``, ``src/x.ts(3,5) TS2322``); any other name as it is."""
    where = _LOCATION.match(name)
    code = _BRACKET_CODE.search(name) or _BARE_CODE.search(name)
    if where is None or code is None:
        return name
    return f"{where.group(1)} [{code.group(1)}]"


_LOCATION = re.compile(r"^(\S+?(?::\d+(?::\d+)?|\(\d+,\d+\)))[:\s]")
_BRACKET_CODE = re.compile(r"\[([A-Za-z][\w./@-]*)\]\s*$")
_BARE_CODE = re.compile(r"\b((?:TS|E|W|C|F)\d{3,5})\b")


def _mentions(run: _Run, limit: int, *, with_detail: bool, names: Sequence[str]) -> str:
    """`names` joined by "; ", each whole, the first with its detail (in full); the others
    briefly (a diagnostic by location and code); those that do not fit are counted."""
    parts = [names[0], *(_brief(n) for n in names[1:])] if names else []
    if not with_detail and parts:
        parts[0] = _brief(parts[0])
    if with_detail and parts and run.detail.get(names[0]):
        parts[0] = f"{parts[0]} ({run.detail[names[0]]})"
    out: list[str] = []
    used = 0
    for i, part in enumerate(parts):
        more = len(parts) - i - 1
        tail = len(f"; +{more} more") if more else 0
        if used + len(part) + 2 + tail > limit and out:
            return "; ".join(out) + f"; +{len(parts) - i} more"
        out.append(part)
        used += len(part) + 2
    return "; ".join(out)


def failure_items(events: Sequence[StoredEvent]) -> tuple[list[str], int, int]:
    """(the errors section's items, still failing first, newest first; how many checks
    still fail; how many were fixed)."""
    runs: dict[str, _Run] = {}  # label → its latest run
    failing: dict[str, tuple[tuple[str, ...], str]] = {}  # test id → (runner, its latest run)
    fixed: dict[str, str] = {}  # test id → label of the run it first failed in
    first_label: dict[str, str] = {}
    for e in events:
        head = e.data.strip().split("\n", 1)[0].strip()
        if e.type == "blocker_resolved":
            for run in runs.values():
                run.fixed = True
            for name in failing:
                fixed.setdefault(name, first_label[name])
            failing.clear()
            continue
        if e.type == "error_fixed":
            label = " ".join(head.split())
            if label in runs:
                runs[label].fixed = True
            for name, (_, where) in list(failing.items()):
                if where == label:
                    fixed.setdefault(name, first_label[name])
                    del failing[name]
            continue
        if e.type == "check_passed":
            scope = _scope(" ".join(head.split()))
            if scope is not None:
                for name, (runner, _) in list(failing.items()):
                    if runner == scope[0] and _covers(scope[1], name):
                        fixed.setdefault(name, first_label[name])
                        del failing[name]
            continue
        if e.type not in ("error_tool", "blocker") or len(_WORDISH.findall(e.data)) < 3:
            continue
        run = _parse(e.data)
        earlier = runs.pop(run.label, None)
        if earlier is not None and not run.tests:
            gone = [n for n in (*earlier.resolved, *earlier.names) if n not in run.detail]
            run.resolved = list(dict.fromkeys(gone))
        runs[run.label] = run
        scope = _scope(run.label) if run.tests else None
        if scope is None:
            continue
        for name, (runner, _) in list(failing.items()):
            if runner == scope[0] and name not in run.detail and _covers(scope[1], name):
                fixed.setdefault(name, first_label[name])
                del failing[name]
        for name in run.names:
            failing[name] = (scope[0], run.label)
            first_label.setdefault(name, run.label)
            fixed.pop(name, None)

    still: list[str] = []
    done: list[str] = []
    for run in reversed(runs.values()):
        if not run.tests or _scope(run.label) is None:
            if run.fixed:
                done.append(f"{FIXED}: {_short(run, [*run.resolved, *run.names])}")
            else:
                still.append(f"{STILL_FAILING}: {_long(run, run.names)}")
                if run.resolved:
                    done.append(f"{FIXED}: {_short(run, run.resolved)}")
            continue
        now = [n for n in run.names if n in failing and failing[n][1] == run.label]
        if now and not run.fixed:
            whole = len(now) == len(run.names)
            still.append(f"{STILL_FAILING}: {_long(run, now, all_shown=whole)}")
        gone = [n for n, where in fixed.items() if where == run.label]
        if gone:
            done.append(f"{FIXED}: {_short(run, gone)}")
    return still[:MAX_FAILING] + done[:MAX_FIXED], len(still), len(done)


_ZERO_OR_TIME = re.compile(
    r"(?:[;,]\s*)?\b0 (?:passed|failed|ignored|measured|skipped|errors?|warnings?|xfailed|"
    r"xpassed|deselected|filtered out|todo|cancelled)\b|(?:[;,]\s*)?(?:finished )?in "
    r"[\d.]+\s*m?s\b|\(\s*[\d.]+\s*m?s\)|^=+\s*|\s*=+$"
)


def _count(line: str) -> str:
    """A count line without what says nothing: zero counts, timings, ``=`` rules
    (``test result: FAILED. 0 passed; 1 failed; 0 ignored; ... finished in 0.09s`` →
    ``test result: FAILED. 1 failed``)."""
    short = re.sub(r"([.:])\s*[;,]\s*", r"\1 ", _ZERO_OR_TIME.sub("", line))
    return " ".join(short.strip(" ;,.").split()) or line


def _long(run: _Run, names: Sequence[str], *, all_shown: bool = True) -> str:
    """A still-failing item: the command, its count line, what failed."""
    if not names:
        return f"{run.label} → {run.tail}" if run.tail else run.label
    count = f"{_count(run.count)}: " if run.count and all_shown else ""
    room = ITEM_BYTES - len(run.label) - len(count) - 20
    return f"{run.label} → {count}{_mentions(run, room, with_detail=True, names=names)}"


def _short(run: _Run, names: Sequence[str] | None = None) -> str:
    """A fixed item: the command and what had failed, by name."""
    names = run.names if names is None else names
    if not names:
        return f"{run.label} → {run.tail}" if run.tail else run.label
    room = ITEM_BYTES - len(run.label) - 24
    return f"{run.label}: {_mentions(run, room, with_detail=False, names=names)}"

"""What an output is, and the lines of it an agent needs first.

`outline(text)` recognises a test run (pytest, unittest, jest, vitest, node:test, go test,
cargo test), a diff, compiler and linter diagnostics (tsc, mypy, rustc, gcc, eslint, ruff),
a Python traceback, or a log with error lines, and returns its `Outline`: the count lines
("24 failed, 640 passed") and one `Item` per failure, hunk, diagnostic or kind of log error,
each a header with the lines that explain it (the assertion, the exception, the changed
lines). Every line is whole: an outline never cuts a line in the middle (a very long line
is shown up to `LINE_MAX` bytes and says how much of it is left out).

`render(outline, budget)` lays it out within a byte budget: the counts first, then items in
order, each whole or left out; the items left out are counted on the last line.

Recognising is a handful of regular expressions over the whole text (no Python work per line
for the runners), so it costs a few milliseconds on a megabyte of output.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field

LINE_MAX = 400  # bytes of one shown line
DETAIL_LINES = 8  # lines under one item's header
ITEM_MAX = 400  # bytes of one item with its details (its first detail line always shown)
LOG_KINDS = 12  # kinds of log error listed


@dataclass
class Item:
    header: str
    details: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join([self.header, *(f"  {d}" for d in self.details)])


@dataclass
class Outline:
    kind: str  # "pytest", "unittest", "jest", "vitest", "node:test", "go test", "cargo test", ...
    counts: list[str]
    items: list[Item]
    noun: str = "failures"  # what the items are, for "N more failures"


def whole_line(line: str, limit: int = LINE_MAX) -> str:
    """`line` without its end of line; past `limit` bytes, its head and how much is left."""
    line = line.rstrip("\r\n")
    data = line.encode("utf-8", "replace")
    if len(data) <= limit:
        return line
    head = data[:limit].decode("utf-8", "ignore")
    return f"{head}[… {len(data) - len(head.encode('utf-8'))} more bytes of this line]"


def _last(pattern: re.Pattern[str], text: str) -> str | None:
    matches = pattern.findall(text) if pattern.groups == 0 else []
    return whole_line(matches[-1]) if matches else None


def _detail(lines: list[str], keep: Callable[[str], bool]) -> list[str]:
    picked = [whole_line(ln.strip()) for ln in lines if ln.strip() and keep(ln)]
    return picked[:DETAIL_LINES]


# --------------------------------------------------------------------------- pytest

_PY_COUNT = re.compile(
    r"^=*\s*(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|deselected|warnings?"
    r"|subtests (?:passed|failed))(?:, )?)+ in [\d.]+s.*$",
    re.M,
)
_PY_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$", re.M)
# A test id, not unittest's closing "FAILED (failures=2)".
_PY_SUMMARY = re.compile(
    r"^((?:FAILED|ERROR|SUBFAILED\S*|SUBFAIL\S*) (?!\()\S+)(?: - (.*))?$", re.M
)
_PY_LOCATION = re.compile(r"^\S+:\d+: \w+")
_PY_END = re.compile(r"^(?:={5,}|-{5,} (?:Captured|generated))", re.M)


def _pytest(text: str) -> Outline | None:
    count = _last(_PY_COUNT, text)
    summary = [(m.group(1), m.group(2) or "") for m in _PY_SUMMARY.finditer(text)]
    if count is None and not summary:
        return None
    if count is None and not text.lstrip().startswith(("=", ".", "F", "E")):
        return None
    sections = list(_PY_SECTION.finditer(text))
    items: list[Item] = []
    named: dict[str, str] = {}
    for head, _ in summary:
        verb, _, node = head.partition(" ")
        sub = re.match(r"SUBFAIL\w*\((.*)\)", verb)
        key = node.split("::", 1)[-1].replace("::", ".")
        named[f"{key} ({sub.group(1)})" if sub else key] = head
    for i, match in enumerate(sections):
        title = match.group(1)
        if title.startswith(("FAILURES", "ERRORS", "warnings summary")):
            continue
        end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
        stop = _PY_END.search(text, match.end(), end)
        body = text[match.end() : stop.start() if stop else end].split("\n")
        errors = [ln[1:].strip() for ln in body if ln.startswith("E ") and ln[1:].strip()]
        where = [ln.strip() for ln in body if _PY_LOCATION.match(ln.strip())]
        header = named.pop(title, None) or next(
            (h for k, h in named.items() if title.endswith(k) or k.endswith(title)), title
        )
        named = {k: h for k, h in named.items() if h != header or k == title}
        details = [whole_line(e) for e in errors[:DETAIL_LINES]]
        if where:  # the location second: the message and where it failed come first
            details.insert(min(1, len(details)), whole_line(where[-1]))
        items.append(Item(header, details))
    shown = {item.header for item in items}
    for head, message in summary:  # failures without a section (--tb=no, -rf)
        if head not in shown:
            items.append(Item(head, [whole_line(message)] if message else []))
            shown.add(head)
    return Outline("pytest", [count] if count else [], items)


# --------------------------------------------------------------------------- unittest

# A test's docstring summary may stand between its header and the dashes.
_UT_HEAD = re.compile(r"^={20,}\n((?:FAIL|ERROR): .+)\n(?:(?!-{20,}\n).*\n){0,3}?-{20,}\n", re.M)
_UT_RAN = re.compile(r"^Ran \d+ tests? in [\d.]+s$", re.M)
_UT_RESULT = re.compile(r"^(?:FAILED \(.*\)|OK(?: \(.*\))?)$", re.M)
_UT_END = re.compile(r"^(?:={20,}|-{20,})$", re.M)


def _traceback_tail(lines: list[str]) -> list[str]:
    """The exception's first line, the last frame's location and code, then the rest of
    the exception's lines."""
    frames = [i for i, ln in enumerate(lines) if ln.lstrip().startswith('File "')]
    if not frames:
        return [whole_line(ln.strip()) for ln in lines if ln.strip()][:DETAIL_LINES]
    last = frames[-1]
    rest = [ln.strip() for ln in lines[last + 1 :] if set(ln) - {"^", "~", " "}]
    start = next((k for k, ln in enumerate(rest) if _PY_EXCEPTION.match(ln)), min(1, len(rest)))
    where = [lines[last].strip(), *rest[:start]]
    exception = rest[start:][:DETAIL_LINES]
    return [whole_line(ln) for ln in [*exception[:1], *where, *exception[1:]]]


def _unittest(text: str) -> Outline | None:
    heads = list(_UT_HEAD.finditer(text))
    ran = _last(_UT_RAN, text)
    if not heads and ran is None:
        return None
    items = []
    for match in heads:
        stop = _UT_END.search(text, match.end())
        body = text[match.end() : stop.start() if stop else len(text)].split("\n")
        items.append(Item(whole_line(match.group(1)), _traceback_tail(body)))
    counts = [c for c in (ran, _last(_UT_RESULT, text)) if c]
    return Outline("unittest", counts, items)


# --------------------------------------------------------------------------- jest / vitest

_JEST_COUNT = re.compile(r"^[ \t]*(?:Tests|Test Suites|Test Files):?[ \t]+.*\d+.*$", re.M)
_JEST_HEAD = re.compile(r"^\s*● (.+›.+|.+)$", re.M)
_VITEST_HEAD = re.compile(r"^\s*(?:FAIL|×|✗)\s+(\S.*>.*)$", re.M)
_CODE_FRAME = re.compile(r"^\s*(?:>?\s*\d+\s*\||\|\s)")


def _frames_and_messages(body: list[str]) -> list[str]:
    out: list[str] = []
    at_seen = False
    for ln in body:
        s = ln.strip()
        if not s or _CODE_FRAME.match(ln) or set(s) <= {"^", " ", "|"}:
            continue
        if s.startswith("at ") or s.startswith("❯ "):
            if at_seen or "node_modules" in s or "node:" in s:
                continue
            at_seen = True
        out.append(whole_line(s))
    return out[:DETAIL_LINES]


def _jest(text: str) -> Outline | None:
    counts = [whole_line(m.group(0).strip()) for m in _JEST_COUNT.finditer(text)]
    vitest = bool(re.search(r"^\s*Test Files\s", text, re.M)) or "vitest" in text[:2000].lower()
    heads = list((_VITEST_HEAD if vitest else _JEST_HEAD).finditer(text))
    if vitest:  # the detailed blocks come after "Failed Tests"; the list above repeats them
        detail = [m for m in heads if text.startswith(" FAIL ", m.start()) or "FAIL " in m.group(0)]
        heads = detail or heads
    if not counts:
        return None
    items = []
    seen: set[str] = set()
    for i, match in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[match.end() : end].split("\n")
        stop = next((k for k, ln in enumerate(body) if _JEST_COUNT.match(ln)), len(body))
        header = whole_line(match.group(0).strip())
        details = _frames_and_messages(body[:stop])
        if header in seen and not details:
            continue
        seen.add(header)
        items.append(Item(header, details))
    return Outline("vitest" if vitest else "jest", counts, items)


# --------------------------------------------------------------------------- node:test

_TAP_FAIL = re.compile(r"^(\s*)not ok \d+ - (.+)$", re.M)
_TAP_COUNT = re.compile(r"^# (?:tests|suites|pass|fail|cancelled|skipped|todo) \d+$", re.M)
_SPEC_FAIL = re.compile(r"^(\s*)✖ (.+?)(?: \([\d.]+m?s\))?$", re.M)
_SPEC_COUNT = re.compile(r"^ℹ (?:tests|suites|pass|fail|cancelled|skipped|todo) \d+$", re.M)


def _tally(lines: list[str]) -> str:
    """node:test's count lines as one: "tests 5, pass 2, fail 3" (zeros left out)."""
    pairs = [ln.lstrip("#ℹ ").split() for ln in lines[-8:]]
    return ", ".join(f"{k} {v}" for k, v in pairs if v != "0" or k in ("tests", "fail"))


def _node_test(text: str) -> Outline | None:
    tap = _TAP_COUNT.findall(text)
    spec = _SPEC_COUNT.findall(text)
    if not tap and not spec:
        return None
    items: list[Item] = []
    if tap:
        for m in _TAP_FAIL.finditer(text):
            indent = len(m.group(1))
            body: list[str] = []
            for ln in text[m.end() + 1 :].split("\n"):
                if ln.strip() == "..." or ln.strip().startswith("stack:"):
                    break
                if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
                    break
                body.append(ln)
            keep = [
                ln
                for ln in body
                if ln.strip()
                and not ln.strip().startswith(("duration_ms", "type:", "---", "location:"))
                and not re.match(r"\s*(?:at |stack:|failureType|code:|name:)", ln)
            ]
            if any(re.search(r"subtests? failed", ln) for ln in keep):
                continue  # a suite failing because a test in it failed: the test says why
            items.append(Item(f"not ok - {m.group(2).strip()}", _detail(keep, lambda _: True)))
        return Outline("node:test", [_tally(tap)], items)
    marker = text.find("✖ failing tests:")
    region = text[marker:] if marker >= 0 else text
    for m in _SPEC_FAIL.finditer(region):
        if m.group(2).startswith("failing tests"):
            continue
        indent = len(m.group(1))
        body = []
        for ln in region[m.end() + 1 :].split("\n"):
            if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
                break
            body.append(ln)
        items.append(Item(f"✖ {m.group(2).strip()}", _frames_and_messages(body)))
    return Outline("node:test", [_tally(spec)], items)


# --------------------------------------------------------------------------- go test

_GO_FAIL = re.compile(r"^(\s*)--- FAIL: (\S+) \(([\d.]+s)\)$", re.M)
_GO_COUNT = re.compile(r"^(?:FAIL|ok)\s+\S+\s+(?:[\d.]+s|\(cached\)).*$|^FAIL$", re.M)
_GO_PANIC = re.compile(r"^panic: .+$", re.M)


def _go_test(text: str) -> Outline | None:
    fails = list(_GO_FAIL.finditer(text))
    counts = [whole_line(m.group(0)) for m in _GO_COUNT.finditer(text)]
    if not fails and not (counts and "=== RUN" in text):
        return None
    items = []
    for m in fails:
        indent = len(m.group(1))
        body = []
        for ln in text[m.end() + 1 :].split("\n"):
            if not ln.strip() or len(ln) - len(ln.lstrip()) <= indent:
                break
            body.append(ln)
        if not body:  # go test -v: the test's log lines come between its RUN and its FAIL
            run = text.rfind(f"=== RUN   {m.group(2)}\n", 0, m.start())
            if run >= 0:
                between = text[run : m.start()].split("\n")[1:]
                body = [ln for ln in between if ln.startswith((" ", "\t"))]
        items.append(Item(f"--- FAIL: {m.group(2)}", _detail(body, lambda _: True)))
    items.extend(Item(whole_line(m.group(0))) for m in _GO_PANIC.finditer(text))
    return Outline("go test", counts, items)


# --------------------------------------------------------------------------- cargo test

_CARGO_SECTION = re.compile(r"^---- (\S+) stdout ----$", re.M)
_CARGO_COUNT = re.compile(r"^test result: .+$", re.M)


def _cargo_test(text: str) -> Outline | None:
    counts = [whole_line(m.group(0)) for m in _CARGO_COUNT.finditer(text)]
    sections = list(_CARGO_SECTION.finditer(text))
    if not counts and not sections:
        return None
    items = []
    for i, m in enumerate(sections):
        end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
        body = text[m.end() : end].split("\n")
        stop = next(
            (
                k
                for k, ln in enumerate(body)
                if ln.startswith(("failures:", "note: run with", "stack backtrace:"))
            ),
            len(body),
        )
        details = _detail(body[:stop], lambda _: True)
        if len(details) > 1 and " panicked at " in details[0]:
            # the message first, then where it panicked (as a pytest failure reads)
            details[0], details[1] = details[1], details[0]
        items.append(Item(f"FAILED {m.group(1)}", details))
    if not items:
        names = re.findall(r"^test (\S+) \.\.\. FAILED$", text, re.M)
        items.extend(Item(f"FAILED {name}") for name in names)
    return Outline("cargo test", counts, items)


# --------------------------------------------------------------------------- diffs

_GIT_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+).*$", re.M)
_PLAIN_FILE = re.compile(r"^--- \S.*\n\+\+\+ (?:b/)?(\S+).*$", re.M)
_HUNK = re.compile(r"^@@ .+$", re.M)


def _diff(text: str) -> Outline | None:
    files = list(_GIT_FILE.finditer(text)) or list(_PLAIN_FILE.finditer(text))
    if not files or not _HUNK.search(text):
        return None
    items = []
    for i, f in enumerate(files):
        end = files[i + 1].start() if i + 1 < len(files) else len(text)
        name = whole_line(f.group(f.lastindex or 0))
        hunks = list(_HUNK.finditer(text, f.end(), end))
        for k, h in enumerate(hunks):
            stop = hunks[k + 1].start() if k + 1 < len(hunks) else end
            lines = text[h.end() + 1 : stop].split("\n")
            changed = [
                n
                for n, ln in enumerate(lines)
                if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
            ]
            keep: set[int] = set()
            for n in changed:  # each changed line, with one line of context either side
                keep.update((n - 1, n, n + 1))
            shown: list[str] = []
            last = -2
            for n in sorted(k for k in keep if 0 <= k < len(lines) and lines[k].strip()):
                if n > last + 1 and shown:
                    shown.append("…")
                shown.append(whole_line(lines[n]))
                last = n
            items.append(Item(f"{name} {whole_line(h.group(0))}", shown))
    adds = len(re.findall(r"^\+(?!\+\+)", text, re.M))
    dels = len(re.findall(r"^-(?!--)", text, re.M))
    counts = [f"{len(files)} file(s), {len(items)} hunk(s), +{adds} -{dels} lines"]
    return Outline("diff", counts, items, noun="hunks")


# --------------------------------------------------------------------------- diagnostics

_DIAGNOSTIC = re.compile(
    r"^(?:"
    r"\S+\(\d+,\d+\): (?:error|warning) TS\d+: .+"  # tsc
    r"|\S+:\d+:\d+ - (?:error|warning) TS\d+: .+"  # tsc --pretty
    r"|\S+:\d+(?::\d+)?: (?:error|warning|fatal error): .+"  # mypy, gcc, clang
    r"|(?:error|warning)(?:\[E\d+\])?: .+"  # rustc
    r"|\S+:\d+:\d+: [A-Z]+\d+ .+"  # ruff, flake8
    r"|[ \t]+\d+:\d+[ \t]+(?:error|warning)[ \t]+.+"  # eslint
    r")$",
    re.M,
)
_DIAG_COUNT = re.compile(
    r"^(?:Found \d+ errors? in .+|Success: no issues found.*|✖ \d+ problems? .+"
    r"|error: could not compile .+|Found \d+ errors?\.?.*|\d+ errors? generated\.)$",
    re.M,
)
_RUST_WHERE = re.compile(r"^\s*--> \S+:\d+:\d+$", re.M)


def _diagnostics(text: str) -> Outline | None:
    found = list(_DIAGNOSTIC.finditer(text))
    errors = [m for m in found if "error" in m.group(0) or re.search(r": [A-Z]+\d+ ", m.group(0))]
    if not errors:
        return None
    counts = [whole_line(m.group(0)) for m in _DIAG_COUNT.finditer(text)]
    items = []
    current_file = ""
    for m in found:
        line = m.group(0)
        if whole_line(line) in counts:  # rustc's "could not compile": the count, not an error
            continue
        if line.startswith((" ", "\t")):  # eslint: the file is the last unindented path above
            for prev in reversed(text[max(0, m.start() - 4000) : m.start()].split("\n")):
                if prev.strip() and not prev.startswith((" ", "\t")):
                    current_file = prev.strip()
                    break
            line = f"{current_file} {line.strip()}"
        details = []
        if line.startswith(("error", "warning")):
            where = _RUST_WHERE.search(text, m.end(), m.end() + 400)
            if where:
                details.append(where.group(0).strip())
        if line.startswith(("warning", " ")) and "warning" in line and "error" not in line:
            continue  # warnings are counted, not listed
        items.append(Item(whole_line(line), details))
    kind = "tsc" if " TS" in errors[0].group(0) else "compiler"
    return Outline(kind, counts, items, noun="errors")


# --------------------------------------------------------------------------- tracebacks

_PY_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):$", re.M)
_PY_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b.*$", re.M)


def _traceback(text: str) -> Outline | None:
    starts = list(_PY_TRACEBACK.finditer(text))
    if not starts:
        return None
    items = []
    for i, m in enumerate(starts[-3:]):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        body = text[m.end() : end].split("\n")
        exc = next((k for k, ln in enumerate(body) if _PY_EXCEPTION.match(ln)), None)
        tail = body[: exc + 1] if exc is not None else body
        frames = [k for k, ln in enumerate(tail) if ln.lstrip().startswith('File "')]
        keep = tail[frames[-2] if len(frames) > 1 else 0 :] if frames else tail
        lines = [whole_line(ln.strip()) for ln in keep if ln.strip() and set(ln.strip()) != {"^"}]
        header = lines[-1] if exc is not None else "Traceback"
        items.append(Item(header, lines[:-1][-DETAIL_LINES:] if exc is not None else lines[-6:]))
    return Outline("traceback", [f"{len(starts)} traceback(s)"], items, noun="tracebacks")


# --------------------------------------------------------------------------- logs

_LOG_ERROR = re.compile(
    r"^.*\b(?:ERROR|FATAL|CRITICAL|SEVERE|PANIC|panic|Exception|Traceback|E[A-Z]{3,}\b"
    r"|level=(?:error|fatal)|\"level\":\s*\"(?:error|fatal)\").*$",
    re.M,
)
_VARYING = re.compile(
    r"\b[0-9a-f]{8,}\b|\b[0-9a-f-]{36}\b|\d+(?:\.\d+)*|\b[A-Za-z0-9+/]{20,}={0,2}"
)
_STAMP = re.compile(r"^\S*\d{2}:\d{2}:\d{2}\S*\s+")


def _log(text: str) -> Outline | None:
    kinds: dict[str, list[object]] = {}
    for m in _LOG_ERROR.finditer(text):
        line = m.group(0)
        if re.search(r"\b(?:INFO|DEBUG|TRACE)\b", line[:60]) and "Exception" not in line:
            continue
        key = _VARYING.sub("#", _STAMP.sub("", line))[:160]
        entry = kinds.get(key)
        if entry is None:
            kinds[key] = [line, 1, text.count("\n", 0, m.start()) + 1]
        else:
            entry[1] = int(str(entry[1])) + 1
    if not kinds:
        return None
    ordered = list(kinds.values())
    items = [
        Item(
            f"line {first}: {whole_line(str(line))}",
            [f"({int(str(n)):,} lines of this kind)"] if int(str(n)) > 1 else [],
        )
        for line, n, first in ordered[:LOG_KINDS]
    ]
    total = sum(int(str(e[1])) for e in ordered)
    counts = [f"{total:,} error lines of {len(ordered)} kind(s)"]
    return Outline("log", counts, items, noun="kinds of error")


# --------------------------------------------------------------------------- entry points

_RECOGNISERS = (
    _pytest,
    _unittest,
    _jest,
    _node_test,
    _go_test,
    _cargo_test,
    _diff,
    _diagnostics,
    _traceback,
)


def outline(text: str, *, logs: bool = True) -> Outline | None:
    """What `text` is and its key lines; None when it is none of the known kinds.
    `logs`: also group the error lines of an output that is nothing else."""
    for recognise in _RECOGNISERS:
        found = recognise(text)
        if found is not None and (found.items or found.counts):
            return found
    return _log(text) if logs else None


def _fitted(item: Item, allowance: int) -> str:
    """The item's header and as many of its detail lines as fit `allowance` bytes (the
    first one always: the assertion or the exception; the last is its location)."""
    lines = [item.header]
    used = len(item.header.encode("utf-8"))
    for k, detail in enumerate(item.details):
        size = len(detail.encode("utf-8")) + 3
        if k > 0 and used + size > allowance:
            lines.append(f"  [… {len(item.details) - k} more lines]")
            break
        lines.append(f"  {detail}")
        used += size
    return "\n".join(lines)


def render(found: Outline, budget: int) -> str:
    """The outline within `budget` bytes: counts, then items in order, each with as much of
    its detail as its share of the budget holds, at most `ITEM_MAX` bytes (the header and
    what explains it, not every line of a long comparison); items that do not fit are
    counted, never cut."""
    out = [*found.counts]
    used = sum(len(c.encode("utf-8")) + 1 for c in out)
    allowance = min(ITEM_MAX, max(160, (budget - used) // max(1, len(found.items))))
    left = 0
    for n, item in enumerate(found.items):
        text = _fitted(item, max(allowance, 160))
        size = len(text.encode("utf-8")) + 1
        if used + size > budget and n > 0:
            left = len(found.items) - n
            break
        out.append(text)
        used += size
        # what an item did not use goes to the ones after it
        left_each = (budget - used) // max(1, len(found.items) - n - 1)
        allowance = min(ITEM_MAX, max(allowance, left_each))
    if left:
        out.append(f"[… {left} more {found.noun} not shown]")
    return "\n".join(out)

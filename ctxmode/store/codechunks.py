"""Split source code on its definitions (functions, classes, methods) so a function is never
cut in half and its name is the chunk's title (``class Session > def request``).

Top-level definitions are found per language by line patterns; a definition larger than the
chunk cap is split again at its own members, then by size. Comments, decorators and
attributes directly above a definition stay with it; runs of tiny neighbours (getters,
macros) are folded together.
"""

import re
from dataclasses import dataclass

from ctxmode.store.chunking import MAX_CHUNK_BYTES, Chunk, byte_size, chunk_plain, emit_lines

_CONTROL = frozenset(
    "if for while switch catch return else elif do try with new delete throw sizeof case "
    "foreach using lock match loop defer go select when unless until fn func def".split()
)


@dataclass(frozen=True)
class _Def:
    pattern: re.Pattern[str]
    kind: str


def _defs(*specs: tuple[str, str]) -> tuple[_Def, ...]:
    return tuple(_Def(re.compile(p), k) for p, k in specs)


_MODS = (
    r"(?:(?:public|private|protected|internal|static|final|abstract|sealed|open|data|partial"
    r"|override|virtual|async|export|default|synchronized|native|inline|suspend|const"
    r"|readonly|unsafe|extern|pub(?:\([^)]*\))?)\s+)*"
)

LANGUAGE_DEFS: dict[str, tuple[_Def, ...]] = {
    "python": _defs(
        (r"^(?P<i>\s*)(?:async\s+)?def\s+(?P<name>\w+)", "def"),
        (r"^(?P<i>\s*)class\s+(?P<name>\w+)", "class"),
    ),
    "javascript": _defs(
        (
            r"^(?P<i>\s*)(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)",
            "function",
        ),
        (
            r"^(?P<i>\s*)(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(?P<name>[\w$]+)",
            "class",
        ),
        (
            r"^(?P<i>\s*)(?:export\s+)?(?:declare\s+)?(?:interface|namespace|module)\s+(?P<name>[\w$.]+)",
            "interface",
        ),
        (r"^(?P<i>\s*)(?:export\s+)?(?:declare\s+)?(?:const\s+)?enum\s+(?P<name>[\w$]+)", "enum"),
        (r"^(?P<i>\s*)(?:export\s+)?type\s+(?P<name>[\w$]+)\s*(?:<[^=]*>)?\s*=", "type"),
        (
            r"^(?P<i>\s*)(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)",
            "const",
        ),
        (
            r"^(?P<i>\s+)(?:(?:static|async|get|set|public|private|protected|readonly|override|abstract)\s+)*\*?\s*(?P<name>[\w$]+)\s*(?:<[^>]*>)?\([^;]*\)\s*(?::[^{;]*)?\{\s*$",
            "method",
        ),
    ),
    "go": _defs(
        (r"^(?P<i>)func\s+\((?P<recv>[^)]*)\)\s*(?P<name>\w+)", "func"),
        (r"^(?P<i>)func\s+(?P<name>\w+)", "func"),
        (r"^(?P<i>)type\s+(?P<name>\w+)", "type"),
    ),
    "rust": _defs(
        (r"^(?P<i>\s*)" + _MODS + r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+(?P<name>\w+)", "fn"),
        (r"^(?P<i>\s*)" + _MODS + r"(?P<kind>struct|enum|trait|mod|union)\s+(?P<name>\w+)", ""),
        (
            r"^(?P<i>\s*)(?:unsafe\s+)?impl(?:<[^>]*>)?\s+(?P<name>[^{]+?)\s*(?:where\b.*)?\{?\s*$",
            "impl",
        ),
        (r"^(?P<i>\s*)macro_rules!\s*(?P<name>\w+)", "macro"),
    ),
    "java": _defs(
        (
            r"^(?P<i>\s*)(?:@\w+(?:\([^)]*\))?\s+)*"
            + _MODS
            + r"(?P<kind>class|interface|enum|record|struct|object|trait)\s+(?P<name>\w+)",
            "",
        ),
        (
            r"^(?P<i>\s*)"
            + _MODS
            + r"(?:fun\s+|def\s+)?(?:<[^>]+>\s+)?(?:[\w.<>\[\],?]+\s+)?(?P<name>\w+)\s*\([^;]*$",
            "method",
        ),
    ),
    "c": _defs(
        (
            r"^(?P<i>)(?:typedef\s+)?(?P<kind>struct|class|union|enum|namespace)\s+(?P<name>\w+)[^;]*$",
            "",
        ),
        (
            r"^(?P<i>)(?!(?:return|else|typedef)\b)(?:[\w:*&<>,~]+[\s*&]+)+\**(?P<name>~?[\w:]+)\s*\([^;]*$",
            "function",
        ),
        (r"^(?P<i>)(?P<name>[A-Za-z_]\w*)\s*\([^;]*$", "function"),
        (
            r"^(?P<i>\s+)(?:(?:virtual|static|inline|explicit|constexpr)\s+)*(?:[\w:*&<>,~]+[\s*&]+)+\**(?P<name>~?\w+)\s*\([^;]*\)\s*(?:const\s*)?(?:override\s*)?\{?\s*$",
            "method",
        ),
    ),
    "ruby": _defs(
        (r"^(?P<i>\s*)(?P<kind>def|class|module)\s+(?P<name>[\w.:?!=]+)", ""),
    ),
    "php": _defs(
        (r"^(?P<i>\s*)" + _MODS + r"function\s+&?(?P<name>\w+)", "function"),
        (r"^(?P<i>\s*)" + _MODS + r"(?P<kind>class|interface|trait|enum)\s+(?P<name>\w+)", ""),
    ),
    "shell": _defs(
        (r"^(?P<i>)function\s+(?P<name>[\w.:-]+)", "function"),
        (r"^(?P<i>)(?P<name>[\w.:-]+)\s*\(\)\s*\{?\s*$", "function"),
    ),
}

EXTENSION_LANGUAGE = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "javascript",
    ".tsx": "javascript",
    ".mts": "javascript",
    ".cts": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "java",
    ".kts": "java",
    ".scala": "java",
    ".cs": "java",
    ".swift": "java",
    ".dart": "java",
    ".groovy": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "c",
    ".cpp": "c",
    ".cxx": "c",
    ".hpp": "c",
    ".hh": "c",
    ".hxx": "c",
    ".m": "c",
    ".mm": "c",
    ".rb": "ruby",
    ".rake": "ruby",
    ".php": "php",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".ksh": "shell",
}

_HASH_COMMENT_LANGS = frozenset({"python", "ruby", "shell", "php"})
_SMALL_SEGMENT = 300
_MERGE_TARGET = 1500


def _match_def(line: str, language: str) -> tuple[int, str] | None:
    """(indent, "kind name") when `line` starts a definition."""
    for spec in LANGUAGE_DEFS[language]:
        m = spec.pattern.match(line)
        if not m:
            continue
        name = m.group("name").strip()
        if name in _CONTROL or not name:
            continue
        groups = m.groupdict()
        kind = spec.kind or groups.get("kind") or ""
        if groups.get("recv"):
            receiver = groups["recv"].split()[-1].lstrip("*&")
            name = f"{receiver}.{name}"
        return len(m.group("i").expandtabs(4)), f"{kind} {name}".strip()
    return None


def _is_leading_comment(stripped: str, language: str) -> bool:
    if stripped.startswith(("//", "/*", "*", "@", "#[", "#!", "[")):
        return not stripped.startswith("#!") or language == "shell"
    return stripped.startswith("#") and language in _HASH_COMMENT_LANGS


_PY_OPENER = re.compile(r"^\s*(?:if|elif|else|try|except|finally|with|for|while)\b.*:\s*(?:#.*)?$")
_CLOSERS = (")", "]", "}")


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _outermost(lines: list[str], found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The definitions of `found` (in line order) that no other one encloses.

    A definition's body runs until a line indented no deeper than its own (closing brackets,
    comments and the inside of a triple-quoted string aside), so one nested in another is
    left to that one, while one guarded by `if`, `try` or `else` at module level
    (``if hasattr(os, "fork"): def fork_worker``) is cut out of whatever preceded it
    instead of being buried there untitled.
    """
    out: list[tuple[int, int, str]] = []
    scanned = 0  # lines after the open definition checked so far, and none closed it
    quoted = False  # inside a triple-quoted string
    for index, level, title in found:
        if out:
            open_at, open_level, _ = out[-1]
            if scanned <= open_at:
                scanned, quoted = open_at + 1, False
            deeper = " " * (open_level + 1)
            while scanned < index:
                line = lines[scanned]
                if not quoted and not line.startswith(deeper) and _closes(line, open_level):
                    break
                if line.count('"""') % 2 or line.count("'''") % 2:
                    quoted = not quoted
                scanned += 1
            if level > open_level and scanned >= index:
                continue
        out.append((index, level, title))
    return out


def _closes(line: str, level: int) -> bool:
    stripped = line.strip()
    if not stripped or stripped.startswith((*_CLOSERS, "#", "//", "/*", "*")):
        return False
    return _indent(line) <= level


def _lead(lines: list[str], index: int, start: int, header: int | None, language: str) -> int:
    """Where the definition at `index` starts: its comments and decorators directly above."""
    begin = index
    while begin - 1 >= start and begin - 1 != header:
        above = lines[begin - 1].strip()
        if not above or not _is_leading_comment(above, language):
            break
        begin -= 1
    return begin


def _segments(
    lines: list[str], start: int, end: int, language: str, header: int | None
) -> list[tuple[int, int, str | None]]:
    """Split lines[start:end] at its outermost definitions; (from, to, title or None)."""
    found: list[tuple[int, int, str]] = []
    floor = -1
    if header is not None:
        header_match = _match_def(lines[header], language)
        floor = header_match[0] if header_match else 0
    for index in range(start, end):
        if index == header:
            continue
        m = _match_def(lines[index], language)
        if m and m[0] > floor:
            found.append((index, m[0], m[1]))
    if not found:
        return [(start, end, None)]
    if language == "python":
        defs = _outermost(lines, found)
    else:  # braces, not indentation, close a body: `public:` and namespaces sit at column 0
        indent = min(f[1] for f in found)
        defs = [f for f in found if f[1] == indent]
    cuts: list[tuple[int, str]] = []
    for index, level, title in defs:
        floor_at = max(start, cuts[-1][0] + 1 if cuts else start)
        begin = _lead(lines, index, floor_at, header, language)
        if language == "python":
            above = begin - 1
            while above >= floor_at and above != header and not lines[above].strip():
                above -= 1
            if (
                above >= floor_at
                and above != header
                and _PY_OPENER.match(lines[above])
                and _indent(lines[above]) < level
            ):  # `if sys.platform == "win32":` goes with the def it guards
                begin = _lead(lines, above, floor_at, header, language)
        cuts.append((begin, title))
    out: list[tuple[int, int, str | None]] = []
    if cuts[0][0] > start:
        out.append((start, cuts[0][0], None))
    for k, (begin, title) in enumerate(cuts):
        stop = cuts[k + 1][0] if k + 1 < len(cuts) else end
        if stop > begin:
            out.append((begin, stop, title))
    return out


def _code_chunks(
    lines: list[str], start: int, end: int, language: str, parents: list[str], header: int | None
) -> list[Chunk]:
    pieces: list[Chunk] = []
    preamble_title = " > ".join(parents) if parents else "(module)"
    for begin, stop, title in _segments(lines, start, end, language, header):
        block = [(n + 1, lines[n]) for n in range(begin, stop)]
        body = "\n".join(t for _, t in block).strip()
        if not body:
            continue
        full_title = " > ".join([*parents, title]) if title else preamble_title
        if byte_size(body) <= MAX_CHUNK_BYTES or title is None or len(parents) >= 2:
            pieces.extend(emit_lines(full_title, block, code=True))
            continue
        header_line = next(
            n for n in range(begin, stop) if _match_def(lines[n], language) is not None
        )
        pieces.extend(_code_chunks(lines, begin, stop, language, [*parents, title], header_line))
    return pieces


def _merge_small(chunks: list[Chunk]) -> list[Chunk]:
    """Fold runs of tiny neighbouring definitions (getters, macros) into one chunk."""
    out: list[Chunk] = []
    for chunk in chunks:
        prev = out[-1] if out else None
        if (
            prev is not None
            and byte_size(chunk.content) < _SMALL_SEGMENT
            and byte_size(prev.content) + byte_size(chunk.content) < _MERGE_TARGET
            and (byte_size(prev.content) < _SMALL_SEGMENT or ", " in prev.title)
        ):
            titles = prev.title.split(", ")
            merged_title = prev.title if len(titles) >= 4 else f"{prev.title}, {chunk.title}"
            out[-1] = Chunk(
                merged_title[:200],
                f"{prev.content}\n\n{chunk.content}",
                "code",
                prev.start_line,
                chunk.end_line,
            )
        else:
            out.append(chunk)
    return out


def chunk_code(text: str, language: str) -> list[Chunk]:
    """Split source on its top-level definitions, descending into oversized classes.

    Titles name the definition (``class Session > def request``); comments, decorators and
    attributes directly above a definition stay with it.
    """
    if language not in LANGUAGE_DEFS:
        return chunk_plain(text)
    lines = text.split("\n")
    return _merge_small(_code_chunks(lines, 0, len(lines), language, [], None))

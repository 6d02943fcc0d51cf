"""Read a host's tool input once, into the fields every consumer needs: the shell command,
the file paths, the ``apply_patch`` targets and the URLs. Standard library only.

The adapters call `normalise` on every event they build, so routing, capture and the
policy read ``event.command`` / ``event.paths`` / ``event.patch`` / ``event.urls`` and never
re-parse host-shaped input (``command`` or Codex ``cmd``, an argv list, ``file_path`` or
``filePath`` or Kiro ``operations``, a patch in ``input`` or ``patch``, ...).
"""

import re
from collections.abc import Iterator, Mapping

from ctxmode.hookevent import HookEvent
from ctxmode.lazyre import LazyPattern
from ctxmode.typenames import Any

_PATH_KEYS = (
    "file_path", "filePath", "path", "notebook_path", "notebookPath", "absolute_path",
    "absolutePath", "target_file", "targetFile", "file", "filename", "fileName", "uri",
)  # fmt: skip
_PATHS_KEYS = ("paths", "file_paths", "filePaths", "files")
_PATCH_KEYS = ("command", "patch", "input", "patchText", "content")
_PATCH_TARGET = LazyPattern(
    r"^\*\*\* (Add|Update|Delete) File: (.+?)[ \t]*$|^\*\*\* Move to: (.+?)[ \t]*$", re.MULTILINE
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_URL = LazyPattern(r"https?://[^\s<>\"'`\\)\]}]+", re.IGNORECASE)
_URL_SCAN_CHARS = 64 * 1024


def shell_command(tool_input: Mapping[str, Any]) -> str | None:
    """The script a shell tool runs: ``command`` or Codex ``cmd``; an argv list is joined,
    and ``["bash", "-lc", script]`` gives the script itself. None when there is none."""
    for key in ("command", "cmd"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            words: list[str] = value
            first = re.split(r"[/\\]", words[0])[-1]
            if len(words) == 3 and first in _SHELLS and words[1].startswith("-"):
                return words[2]
            import shlex

            return shlex.join(words)
    return None


def patch_text(tool_input: Mapping[str, Any]) -> str:
    """The ``apply_patch`` text of a call (``*** Begin Patch`` …), else ``""``."""
    for key in _PATCH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, list):
            value = "\n".join(v for v in value if isinstance(v, str))
        if isinstance(value, str) and "*** Begin Patch" in value:
            return value
    return ""


def patch_targets(text: str) -> tuple[tuple[str, str], ...]:
    """(``Add``|``Update``|``Delete``|``Move``, path) for each file a patch touches."""
    if "*** " not in text:
        return ()  # most calls: no patch, and no pattern to compile
    out = []
    for match in _PATCH_TARGET.finditer(text):
        if match.group(3):
            out.append(("Move", match.group(3)))
        else:
            out.append((match.group(1), match.group(2)))
    return tuple(out)


def input_paths(tool_input: Mapping[str, Any]) -> tuple[str, ...]:
    """The file paths a call names: one of the single-path keys, else a list key, else
    Kiro's ``operations[].path``."""
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return (value.strip(),)
    for key in _PATHS_KEYS:
        value = tool_input.get(key)
        if isinstance(value, list):
            return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())
    operations = tool_input.get("operations")
    if isinstance(operations, list):
        return tuple(
            op["path"]
            for op in operations
            if isinstance(op, dict) and isinstance(op.get("path"), str) and op["path"]
        )
    return ()


def urls_in(text: str) -> list[str]:
    """The http(s) URLs in free text, without trailing sentence punctuation."""
    if "://" not in text:
        return []  # most texts: no URL, and no pattern to compile
    return [m.rstrip(".,;:!?") for m in _URL.findall(text)]


def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif depth < 6 and isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item, depth + 1)
    elif depth < 6 and isinstance(value, list):
        for item in value:
            yield from _strings(item, depth + 1)


def input_urls(tool_input: Mapping[str, Any]) -> tuple[str, ...]:
    """The URLs a call targets: ``url``, ``urls[]``, ``requests[].url``; else every URL in
    the input's string values (a curl command, Gemini's ``web_fetch`` prompt). Read from
    the values themselves, never from their JSON text, and each URL once."""
    found: list[str] = []
    url = tool_input.get("url")
    if isinstance(url, str) and url.strip():
        found.append(url.strip())
    for key in ("urls", "requests"):
        items = tool_input.get(key)
        if isinstance(items, list):
            for item in items:
                value = item.get("url") if isinstance(item, dict) else item
                if isinstance(value, str) and value.strip():
                    found.append(value.strip())
    if not found:
        budget = _URL_SCAN_CHARS
        for text in _strings(tool_input):
            found.extend(urls_in(text[:budget]))
            budget -= len(text)
            if budget <= 0:
                break
    return tuple(dict.fromkeys(found))


def normalise(event: HookEvent) -> HookEvent:
    """`event` with ``command``, ``paths``, ``patch`` and ``urls`` read from its input."""
    tool_input = event.tool_input
    command = shell_command(tool_input) if event.tool == "Bash" else None
    patch = patch_targets(patch_text(tool_input))
    paths = tuple(path for _, path in patch) if patch else input_paths(tool_input)
    return event._replace(command=command, paths=paths, patch=patch, urls=input_urls(tool_input))

"""JSON and JSONC settings files: read (comments and trailing commas allowed), change only
ctxmode's entries, and write back by splicing those entries into the original text (`jsonc`),
so every other byte (comments, key order, indentation, line endings, BOM, final newline)
stays as it was.

Ownership is decided by content, never by position: a hook is ctxmode's when its command
is ``<ctxmode> hook <platform> <event>``, the server entry when it runs ``<ctxmode> serve``.
Hosts that reorder or reformat the file therefore do not confuse uninstall.
"""

import copy
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxmode.setup import jsonc
from ctxmode.setup.command import is_ctxmode, is_our_hook
from ctxmode.setup.errors import SettingsFileError
from ctxmode.setup.model import HookEntry, JsonTarget, ServerEntry, Setting

MISSING: Any = object()
Key = tuple[str, ...]


@dataclass(frozen=True)
class JsonText:
    """A parsed settings file and the text it came from (None: no file yet)."""

    data: dict[str, Any]
    text: str | None = None  # without the BOM
    bom: bool = False


def parse(path: Path, text: str | None) -> JsonText:
    """Read a settings file's text (None: the file does not exist yet).

    Raises:
        SettingsFileError: not JSON (with comments), or not a JSON object.
    """
    if text is None:
        return JsonText({})
    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    if not body.strip():
        return JsonText({}, body, bom)
    try:
        data = jsonc.loads(body)
    except jsonc.JsoncError as exc:
        raise SettingsFileError(
            f"{path} is not valid JSON or JSONC (line {exc.line}, column {exc.column}: "
            f"{exc.message}). Nothing was changed; fix the file or add ctxmode's entries by "
            "hand (see `--dry-run` on a valid copy)."
        ) from exc
    if not isinstance(data, dict):
        raise SettingsFileError(f"{path} holds a JSON {type(data).__name__}, not an object.")
    return JsonText(data, body, bom)


def render(path: Path, style: JsonText, data: dict[str, Any]) -> str:
    """`data` as the file's new text: the old text with only the differences spliced in, or,
    for a new or blank file, two-space-indented JSON.

    Raises:
        SettingsFileError: the edit would not read back as `data` (nothing is written).
    """
    if style.text is None or not style.text.strip():
        newline = "\r\n" if style.text and "\r\n" in style.text else "\n"
        text = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").replace("\n", newline)
    else:
        try:
            text = jsonc.patch(style.text, data)
        except jsonc.JsoncError as exc:
            raise SettingsFileError(
                f"{path}: ctxmode could not edit this file safely ({exc.message}). Nothing "
                "was changed; add ctxmode's entries by hand."
            ) from exc
    return ("\ufeff" if style.bom else "") + text


def same(a: Any, b: Any) -> bool:
    """JSON equality (so that ``1`` and ``true`` differ); `MISSING` equals only itself."""
    if a is MISSING or b is MISSING:
        return a is b
    return jsonc.canonical(a) == jsonc.canonical(b)


def dotted(path: Key) -> str:
    return ".".join(path)


def get(doc: Any, path: Key) -> Any:
    for key in path:
        if not isinstance(doc, dict) or key not in doc:
            return MISSING
        doc = doc[key]
    return doc


def is_our_server(value: Any, known: frozenset[str] = frozenset()) -> bool:
    """Whether an MCP server entry runs ``<ctxmode> serve`` (string or argv form)."""
    if not isinstance(value, dict):
        return False
    command = value.get("command")
    if isinstance(command, list):
        return (
            len(command) >= 2
            and isinstance(command[0], str)
            and is_ctxmode(command[0], known)
            and command[1] == "serve"
        )
    args = value.get("args")
    return (
        isinstance(command, str)
        and is_ctxmode(command, known)
        and isinstance(args, list)
        and args[:1] == ["serve"]
    )


class _Hooks:
    """Finding and removing one platform's ctxmode handlers in hook lists of either shape."""

    def __init__(self, platform: str, known: frozenset[str]) -> None:
        self.platform = platform
        self.known = known

    def command(self, handler: Any) -> str | None:
        if not isinstance(handler, dict):
            return None
        for key in ("command", "bash", "powershell"):
            value = handler.get(key)
            if is_our_hook(value, self.platform, self.known):
                return str(value)
        return None

    @staticmethod
    def matcher(item: dict[str, Any]) -> str | None:
        value = item.get("matcher")
        return value if isinstance(value, str) else None

    def ids(self, items: list[Any]) -> list[tuple[str | None, str]]:
        found: list[tuple[str | None, str]] = []
        for item in items:
            if not isinstance(item, dict):
                continue
            handlers = item.get("hooks")
            for handler in handlers if isinstance(handlers, list) else [item]:
                command = self.command(handler)
                if command is not None:
                    found.append((self.matcher(item), command))
        return found

    def strip(self, items: list[Any]) -> list[Any]:
        kept_items: list[Any] = []
        for item in items:
            handlers = item.get("hooks") if isinstance(item, dict) else None
            if isinstance(item, dict) and isinstance(handlers, list):
                kept = [h for h in handlers if self.command(h) is None]
                if len(kept) == len(handlers):
                    kept_items.append(item)
                elif kept:
                    kept_items.append({**item, "hooks": kept})
            elif self.command(item) is None:
                kept_items.append(item)
        return kept_items


def _hook_entry(h: HookEntry) -> dict[str, Any]:
    return {"kind": "hook", "event": h.event, "matcher": h.matcher, "command": h.command}


def _server_entry(s: ServerEntry, value: Any) -> dict[str, Any]:
    return {"kind": "server", "key": dotted((*s.container, s.name)), "value": value}


def _upstream_warnings(path: Path, doc: dict[str, Any]) -> list[str]:
    """Upstream context-mode registered next to ctxmode would double every hook."""
    text = json.dumps(doc.get("hooks", {}))
    servers = [doc.get(k) for k in ("mcpServers", "servers", "mcp")]
    if "context-mode" in text or any(isinstance(s, dict) and "context-mode" in s for s in servers):
        return [
            f"{path} also registers upstream context-mode; both would run on every call. "
            "Remove context-mode's entries (its own uninstall, or by hand)."
        ]
    return []


def _merge(
    path: Path,
    setting: Setting,
    parent: dict[str, Any],
    current: Any,
    old: dict[str, Any] | None,
    warnings: list[str],
) -> dict[str, Any] | None:
    """Add a list setting's items to the user's list; returns the record (what setup added,
    so that uninstall takes out exactly that), or None when the value is not a list."""
    added: list[Any] = list((old or {}).get("merged", []))
    created = bool((old or {}).get("created")) or current is MISSING
    if current is MISSING:
        parent[setting.path[-1]] = list(setting.value)
        added = list(setting.value)
    elif isinstance(current, list):
        new = [v for v in setting.value if v not in current]
        if new:
            parent[setting.path[-1]] = [*current, *new]
        added = [*added, *(v for v in new if v not in added)]
    else:
        warnings.append(
            f"{path}: {dotted(setting.path)} is a {type(current).__name__}, not a list; "
            "ctxmode's entries were not added to it."
        )
        return None
    return {"path": list(setting.path), "value": setting.value, "merged": added, "created": created}


def apply_setup(
    target: JsonTarget,
    data: dict[str, Any],
    prior: dict[str, Any] | None,
    platform: str,
    known: frozenset[str],
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], list[str]]:
    """Add or refresh ctxmode's entries; returns (data, file record, entries, warnings).

    Raises:
        SettingsFileError: a container ctxmode must write into has the wrong type.
    """
    path = target.path
    doc = copy.deepcopy(data)
    prior = prior or {}
    created: list[Key] = [tuple(p) for p in prior.get("created", [])]
    warnings: list[str] = []
    entries: list[dict[str, Any]] = []

    def ensure(container: Key) -> dict[str, Any]:
        node: dict[str, Any] = doc
        for depth, key in enumerate(container):
            if key not in node:
                node[key] = {}
                created.append(container[: depth + 1])
            child = node[key]
            if not isinstance(child, dict):
                raise SettingsFileError(
                    f"{path}: {dotted(container[: depth + 1])} is a {type(child).__name__}, "
                    "not an object; ctxmode will not guess how to change it. Nothing was changed."
                )
            node = child
        return node

    prior_settings = {tuple(s["path"]): s for s in prior.get("settings", [])}
    settings_record: list[dict[str, Any]] = []
    for setting in target.settings:
        parent = ensure(setting.path[:-1])
        key = setting.path[-1]
        current = parent.get(key, MISSING)
        old = prior_settings.get(setting.path)
        record: dict[str, Any] | None = old
        if setting.merge:
            merged = _merge(path, setting, parent, current, old, warnings)
            if merged is not None:
                settings_record.append(merged)
                entries.append(
                    {"kind": "setting", "key": dotted(setting.path), "value": setting.value}
                )
            continue
        if current is MISSING:
            parent[key] = copy.deepcopy(setting.value)
            record = old or {
                "path": list(setting.path),
                "value": setting.value,
                "created": True,
                "structural": setting.structural,
            }
        elif not same(current, setting.value) and setting.force:
            parent[key] = copy.deepcopy(setting.value)
            record = old or {
                "path": list(setting.path),
                "value": setting.value,
                "created": False,
                "previous": current,
            }
            warnings.append(
                f"{path}: set {dotted(setting.path)} to {json.dumps(setting.value)} (was "
                f"{json.dumps(current)}); uninstall puts the old value back."
            )
        elif not same(current, setting.value):
            record = None
        if record is not None:
            settings_record.append(record)
            entries.append({"kind": "setting", "key": dotted(setting.path), "value": setting.value})

    finder = _Hooks(platform, known)
    if target.hooks:
        container = ensure(("hooks",))
        desired: dict[str, list[HookEntry]] = {}
        for hook in target.hooks:
            desired.setdefault(hook.event, []).append(hook)
        for event, items in list(container.items()):
            if not isinstance(items, list):
                if event in desired:
                    raise SettingsFileError(
                        f"{path}: hooks.{event} is a {type(items).__name__}, not a list; "
                        "ctxmode will not guess how to change it. Nothing was changed."
                    )
                continue
            want = desired.get(event, [])
            have = finder.ids(items)
            if Counter(have) == Counter((h.matcher, h.command) for h in want):
                continue
            fresh = finder.strip(items) + [copy.deepcopy(h.item) for h in want]
            if fresh:
                container[event] = fresh
            else:
                del container[event]  # it held nothing but stale ctxmode hooks
        for event, want in desired.items():
            if event not in container:
                container[event] = [copy.deepcopy(h.item) for h in want]
                created.append(("hooks", event))
        entries.extend(_hook_entry(h) for h in target.hooks)

    servers_record: list[dict[str, Any]] = []
    for server in target.servers:
        container = ensure(server.container)
        current = container.get(server.name, MISSING)
        if current is MISSING:
            container[server.name] = copy.deepcopy(server.value)
        elif not is_our_server(current, known):
            warnings.append(
                f"{path}: an MCP server named {server.name!r} is already configured and does "
                f"not run `ctxmode serve` ({json.dumps(current)}); left as is. Remove it and run "
                "setup again to let ctxmode manage it."
            )
            continue
        elif not all(same(current.get(k, MISSING), v) for k, v in server.value.items()):
            container[server.name] = {**current, **copy.deepcopy(server.value)}
        servers_record.append(
            {"container": list(server.container), "name": server.name, "value": server.value}
        )
        entries.append(_server_entry(server, server.value))
        for name, value in container.items():
            if name != server.name and is_our_server(value, known):
                warnings.append(
                    f"{path}: ctxmode is also registered as MCP server {name!r}; the agent "
                    "would see its tools twice. Remove one of them."
                )

    warnings.extend(_upstream_warnings(path, doc))
    file_record = {
        "path": str(path),
        "format": "json",
        "dedicated": target.dedicated,
        "created": [list(p) for p in dict.fromkeys(created) if get(doc, p) is not MISSING],
        "hooks": [
            {"event": h.event, "matcher": h.matcher, "command": h.command, "item": h.item}
            for h in target.hooks
        ],
        "servers": servers_record,
        "settings": settings_record,
    }
    return doc, file_record, entries, warnings


def apply_uninstall(
    target: JsonTarget,
    data: dict[str, Any],
    record: dict[str, Any] | None,
    platform: str,
    known: frozenset[str],
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """Remove ctxmode's entries; returns (data, removed entries, warnings).

    Containers go when they end up empty and were created by setup (per the record), or,
    without a record, when removing ctxmode's entries is what emptied them.
    """
    path = target.path
    doc = copy.deepcopy(data)
    removed: list[dict[str, Any]] = []
    warnings: list[str] = []
    emptied: set[Key] = set()

    finder = _Hooks(platform, known)
    hooks = doc.get("hooks")
    if isinstance(hooks, dict):
        for event, items in list(hooks.items()):
            if not isinstance(items, list):
                continue
            ours = finder.ids(items)
            if not ours:
                continue
            hooks[event] = finder.strip(items)
            removed.extend(
                {"kind": "hook", "event": event, "matcher": m, "command": c} for m, c in ours
            )
            if not hooks[event]:
                emptied.add(("hooks", event))

    servers = {(s.container, s.name): s.value for s in target.servers}
    for s in (record or {}).get("servers", []):
        servers.setdefault((tuple(s["container"]), s["name"]), s["value"])
    for (container_key, name), value in servers.items():
        container = get(doc, container_key)
        if not isinstance(container, dict) or name not in container:
            continue
        if is_our_server(container[name], known):
            removed.append(
                {"kind": "server", "key": dotted((*container_key, name)), "value": value}
            )
            del container[name]
            if not container:
                emptied.add(container_key)
        else:
            warnings.append(
                f"{path}: MCP server {name!r} no longer runs `ctxmode serve` (someone changed "
                "it); left in place."
            )

    hooks = doc.get("hooks")
    hooks_remain = isinstance(hooks, dict) and any(
        isinstance(v, list) and v for v in hooks.values()
    )
    settings = (record or {}).get("settings")
    if settings is None and target.dedicated and removed:  # ours only if our hooks were there
        settings = [
            {"path": list(s.path), "value": s.value, "created": True, "structural": s.structural}
            for s in target.settings
        ]
    for setting in settings or []:
        key = tuple(setting["path"])
        parent = get(doc, key[:-1])
        current = get(doc, key)
        if "merged" in setting:
            if isinstance(parent, dict) and isinstance(current, list):
                kept = [v for v in current if v not in setting["merged"]]
                if len(kept) < len(current):
                    if kept or not setting.get("created"):
                        parent[key[-1]] = kept
                    else:
                        del parent[key[-1]]
                        if not parent:
                            emptied.add(key[:-1])
                    removed.append(
                        {"kind": "setting", "key": dotted(key), "value": setting["value"]}
                    )
            continue
        if not isinstance(parent, dict) or not same(current, setting["value"]):
            continue
        if "previous" in setting:
            parent[key[-1]] = setting["previous"]
        elif setting.get("created") and not (setting.get("structural") and hooks_remain):
            del parent[key[-1]]
            if not parent:
                emptied.add(key[:-1])
        else:
            continue
        removed.append({"kind": "setting", "key": dotted(key), "value": setting["value"]})

    if record is not None:
        candidates = {tuple(p) for p in record.get("created", [])}
    else:
        candidates = set(emptied)
        for key in emptied:
            candidates.update(key[:i] for i in range(1, len(key)))
    for key in sorted(candidates, key=len, reverse=True):
        parent = get(doc, key[:-1])
        value = get(doc, key)
        if isinstance(parent, dict) and value in ({}, []):
            del parent[key[-1]]
    return doc, removed, warnings

"""ctxmode's entries in a TOML config: the ``[mcp_servers.ctxmode]`` table and feature
flags (Codex), ``[[hooks]]`` array tables (Kimi Code). Built on `tomlfile`; every edit is
verified by re-parsing when Python has a TOML parser (3.11+). Without one, values are read
from simple one-line statements only."""

from pathlib import Path
from typing import Any

from ctxmode.setup.command import is_our_hook
from ctxmode.setup.errors import SettingsFileError
from ctxmode.setup.jsonfile import MISSING, dotted, get, is_our_server, same
from ctxmode.setup.model import HookEntry, ServerEntry, Setting
from ctxmode.setup.tomlfile import (
    TomlText,
    check,
    expect_del,
    expect_set,
    key_text,
    loads,
    statement,
    value,
)


def _manual(path: Path, key: tuple[str, ...]) -> SettingsFileError:
    return SettingsFileError(
        f"{path}: {dotted(key)} is written as dotted keys or an inline table, which ctxmode "
        "does not rewrite. Nothing was changed; move it into a [" + key_text(key) + "] table "
        "or edit it by hand."
    )


class TomlEdit:
    """One TOML file being edited: its text and, when a parser exists, its data."""

    def __init__(self, path: Path, text: str | None) -> None:
        self.path = path
        self.dirty = False
        self.doc = TomlText(text or "")
        self.data = loads(path, text or "")

    def _current(self, key: tuple[str, ...]) -> Any:
        if self.data is not None:
            return get(self.data, key)
        return self.doc.lookup(key)

    def _commit(self, expected: dict[str, Any] | None) -> None:
        check(self.path, self.doc.text(), expected)
        self.data = expected
        self.dirty = True

    def text(self) -> str:
        return self.doc.text()

    def _hook_tables(self, platform: str, known: frozenset[str]) -> list[tuple[int, int, Any]]:
        """(start, end, (event, matcher, command)) of each ``[[hooks]]`` table that runs
        `platform`'s ctxmode hook, read from the text."""
        found = []
        for index, table in enumerate(self.doc.tables):
            if not table.array or table.key != ("hooks",):
                continue
            fields = {
                ".".join(s.key): self.doc.simple_value(s)
                for owner, s in self.doc.statements
                if owner == index
            }
            command = fields.get("command")
            if is_our_hook(command, platform, known):
                matcher = fields.get("matcher")
                ident = (fields.get("event"), matcher if isinstance(matcher, str) else None)
                found.append((table.start, table.end, (*ident, command)))
        return found

    def _hooks_expected(self, platform: str, known: frozenset[str], add: list[Any]) -> Any:
        """The parsed data once `platform`'s hook tables are gone and `add` appended."""
        if self.data is None:
            return None
        kept = [
            h
            for h in self.data.get("hooks", [])
            if not (isinstance(h, dict) and is_our_hook(h.get("command"), platform, known))
        ]
        return (
            expect_set(self.data, ("hooks",), kept + add)
            if kept or add
            else (expect_del(self.data, ("hooks",)))
        )

    def set_hooks(self, hooks: tuple[HookEntry, ...], platform: str, known: frozenset[str]) -> None:
        """Make the file hold exactly `hooks` as `platform`'s ``[[hooks]]`` tables."""
        have = [ident for _, _, ident in self._hook_tables(platform, known)]
        want = [(h.event, h.matcher, h.command) for h in hooks]
        if sorted(have, key=repr) == sorted(want, key=repr):
            return
        if self.data is not None and not isinstance(self.data.get("hooks", []), list):
            raise SettingsFileError(
                f"{self.path}: hooks is not an array of tables; ctxmode will not guess how to "
                "change it. Nothing was changed."
            )
        expected = self._hooks_expected(platform, known, [h.item for h in hooks])
        for start, end, _ in reversed(self._hook_tables(platform, known)):
            self.doc.remove_block(start, end)
        for hook in hooks:
            lines = ["[[hooks]]"]
            for k, v in hook.item.items():
                lines += statement((k,), v).split("\n")
            self.doc.append_block(lines)
        self._commit(expected)

    def remove_hooks(self, platform: str, known: frozenset[str]) -> list[Any]:
        """Remove `platform`'s ``[[hooks]]`` tables; returns their (event, matcher, command)."""
        found = self._hook_tables(platform, known)
        if not found:
            return []
        expected = self._hooks_expected(platform, known, [])
        for start, end, _ in reversed(found):
            self.doc.remove_block(start, end)
        self._commit(expected)
        return [ident for _, _, ident in found]

    def set_server(self, server: ServerEntry, known: frozenset[str]) -> str | None:
        """Add or refresh the server table; returns a warning when someone else's is there."""
        key = (*server.container, server.name)
        table = self.doc.table(key)
        current = self._current(key)
        if table is None and current is MISSING:
            lines = [f"[{key_text(key)}]"]
            for k, v in server.value.items():
                lines += statement((k,), v).split("\n")
            self.doc.append_block(lines)
            self._commit(expect_set(self.data, key, server.value))
            return None
        if not is_our_server(current, known):
            return (
                f"{self.path}: an MCP server named {server.name!r} is already configured and "
                "does not run `ctxmode serve`; left as is. Remove it and run setup again to "
                "let ctxmode manage it."
            )
        if all(same(current.get(k, MISSING), v) for k, v in server.value.items()):
            return None
        if table is None:
            raise _manual(self.path, key)
        for name, new in server.value.items():
            table = self.doc.table(key)
            assert table is not None
            line = statement((name,), new)
            found = self.doc.statement(table, (name,))
            if found is None:
                self.doc.replace(table.end, table.end, line.split("\n"))
            else:
                self.doc.restate(found, line)
        self._commit(expect_set(self.data, key, {**current, **server.value}))
        return None

    def remove_server(
        self, container: tuple[str, ...], name: str, known: frozenset[str]
    ) -> tuple[bool, str | None]:
        """Remove the server table (and its sub-tables) when it is ctxmode's.

        Returns (removed, warning).
        """
        key = (*container, name)
        current = self._current(key)
        if current is MISSING:
            return False, None
        if not is_our_server(current, known):
            return False, (
                f"{self.path}: MCP server {name!r} no longer runs `ctxmode serve` (someone "
                "changed it); left in place."
            )
        if not any(t.key[: len(key)] == key for t in self.doc.tables):
            return False, (
                f"{self.path}: {dotted(key)} is written as dotted keys or an inline table; "
                "remove it by hand."
            )
        while table := next((t for t in self.doc.tables if t.key[: len(key)] == key), None):
            self.doc.remove_block(table.start, table.end)
        self._commit(expect_del(self.data, key))
        return True, None

    def set_setting(
        self, setting: Setting, prior: dict[str, Any] | None
    ) -> tuple[dict[str, Any] | None, str | None]:
        """Make a flag hold its value; returns (record, warning)."""
        key = setting.path
        parent_key = key[:-1]
        current = self._current(key)
        if current is not MISSING and same(current, setting.value):
            return prior, None
        table = self.doc.table(parent_key)
        statement = None if table is None else self.doc.statement(table, key[-1:])
        if statement is not None and current is MISSING:
            raise SettingsFileError(
                f"{self.path}: cannot read {dotted(key)} without a TOML parser (Python 3.11+, "
                "or `pip install tomli`). Nothing was changed."
            )
        if current is not MISSING and not setting.force:
            return None, None
        line = f"{key_text(key[-1:])} = {value(setting.value)}"
        record: dict[str, Any] = {"path": list(key), "value": setting.value, "created": True}
        warning = None
        if table is None:
            if self.data is not None and get(self.data, parent_key) is not MISSING:
                raise _manual(self.path, parent_key)
            self.doc.append_block([f"[{key_text(parent_key)}]", line])
            record["created_table"] = True
        elif statement is None:
            self.doc.replace(table.end, table.end, [line])
        else:
            self.doc.restate(statement, line)
            record = {"path": list(key), "value": setting.value, "previous": current}
            warning = (
                f"{self.path}: set {dotted(key)} to {value(setting.value)} (was "
                f"{value(current)}); uninstall puts the old value back."
            )
        self._commit(expect_set(self.data, key, setting.value))
        return prior or record, warning

    def undo_setting(self, record: dict[str, Any]) -> bool:
        """Put a flag back as it was before setup; returns whether anything changed."""
        key = tuple(record["path"])
        if not same(self._current(key), record["value"]):
            return False
        table = self.doc.table(key[:-1])
        statement = None if table is None else self.doc.statement(table, key[-1:])
        if table is None or statement is None:
            return False
        if "previous" in record:
            line = f"{key_text(key[-1:])} = {value(record['previous'])}"
            self.doc.restate(statement, line)
            self._commit(expect_set(self.data, key, record["previous"]))
            return True
        if not record.get("created"):
            return False
        self.doc.replace(statement.start, statement.end, [])
        table = self.doc.table(key[:-1])
        if record.get("created_table") and table is not None and table.end == table.start + 1:
            self.doc.remove_block(table.start, table.end)
        self._commit(expect_del(self.data, key))
        return True

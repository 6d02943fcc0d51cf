"""ctxmode's entries in a TOML config (Codex): the ``[mcp_servers.ctxmode]`` table and
feature flags. Built on `tomlfile`; every edit is verified by re-parsing when Python has a
TOML parser (3.11+). Without one, values are read from simple one-line statements only."""

from pathlib import Path
from typing import Any

from ctxmode.setup.errors import SettingsFileError
from ctxmode.setup.jsonfile import MISSING, dotted, get, is_our_server, same
from ctxmode.setup.model import ServerEntry, Setting
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

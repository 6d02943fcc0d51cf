"""The scratch project every recorded session works in: ``ledger``, a tiny Python package
(money in integer cents, accounts) with a pytest suite and mypy settings. Sessions start from
``base()`` and swap in buggy variants so the host's real test and type-check runs fail."""

from __future__ import annotations

PYPROJECT = """\
[project]
name = "ledger"
version = "0.1.0"
requires-python = ">=3.10"

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["."]

[tool.mypy]
python_version = "3.12"
warn_return_any = true
"""

MONEY = '''\
"""Money amounts in integer cents."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Money:
    cents: int
    currency: str = "EUR"

    @classmethod
    def parse(cls, text: str, currency: str = "EUR") -> Money:
        whole, _, frac = text.strip().partition(".")
        return cls(int(whole) * 100 + int((frac + "00")[:2]), currency)

    def __add__(self, other: Money) -> Money:
        if other.currency != self.currency:
            raise ValueError(f"currency mismatch: {self.currency} vs {other.currency}")
        return Money(self.cents + other.cents, self.currency)

    def split(self, parts: int) -> list[Money]:
        base, rest = divmod(self.cents, parts)
        return [Money(base + (1 if i < rest else 0), self.currency) for i in range(parts)]

    def __str__(self) -> str:
        return f"{self.cents // 100}.{self.cents % 100:02d} {self.currency}"
'''

ACCOUNTS = '''\
"""Accounts: named lists of money entries."""

from __future__ import annotations

from dataclasses import dataclass, field

from ledger.money import Money


@dataclass
class Account:
    name: str
    entries: list[Money] = field(default_factory=list)

    def post(self, amount: Money) -> None:
        self.entries.append(amount)

    def refund(self, amount: Money) -> None:
        self.entries.append(Money(-amount.cents, amount.currency))

    def balance(self) -> Money:
        total = Money(0)
        for entry in self.entries:
            total = total + entry
        return total
'''

TEST_MONEY = """\
import pytest

from ledger.money import Money


def test_parse_whole_and_cents():
    assert Money.parse("12.34").cents == 1234


def test_parse_single_digit_cents():
    assert Money.parse("3.5").cents == 350


def test_add_same_currency():
    assert (Money(150) + Money(250)).cents == 400


def test_add_rejects_other_currency():
    with pytest.raises(ValueError):
        Money(100, "EUR") + Money(100, "USD")


def test_split_keeps_total():
    parts = Money(1000).split(3)
    assert sum(p.cents for p in parts) == 1000


def test_str_pads_cents():
    assert str(Money(305)) == "3.05 EUR"
"""

TEST_ACCOUNTS = """\
from ledger.accounts import Account
from ledger.money import Money


def test_balance_sums_entries():
    acct = Account("shop")
    acct.post(Money(1250))
    acct.post(Money(725))
    assert acct.balance().cents == 1975


def test_refund_reduces_balance():
    acct = Account("shop")
    acct.post(Money(2000))
    acct.refund(Money(500))
    assert acct.balance().cents == 1500
"""


def base() -> dict[str, str]:
    """The project as committed before a session starts."""
    return {
        "pyproject.toml": PYPROJECT,
        "ledger/__init__.py": '"""A tiny ledger."""\n',
        "ledger/money.py": MONEY,
        "ledger/accounts.py": ACCOUNTS,
        "tests/__init__.py": "",
        "tests/test_money.py": TEST_MONEY,
        "tests/test_accounts.py": TEST_ACCOUNTS,
    }


def with_bugs(*changes: tuple[str, str, str]) -> dict[str, str]:
    """``base()`` with each (file, old text, new text) applied; the old text must occur
    exactly once."""
    files = base()
    for rel, old, new in changes:
        assert files[rel].count(old) == 1, (rel, old)
        files[rel] = files[rel].replace(old, new)
    return files


# --------------------------------------------------------------------------- bugs and fixes
# A bug is (file, correct text, buggy text) for ``with_bugs``; its fix (buggy, correct) is
# what the session's Edit call sends.

_SPLIT_OK = (
    "        base, rest = divmod(self.cents, parts)\n"
    "        return [Money(base + (1 if i < rest else 0), self.currency) for i in range(parts)]"
)
_SPLIT_BAD = (
    "        base = self.cents // parts\n"
    "        return [Money(base, self.currency) for _ in range(parts)]"
)
BUG_SPLIT = ("ledger/money.py", _SPLIT_OK, _SPLIT_BAD)
BUG_STR = (
    "ledger/money.py",
    'f"{self.cents // 100}.{self.cents % 100:02d} {self.currency}"',
    'f"{self.cents // 100}.{self.cents % 100} {self.currency}"',
)
_ADD_OK = (
    "        if other.currency != self.currency:\n"
    '            raise ValueError(f"currency mismatch: {self.currency} vs {other.currency}")\n'
    "        return Money(self.cents + other.cents, self.currency)"
)
BUG_ADD = (
    "ledger/money.py",
    _ADD_OK,
    "        return Money(self.cents + other.cents, self.currency)",
)
BUG_PARSE = ("ledger/money.py", 'int((frac + "00")[:2])', "int(frac[:2] or 0)")
BUG_REFUND = (
    "ledger/accounts.py",
    "self.entries.append(Money(-amount.cents, amount.currency))",
    "self.entries.append(Money(amount.cents, amount.currency))",
)
_SPLIT_METHOD = f"    def split(self, parts: int) -> list[Money]:\n{_SPLIT_OK}\n\n"
NO_SPLIT = ("ledger/money.py", _SPLIT_METHOD, "")
NO_SPLIT_TEST = (
    "tests/test_money.py",
    "\n\ndef test_split_keeps_total():\n    parts = Money(1000).split(3)\n"
    "    assert sum(p.cents for p in parts) == 1000\n",
    "",
)


def fix(bug: tuple[str, str, str]) -> tuple[str, str]:
    """The Edit (old, new) that undoes `bug`."""
    return bug[2], bug[1]


FIX_SPLIT, FIX_STR, FIX_ADD, FIX_PARSE = (fix(b) for b in (BUG_SPLIT, BUG_STR, BUG_ADD, BUG_PARSE))
WRONG_FIX_REFUND = (
    "self.entries.append(Money(amount.cents, amount.currency))",
    "self.entries.append(Money(abs(amount.cents), amount.currency))",
)
ADD_SPLIT = ("    def __str__(self) -> str:", _SPLIT_METHOD + "    def __str__(self) -> str:")

# --------------------------------------------------------------------------- new modules

CSV_IMPORT = '''\
"""Read money entries from CSV files (columns: date, amount)."""

from __future__ import annotations

import csv
from pathlib import Path

from ledger.money import Money


def read_entries(path: Path) -> list[Money]:
    with path.open(newline="") as handle:
        return [Money.parse(row["amount"]) for row in csv.DictReader(handle)]
'''

REPORT = '''\
"""Plain-text reports."""

from __future__ import annotations

from ledger.formatting import format_money
from ledger.money import Money


def total(entries: list[Money]) -> Money:
    result = Money(0)
    for entry in entries:
        result = result + entry
    return result


def summary(entries: list[Money]) -> str:
    return f"{len(entries)} entries, total {format_money(total(entries))}"
'''

FORMATTING = '''\
"""Formatting helpers."""

from ledger.money import Money


def format_money(amount: Money) -> str:
    return str(amount)
'''

CLI_SUMMARY = '''\
"""python -m ledger.cli FILE.csv: print a summary of the entries."""

from __future__ import annotations

import sys
from pathlib import Path

from ledger.csv_import import read_entries
from ledger.report import summary


def main(argv: list[str]) -> int:
    print(summary(read_entries(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''

SAMPLE_CSV = "date,amount\n2026-01-02,12.50\n2026-01-03,7.25\n"
SAMPLE_CSV_CAPITALISED = "Date,Amount\n2026-01-02,12.50\n2026-01-03,7.25\n"

TEST_CSV_IMPORT = """\
from pathlib import Path

from ledger.csv_import import read_entries


def test_read_entries(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    path.write_text("date,amount\\n2026-01-02,12.50\\n2026-01-03,7.25\\n")
    assert [m.cents for m in read_entries(path)] == [1250, 725]
"""

_SUMMARY_ASSERT = '    assert summary([Money(1250), Money(725)]) == "2 entries, total 19.75 EUR"\n'
TEST_REPORT = f"""\
from ledger.money import Money
from ledger.report import summary


def test_summary() -> None:
{_SUMMARY_ASSERT}"""

USAGE_DOC = "# Usage\n\n```\npython -m ledger.cli ledger/data/sample.csv\n```\n"
USAGE_SPLIT_DOC = "# Usage\n\n`Money(1000).split(3)` gives 3.34, 3.33 and 3.33 EUR.\n"

EDIT_MONEY_NEG = (
    "    def split(self, parts: int) -> list[Money]:",
    "    def __neg__(self) -> Money:\n        return Money(-self.cents, self.currency)\n\n"
    "    def split(self, parts: int) -> list[Money]:",
)
EDIT_ACCOUNTS_NEG = (
    "self.entries.append(Money(-amount.cents, amount.currency))",
    "self.entries.append(-amount)",
)
EDIT_CLI_USAGE = (
    "    print(summary(read_entries(Path(argv[0]))))",
    '    if not argv:\n        print("usage: python -m ledger.cli FILE.csv", file=sys.stderr)\n'
    "        return 2\n    print(summary(read_entries(Path(argv[0]))))",
)
EDIT_TEST_REPORT = (
    _SUMMARY_ASSERT,
    _SUMMARY_ASSERT
    + "\n\ndef test_summary_empty() -> None:\n"
    + '    assert summary([]) == "0 entries, total 0.00 EUR"\n',
)
EDIT_README_CLI = (
    "# scratch project",
    "# ledger\n\nPrint a summary of a CSV file: `python -m ledger.cli ledger/data/sample.csv`.",
)

BUDGET = '''\
"""Monthly budgets per category."""

from __future__ import annotations

from dataclasses import dataclass, field

from ledger.money import Money


@dataclass
class Budget:
    month: str
    limits: dict[str, Money] = field(default_factory=dict)
    spent: dict[str, Money] = field(default_factory=dict)

    def spend(self, category: str, amount: Money) -> None:
        self.spent[category] = self.spent.get(category, Money(0)) + amount

    def remaining(self, category: str) -> Money:
        limit = self.limits.get(category, Money(0))
        return limit + Money(-self.spent.get(category, Money(0)).cents)
'''

CATEGORIES = '''\
"""Known spending categories."""

CATEGORIES = ("rent", "food", "travel", "other")


def normalise(name: str) -> str:
    name = name.strip().lower()
    return name if name in CATEGORIES else "other"
'''

_RULES_LINE = 'RULES: dict[str, str] = {"landlord": "rent", "bakery": "food"}'
RULES = f'''\
"""Rules that map a payee to a category."""

from __future__ import annotations

from ledger.categories import normalise

{_RULES_LINE}


def categorise(payee: str) -> str:
    return normalise(RULES.get(payee.lower(), "other"))
'''
EDIT_RULES_TRAVEL = (_RULES_LINE, _RULES_LINE[:-1] + ', "railways": "travel"}')

TEST_BUDGET = """\
from ledger.budget import Budget
from ledger.money import Money


def test_remaining_after_spend() -> None:
    budget = Budget("2026-01", limits={"food": Money(30000)})
    budget.spend("food", Money(1250))
    assert budget.remaining("food").cents == 28750
"""

TEST_RULES = """\
from ledger.rules import categorise


def test_known_payee() -> None:
    assert categorise("Bakery") == "food"


def test_unknown_payee() -> None:
    assert categorise("Zoo") == "other"
"""

BUDGET_DOC = "# Budgets\n\nA budget holds a spending limit per category for one month.\n"

SEED_BUDGET = '''\
"""Seed a demo budget."""

from ledger.budget import Budget
from ledger.money import Money

budget = Budget("2026-01", limits={"rent": Money(90000), "food": Money(30000)})
print(budget.remaining("rent"))
'''

EDIT_INIT_EXPORTS = (
    '"""A tiny ledger."""\n',
    '"""A tiny ledger."""\n\nfrom ledger.budget import Budget\nfrom ledger.money import Money\n\n'
    '__all__ = ["Budget", "Money"]\n',
)
EDIT_PYPROJECT_VERSION = ('version = "0.1.0"', 'version = "0.2.0.dev0"')
EDIT_README_BUDGET = ("# scratch project", "# ledger\n\nBudgets: see docs/budget.md.")

_REPORT_HEAD = '''\
"""Plain-text reports."""

from __future__ import annotations

from ledger.money import Money


def total(entries: list[Money]) -> Money:
    result = Money(0)
    for entry in entries:
        result = result + entry
    return result
'''
REPORT_MYPY_BUGS = (
    _REPORT_HEAD
    + """

def format_total(entries: list[Money]) -> str:
    return total(entries)


def parse_all(lines: list[str]) -> list[Money]:
    return [Money.parse(int(line)) for line in lines]


def first_currency(entries: list[Money]) -> str:
    return entries[0].currency_code
"""
)
REPORT_ARG_TYPE_BUG = (
    _REPORT_HEAD
    + """

def parse_all(lines: list[str]) -> list[Money]:
    return [Money.parse(int(line)) for line in lines]
"""
)
FIX_RETURN_VALUE = (
    "    return total(entries)\n\n\ndef parse_all",
    "    return str(total(entries))\n\n\ndef parse_all",
)
FIX_ARG_TYPE = ("Money.parse(int(line))", "Money.parse(line)")
FIX_ATTR_DEFINED = ("entries[0].currency_code", "entries[0].currency")

CLI_BALANCE_KEYERROR = '''\
"""python -m ledger.cli FILE.csv: print the balance of the entries."""

from __future__ import annotations

import csv
import sys

from ledger.money import Money


def main(argv: list[str]) -> int:
    total = Money(0)
    with open(argv[0], newline="") as handle:
        for row in csv.DictReader(handle):
            total = total + Money.parse(row["amount"])
    print(total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''
WRONG_FIX_CLI = ('Money.parse(row["amount"])', 'Money.parse(row["amount"].strip())')

TEST_SPLIT = """\
from ledger.money import Money


def test_split_keeps_total():
    assert sum(p.cents for p in Money(1000).split(3)) == 1000


def test_split_spreads_remainder():
    assert [p.cents for p in Money(1000).split(3)] == [334, 333, 333]
"""

EDIT_POST_VALIDATION = (
    "    def post(self, amount: Money) -> None:\n        self.entries.append(amount)",
    "    def post(self, amount: Money) -> None:\n"
    "        if self.entries and amount.currency != self.entries[0].currency:\n"
    '            raise ValueError("mixed currencies in one account")\n'
    "        self.entries.append(amount)",
)
TEST_POST_VALIDATION = """\
import pytest

from ledger.accounts import Account
from ledger.money import Money


def test_post_rejects_mixed_currencies():
    acct = Account("shop", [Money(100, "EUR")])
    with pytest.raises(ValueError):
        acct.post(Money(100, "USD"))
"""

STORE_SWAPPED = '''\
"""Accounts stored in a sqlite file."""

from __future__ import annotations

import sqlite3

from ledger.accounts import Account
from ledger.money import Money

SCHEMA = "CREATE TABLE IF NOT EXISTS entries (account TEXT, cents INTEGER, currency TEXT)"


def save(path: str, account: Account) -> None:
    with sqlite3.connect(path) as db:
        db.execute(SCHEMA)
        rows = [(account.name, m.cents, m.currency) for m in account.entries]
        db.executemany("INSERT INTO entries VALUES (?, ?, ?)", rows)


def load(path: str, name: str) -> Account:
    with sqlite3.connect(path) as db:
        query = "SELECT cents, currency FROM entries WHERE account = ?"
        rows = db.execute(query, (name,)).fetchall()
    return Account(name, [Money(cents, currency) for currency, cents in rows])
'''
FIX_STORE = ("for currency, cents in rows", "for cents, currency in rows")
TEST_STORE = """\
from pathlib import Path

from ledger.accounts import Account
from ledger.money import Money
from ledger.store import load, save


def test_roundtrip_keeps_entries(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.sqlite3")
    save(db, Account("shop", [Money(1250), Money(725)]))
    loaded = load(db, "shop")
    assert [m.cents for m in loaded.entries] == [1250, 725]
"""

CLI_ARGPARSE_CENTS = '''\
"""python -m ledger.cli FILE.csv: print the balance of the entries."""

from __future__ import annotations

import argparse
import csv

from ledger.money import Money


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ledger")
    parser.add_argument("csv_file")
    args = parser.parse_args(argv)
    total = Money(0)
    with open(args.csv_file, newline="") as handle:
        for row in csv.DictReader(handle):
            total = total + Money.parse(row["amount"])
    print(total.cents)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''
FIX_CLI_PRINT = ("    print(total.cents)", "    print(total)")
TEST_CLI = """\
from pathlib import Path

import pytest

from ledger.cli import main


def test_main_prints_balance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "e.csv"
    path.write_text("date,amount\\n2026-01-02,12.50\\n2026-01-03,7.25\\n")
    assert main([str(path)]) == 0
    assert capsys.readouterr().out.strip() == "19.75 EUR"
"""

# The JSON Lines export as first written: an unknown account name is not handled (mypy
# [union-attr] on ``account.name``/``account.entries``; the test expects a KeyError).
EXPORT_UNGUARDED = '''\
"""Export an account as JSON Lines: one entry per line."""

from __future__ import annotations

import json
from pathlib import Path

from ledger.accounts import Account


def find(accounts: list[Account], name: str) -> Account | None:
    for account in accounts:
        if account.name == name:
            return account
    return None


def export_account(accounts: list[Account], name: str, path: Path) -> int:
    """Write the entries of account `name` to `path`; the number of lines written."""
    account = find(accounts, name)
    lines = [
        json.dumps({"account": account.name, "cents": e.cents, "currency": e.currency})
        for e in account.entries
    ]
    path.write_text("".join(line + "\\n" for line in lines), encoding="utf-8")
    return len(lines)
'''
FIX_EXPORT_GUARD = (
    "    account = find(accounts, name)\n",
    "    account = find(accounts, name)\n"
    "    if account is None:\n"
    '        raise KeyError(f"no account named {name!r}")\n',
)
TEST_EXPORT = """\
import json
from pathlib import Path

import pytest

from ledger.accounts import Account
from ledger.export import export_account
from ledger.money import Money


def test_export_writes_one_line_per_entry(tmp_path: Path) -> None:
    shop = Account("shop", [Money(1250), Money(725, "USD")])
    out = tmp_path / "shop.jsonl"
    assert export_account([shop], "shop", out) == 2
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[1] == {"account": "shop", "cents": 725, "currency": "USD"}


def test_export_rejects_unknown_account(tmp_path: Path) -> None:
    with pytest.raises(KeyError):
        export_account([Account("shop")], "rent", tmp_path / "rent.jsonl")
"""

"""A fourth scratch project: ``stockroom``, a small Python package (stock levels per SKU,
prices in integer cents) with a ``unittest`` suite. ``base()`` holds three bugs: two tests
fail and one errors from the start."""

from __future__ import annotations

INIT = '"""Stock levels and prices for a small shop."""\n'

# Bugs: an unknown SKU raises KeyError instead of counting as zero; remove() lets the
# stock go negative.
INVENTORY = '''\
"""Stock levels per SKU."""

from __future__ import annotations


class Inventory:
    def __init__(self) -> None:
        self._stock: dict[str, int] = {}

    def add(self, sku: str, qty: int) -> None:
        self._stock[sku] = self._stock.get(sku, 0) + qty

    def remove(self, sku: str, qty: int) -> None:
        self._stock[sku] = self.quantity(sku) - qty

    def quantity(self, sku: str) -> int:
        return self._stock[sku]

    def skus(self) -> list[str]:
        return sorted(self._stock)
'''

# Bug: the bulk discount starts above ten items instead of at ten.
PRICING = '''\
"""Prices in integer cents."""

from __future__ import annotations

BULK_QTY = 10
BULK_PERCENT_OFF = 10


def line_total(unit_cents: int, qty: int) -> int:
    total = unit_cents * qty
    if qty > BULK_QTY:
        total -= total * BULK_PERCENT_OFF // 100
    return total
'''

TEST_INVENTORY = """\
import unittest

from stockroom.inventory import Inventory


class InventoryTest(unittest.TestCase):
    def test_add_accumulates(self):
        inv = Inventory()
        inv.add("A-1", 3)
        inv.add("A-1", 4)
        self.assertEqual(inv.quantity("A-1"), 7)

    def test_unknown_sku_counts_as_zero(self):
        self.assertEqual(Inventory().quantity("B-7"), 0)

    def test_remove_more_than_stock_raises(self):
        inv = Inventory()
        inv.add("A-1", 2)
        with self.assertRaises(ValueError):
            inv.remove("A-1", 5)
"""

TEST_PRICING = """\
import unittest

from stockroom.pricing import line_total


class PricingTest(unittest.TestCase):
    def test_no_discount_below_bulk(self):
        self.assertEqual(line_total(100, 9), 900)

    def test_bulk_discount_at_ten(self):
        self.assertEqual(line_total(100, 10), 900)
"""

FIX_QUANTITY = ("        return self._stock[sku]\n", "        return self._stock.get(sku, 0)\n")
FIX_REMOVE = (
    "        self._stock[sku] = self.quantity(sku) - qty\n",
    "        left = self.quantity(sku) - qty\n"
    "        if left < 0:\n"
    '            raise ValueError(f"only {self.quantity(sku)} of {sku} in stock")\n'
    "        self._stock[sku] = left\n",
)
FIX_BULK = ("    if qty > BULK_QTY:\n", "    if qty >= BULK_QTY:\n")

REPORT = '''\
"""A CSV stock report: one line per SKU with its quantity and value."""

from __future__ import annotations

import csv
import io

from stockroom.inventory import Inventory
from stockroom.pricing import line_total


def stock_report(inv: Inventory, prices: dict[str, int]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\\n")
    writer.writerow(["sku", "qty", "value_cents"])
    for sku in inv.skus():
        qty = inv.quantity(sku)
        writer.writerow([sku, qty, line_total(prices.get(sku, 0), qty)])
    return out.getvalue()
'''

TEST_REPORT = """\
import unittest

from stockroom.inventory import Inventory
from stockroom.report import stock_report


class ReportTest(unittest.TestCase):
    def test_report_lists_each_sku(self):
        inv = Inventory()
        inv.add("A-1", 2)
        inv.add("C-3", 10)
        report = stock_report(inv, {"A-1": 250, "C-3": 100})
        self.assertEqual(report, "sku,qty,value_cents\\nA-1,2,500\\nC-3,10,900\\n")
"""

EDIT_INIT_EXPORTS = (
    INIT,
    INIT
    + "\nfrom stockroom.inventory import Inventory\nfrom stockroom.report import stock_report\n"
    '\n__all__ = ["Inventory", "stock_report"]\n',
)
EDIT_README_REPORT = (
    "# scratch project\n",
    "# stockroom\n\nStock levels and prices. `stockroom.report.stock_report()` writes a CSV"
    " report\n(sku, qty, value_cents). Tests: `python -m unittest`.\n",
)


def base() -> dict[str, str]:
    """The package as committed before the session starts (three tests red)."""
    return {
        "stockroom/__init__.py": INIT,
        "stockroom/inventory.py": INVENTORY,
        "stockroom/pricing.py": PRICING,
        "tests/__init__.py": "",
        "tests/test_inventory.py": TEST_INVENTORY,
        "tests/test_pricing.py": TEST_PRICING,
    }

"""What both halves of the continuity replay share: routine work that fills a session the
way real sessions fill up (reads, searches, edits, passing test runs, status checks)."""

from __future__ import annotations

import random
from typing import Any

FILES = [
    "src/acme/__init__.py", "src/acme/app.py", "src/acme/config.py", "src/acme/db.py",
    "src/acme/models/user.py", "src/acme/models/order.py", "src/acme/models/invoice.py",
    "src/acme/routes/users.py", "src/acme/routes/orders.py", "src/acme/routes/billing.py",
    "src/acme/routes/health.py", "src/acme/services/users.py", "src/acme/services/orders.py",
    "src/acme/services/billing.py", "src/acme/services/mailer.py", "src/acme/client/http.py",
    "src/acme/client/retry.py", "src/acme/client/auth.py", "src/acme/utils/time.py",
    "src/acme/utils/pagination.py", "src/acme/ratelimit.py", "src/acme/cache.py",
    "tests/conftest.py", "tests/test_users.py", "tests/test_orders.py", "tests/test_billing.py",
    "tests/test_client.py", "tests/test_pagination.py", "tests/test_ratelimit.py",
    "migrations/versions/0012_add_invoices.py", "migrations/versions/0013_order_index.py",
    "pyproject.toml", "README.md", "docs/architecture.md", "docs/api.md",
]  # fmt: skip

COMMANDS = [
    ("git status --short", " M src/acme/app.py"),
    ("ls src/acme", "__init__.py\napp.py\nconfig.py\ndb.py\nmodels\nroutes\nservices"),
    ("pytest tests/test_pagination.py -q", "......\n6 passed in 0.21s"),
    ("git diff --stat", " src/acme/app.py | 4 ++--\n 1 file changed"),
    ("ruff check src/acme/utils", "All checks passed!"),
    ("wc -l src/acme/app.py", "212 src/acme/app.py"),
    ("grep -rn TODO src/acme | head -5", "src/acme/cache.py:14: # TODO: ttl from config"),
]

PATTERNS = ["def create_", "class .*Service", "TODO", "import httpx", "session.commit", "raise "]


def routine(session: Any, count: int, seed: int, files: list[str] | None = None) -> None:
    """`count` routine tool calls of `session` (Claude or Gemini), reproducible by `seed`."""
    rng = random.Random(seed)
    pool = files or FILES
    gemini = session.platform == "gemini-cli"
    for _ in range(count):
        roll = rng.random()
        rel = rng.choice(pool)
        if roll < 0.40:
            session.read(rel, f"# {rel}\n" + "x = 1\n" * rng.randint(3, 12))
        elif roll < 0.55:
            pattern = rng.choice(PATTERNS)
            if gemini:
                session.tool(
                    "grep_search",
                    {"pattern": pattern, "dir_path": session.w.p("src")},
                    {"llmContent": f"Found 3 matches for pattern {pattern!r}"},
                )
            else:
                session.tool(
                    "Grep",
                    {"pattern": pattern, "path": session.w.p("src"), "output_mode": "content"},
                    {"mode": "content", "numFiles": 3, "content": f"{rel}:12: {pattern}"},
                )
        elif roll < 0.78:
            session.edit(rel, f"old_{rng.randint(1, 999)}", f"new_{rng.randint(1, 999)}")
        else:
            command, out = rng.choice(COMMANDS)
            if gemini:
                session.shell(command, out)
            else:
                session.bash(command, out)

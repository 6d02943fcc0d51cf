"""Continuity replay, held-out half: never looked at while tuning the extractor.

Same kinds as ``continuity_tuning.py``, other sessions: other languages, other hosts for the
same kind, other commands and plan shapes.
"""

from __future__ import annotations

from bench_continuity import Scenario, Step, World
from continuity_common import routine

HTTPX = "https://www.python-httpx.org"


def resume_claude_continue(w: World) -> None:
    """`claude --continue`: new session id, and the new transcript is not written yet when
    SessionStart runs (only once the conversation goes on)."""
    old = w.claude()
    old.start("startup")
    old.prompt("Invoices must be immutable once issued: add a status column and block updates.")
    old.edit("src/acme/models/invoice.py", "class Invoice", "class Invoice  # status")
    old.write("migrations/versions/0015_invoice_status.py", "def upgrade(): ...")
    old.prompt("Name the states draft, issued, void. Only a draft can be edited.")
    old.bash(
        "pytest tests/test_billing.py -q",
        fail="Exit code 1\nFAILED tests/test_billing.py::test_issued_invoice_is_read_only - "
        "AssertionError: expected 409, got 200\n1 failed, 9 passed",
    )
    routine(old, 30, seed=111)
    old.prompt("Return 409 Conflict for edits of issued invoices.")
    new = old.resumed(copy=False)
    new.start("resume", check="resume")
    w.expect(
        "resume",
        include=[
            "draft, issued, void",
            "409 Conflict for edits of issued invoices",
            "0015_invoice_status.py",
            ("test_billing.py", "failing"),
        ],
    )


def resume_claude_older(w: World) -> None:
    """`claude --resume <older id>` while a newer conversation of the project exists: the
    resumed one comes back, never the newer one."""
    older = w.claude()
    older.start("startup")
    older.prompt("Switch the order export from CSV to Parquet; keep column names unchanged.")
    older.write("src/acme/services/export.py", "def export_parquet(...): ...")
    older.bash("pip install pyarrow==17.0.0", "Successfully installed pyarrow-17.0.0")
    routine(older, 20, seed=121)
    older.prompt("Write the files to s3://acme-exports/orders/ partitioned by day.")
    newer = w.claude()
    newer.start("startup")
    newer.prompt("Fix the flaky test_token_refresh in tests/test_client.py.")
    newer.edit("tests/test_client.py", "sleep(1)", "freeze_time()")
    newer.bash("pytest tests/test_client.py -q", "............\n12 passed")
    routine(newer, 15, seed=122)
    back = older.resumed()
    back.start("resume", check="resume")
    w.expect(
        "resume",
        include=["Parquet", "s3://acme-exports/orders/", "export.py"],
        exclude=["test_token_refresh", "freeze_time"],
    )


def fresh_gemini(w: World) -> None:
    """Gemini: a new session after another one gets nothing of it, even after /compress."""
    other = w.gemini()
    other.start("startup")
    other.prompt("Rotate the JWT signing key every 24 hours and keep the previous key valid.")
    other.edit("src/acme/client/auth.py", "SIGNING_KEY", "SIGNING_KEYS")
    other.shell("export JWT_SECRET=Zq8-very-secret-jwt-key-0042 && pytest -q", "ok")
    w.secret("Zq8-very-secret-jwt-key-0042")
    routine(other, 15, seed=131)
    fresh = w.gemini()
    fresh.start("startup", check="startup")
    gone = ["JWT signing key", "SIGNING_KEYS", "auth.py"]
    w.expect("startup", exclude=gone)
    fresh.prompt("Add OpenAPI tags to every route in src/acme/routes.")
    fresh.edit("src/acme/routes/orders.py", "@router.get", "@router.get(tags=['orders'])")
    routine(fresh, 10, seed=132, files=["src/acme/routes/orders.py", "docs/api.md"])
    fresh.compress("manual")
    fresh.prompt("Also tag the health routes.", check="after-compress")
    w.expect("after-compress", include=["OpenAPI tags", "orders.py"], exclude=gone)


def language_gemini_ja_ko(w: World) -> None:
    """Japanese and Korean constraints in a Gemini session."""
    s = w.gemini()
    s.start("startup")
    s.prompt("注文一覧のAPIにページングを追加して")
    s.prompt("既存のテストは書き換えないこと")
    s.read("src/acme/routes/orders.py", "def list_orders(): ...")
    s.edit("src/acme/routes/orders.py", "def list_orders()", "def list_orders(page=1)")
    s.prompt("데이터베이스 스키마는 절대 바꾸지 마세요")
    routine(s, 30, seed=141)
    s.prompt("응답 형식은 기존과 동일하게 유지해 주세요")
    s.compress("manual")
    s.prompt("続けてください", check="after-compress")
    w.expect(
        "after-compress",
        include=[
            "既存のテストは書き換えないこと",
            "데이터베이스 스키마는 절대 바꾸지 마세요",
            "응답 형식은 기존과 동일하게 유지해 주세요",
            "orders.py",
        ],
    )


def language_claude_european(w: World) -> None:
    """German, Spanish, French and Russian constraints in a Claude session."""
    s = w.claude()
    s.start("startup")
    s.prompt("Baue einen CSV-Import für Kunden.")
    s.prompt("Bitte keine neuen Abhängigkeiten hinzufügen.")
    s.write("src/acme/services/import_csv.py", "def import_customers(path): ...")
    s.prompt("Los nombres de las columnas deben quedar en inglés.")
    routine(s, 30, seed=151)
    s.prompt("Ne touche pas au module de facturation.")
    s.prompt("Логи пиши только на уровне INFO")
    s.bash("pytest tests -q -k import", "....\n4 passed")
    s.compact()
    s.start("compact", check="compact")
    w.expect(
        "compact",
        include=[
            "Bitte keine neuen Abhängigkeiten hinzufügen",
            "Los nombres de las columnas deben quedar en inglés",
            "Ne touche pas au module de facturation",
            "Логи пиши только на уровне INFO",
            "import_csv.py",
        ],
    )


def failfix_gemini(w: World) -> None:
    """Gemini shell results: a lint error fixed, a type-check error still failing."""
    s = w.gemini()
    s.start("startup")
    s.prompt("Clean up the client package: lint and type errors.")
    s.shell(
        "ruff check src/acme/client",
        "src/acme/client/http.py:12:1: F401 [*] `json` imported but unused\nFound 1 error.",
        code=1,
    )
    s.edit("src/acme/client/http.py", "import json\n", "")
    s.shell("ruff check src/acme/client", "All checks passed!")
    s.shell(
        "npx tsc --noEmit -p web",
        "web/src/api.ts(88,5): error TS2322: Type 'string | undefined' is not assignable to "
        "type 'string'.",
        code=2,
    )
    s.edit("src/acme/client/retry.py", "a", "b")
    routine(s, 15, seed=161)
    s.shell(
        "npx tsc --noEmit -p web",
        "web/src/api.ts(88,5): error TS2322: Type 'string | undefined' is not assignable to "
        "type 'string'.",
        code=2,
    )
    s.shell(
        "psql postgres://admin:Pg-S3cret-Pass-91@db.internal:5432/acme -c 'select 1'",
        "1",
    )
    w.secret("Pg-S3cret-Pass-91")
    s.compress("manual")
    s.prompt("What's left?", check="after-compress")
    w.expect(
        "after-compress",
        include=[("ruff check src/acme/client", "fixed"), ("tsc", "still failing")],
        exclude=[("ruff check", "still failing")],
    )


GEMINI_PLAN = """## Implementation plan: soft delete for users

- Add `deleted_at` (nullable timestamp) to users; index it.
- `UserRepository.active()` filters `deleted_at IS NULL`; every query goes through it.
- DELETE /users/{id} sets `deleted_at` instead of removing the row.
- A nightly job purges rows deleted more than 30 days ago (GDPR).
"""


def plan_gemini_file(w: World) -> None:
    """Gemini's exit_plan_mode points at a plan file; the approved plan survives."""
    s = w.gemini()
    s.start("startup")
    s.prompt("Plan soft delete for users first, then implement it.")
    s.tool("enter_plan_mode", {}, {"llmContent": "Switched to Plan mode."})
    s.read("src/acme/models/user.py", "class User: ...")
    plan = w.home / ".gemini" / "tmp" / ("3c9e5b1f" * 8) / "plans" / "soft-delete-users.md"
    w.steps.append(Step(write=(plan, GEMINI_PLAN, False)))
    s.tool(
        "exit_plan_mode",
        {"plan_path": str(plan)},
        {
            "llmContent": "Plan approved. Switching to Default mode (edits will require "
            f"confirmation).\n\nThe approved implementation plan is stored at: {plan}\nRead "
            "and follow the plan strictly during implementation.",
            "returnDisplay": "Plan approved",
        },
    )
    s.write("migrations/versions/0016_users_deleted_at.py", "def upgrade(): ...")
    routine(s, 30, seed=171)
    s.compress("manual")
    s.prompt("Continue with the repository change.", check="after-compress")
    w.expect(
        "after-compress",
        include=["deleted_at", "UserRepository.active()", "purges rows deleted more than 30 days"],
    )


def plan_claude_revised(w: World) -> None:
    """The user turns the first plan down (no hook sees that) and approves a revised one."""
    s = w.claude()
    s.start("startup")
    s.prompt("Plan how to cache the product catalogue.")
    s.tool("EnterPlanMode", {}, {"message": "Entered plan mode"})
    s.read("src/acme/cache.py", "...")
    s.prompt("No in-memory cache: we run 8 workers. Plan it with Redis and explicit invalidation.")
    plan = (
        "1. Cache catalogue pages in Redis under `catalogue:v3:{page}` for 10 minutes.\n"
        "2. Invalidate on product write via `CatalogueCache.bust(product_id)`.\n"
        "3. Add a `X-Cache: hit|miss` response header.\n"
    )
    s.tool("ExitPlanMode", {"plan": plan}, {"plan": plan, "isAgent": False})
    routine(s, 25, seed=181)
    s.compact()
    s.start("compact", check="compact")
    w.expect(
        "compact",
        include=["catalogue:v3:{page}", "CatalogueCache.bust(product_id)", "X-Cache"],
    )


def long_gemini(w: World) -> None:
    """A Gemini session of ~1,600 tool calls: early constraints and the open failure stay."""
    s = w.gemini()
    s.start("startup")
    s.prompt("Refactor the services layer to dependency injection; routes must not import db.")
    s.prompt("Não altere a interface pública dos serviços.")
    routine(s, 700, seed=191)
    s.shell(
        "pytest tests/test_orders.py -q",
        "FAILED tests/test_orders.py::test_cancel_refunds_payment - AttributeError: "
        "'NoneType' object has no attribute 'refund'",
        code=1,
    )
    routine(s, 880, seed=192)
    s.prompt("Next, move the mailer behind an interface as well.")
    s.compress("manual")
    s.prompt("ok", check="after-compress")
    w.expect(
        "after-compress",
        include=[
            "routes must not import db",
            "Não altere a interface pública dos serviços",
            "move the mailer behind an interface",
            ("test_orders.py", "failing"),
        ],
    )


def indexed_gemini(w: World) -> None:
    """Gemini with ctx_fetch_and_index (several URLs) and ctx_index."""
    s = w.gemini()
    s.start("startup")
    s.prompt("Read the httpx docs on timeouts and retries before we change the client.")
    s.ctx(
        "ctx_fetch_and_index",
        {
            "requests": [
                {"url": f"{HTTPX}/advanced/timeouts/", "source": "httpx-timeouts"},
                {"url": f"{HTTPX}/advanced/transports/", "source": "httpx-transports"},
            ]
        },
        "Fetched and indexed 2 pages (64.0KB)",
    )  # fmt: skip
    s.ctx(
        "ctx_index",
        {"content": "# Incident 2026-04 ...", "source": "incident-2026-04-timeouts"},
        "Indexed 3 sections from incident-2026-04-timeouts",
    )
    routine(s, 30, seed=201)
    s.compress("manual")
    s.prompt("Go on.", check="after-compress")
    w.expect(
        "after-compress",
        include=["httpx-timeouts", "python-httpx.org/advanced/transports", "incident-2026-04"],
    )


def english_claude_2(w: World) -> None:
    """English: an answered question, a sub-agent, a push, secrets in an error and a prompt."""
    s = w.claude()
    s.start("startup")
    s.prompt("Set up CI for the repo on GitHub Actions.")
    s.tool(
        "AskUserQuestion",
        {"questions": [{"question": "Which Python versions should CI test?", "options": []}]},
        {"answers": {"Which Python versions should CI test?": "3.11 and 3.12 only"}},
    )
    s.write(".github/workflows/ci.yml", "name: ci\n")
    s.prompt(
        "Cache pip downloads between runs. The deploy key is "
        "AKIAIOSFODNN7EXAMPLE1 — don't put it in the workflow file."
    )
    w.secret("AKIAIOSFODNN7EXAMPLE1")
    s.bash(
        "act -j test",
        fail="Exit code 1\nError: missing secret AWS_SECRET_ACCESS_KEY="
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY9",
    )
    w.secret("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY9")
    routine(s, 25, seed=211)
    s.bash("git push -u origin ci/github-actions", "branch 'ci/github-actions' set up")
    s.prompt("Open the PR against main when the workflow is green.")
    s.compact()
    s.start("compact", check="compact")
    w.expect(
        "compact",
        include=[
            "3.11 and 3.12 only",
            "Cache pip downloads",
            "ci.yml",
            "Open the PR against main",
            "ci/github-actions",
        ],
    )


SCENARIOS = [
    Scenario("resume-claude-continue-late-file", "resume", resume_claude_continue),
    Scenario("resume-claude-older-conversation", "resume", resume_claude_older),
    Scenario("fresh-gemini-startup", "fresh", fresh_gemini),
    Scenario("language-gemini-ja-ko", "language", language_gemini_ja_ko),
    Scenario("language-claude-de-es-fr-ru", "language", language_claude_european),
    Scenario("failfix-gemini", "failfix", failfix_gemini),
    Scenario("plan-gemini-plan-file", "plan", plan_gemini_file),
    Scenario("plan-claude-revised", "plan", plan_claude_revised),
    Scenario("long-gemini-1600", "long", long_gemini),
    Scenario("indexed-gemini", "indexed", indexed_gemini),
    Scenario("english-claude-ci", "english", english_claude_2),
]

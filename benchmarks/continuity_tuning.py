"""Continuity replay, tuning half: the scenarios the extractor may be tuned on.

Each builder writes one project's sessions as hook payloads (see ``bench_continuity.World``)
and names what the injections at its checkpoints must and must not hold.
"""

from __future__ import annotations

from bench_continuity import Scenario, World
from continuity_common import routine

PYTEST_FAIL = (
    "Exit code 1\n....F\n=================================== FAILURES ==================\n"
    "_____________ test_create_user_rejects_bad_email _____________\n\n"
    '    def test_create_user_rejects_bad_email(client):\n        resp = client.post("/users",'
    ' json={"email": "not-an-email"})\n>       assert resp.status_code == 422\nE       assert'
    " 201 == 422\n\ntests/test_users.py:38: AssertionError\n=========== short test summary"
    " info ===========\nFAILED tests/test_users.py::test_create_user_rejects_bad_email - assert"
    " 201 == 422\n1 failed, 4 passed in 0.41s"
)


def resume_claude_copied(w: World) -> None:
    """`claude --resume <id>` hands a new session id; the new transcript holds the old lines."""
    old = w.claude()
    old.start("startup")
    old.prompt("Add rate limiting to POST /login: 5 attempts per minute per IP.")
    old.read("src/acme/routes/users.py", "def login(payload): ...")
    old.prompt(
        "Use a token bucket stored in Redis, not in-process counters, so it works across workers."
    )
    old.write("src/acme/ratelimit.py", "class TokenBucket: ...")
    old.edit("src/acme/routes/users.py", "def login", "@limit('5/minute')\ndef login")
    old.bash("export REDIS_URL=redis://:Rr9-hunter-77Q@cache.internal:6379/0 && pytest -q", "ok")
    w.secret("Rr9-hunter-77Q")
    old.bash("pytest tests/test_ratelimit.py -q", fail="Exit code 1\nE  ConnectionError: redis")
    routine(old, 25, seed=11)
    old.prompt("Mock Redis with fakeredis in the tests; never hit a real server from tests.")
    # the user quits; later: claude --resume <old id>
    new = old.resumed()
    new.start("resume", check="resume")
    w.expect(
        "resume",
        include=[
            "token bucket stored in Redis",
            "fakeredis",
            "ratelimit.py",
            ("test_ratelimit.py", "failing"),
        ],
    )


def fresh_claude(w: World) -> None:
    """A fresh start (and a /clear) after another conversation: nothing of it comes back."""
    other = w.claude()
    other.start("startup")
    other.prompt("Migrate the invoices table to store amounts in cents (integer), not floats.")
    other.edit("migrations/versions/0012_add_invoices.py", "Float", "Integer")
    other.bash('git commit -am "invoices: amounts in cents"', "[main 1a2b3c4] invoices")
    routine(other, 15, seed=12)
    other.compact()
    other.start("compact")
    other.prompt("Now backfill the existing invoice rows with a data migration.")
    fresh = w.claude()
    fresh.start("startup", check="startup")
    gone = ["amounts in cents", "backfill the existing invoice", "0012_add_invoices"]
    w.expect("startup", exclude=gone)
    fresh.prompt("Write a README section about running the app with docker compose.")
    fresh.edit("README.md", "## Usage", "## Usage\n\n### Docker compose")
    routine(fresh, 10, seed=13, files=["README.md", "docs/architecture.md", "pyproject.toml"])
    fresh.compact()
    fresh.start("compact", check="compact")
    w.expect("compact", include=["docker compose", "README.md"], exclude=gone)
    cleared = w.claude()
    cleared.start("clear", check="clear")
    w.expect("clear", exclude=[*gone, "docker compose"])


def language_zh_ja(w: World) -> None:
    """Constraints in Chinese and Japanese, with and without separators, kept verbatim."""
    s = w.claude()
    s.start("startup")
    s.prompt("给用户服务加上邮箱格式校验，返回 422。")
    s.prompt("不要改数据库迁移，只改服务层")
    s.read("src/acme/services/users.py", "def create_user(data): ...")
    s.edit("src/acme/services/users.py", "def create_user", "def create_user  # validated")
    s.prompt("設定ファイルは変更しないでください")
    s.prompt("错误信息保持英文")
    routine(s, 30, seed=21)
    s.bash("pytest tests/test_users.py -q", fail=PYTEST_FAIL)
    s.prompt("测试失败了，继续修")
    s.compact()
    s.start("compact", check="compact")
    w.expect(
        "compact",
        include=[
            "不要改数据库迁移，只改服务层",
            "設定ファイルは変更しないでください",
            "错误信息保持英文",
            "测试失败了，继续修",
            ("test_users.py", "failing"),
        ],
    )


def failfix_claude(w: World) -> None:
    """One check fails and is fixed, another fails and keeps failing."""
    s = w.claude()
    s.start("startup")
    s.prompt("Make the users route reject bad emails and get mypy clean on billing.")
    s.bash("pytest tests/test_users.py -q", fail=PYTEST_FAIL)
    s.edit(
        "src/acme/routes/users.py", "user = User(", "validate_email(payload.email)\nuser = User("
    )
    s.bash("pytest tests/test_users.py -q", ".....\n5 passed in 0.38s")
    s.bash(
        "mypy src/acme/services/billing.py",
        fail="Exit code 1\nsrc/acme/services/billing.py:41: error: Incompatible return value "
        'type (got "float", expected "Decimal")  [return-value]\nFound 1 error in 1 file',
    )
    s.edit("src/acme/services/billing.py", "return total", "return Decimal(total)")
    s.bash(
        "mypy src/acme/services/billing.py",
        fail='Exit code 1\nsrc/acme/services/billing.py:57: error: Argument 1 to "round" has '
        'incompatible type "Decimal | None"  [arg-type]\nFound 1 error in 1 file',
    )
    routine(s, 20, seed=31)
    s.compact()
    s.start("compact", check="compact")
    w.expect(
        "compact",
        include=[("test_users.py", "fixed"), ("billing.py", "still failing")],
        exclude=[("test_users.py", "still failing")],
    )


PLAN = """# Plan: per-tenant rate limits

1. Add a `tenant_limits` table (tenant_id, route, per_minute) with an Alembic migration.
2. Load the limits at startup into `RateLimitRegistry`; refresh every 60 s.
3. Replace the global `@limit('5/minute')` decorator with `@tenant_limit(route=...)`.
4. Return 429 with a `Retry-After` header computed from the bucket refill time.
5. Tests: tests/test_ratelimit.py covers two tenants with different limits.
"""


def plan_claude(w: World) -> None:
    """An approved plan (ExitPlanMode's `plan`) survives as the summary of the work."""
    s = w.claude()
    s.start("startup")
    s.prompt("Plan per-tenant rate limits before changing anything.")
    s.tool("EnterPlanMode", {}, {"message": "Entered plan mode"})
    for rel in ("src/acme/ratelimit.py", "src/acme/routes/users.py", "src/acme/config.py"):
        s.read(rel, "...")
    plan_file = str(w.home / ".claude" / "plans" / "per-tenant-rate-limits.md")
    s.tool("ExitPlanMode", {"plan": PLAN}, {"plan": PLAN, "isAgent": False, "filePath": plan_file})
    s.prompt("Go ahead with step 1 and 2.")
    s.write("migrations/versions/0014_tenant_limits.py", "def upgrade(): ...")
    routine(s, 40, seed=41)
    s.compact()
    s.start("compact", check="compact")
    w.expect(
        "compact",
        include=[
            "tenant_limits",
            "RateLimitRegistry",
            "@tenant_limit(route=...)",
            "Retry-After",
            "Go ahead with step 1 and 2",
        ],
    )


def long_claude(w: World) -> None:
    """~1,600 tool calls: the first minutes' decisions must outlive routine file events."""
    s = w.claude()
    s.start("startup")
    s.prompt(
        "We are porting acme.client from requests to httpx. Keep the public API of "
        "acme.client unchanged; only refactor internals."
    )
    s.prompt("Use httpx.AsyncClient with a shared connection pool, not one client per call.")
    s.prompt("不要升级 pydantic，保持 1.10。")
    routine(s, 500, seed=51)
    s.bash(
        "pytest tests/test_client.py -q",
        fail="Exit code 1\nFAILED tests/test_client.py::test_retry_on_502 - httpx.ReadTimeout\n"
        "1 failed, 11 passed",
    )
    routine(s, 500, seed=52)
    s.bash(
        "pytest tests/test_billing.py -q",
        fail="Exit code 1\nFAILED tests/test_billing.py::test_invoice_total - assert 10.0 == 10\n"
        "1 failed, 7 passed",
    )
    s.edit("src/acme/services/billing.py", "float(", "Decimal(")
    s.bash("pytest tests/test_billing.py -q", "........\n8 passed")
    routine(s, 590, seed=53)
    s.prompt("Now wire the retry policy into acme.client.retry and run the integration tests.")
    s.compact()
    s.start("compact", check="compact")
    w.expect(
        "compact",
        include=[
            "Keep the public API of acme.client unchanged",
            "shared connection pool",
            "不要升级 pydantic，保持 1.10",
            "wire the retry policy into acme.client.retry",
            ("test_client.py", "failing"),
        ],
        exclude=[("test_billing.py", "still failing")],
    )


def indexed_claude(w: World) -> None:
    """Sources indexed or fetched are named, so they are searched and not fetched again."""
    s = w.claude()
    s.start("startup")
    s.prompt("Upgrade our models to pydantic v2; read the migration guide first.")
    s.ctx(
        "ctx_fetch_and_index",
        {"url": "https://docs.pydantic.dev/latest/migration/", "source": "pydantic-migration"},
        "Fetched and indexed **42 sections** (118.4KB) from: pydantic-migration",
    )
    s.ctx(
        "ctx_index",
        {"path": w.p("docs/adr/0007-validation.md"), "source": "adr-0007-validation"},
        "Indexed 6 sections from adr-0007-validation",
    )
    s.ctx(
        "ctx_search",
        {"queries": ["field_validator mode before", "model_config"]},
        "## field_validator mode before\n...",
    )
    routine(s, 35, seed=61)
    s.ctx(
        "ctx_batch_execute",
        {
            "commands": [
                {"label": "pydantic usages", "command": "grep -rn 'from pydantic' src"},
                {"label": "failing tests", "command": "pytest -q 2>&1 | tail -30"},
            ],
            "queries": ["validator"],
        },
        "Executed 2 commands, indexed as batch sources",
    )
    s.compact()
    s.start("compact", check="compact")
    w.expect(
        "compact",
        include=[
            "pydantic-migration",
            "docs.pydantic.dev/latest/migration",
            "adr-0007-validation",
            "pydantic usages",
        ],
    )


def english_claude(w: World) -> None:
    """An ordinary English session: decisions, tasks, a commit, the last request."""
    s = w.claude()
    s.start("startup")
    s.prompt(
        "Add pagination to GET /orders. Use cursor-based pagination (opaque base64 cursor), "
        "not offset/limit."
    )
    s.tool(
        "TaskCreate",
        {"subject": "Cursor pagination for /orders", "description": "encode (created_at, id)"},
        {"task": {"id": "1", "subject": "Cursor pagination for /orders"}},
    )
    s.tool(
        "TaskCreate",
        {"subject": "Document the cursor format in docs/api.md", "description": ""},
        {"task": {"id": "2", "subject": "Document the cursor format in docs/api.md"}},
    )
    s.read("src/acme/routes/orders.py", "def list_orders(): ...")
    s.write("src/acme/utils/pagination.py", "def encode_cursor(...): ...")
    s.edit("src/acme/routes/orders.py", "def list_orders()", "def list_orders(cursor=None)")
    s.bash("pytest tests/test_pagination.py -q", "......\n6 passed")
    s.bash('git commit -am "orders: cursor pagination"', "[feat/pagination 9f8e7d6] orders")
    s.tool("TaskUpdate", {"taskId": "1", "status": "completed"}, {"success": True})
    s.prompt("Page size defaults to 50 and is capped at 200.")
    routine(s, 30, seed=71)
    s.bash("curl -s -H 'Authorization: Bearer ghp_R4nd0mT0k3nV4lu3xYz123456789AbCdEf' "
           "https://api.github.com/repos/acme/api/pulls", '[{"number": 88}]')  # fmt: skip
    w.secret("ghp_R4nd0mT0k3nV4lu3xYz123456789AbCdEf")
    s.prompt("Next: document the cursor format in docs/api.md.")
    s.compact()
    s.start("compact", check="compact")
    w.expect(
        "compact",
        include=[
            "cursor-based pagination",
            "capped at 200",
            "Document the cursor format in docs/api.md",
            "orders: cursor pagination",
            "pagination.py",
        ],
    )


def resume_gemini_latest(w: World) -> None:
    """`gemini --resume latest` under a new session id: the old chat file goes on."""
    old = w.gemini()
    old.start("startup")
    old.prompt("Add a /health/ready endpoint that checks the database and Redis.")
    old.write("src/acme/routes/health.py", "def ready(): ...")
    old.prompt("Return 503 with a JSON body listing the failed checks; keep /health unchanged.")
    old.shell(
        "pytest tests/test_health.py -q",
        "FAILED tests/test_health.py::test_ready_db_down - KeyError: 'checks'",
        code=1,
    )
    old.shell("export STRIPE_API_KEY=sk_live_51HbQmZ2eZvKYlo2C8xVw9Tq && make run", "started")
    w.secret("sk_live_51HbQmZ2eZvKYlo2C8xVw9Tq")
    routine(old, 20, seed=81)
    new = old.resumed()
    new.start("resume", check="resume")
    w.expect(
        "resume",
        include=[
            "503 with a JSON body listing the failed checks",
            "health.py",
            ("test_health.py", "failing"),
        ],
    )


def english_gemini_compress(w: World) -> None:
    """Gemini's /compress: the snapshot comes back with the next prompt (late snapshot)."""
    s = w.gemini()
    s.start("startup")
    s.prompt("Send the welcome email asynchronously through the task queue, never inline.")
    s.read("src/acme/services/mailer.py", "def send_welcome(user): ...")
    s.edit("src/acme/services/mailer.py", "def send_welcome", "async def send_welcome")
    s.shell('git commit -am "mailer: async welcome email"', "[main 4d5e6f7] mailer")
    routine(s, 30, seed=91)
    s.compress("auto")  # Gemini's every-turn check: not a compaction
    s.compress("manual")
    s.prompt("Add a retry with exponential backoff to the email task.", check="compress")
    w.expect(
        "compress",
        include=["asynchronously through the task queue", "mailer.py", "mailer: async welcome"],
    )


SCENARIOS = [
    Scenario("resume-claude-new-id-copied", "resume", resume_claude_copied),
    Scenario("resume-gemini-latest", "resume", resume_gemini_latest),
    Scenario("fresh-claude-startup-and-clear", "fresh", fresh_claude),
    Scenario("language-zh-ja", "language", language_zh_ja),
    Scenario("failfix-claude", "failfix", failfix_claude),
    Scenario("plan-claude-exitplanmode", "plan", plan_claude),
    Scenario("long-claude-1600", "long", long_claude),
    Scenario("indexed-claude", "indexed", indexed_claude),
    Scenario("english-claude", "english", english_claude),
    Scenario("english-gemini-compress", "english", english_gemini_compress),
]

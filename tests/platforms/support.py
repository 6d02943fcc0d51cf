"""Fixture payloads and decoded answers for the adapter tests."""

import json
from pathlib import Path
from typing import Any

from ctxmode.platforms import Output

FIXTURES = Path(__file__).parents[1] / "hooks" / "fixtures"


def fixture(fixture_id: str) -> dict[str, Any]:
    """The stdin payload of a hook fixture (``tests/hooks/fixtures/<id>.json``)."""
    data = json.loads((FIXTURES / f"{fixture_id}.json").read_text(encoding="utf-8"))
    return dict(data["stdin"])


def fixture_env(fixture_id: str) -> dict[str, str]:
    data = json.loads((FIXTURES / f"{fixture_id}.json").read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in (data.get("env") or {}).items()}


def answer(output: Output) -> dict[str, Any]:
    """The JSON object a hook printed (exit 0, nothing on stderr)."""
    assert output.exit_code == 0 and output.stderr is None, output
    assert output.stdout is not None, output
    value = json.loads(output.stdout)
    assert isinstance(value, dict)
    return value


def silent(output: Output) -> bool:
    """Nothing printed, exit 0: the host carries on as if no hook ran."""
    return output == Output()

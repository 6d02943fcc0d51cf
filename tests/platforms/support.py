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


def run_shim(
    tmp_path: Path, shim: str, harness: str, fake_ctxmode: str, *args: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A JS shim (its installed text) loaded by a node `harness` module, with a fake
    ctxmode (Python source, `$FAKE_LOG` its log) as ``$CTXMODE_BIN``: the JSON object the
    harness prints, and the fake's log lines. The harness gets the shim's path, then `args`."""
    import os
    import stat
    import subprocess
    import sys

    fake = tmp_path / "ctxmode"
    fake.write_text(f"#!{sys.executable}\n{fake_ctxmode}", encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    path = tmp_path / "ctxmode.js"
    path.write_text(shim, encoding="utf-8")
    script = tmp_path / "harness.mjs"
    script.write_text(harness, encoding="utf-8")
    log = tmp_path / "log.jsonl"
    env = {**os.environ, "CTXMODE_BIN": str(fake), "FAKE_LOG": str(log)}
    proc = subprocess.run(
        ["node", str(script), str(path), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
        check=True,
    )
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return json.loads(proc.stdout), [json.loads(x) for x in lines]

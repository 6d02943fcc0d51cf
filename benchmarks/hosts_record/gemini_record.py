"""Gemini CLI side of ``record.py``: ``gemini -p`` per turn (``--resume latest`` after the
first) against ``fake_gemini_scripted.py``, set up as ``drive.run_gemini`` sets it up (API-key
auth pinned, the project trusted, no telemetry or update checks)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import drive
import sessions

HERE = Path(__file__).resolve().parent


def user_settings(hr: drive.HostRun, proj: Path) -> None:
    """``~/.gemini/settings.json`` and ``trustedFolders.json`` (see the hosts README)."""
    gdir = Path(hr.d["home"]) / ".gemini"
    gdir.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }
    (gdir / "settings.json").write_text(json.dumps(settings))
    (gdir / "trustedFolders.json").write_text(json.dumps({str(proj): "TRUST_FOLDER"}))


def run_gemini(spec: sessions.Session, hr: drive.HostRun, real: str, bins: dict[str, str]) -> None:
    """Every turn of `spec` as one ``gemini -p`` invocation."""
    import record

    proj = Path(hr.d["proj"])
    user_settings(hr, proj)
    hr.fake = drive.Fake(str(HERE / "fake_gemini_scripted.py"), hr.d["logs"], str(proj))
    names = {"{project}": str(proj), "{home}": hr.d["home"], "{port}": str(hr.fake.port)}
    script: dict[str, Any] = record.script_for(spec, names)
    for entry, turn in zip(
        script["prompts"], [t for t in spec.turns if not t.prompt.startswith("/")], strict=True
    ):
        for step, raw in zip(entry["steps"], turn.steps, strict=True):
            if raw.get("compress"):
                step["compress"] = True
    (Path(hr.d["logs"]) / "script.json").write_text(json.dumps(script))
    env = record.host_env(
        hr,
        real,
        GOOGLE_GEMINI_BASE_URL=hr.fake.url,
        GEMINI_API_KEY="dummy",
        GEMINI_CLI_NO_RELAUNCH="1",
        GEMINI_TELEMETRY_ENABLED="false",
    )
    node = os.path.join(bins["node"], "node")
    for i, turn in enumerate(spec.turns):
        extra = ["--resume", "latest"] if i else []
        argv = [
            node,
            bins["gemini"],
            "-p",
            turn.prompt,
            *extra,
            "--output-format",
            "json",
            "--yolo",
        ]
        hr.invoke(f"run{i + 1}", argv, turn.prompt, str(proj / spec.cwd), env)


def compression_times(hr: drive.HostRun) -> list[float]:
    """When the fake was asked for a ``<state_snapshot>`` (a real compression)."""
    path = Path(hr.d["logs"]) / "requests.jsonl"
    times = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("reply_label") == "compress-summary":
            times.append(entry["ts"])
    return times

"""Dry-run a session's script without a host: apply its Write/Edit calls and run its Bash
calls in a scratch copy of the project, and report steps whose outcome differs from the
script (an Edit whose old text is not there exactly once, a command that passes where the
script expects a failure, ...). Cheap to run after editing ``sessions.py``.

    .venv/bin/python benchmarks/hosts_record/simulate.py [NAME-PART]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import sessions  # noqa: E402

ALIASES = {
    "write_file": "Write",
    "replace": "Edit",
    "read_file": "Read",
    "run_shell_command": "Bash",
}
VENV_BIN = HERE.parent.parent / ".venv" / "bin"


def _env() -> dict[str, str]:
    """The environment a recording host gives commands: venv tools first, a git identity."""
    return dict(os.environ, PATH=f"{VENV_BIN}:{os.environ['PATH']}", **sessions.GIT_IDENTITY)


def _path(root: Path, cwd: Path, raw: str) -> Path:
    raw = raw.replace("{project}", str(root))
    return Path(raw) if os.path.isabs(raw) else (cwd / raw).resolve()


def run_step(step: dict, root: Path, cwd: Path) -> str | None:
    """Apply one step; a problem description, or None."""
    tool, args = ALIASES.get(step["tool"], step["tool"]), step["input"]
    if tool == "Write":
        path = _path(root, cwd, args["file_path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(args["content"], encoding="utf-8")
    elif tool == "Edit":
        path = _path(root, cwd, args["file_path"])
        text = path.read_text(encoding="utf-8")
        if text.count(args["old_string"]) != 1:
            return (
                f"Edit {path.relative_to(root)}: old text found {text.count(args['old_string'])}x"
            )
        path.write_text(text.replace(args["old_string"], args["new_string"]), encoding="utf-8")
    elif tool == "Read":
        if not _path(root, cwd, args["file_path"]).exists():
            return f"Read {args['file_path']}: no such file"
    elif tool == "Bash":
        command = args["command"].replace("{port}", "9").replace("{project}", str(root))
        if command.startswith("curl "):
            return None
        proc = subprocess.run(
            command, shell=True, cwd=cwd, env=_env(), capture_output=True, text=True
        )
        got = "ok" if proc.returncode == 0 else "fail"
        if step.get("expect") and step["expect"] != got:
            return (
                f"Bash {command[:50]!r}: expected {step['expect']}, got {got}\n{proc.stdout[-600:]}"
            )
    return None


def simulate(spec: sessions.Session) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in spec.files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        (root / "README.md").write_text("# scratch project\n")
        for argv in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
            subprocess.run(["git", *argv], cwd=root, check=True, env=_env())
        problems = []
        for turn in spec.turns:
            for step in turn.steps:
                problem = run_step(step, root, root / spec.cwd)
                if problem:
                    problems.append(problem)
        return problems


def main() -> int:
    part = sys.argv[1] if len(sys.argv) > 1 else ""
    bad = 0
    for spec in sessions.SESSIONS:
        if part not in spec.name:
            continue
        problems = simulate(spec)
        print(f"{spec.name}: {'ok' if not problems else ''}")
        for p in problems:
            print("   ", p)
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

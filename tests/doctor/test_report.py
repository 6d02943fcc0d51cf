"""The report's contract: --json envelope, text layout, exit codes, the help text."""

import platform
import subprocess
import sys

from ctxmode import __version__
from ctxmode.__main__ import main
from ctxmode.executor.runtimes import LANGUAGES

from .support import LINE, by_name, doctor_json, doctor_text, run_process

CHECK_KEYS = {"name", "status", "detail", "fix"}


def test_json_contract_keys_statuses_and_summary(project, capsys):
    code, data = doctor_json(capsys)
    assert set(data) == {"version", "checks", "summary"}
    assert data["version"] == __version__
    assert all(set(c) == CHECK_KEYS for c in data["checks"])
    statuses = [c["status"] for c in data["checks"]]
    assert set(statuses) <= {"OK", "INFO", "WARN", "FAIL"}
    assert data["summary"] == {
        "ok": statuses.count("OK"),
        "info": statuses.count("INFO"),
        "warn": statuses.count("WARN"),
        "fail": statuses.count("FAIL"),
    }
    # OK lines carry no fix; every problem line says what to do.
    assert all(c["fix"] is None for c in data["checks"] if c["status"] == "OK")
    assert all(c["fix"] for c in data["checks"] if c["status"] == "FAIL")
    assert code == 0 and data["summary"]["fail"] == 0


def test_checks_come_in_report_order(project, capsys):
    _, data = doctor_json(capsys)
    names = [c["name"] for c in data["checks"]]
    expected = [
        "python",
        "sqlite",
        *(f"runtime {lang}" for lang in LANGUAGES),
        "storage",
        "content db",
        "session db",
        "setup",
        "server",
        "install",
    ]
    assert names == expected


def test_only_warnings_exit_0_and_the_envelope_says_ok(project, capsys):
    code, data = doctor_json(capsys)
    checks = by_name(data)
    assert checks["server"]["status"] == "WARN"  # nothing runs a server in a test
    assert "no ctxmode server running" in checks["server"]["detail"]
    assert data["summary"]["warn"] >= 1 and data["summary"]["fail"] == 0
    assert code == 0
    code, text = doctor_text(capsys)
    assert code == 0 and "[WARN] server: " in text


def test_required_runtimes_are_ok_with_their_interpreter(project, capsys, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    _, data = doctor_json(capsys)
    checks = by_name(data)
    python = checks["runtime python"]
    assert python["status"] == "OK"
    assert python["detail"].startswith(f"python (ctxmode's) {platform.python_version()} (")
    assert checks["runtime shell"]["status"] == "OK"
    assert "/bin/" in checks["runtime shell"]["detail"]


def test_the_project_environment_python_is_the_one_reported(project, capsys, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    own = project / ".venv" / "bin" / "python"
    own.parent.mkdir(parents=True)
    own.symlink_to(sys.executable)
    _, data = doctor_json(capsys)
    detail = by_name(data)["runtime python"]["detail"]
    # located like the executor does, and its version asked from the interpreter itself
    assert detail.startswith(f"python (.venv) {platform.python_version()} (")
    assert detail.endswith("/proj/.venv/bin/python)")


def test_text_report_layout_is_plain_lines(project, capsys):
    code, text = doctor_text(capsys)
    lines = text.splitlines()
    assert lines[0] == f"ctxmode doctor {__version__}"
    assert lines[1] == ""
    body, last = lines[2:-1], lines[-1]
    assert body and all(LINE.match(line) for line in body), body
    ok = sum(line.startswith("[OK]") for line in body)
    info = sum(line.startswith("[INFO]") for line in body)
    warn = sum(line.startswith("[WARN]") for line in body)
    fail = sum(line.startswith("[FAIL]") for line in body)
    warnings = "warning" if warn == 1 else "warnings"
    assert last == f"{ok} ok, {info} info, {warn} {warnings}, {fail} failures"
    # no markdown that some MCP renderers choke on
    assert not any(line.startswith(("#", "- [", "* ", "```")) for line in lines)
    assert "\x1b[" not in text  # not a terminal: no colour codes
    assert code == 0


def test_text_and_json_report_the_same_checks(project, capsys):
    _, data = doctor_json(capsys)
    _, text = doctor_text(capsys)
    for check in data["checks"]:
        expected = f"[{check['status']}] {check['name']}: "
        assert expected in text


def test_a_real_process_finishes_and_reports_without_a_traceback(project):
    proc = run_process(project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"ctxmode doctor {__version__}\n\n")
    assert proc.stdout.rstrip().splitlines()[-1].endswith("failures")  # the summary line
    assert "Traceback" not in proc.stdout + proc.stderr


def test_no_shell_on_path_is_a_failure_exit_1(project, tmp_path, monkeypatch):
    # PATH holds only the fake ctxmode: no bash, no sh, no git.
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    proc = run_process(project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    shell = next(line for line in proc.stdout.splitlines() if "runtime shell:" in line)
    assert shell.startswith("[FAIL] runtime shell: not installed (looked for: bash, sh")
    assert "— fix: install bash" in shell
    js = next(line for line in proc.stdout.splitlines() if "runtime javascript:" in line)
    assert js.startswith("[INFO] ") and "— to use it: install Node.js" in js
    assert "Traceback" not in proc.stderr


def test_outside_a_project_only_global_checks_run(tmp_path, monkeypatch, capsys, home):
    monkeypatch.chdir(home)  # the home directory is never a project
    code, data = doctor_json(capsys)
    checks = by_name(data)
    assert "content db" not in checks and checks["databases"]["status"] == "OK"
    assert code == 0


def test_a_missing_explicit_project_is_not_found(project, capsys, tmp_path):
    code = main(["doctor", "-p", str(tmp_path / "nope"), "--json"])
    assert code == 3
    assert "project directory not found" in capsys.readouterr().out


def test_help_documents_the_json_contract_and_an_example(capsys):
    assert main(["doctor", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Example: ctxmode doctor --json" in out
    for word in ('"checks"', '"summary"', '"status"', '"fix"', "OK, INFO, WARN or FAIL"):
        assert word in out


def test_the_core_imports_no_cli_or_server_libraries():
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from ctxmode.doctor import run_checks, render_text\n"
        "text = render_text(run_checks(None))\n"
        "assert text.startswith('ctxmode doctor'), text\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'typer', 'rich')]\n"
        "print(heavy)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# --- runtimes: absent is information, present but broken is a warning ----------------------


def _fake_tool(home, name: str, script: str) -> None:
    tool = home.parent / "bin" / name
    tool.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    tool.chmod(0o755)


def test_an_absent_optional_runtime_is_information_with_how_to_install_it(project, capsys, home):
    _, data = doctor_json(capsys)
    ruby = by_name(data)["runtime ruby"]
    assert ruby["status"] == "INFO" and ruby["detail"].startswith("not installed")
    assert ruby["fix"] == "install Ruby (ruby on PATH)"
    _, text = doctor_text(capsys)
    assert "[INFO] runtime ruby: not installed (looked for: ruby on PATH) — to use it: " in text


def test_rustup_without_a_default_toolchain_is_a_warning_with_the_fix(project, capsys, home):
    _fake_tool(
        home,
        "rustc",
        "echo \"error: rustup could not choose a version of rustc to run, because one wasn't "
        'specified explicitly, and no default is configured." >&2\n'
        "echo \"help: run 'rustup default stable' to download the latest stable release of "
        'Rust and set it as the default toolchain." >&2\nexit 1',
    )
    code, data = doctor_json(capsys)
    rust = by_name(data)["runtime rust"]
    assert rust["status"] == "WARN"
    assert "is there but does not work: error: rustup could not choose" in rust["detail"]
    assert rust["fix"] == "rustup default stable"
    assert code == 0  # a warning, not a failure


def test_a_broken_runtime_without_a_suggestion_says_how_to_see_why(project, capsys, home):
    _fake_tool(home, "ruby", "echo 'ruby: symbol lookup error' >&2\nexit 127")
    _, data = doctor_json(capsys)
    ruby = by_name(data)["runtime ruby"]
    assert ruby["status"] == "WARN" and "symbol lookup error" in ruby["detail"]
    assert ruby["fix"] == "run `ruby --version` to see why, then repair or reinstall it"

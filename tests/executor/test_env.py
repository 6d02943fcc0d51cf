"""The sandbox's environment, working directory, temp dir and Python interpreter
(spec §12 items 7-8; §2.3, §2.4)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .procs import needs

DUMP_ENV = "import json, os\nprint(json.dumps(dict(os.environ)))"

SCRUBBED = {
    "NODE_OPTIONS": "--require /nonexistent/ctxmode-inject.js",
    "BASH_ENV": "/nonexistent/ctxmode-bash-env",
    "PERL5OPT": "-Mctxmode_inject",
    "RUBYOPT": "-rctxmode_inject",
    "LD_PRELOAD": "/nonexistent/libctxmode-inject.so",
    "ERL_AFLAGS": "-eval halt()",
    "ERL_FLAGS": "-eval halt()",
    "PYTHONSTARTUP": "/nonexistent/startup.py",
    "PYTHONPATH": "/nonexistent/pythonpath",
    "DOTNET_STARTUP_HOOKS": "/nonexistent/hook.dll",
    "CORECLR_PROFILER": "{00000000-0000-0000-0000-000000000000}",
    "CORECLR_ENABLE_PROFILING": "1",
    "CORECLR_PROFILER_PATH": "/nonexistent/profiler.so",
    "DOTNET_PROFILER_PATH_64": "/nonexistent/profiler.so",
    "COMPlus_EnableDiagnostics": "1",
    "complus_lowercase_too": "1",
    "COMPLUS_UPPER": "1",
    "BASH_FUNC_ctxevil%%": "() {  echo PWNED; }",
    "GIT_SSH_COMMAND": "touch /nonexistent/pwned",
}
PASSED_THROUGH = {
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.ctxmode-test.sock",
    "CTXTEST_USER_VAR": "kept as is: $HOME `x` 'q'",
    "AWS_PROFILE": "ctxmode-test",
}


@pytest.fixture
def hostile_env(monkeypatch):
    for name, value in {**SCRUBBED, **PASSED_THROUGH}.items():
        monkeypatch.setenv(name, value)


def child_env(run, language="python") -> dict[str, str]:
    result = run(language, DUMP_ENV)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_injection_variables_are_absent_in_the_child(run, hostile_env):
    env = child_env(run)
    leaked = sorted(set(SCRUBBED) & set(env))
    assert leaked == []
    assert not [k for k in env if k.upper().startswith("COMPLUS_") or k.startswith("BASH_FUNC_")]


def test_user_variables_and_ssh_agent_pass_through(run, hostile_env):
    env = child_env(run)
    for name, value in PASSED_THROUGH.items():
        assert env.get(name) == value


def test_variables_the_user_drops_are_absent_by_name_or_pattern(run, monkeypatch):
    monkeypatch.setenv("CTXMODE_ENV_DROP", "AWS_*, CTXTEST_TOKEN")
    for name in ("AWS_PROFILE", "AWS_SECRET_ACCESS_KEY", "CTXTEST_TOKEN", "CTXTEST_KEPT"):
        monkeypatch.setenv(name, "value")
    env = child_env(run)
    assert [n for n in env if n.startswith("AWS_") or n == "CTXTEST_TOKEN"] == []
    assert env["CTXTEST_KEPT"] == "value" and env["PATH"]


def test_an_unusable_drop_list_stops_the_run_saying_why(run, monkeypatch):
    from ctxmode.errors import UsageError

    monkeypatch.setenv("CTXMODE_ENV_DROP", "AWS_KEY=x")
    with pytest.raises(UsageError, match="CTXMODE_ENV_DROP='AWS_KEY=x' is not names"):
        run("shell", "echo never")


def test_per_run_variables_of_an_outer_run_do_not_reach_this_one(run, monkeypatch):
    monkeypatch.setenv("CTXMODE_FILE_PATH", "/outer/run/file.txt")
    monkeypatch.setenv("CTXMODE_RUN_ID", "outer-run")
    env = child_env(run)
    assert "CTXMODE_FILE_PATH" not in env
    assert env["CTXMODE_RUN_ID"] not in ("", "outer-run")


def test_forced_settings_are_present(run, monkeypatch):
    monkeypatch.setenv("HOME", "/home/ctxmode-test-home")
    env = child_env(run)
    assert env["HOME"] == "/home/ctxmode-test-home"
    assert env["PYTHONUNBUFFERED"] == "1" and env["PYTHONUTF8"] == "1"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["NO_COLOR"] == "1"
    assert "utf-8" in env["LANG"].lower() or "utf8" in env["LANG"].lower()
    assert env["PATH"]


def test_bash_env_file_is_not_sourced(run, tmp_path, monkeypatch):
    startup = tmp_path / "bash_env.sh"
    startup.write_text("echo INJECTED-BY-BASH-ENV\n", encoding="utf-8")
    monkeypatch.setenv("BASH_ENV", str(startup))
    monkeypatch.setenv("ENV", str(startup))
    result = run("shell", "echo clean")
    assert result.stdout == "clean\n"


def test_exported_bash_function_is_not_imported(run, monkeypatch):
    monkeypatch.setenv("BASH_FUNC_ctxevil%%", "() {  echo PWNED; }")
    result = run("shell", "ctxevil")
    assert "PWNED" not in result.stdout
    assert result.exit_code == 127


@needs("node")
def test_node_options_do_not_reach_node(run, tmp_path, monkeypatch):
    inject = tmp_path / "inject.js"
    inject.write_text("console.log('INJECTED-BY-NODE-OPTIONS');\n", encoding="utf-8")
    monkeypatch.setenv("NODE_OPTIONS", f"--require {inject}")
    result = run("javascript", "console.log(process.env.NODE_OPTIONS ?? 'unset')")
    assert result.stdout == "unset\n"


@needs("perl")
def test_perl5opt_does_not_reach_perl(run, monkeypatch):
    monkeypatch.setenv("PERL5OPT", "-Mctxmode_no_such_module")
    result = run("perl", 'print exists $ENV{PERL5OPT} ? "set\\n" : "unset\\n";')
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "unset\n"


def test_python_runs_in_the_project_with_its_script_and_tmpdir_in_a_removed_temp_dir(run, project):
    (project / "package.json").write_text('{"name": "demo"}', encoding="utf-8")
    code = "import os, sys, tempfile\nprint(os.getcwd())\nprint(os.environ['TMPDIR'])\n"
    code += "print(tempfile.gettempdir())\nprint(os.path.abspath(sys.argv[0]))\n"
    code += "print(open('package.json').read())"
    result = run("python", code)
    cwd, tmpdir, gettempdir, script, package = result.stdout.splitlines()
    assert Path(cwd).resolve() == project
    assert package == '{"name": "demo"}'
    tmp = Path(tmpdir).resolve()
    assert tmp == Path(gettempdir).resolve() == Path(script).resolve().parent
    assert tmp.name.startswith(".ctx-mode-")
    assert project not in tmp.parents and tmp != project
    assert not tmp.exists()


@needs("node")
def test_javascript_runs_in_the_project(run, project):
    (project / "package.json").write_text('{"name": "demo"}', encoding="utf-8")
    code = "const fs = require('fs');\nconsole.log(process.cwd());\n"
    code += "console.log(JSON.parse(fs.readFileSync('package.json', 'utf8')).name);"
    result = run("javascript", code)
    assert result.exit_code == 0, result.stderr
    cwd, name = result.stdout.splitlines()
    assert Path(cwd).resolve() == project
    assert name == "demo"


@needs("perl")
def test_perl_runs_in_the_project(run, project):
    result = run("perl", 'use Cwd; print getcwd(), "\\n";')
    assert Path(result.stdout.strip()).resolve() == project


def test_shell_runs_in_the_project_root_with_tmpdir_outside_it(run, project):
    result = run("shell", 'pwd -P\necho "$TMPDIR"\ntouch "$TMPDIR/scratch" && echo wrote')
    cwd, tmpdir, wrote = result.stdout.splitlines()
    assert Path(cwd) == project
    assert wrote == "wrote"
    tmp = Path(tmpdir).resolve()
    assert tmp != project and project not in tmp.parents
    assert not tmp.exists()


def test_tmpdir_pointing_into_the_project_is_not_used_for_the_sandbox(run, project, monkeypatch):
    inside = project / "tmp"
    inside.mkdir()
    monkeypatch.setenv("TMPDIR", str(inside))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    result = run("python", "import os\nprint(os.environ['TMPDIR'])")
    tmp = Path(result.stdout.strip()).resolve()
    assert project not in tmp.parents
    assert list(inside.iterdir()) == []


def test_stdin_is_closed(run):
    result = run("python", "import sys\nprint(repr(sys.stdin.read()))")
    assert result.stdout == "''\n"


def test_non_ascii_output_round_trips(run):
    result = run("python", "print('héllo wörld ✓ 日本語 🎉')")
    assert result.stdout == "héllo wörld ✓ 日本語 🎉\n"


def test_invalid_utf8_output_is_replaced_not_fatal(run):
    result = run("python", "import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe end\\n')")
    assert result.stdout.startswith("ok ") and result.stdout.endswith(" end\n")
    assert "\ufffd" in result.stdout


# ------------------------------------------------------------------ which python


@pytest.fixture(scope="module")
def venv_project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("venvproj").resolve()
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")],
        check=True,
        capture_output=True,
    )
    return root


def test_python_uses_the_projects_own_venv(run, venv_project, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    result = run(
        "python", "import sys\nprint(sys.executable)\nprint(sys.prefix)", project_dir=venv_project
    )
    executable, prefix = result.stdout.splitlines()
    assert Path(executable) == venv_project / ".venv" / "bin" / "python"
    assert Path(prefix).resolve() == (venv_project / ".venv").resolve()
    assert ".venv" in result.runtime


def test_python_without_a_project_venv_uses_ctxmodes_interpreter(run, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    result = run("python", "import sys\nprint(sys.executable)")
    assert result.stdout.strip() == sys.executable


def test_python_uses_an_active_virtual_env(run, venv_project, monkeypatch):
    monkeypatch.setenv("VIRTUAL_ENV", str(venv_project / ".venv"))
    result = run("python", "import sys\nprint(sys.executable)")
    assert Path(result.stdout.strip()) == venv_project / ".venv" / "bin" / "python"

"""Opt-in bubblewrap confinement: project writable, the rest read-only, no network unless
allowed; a plain refusal where confinement is unavailable."""

import json
import os
import socket
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ctxmode.errors import EnvironmentProblem
from ctxmode.executor import isolate

from .procs import survivors, wait_for_file, zombies


def _probe() -> str | None:
    problem = isolate.isolation_problem()
    isolate.isolation_problem.cache_clear()
    return problem


_PROBLEM = _probe()
needs_isolation = pytest.mark.skipif(
    _PROBLEM is not None, reason=f"isolation unavailable: {_PROBLEM}"
)

WRITE = """
import errno, sys
target = {target!r}
try:
    with open(target, "w") as handle:
        handle.write("written")
except OSError as exc:
    print("FAILED", errno.errorcode.get(exc.errno, exc.errno))
else:
    print("WROTE")
"""


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A writable directory on the real root file system, outside the project and outside
    the run's own temp directory (both of which the sandbox leaves writable)."""
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else str(Path.home())
    path = Path(tempfile.mkdtemp(prefix="ctxmode-isolate-", dir=base))
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


@needs_isolation
def test_write_outside_the_project_fails_read_only(run, outside_dir):
    target = outside_dir / "escape.txt"
    result = run("python", WRITE.format(target=str(target)), isolate=True)
    assert result.isolated is True
    assert result.stdout == "FAILED EROFS\n", result.stderr
    assert not target.exists()


@needs_isolation
def test_same_write_succeeds_without_isolation(run, outside_dir):
    target = outside_dir / "escape.txt"
    result = run("python", WRITE.format(target=str(target)), isolate=False)
    assert result.isolated is False
    assert result.stdout == "WROTE\n"
    assert target.read_text() == "written"


@needs_isolation
def test_write_inside_the_project_succeeds(run, project):
    target = project / "inside.txt"
    result = run("python", WRITE.format(target=str(target)), isolate=True)
    assert result.stdout == "WROTE\n", result.stderr
    assert target.read_text() == "written"


@needs_isolation
def test_shell_runs_confined_in_the_project_root(run, project, outside_dir):
    code = f'pwd -P\necho made > here.txt\necho made > "{outside_dir}/x.txt" || echo refused'
    result = run("shell", code, isolate=True)
    lines = result.stdout.splitlines()
    assert lines[0] == str(project)
    assert lines[-1] == "refused"
    assert (project / "here.txt").read_text() == "made\n"
    assert not (outside_dir / "x.txt").exists()


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


CONNECT = """
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
except OSError as exc:
    print("NO NETWORK", type(exc).__name__)
else:
    print("CONNECTED")
"""


@needs_isolation
def test_no_network_cannot_reach_a_listener_on_the_host(run, listener):
    result = run("python", CONNECT.format(port=listener), isolate=True, network=False)
    assert result.stdout.startswith("NO NETWORK"), result.stdout + result.stderr


@needs_isolation
def test_network_allowed_reaches_the_same_listener(run, listener):
    result = run("python", CONNECT.format(port=listener), isolate=True, network=True)
    assert result.stdout == "CONNECTED\n", result.stderr


@needs_isolation
def test_isolate_comes_from_the_environment_when_not_given(run, outside_dir, monkeypatch):
    monkeypatch.setenv("CTXMODE_ISOLATE", "1")
    target = outside_dir / "escape.txt"
    result = run("python", WRITE.format(target=str(target)), isolate=None)
    assert result.isolated is True
    assert result.stdout == "FAILED EROFS\n"


@needs_isolation
def test_confined_run_is_still_killed_whole_on_timeout(run, project, reaper):
    # Pids inside the sandbox are namespaced, so the host finds the grandchild by a unique
    # argument instead.
    token = f"300.{uuid.uuid4().int % 10**9:09d}"
    code = f"sleep {token} &\necho $! > pids\nwhile :; do sleep 1; done"
    outcome = {}
    worker = threading.Thread(
        target=lambda: outcome.update(result=run("shell", code, isolate=True, timeout_ms=4000))
    )
    worker.start()
    try:
        wait_for_file(project / "pids")
        found = [
            p.pid for p in psutil.process_iter(["cmdline"]) if token in (p.info["cmdline"] or [])
        ]
        reaper(found)
    finally:
        worker.join(30)
    assert found, "the confined grandchild was not visible on the host"
    assert outcome["result"].timed_out is True
    assert survivors(found) == []


def test_isolate_without_bubblewrap_refuses_plainly(run, empty_path):
    with pytest.raises(EnvironmentProblem) as caught:
        run("python", "print('must not run unconfined')", isolate=True)
    message = str(caught.value)
    assert "bubblewrap" in message
    assert "install" in message


def test_isolate_refusal_runs_nothing(run, project, empty_path):
    with pytest.raises(EnvironmentProblem):
        run("python", f"open({str(project / 'ran')!r}, 'w').close()", isolate=True)
    assert not (project / "ran").exists()


@needs_isolation
def test_network_is_off_by_default_under_isolation(run, listener):
    result = run("python", CONNECT.format(port=listener), isolate=True)
    assert result.stdout.startswith("NO NETWORK"), result.stdout + result.stderr


@needs_isolation
def test_the_network_setting_lets_a_confined_run_connect(run, listener, monkeypatch):
    monkeypatch.setenv("CTXMODE_ISOLATE_NETWORK", "1")
    result = run("python", CONNECT.format(port=listener), isolate=True)
    assert result.stdout == "CONNECTED\n", result.stderr
    refused = run("python", CONNECT.format(port=listener), isolate=True, network=False)
    assert refused.stdout.startswith("NO NETWORK")


# ------------------------------------------------------------ Read deny rules, masked


@pytest.fixture
def guarded(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project with a secret file, a secret directory, a nested .env, an ordinary
    file, and Read deny rules on the secrets; HOME of its own (no user rules)."""
    from ctxmode.security import clear_cache

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (project / ".env").write_text("API_KEY=hunter2\n", encoding="utf-8")
    (project / "secrets").mkdir()
    (project / "secrets" / "key.txt").write_text("s3cr3t\n", encoding="utf-8")
    (project / "pkg").mkdir()
    (project / "pkg" / ".env").write_text("NESTED=hunter3\n", encoding="utf-8")
    (project / "README.md").write_text("readable\n", encoding="utf-8")
    rules = ["Read(.env)", "Read(./secrets/**)", "Read(**/.env)"]
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": rules}}), encoding="utf-8")
    clear_cache()
    yield project
    clear_cache()


@needs_isolation
def test_a_denied_file_reads_as_empty_and_an_allowed_one_as_itself(run, guarded):
    code = "cat .env; echo rc=$?; cat pkg/.env; cat README.md"
    result = run("shell", code, isolate=True)
    assert result.stdout == "rc=0\nreadable\n", result.stderr
    assert "hunter" not in result.stdout + result.stderr


@needs_isolation
def test_a_denied_directory_is_empty_and_read_only(run, guarded):
    code = "ls -A secrets | wc -l; cat secrets/key.txt; echo x > secrets/new || echo refused"
    result = run("shell", code, isolate=True)
    assert result.stdout.splitlines() == ["0", "refused"], result.stderr
    assert "s3cr3t" not in result.stdout
    assert not (guarded / "secrets" / "new").exists()


@needs_isolation
def test_python_sees_the_masks_too_and_a_write_does_not_reach_the_file(run, guarded):
    code = (
        f"path = {str(guarded / '.env')!r}\n"
        "print(repr(open(path).read()))\n"
        "open(path, 'w').write('overwritten')\n"
    )
    result = run("python", code, isolate=True)
    assert result.stdout == "''\n", result.stderr
    assert (guarded / ".env").read_text(encoding="utf-8") == "API_KEY=hunter2\n"


@needs_isolation
def test_the_same_reads_without_isolation_see_the_secret(run, guarded):
    # What the text checks in front of the executor are for: the executor alone hides nothing.
    result = run("shell", "cat .env", isolate=False)
    assert result.stdout == "API_KEY=hunter2\n"


@needs_isolation
def test_a_confined_run_cannot_rewrite_the_rules(run, guarded):
    settings = guarded / ".claude" / "settings.json"
    before = settings.read_text(encoding="utf-8")
    result = run("shell", "echo '{}' > .claude/settings.json || echo refused", isolate=True)
    assert result.stdout == "refused\n", result.stderr
    assert settings.read_text(encoding="utf-8") == before


@needs_isolation
def test_a_symlink_to_a_denied_file_reads_as_empty(run, guarded):
    os.symlink(guarded / ".env", guarded / "innocent.txt")
    result = run("shell", "cat innocent.txt; echo end", isolate=True)
    assert result.stdout == "end\n", result.stderr


@needs_isolation
def test_a_denied_parent_of_the_project_hides_the_rest_but_not_the_project(
    run, project, tmp_path, monkeypatch
):
    from ctxmode.security import clear_cache

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "sibling.txt").write_text("next door\n", encoding="utf-8")
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    rules = {"permissions": {"deny": [f"Read(/{tmp_path}/**)"]}}
    settings.write_text(json.dumps(rules), encoding="utf-8")
    clear_cache()
    code = f"cat {tmp_path / 'sibling.txt'} || echo hidden\necho made > here.txt && cat here.txt"
    result = run("shell", code, isolate=True)
    assert result.stdout == "hidden\nmade\n", result.stderr
    assert (project / "here.txt").read_text(encoding="utf-8") == "made\n"


@needs_isolation
def test_the_settings_folder_cannot_be_renamed_replaced_or_added_to(run, guarded):
    """`mv .claude .claude_old && mkdir .claude && echo '{}' > .claude/settings.json` left
    the next run without its rules; settings.local.json could be created with the host's
    bypassPermissions."""
    code = (
        "mv .claude .claude_old || echo no-rename\n"
        "echo '{}' > .claude/settings.local.json || echo no-create\n"
        "rm .claude/settings.json || echo no-remove\n"
    )
    result = run("shell", code, isolate=True)
    assert result.stdout == "no-rename\nno-create\nno-remove\n", result.stderr
    assert sorted(p.name for p in (guarded / ".claude").iterdir()) == ["settings.json"]
    assert not (guarded / ".claude_old").exists()


@needs_isolation
def test_a_missing_settings_folder_cannot_be_created_and_is_not_left_behind(run, project):
    code = "mkdir -p .claude && echo '{}' > .claude/settings.local.json && echo created"
    result = run("shell", code, isolate=True)
    assert "created" not in result.stdout
    assert not (project / ".claude").exists()  # the run's mount point, removed


@needs_isolation
def test_a_confined_run_cannot_plant_what_the_hosts_git_runs_unconfined(run, project):
    """A hook or a core.fsmonitor written inside the sandbox would run, outside it, at the
    host's next git command. Commits still work inside."""
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".git" / "hooks").mkdir(exist_ok=True)
    (project / "a.txt").write_text("a\n", encoding="utf-8")
    code = (
        "echo 'touch pwned' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"
        " || echo no-hook\n"
        "git config core.fsmonitor 'touch pwned' 2>/dev/null || echo no-config\n"
        "mv .git/config .git/config.old 2>/dev/null || echo no-rename\n"
        "mv .git/hooks .git/hooks.old 2>/dev/null || echo no-move\n"
        "git add a.txt && git -c user.email=t@t -c user.name=t commit -qm a && echo committed\n"
    )
    result = run("shell", code, isolate=True)
    assert result.stdout.splitlines()[:4] == ["no-hook", "no-config", "no-rename", "no-move"]
    assert "committed" in result.stdout, result.stdout + result.stderr
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert "fsmonitor" not in (project / ".git" / "config").read_text(encoding="utf-8")


@needs_isolation
def test_a_host_unix_socket_cannot_be_reached(run, monkeypatch):
    """The read-only file system still let a confined run connect to the host's sockets
    (a Docker daemon is root on the host)."""
    runtime = Path(tempfile.mkdtemp(prefix="ctxmode-run-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))  # a session's socket folder
    path = runtime / "host.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    try:
        code = (
            "import socket\nc = socket.socket(socket.AF_UNIX)\n"
            f"try:\n    c.connect({str(path)!r})\n    print('CONNECTED')\n"
            "except OSError as exc:\n    print('REFUSED', type(exc).__name__)\n"
        )
        result = run("python", code, isolate=True, network=True)
        assert result.stdout.startswith("REFUSED"), result.stdout + result.stderr
    finally:
        server.close()
        path.unlink()
        path.parent.rmdir()


@needs_isolation
def test_ctxmode_s_own_data_is_hidden_from_a_confined_run(run, tmp_path, monkeypatch):
    data = tmp_path / "ctxdata"
    (data / "content").mkdir(parents=True)
    (data / "content" / "other-project.db").write_text("someone else's knowledge\n")
    monkeypatch.setenv("CTXMODE_DIR", str(data))
    result = run("shell", f"cat {data}/content/other-project.db || echo hidden", isolate=True)
    assert result.stdout == "hidden\n"


@needs_isolation
def test_isolated_runs_leave_no_defunct_bwrap(run):
    """Each confined run left its bwrap a zombie of the server until the server exited."""
    before = set(zombies())  # other tests' children are not this one's business
    for n in range(8):  # bubblewrap's inner process outlives ours by a moment, at times
        assert run("shell", f"echo {n}", isolate=True).stdout == f"{n}\n"
        assert set(zombies()) - before == set(), f"after run {n}"

"""Server readiness from the real markers servers publish (`ctxmode.readiness`)."""

import subprocess
import sys

from ctxmode.readiness import markers_dir, write_marker

from .support import by_name, doctor_json


def test_no_server_warns(project, capsys):
    code, data = doctor_json(capsys)
    server = by_name(data)["server"]
    assert server["status"] == "WARN"
    assert server["detail"] == (
        "no ctxmode server running (hooks won't redirect to ctx_* tools until the agent starts one)"
    )
    assert code == 0


def test_a_server_of_this_project_is_ok(project, data_root, capsys):
    write_marker(data_root, project)  # this test process stands in for a live server
    _, data = doctor_json(capsys)
    assert by_name(data)["server"] == {
        "name": "server",
        "status": "OK",
        "detail": "1 server running for this project",
        "fix": None,
    }


def test_only_other_projects_servers_warn(project, data_root, tmp_path, capsys):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        folder = markers_dir(data_root)
        folder.mkdir(parents=True)
        body = f'{{"pid": {other.pid}, "project_dir": "{tmp_path / "elsewhere"}"}}'
        (folder / f"{other.pid}.json").write_text(body, encoding="utf-8")
        _, data = doctor_json(capsys)
        server = by_name(data)["server"]
        assert server["status"] == "WARN"
        assert "(1 for other projects)" in server["detail"]

        write_marker(data_root, project)
        _, data = doctor_json(capsys)
        assert by_name(data)["server"]["detail"] == (
            "1 server running for this project (1 for other projects)"
        )
    finally:
        other.kill()
        other.wait()


def test_a_stale_marker_is_not_a_running_server(project, data_root, capsys):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    folder = markers_dir(data_root)
    folder.mkdir(parents=True)
    (folder / f"{dead.pid}.json").write_text(
        f'{{"pid": {dead.pid}, "project_dir": "{project}"}}', encoding="utf-8"
    )
    _, data = doctor_json(capsys)
    assert by_name(data)["server"]["status"] == "WARN"

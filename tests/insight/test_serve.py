"""`ctxmode insight --serve` in a real process: loopback only, GET only, no CORS, live."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ctxmode import paths
from ctxmode.__main__ import main
from ctxmode.insight.serve import InsightServer, bind
from ctxmode.session.db import SessionDB
from ctxmode.session.where import session_db_path
from ctxmode.stats.model import Usage

from .support import CHARTS, fill

STARTUP_S = 30


class Served:
    def __init__(self, proc: subprocess.Popen[str], url: str) -> None:
        self.proc, self.url = proc, url

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].rstrip("/"))


def _first_line(proc: subprocess.Popen[str]) -> str:
    """The server's first stdout line, without hanging the test if it never comes."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(STARTUP_S)
    if not lines or not lines[0]:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"the server did not start: {err}")
    return lines[0]


@pytest.fixture
def served(project: Path, home: Path) -> Iterator[Served]:
    fill(project, home)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxmode", "insight", "--serve", "--port", "0", "--no-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=env,
    )
    try:
        line = _first_line(proc)
        url = line.split(" at ", 1)[1].split()[0]
        yield Served(proc, url)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def _request(url: str, method: str = "GET", headers: dict[str, str] | None = None):
    """Status, headers and body of a request; HTTP errors are answers too."""
    req = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as reply:
            return reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.headers, exc.read()


def test_get_serves_the_page_and_the_data(served):
    status, headers, body = _request(served.url)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    html = body.decode("utf-8")
    assert all(f'data-chart="{name}"' in html for name in CHARTS)
    status, headers, body = _request(served.url + "data.json?x=1")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert json.loads(body)["totals"]["calls"] == 6
    assert "Access-Control-Allow-Origin" not in headers


def test_the_page_is_regenerated_on_each_request(served, project):
    with SessionDB(session_db_path(project, paths.data_root())) as sdb:
        sdb.add_usage("s3", "ctx_fetch_and_index", Usage(calls=1, returned=10, sandboxed=5000))
    _, _, body = _request(served.url + "data.json")
    assert "ctx_fetch_and_index" in {t["tool"] for t in json.loads(body)["by_tool"]}


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "BREW"])
def test_only_get_is_answered(served, method):
    status, headers, _ = _request(served.url, method)
    assert status == 405 and headers["Allow"] == "GET"
    assert not [h for h in headers if h.lower().startswith("access-control-")]


def test_unknown_paths_and_foreign_hosts_are_refused(served):
    assert _request(served.url + "index.html")[0] == 404
    assert _request(served.url + "../etc/passwd")[0] == 404
    status, headers, _ = _request(served.url, headers={"Host": "attacker.example"})
    assert status == 403 and "Access-Control-Allow-Origin" not in headers
    local = f"localhost:{served.port}"
    assert _request(served.url, headers={"Host": local})[0] == 200


def test_the_socket_is_bound_to_loopback_only(served):
    child = psutil.Process(served.proc.pid)
    sockets = child.net_connections if hasattr(child, "net_connections") else child.connections
    listening = [c for c in sockets(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert [(c.laddr.ip, c.laddr.port) for c in listening] == [("127.0.0.1", served.port)]
    outside = _outside_address()
    if outside is None:
        return  # no non-loopback interface here; the listen address above is the proof
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(3)
        assert probe.connect_ex((outside, served.port)) != 0


def _outside_address() -> str | None:
    for addrs in psutil.net_if_addrs().values():
        for addr in addrs:
            if addr.family == socket.AF_INET and not addr.address.startswith("127."):
                return str(addr.address)
    return None


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_ctrl_c_stops_it_cleanly(served):
    served.proc.send_signal(signal.SIGINT)
    out, err = served.proc.communicate(timeout=15)
    assert served.proc.returncode == 0
    assert "stopped" in err and "Traceback" not in err


def test_a_port_in_use_is_an_environment_problem(project, capsys):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert main(["insight", "--serve", "--port", str(port), "--no-open"]) == 4
    err = capsys.readouterr().err
    assert f"port {port}" in err and "--port 0" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("platform", "reuse"), [("win32", False), ("linux", True), ("darwin", True)]
)
def test_address_reuse_is_never_asked_for_on_windows(platform, reuse):
    """SO_REUSEADDR restarts a server right after Ctrl+C on POSIX; on Windows it would let a
    second process bind a port that is already in use."""
    code = (
        f"import sys; sys.platform = {platform!r}\n"
        "from ctxmode.insight.serve import InsightServer\n"
        "print(InsightServer.allow_reuse_address, InsightServer.allow_reuse_port)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.split() == [str(reuse), "False"]


def test_the_socket_option_follows_the_class(project):
    server = bind(0, lambda: {})
    try:
        option = server.socket.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)
        assert bool(option) is InsightServer.allow_reuse_address
    finally:
        server.server_close()

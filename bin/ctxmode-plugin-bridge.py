"""The plugin's MCP server while ctxmode is still being installed (standard library only).

`bin/ctxmode-plugin serve` runs this with the system python3 when the plugin's environment
is not built yet. It answers ``initialize`` at once (so the host never times out waiting
for the server), offers no tools, and builds the environment in the background. Once the
build is done it starts the real ``ctxmode serve``, hands it the host's ``initialize``, tells
the host the tool list changed, and from then on only passes messages both ways. If the
build fails, requests get an error that points at the install log.

    python3 bin/ctxmode-plugin-bridge.py LAUNCHER VENV_PYTHON
"""

import json
import subprocess
import sys
import threading

PENDING = "ctxmode is still being installed for this plugin; its tools appear when it is done."


def send(out, lock, message):
    with lock:
        out.write((json.dumps(message) + "\n").encode())
        out.flush()


def main(argv):
    launcher, venv_python = argv[1], argv[2]
    out, lock = sys.stdout.buffer, threading.Lock()
    state = {"init": None, "child": None, "failed": False}
    done = threading.Event()
    build = subprocess.Popen(
        ["sh", launcher, "--install"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )

    def switch():
        state["failed"] = build.wait() != 0
        init = state["init"]
        if not state["failed"] and init is not None:
            child = subprocess.Popen(
                [venv_python, "-m", "ctxmode", "serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            child.stdin.write((json.dumps({**init, "id": "bridge-init"}) + "\n").encode())
            child.stdin.flush()
            child.stdout.readline()  # its initialize result: the host already has ours
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            child.stdin.write((json.dumps(note) + "\n").encode())
            child.stdin.flush()
            state["child"] = child
            threading.Thread(target=pump, args=(child,), daemon=True).start()
            changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            send(out, lock, changed)
        done.set()

    def pump(child):
        for line in child.stdout:
            with lock:
                out.write(line)
                out.flush()

    for raw in sys.stdin.buffer:
        child = state["child"]
        if child is not None:
            try:
                child.stdin.write(raw)
                child.stdin.flush()
            except OSError:
                break
            continue
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            state["init"] = message
            params = message.get("params") or {}
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "ctxmode", "version": "installing"},
                "instructions": PENDING,
            }
            send(out, lock, {"jsonrpc": "2.0", "id": ident, "result": result})
            threading.Thread(target=switch, daemon=True).start()
        elif ident is None:
            continue  # a notification
        elif method == "ping":
            send(out, lock, {"jsonrpc": "2.0", "id": ident, "result": {}})
        elif method == "tools/list" and not state["failed"]:
            send(out, lock, {"jsonrpc": "2.0", "id": ident, "result": {"tools": []}})
        else:
            text = PENDING if not state["failed"] else "ctxmode could not be installed"
            error = {"code": -32603, "message": text + " (see the plugin's install.log)"}
            send(out, lock, {"jsonrpc": "2.0", "id": ident, "error": error})
    child = state["child"]
    if child is not None:
        child.stdin.close()
        child.wait()
    elif build.poll() is None:
        pass  # the build goes on: the next session uses it
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

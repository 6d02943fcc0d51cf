"""Secrets never rest in plain text: a corpus of secret kinds goes through real ``ctxmode
hook claude-code …`` subprocesses (redirected commands, recorded commands, a TodoWrite
list, a failed run) and through a real ``ctxmode serve`` (a refused JSON-RPC line), and
then no byte of any secret may be found anywhere under the data folder: the session
database, its WAL, marker files, stats, logs."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

# (what the agent ran or wrote, the secret in it)
CORPUS = [
    ('curl -H "Authorization: token ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" https://api.github.com',
     "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("curl -u alice:Hunter2-Secret-Pw https://x.example.test", "Hunter2-Secret-Pw"),
    ("git clone https://bob:S3cr3tGitPass@git.example.test/r.git", "S3cr3tGitPass"),
    ("./deploy --password=Sup3rDeployS3cret", "Sup3rDeployS3cret"),
    ('curl -H "X-Api-Key: apikey-value-77xq91" https://x.example.test', "apikey-value-77xq91"),
    ("curl 'https://x.example.test/v1?access_token=querytok3n998877&q=1'", "querytok3n998877"),
    ("mysql -u root -pMyDbPassw0rd99 prod", "MyDbPassw0rd99"),
    ("sshpass -p Pl4inSshPassw0rd ssh deploy@host", "Pl4inSshPassw0rd"),
    ("export DB_PASS=hunter22dbpass", "hunter22dbpass"),
    ("psql postgresql://app:pgPassw0rd123@db:5432/app", "pgPassw0rd123"),
    ("docker login -p MyD0ckerHubPw -u me", "MyD0ckerHubPw"),
    ("aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("redis-cli -a R3disAuthPassw0rd ping", "R3disAuthPassw0rd"),
    ("openssl enc -aes256 -k Opens5lPassphrase -in f", "Opens5lPassphrase"),
    ("curl --oauth2-bearer oauthBearerTok3n12345 https://x.example.test", "oauthBearerTok3n12345"),
    ("echo sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA987654 | tool",
     "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA987654"),
    ("SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx run",
     "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("npm config set //registry.npmjs.org/:_authToken npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
     "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ('curl -H "Cookie: session=c00kieSess10nValue" https://x.example.test', "c00kieSess10nValue"),
    ("STRIPE_KEY=sk_live_51AbCdEfGhIjKlMnOpQrSt ./charge", "sk_live_51AbCdEfGhIjKlMnOpQrSt"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
     "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV"),
    # A second look: run-together names, empty URL users, attached and piped passwords,
    # positional ones, and more providers' token shapes.
    ("PGPASSWORD=PgRunT0gether psql -h db", "PgRunT0gether"),
    ("redis-cli -u redis://:EmptyUs3rPw@cache:6379 ping", "EmptyUs3rPw"),
    ("sshpass -pAttach3dSshPw ssh deploy@host", "Attach3dSshPw"),
    ("echo Pip3dD0ckerPw | docker login --password-stdin -u me", "Pip3dD0ckerPw"),
    ("htpasswd -b .htpasswd bob Htpassw0rdPositional", "Htpassw0rdPositional"),
    ("vault login s.VaultLeg4cyT0kenAbCdEf", "s.VaultLeg4cyT0kenAbCdEf"),
    ("HF=hf_HuggingFaceT0kenAbCdEfGhIjKlMnOpQr ./train", "hf_HuggingFaceT0kenAbCdEfGhIjKlMnOpQr"),
    ("twine upload -p pypi-AgEIcHlwaS5vcmcUploadT0kenAbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
     "pypi-AgEIcHlwaS5vcmcUploadT0kenAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ("curl -u api:key-0123456789abcdef0123456789abcd99 https://api.mailgun.net",
     "key-0123456789abcdef0123456789abcd99"),
    ("doctl auth init -t dop_v1_" + "0123456789abcdef" * 3 + "00112233aabbccdd",
     "dop_v1_" + "0123456789abcdef" * 3 + "00112233aabbccdd"),
]  # fmt: skip
TODO_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYTODOSECRET"
SESSION = "7a1c0f3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b"


def test_the_corpus_is_large_enough():
    assert len(CORPUS) >= 20
    assert len({secret for _, secret in CORPUS}) == len(CORPUS)


def _hook(env: dict[str, str], project: Path, event: str, payload: dict) -> None:
    stdin = {"session_id": SESSION, "cwd": str(project), **payload}
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmode", "hook", "claude-code", event],
        input=json.dumps(stdin).encode(),
        capture_output=True,
        env=env,
        cwd=project,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()


def _everything_under(root: Path) -> bytes:
    out = b""
    for path in root.rglob("*"):
        if path.is_file():
            out += path.read_bytes()
    return out


@pytest.fixture
def env_and_project(tmp_path):
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / ".git").mkdir()
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    data = tmp_path / "data"
    drop = ("CLAUDE", "CTXMODE_", "CODEX_", "GEMINI_", "XDG_", "CONTEXT_MODE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env |= {"HOME": str(home), "CTXMODE_DIR": str(data), "CLAUDE_PROJECT_DIR": str(project)}
    return env, project, data


def test_no_secret_of_the_corpus_rests_under_the_data_folder(env_and_project):
    env, project, data = env_and_project
    # A ready server: the pre-tool hook redirects curl and friends, and notes it on disk.
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"ctxmode": {"command": "ctxmode", "args": ["serve"]}}})
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "ctxmode", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=project,
    )
    try:
        deadline = time.monotonic() + 60  # generous: a hang check, not a speed bound
        while not list((data / "servers").glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        _run_the_corpus(env, project)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(60)
    stored = _everything_under(data)
    assert stored  # the hooks did write
    assert b"redirect" in stored or b"bash_redirected" in stored  # the redirect path ran
    leaked = [s for _, s in CORPUS if s.encode() in stored]
    assert leaked == []
    assert TODO_SECRET.encode() not in stored


def _run_the_corpus(env: dict[str, str], project: Path) -> None:
    _hook(env, project, "sessionstart", {"hook_event_name": "SessionStart", "source": "startup"})
    for command, _ in CORPUS:
        _hook(env, project, "pretooluse", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                                           "tool_input": {"command": command}})  # fmt: skip
        _hook(env, project, "posttooluse", {"hook_event_name": "PostToolUse", "tool_name": "Bash",
              "tool_input": {"command": command},
              "tool_response": {"stdout": "done", "stderr": "", "interrupted": False}})  # fmt: skip
    for command, _ in CORPUS:  # failed runs keep their command and output's telling lines
        _hook(env, project, "posttoolusefailure", {"hook_event_name": "PostToolUseFailure",
              "tool_name": "Bash", "tool_input": {"command": command},
              "error": f"Exit code 1\nerror: {command} refused"})  # fmt: skip
    todos = [{"content": f"rotate the key {TODO_SECRET}", "status": "pending", "activeForm": "x"}]
    _hook(env, project, "posttooluse", {"hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
          "tool_input": {"todos": todos}, "tool_response": {"newTodos": todos}})  # fmt: skip
    _hook(env, project, "precompact", {"hook_event_name": "PreCompact", "trigger": "auto"})
    _hook(env, project, "sessionstart", {"hook_event_name": "SessionStart", "source": "compact"})


def test_a_refused_jsonrpc_line_is_logged_without_its_secret(env_and_project):
    env, project, data = env_and_project
    secret = "ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn"
    bad = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", '
        f'"arguments": {{"token": "{secret}"}}'
    )  # cut short: not JSON
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmode", "serve"],
        input=(bad + "\n").encode(),
        capture_output=True,
        env=env,
        cwd=project,
        timeout=60,
    )
    assert proc.returncode == 0
    assert b"Parse error" in proc.stdout or b"-32700" in proc.stdout
    logs = _everything_under(data)
    assert b"refused" in logs or b"answered" in logs  # the line was logged
    assert secret.encode() not in logs

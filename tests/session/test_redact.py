"""Secret redaction (ctxmode.session.redact): a table of what is masked and what is not."""

import json

import pytest

from ctxmode.session.redact import (
    REDACTED,
    is_secret_name,
    mask_exports,
    redact_text,
    redact_value,
)

GITHUB_PAT = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
OPENAI = "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

MASKED = [
    # (input, expected)
    ("export TOKEN=secret", "export TOKEN=***"),
    ("export GITHUB_TOKEN=abc123def456 && gh pr list", "export GITHUB_TOKEN=*** && gh pr list"),
    ("DB_PASSWORD=hunter2 ./run.sh", "DB_PASSWORD=*** ./run.sh"),
    ("PASSWORD=123456", "PASSWORD=***"),  # numbers are masked when the name is certain
    ('API_KEY="quoted value here"', 'API_KEY="***"'),
    ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key=***"),
    (
        "git clone https://alice:s3cr3t@example.com/repo.git",
        "git clone https://alice:***@example.com/repo.git",
    ),
    ("postgres://app:p%40ss@db:5432/app", "postgres://app:***@db:5432/app"),
    ("curl -H 'Authorization: Bearer abc.def.ghi123'", "curl -H 'Authorization: Bearer ***'"),
    ('"authorization": "Basic dXNlcjpwYXNz"', '"authorization": "Basic ***"'),
    ("token is Bearer abcdefghijklmnop", "token is Bearer ***"),
    (f"using {GITHUB_PAT} now", "using *** now"),
    (f"key {AWS_KEY} in config", "key *** in config"),
    (f"slack {SLACK}", "slack ***"),
    (f"OPENAI={OPENAI}", "OPENAI=***"),
    (f"jwt {JWT}", "jwt ***"),
    ("https://hooks.slack.com/services/T000/B000/XXXXXXXX", "***"),
    ('{"password": "hunter2", "user": "bob"}', '{"password": "***", "user": "bob"}'),
    ("client_secret: abc123xyz", "client_secret: ***"),
    ("mysql --password=hunter2 -u root", "mysql --password=*** -u root"),
    ("deploy --api-key sk_live_4eC39HqLyjWDarjtT1zdp7dc", "deploy --api-key ***"),
    (
        "https://api.example.com/v1?access_token=abcdef123456&page=2",
        "https://api.example.com/v1?access_token=***&page=2",
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "[REDACTED PRIVATE KEY]",
    ),
    ("keep <private>my diary</private> out", "keep [private] out"),
    # Kinds a second look found stored in plain text:
    ("PGPASSWORD=Pgs3cretValue psql -h db", "PGPASSWORD=*** psql -h db"),  # one-word names
    ("DBPASSWORD=1234", "DBPASSWORD=***"),
    ("export CSRFTOKEN=abc123def", "export CSRFTOKEN=***"),
    ("redis-cli -u redis://:R3disPw@cache:6379", "redis-cli -u redis://:***@cache:6379"),
    ("sshpass -pGluedS3cret ssh host", "sshpass -p*** ssh host"),  # attached to -p
    ("sshpass -pMyTokenSecret ssh host", "sshpass -p*** ssh host"),  # the next word stays
    (
        "echo D0ckerPw | docker login --password-stdin -u me",
        "echo *** | docker login --password-stdin -u me",
    ),
    (
        "printf '%s' 'Gh0Tok' | gh auth login --with-token",
        "printf '%s' '***' | gh auth login --with-token",
    ),
    ("htpasswd -b .htpasswd bob Htp4ssword", "htpasswd -b .htpasswd bob ***"),
    ("htpasswd -c -b /etc/pw bob Htp4ssword", "htpasswd -c -b /etc/pw bob ***"),
    ("vault login s.Abcdefghijklmnopqrstuvwx", "vault login ***"),
    ("hf " + "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "hf ***"),
    ("SG." + "AbCdEfGhIjKlMnOpQrStUv.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg", "***"),
    ("token " + "dapi0123456789abcdef0123456789abcdef", "token ***"),
    ("do " + "dop_v1_" + "0123456789abcdef" * 4, "do ***"),
    ("shop " + "shpat_0123456789abcdef0123456789abcdef", "shop ***"),
    (
        "twine upload -p "
        + "pypi-AgEIcHlwaS5vcmc"
        + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKl",
        "twine upload -p ***",
    ),
    ("mailgun " + "key-0123456789abcdef0123456789abcdef", "mailgun ***"),
    (
        "age " + "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHQQ",
        "age ***",
    ),
    ("VAULT " + "hvs.CAESIAbCdEfGhIjKlMnOpQrStUvWxYz0123", "VAULT ***"),
]

UNCHANGED = [
    "PORT=8080 npm start",
    "MAX_TOKENS=4096",
    "max_tokens: 4096",
    "--max-tokens 4096",
    "token_limit=128000",
    "TOKEN=$GITHUB_TOKEN make release",
    "export TOKEN=${SECRET_FROM_VAULT}",
    "password: <your password here>",
    "git commit -m 'bump version to 1.2.3'",
    "[main 3e9a1f2] fix(users): validate email before insert",
    "commit 3e9a1f2c4b5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f",
    "id 4f1c2b9e-8a7d-4e3b-9c61-2d5e7f0a1b3c",
    "1234567890123456789012345678901234567890",
    "3.14159 2.71828 -42 +7 1,000,000",
    "Exit code: 1",
    "timestamp 2026-05-14T09:27:58.201Z",
    "tokenizer=bpe",
    "auth_type: none",
    "the key is users.py",
    "ssh -p 2222 host",
    "ls -la --color=auto",
    "https://github.com/mksglu/context-mode/issues/413",
    "user@example.com wrote",
    "tel +1-555-0100",
    "from huggingface_hub import hf_hub_download",
    "a key-value store; the monkey-patched key-0 of the map",
    "vault login -method=userpass username=bob",
    "echo hello | tee out.txt",
    "htpasswd -v .htpasswd bob",
    "git config user.name bob",
    "PGHOST=db PGPORT=5432 psql",
    "bypass=1 compass=north",
    "",
]


@pytest.mark.parametrize(("text", "expected"), MASKED)
def test_secrets_are_masked(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize("text", UNCHANGED)
def test_ordinary_text_and_numbers_are_left_alone(text):
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "_"), MASKED)
def test_redacting_twice_changes_nothing(text, _):
    once = redact_text(text)
    assert redact_text(once) == once


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("password", True),
        ("apiKey", True),
        ("X-API-Key", True),
        ("access_token", True),
        ("refreshToken", True),
        ("client_secret", True),
        ("Set-Cookie", True),
        ("GITHUB_TOKEN", True),
        ("private_key", True),
        ("max_tokens", False),
        ("tokenizer", False),
        ("token_limit", False),
        ("key", False),
        ("monkey", False),
        ("password_file", False),
        ("author", False),
        ("PGPASSWORD", True),
        ("csrftoken", True),
        ("bypass", False),
        ("max_token_count", False),
    ],
)
def test_secret_names_are_judged_by_their_words(name, secret):
    assert is_secret_name(name) is secret


def test_structured_values_mask_secret_keys_at_any_depth():
    value = {
        "query": "users",
        "auth": {"apiKey": "k-123", "nested": [{"password": 1234}]},
        "headers": {"Authorization": "Bearer abcdefghijkl", "Accept": "json"},
        "max_tokens": 4096,
        "text": f"use {GITHUB_PAT}",
    }
    out = redact_value(value)
    assert out["query"] == "users"
    assert out["auth"] == REDACTED  # "auth" is itself a secret-looking key
    assert out["headers"]["Authorization"] == REDACTED
    assert out["headers"]["Accept"] == "json"
    assert out["max_tokens"] == 4096
    assert out["text"] == "use ***"
    assert value["max_tokens"] == 4096  # the input is not modified


def test_structured_values_survive_cycles():
    value: dict[str, object] = {"a": 1}
    value["self"] = value
    assert redact_value(value) == {"a": 1, "self": "[CIRCULAR]"}


def test_redacted_json_stays_json():
    text = json.dumps({"token": "abc", "nested": {"password": "x y z"}, "n": 5})
    assert json.loads(redact_text(text)) == {
        "token": "***",
        "nested": {"password": "***"},
        "n": 5,
    }


def test_every_export_of_an_env_command_is_masked_whatever_its_name():
    command = "export PATH=/opt/bin:$PATH && export FOO=bar; nvm use 20"
    assert mask_exports(command) == "export PATH=*** && export FOO=***; nvm use 20"

"""Secrets out of everything the session database stores, at capture time.

Two ways in:

* by *name*: a value stored under a secret-looking key, variable or flag (``password``,
  ``GITHUB_TOKEN``, ``--api-key``, ``"client_secret":``) is masked. Names are split into words
  (``apiKey`` → api, key) so ``max_tokens`` or ``tokenizer`` are not secrets; a run-together
  one counts by its ending (``PGPASSWORD``, ``CSRFTOKEN``);
* by *position*: the password options of programs (``mysql -pPW``, ``sshpass -p``,
  ``htpasswd -b FILE USER PW``, ``vault login TOKEN``, ``echo PW | docker login
  --password-stdin``);
* by *value*: credentials recognisable on their own (URL passwords, bearer tokens, AWS,
  GitHub, GitLab, Slack, OpenAI/Anthropic, Stripe, Google, npm, Hugging Face, SendGrid,
  Databricks, DigitalOcean, Shopify, PyPI, Mailgun, Vault and age keys, JWTs, private keys).

Guards against mangling ordinary text: numbers survive unless the name is unambiguous
(``PASSWORD=1234`` is masked, ``MAX_TOKENS=4096`` is not), and so do references to other
variables (``TOKEN=$GITHUB_TOKEN``), booleans and placeholders. Redacting twice changes
nothing. ``<private>…</private>`` spans are dropped entirely.
"""

import re
from functools import lru_cache

from ctxmode.lazyre import LazyPattern
from ctxmode.typenames import Any

MASK = "***"
REDACTED = "[REDACTED]"
CIRCULAR = "[CIRCULAR]"

_SECRET_WORDS = frozenset(
    {
        "token", "secret", "secrets", "password", "passwd", "pwd", "passphrase", "passcode",
        "auth", "authorization", "bearer", "cookie", "cookies", "credential", "credentials",
        "signature", "apikey", "privatekey", "secretkey", "accesskey", "authtoken",
        "accesstoken", "refreshtoken", "sessiontoken", "clientsecret", "xapikey", "pass",
    }
)  # fmt: skip
# "<word> key" pairs that name a secret (api key, private key, ...); "key" alone does not.
_KEY_QUALIFIERS = frozenset(
    {
        "api", "private", "access", "secret", "signing", "encryption", "master", "account",
        "session", "client", "license", "app", "service", "ssh", "deploy", "webhook",
    }
)  # fmt: skip
# Words that make a secret-looking name describe something else (a path, a count, a type).
_GUARD_WORDS = frozenset(
    {
        "file", "files", "path", "dir", "directory", "env", "name", "names", "length", "len",
        "limit", "limits", "count", "max", "min", "size", "type", "kind", "prompt", "budget",
        "usage", "used", "remaining", "field", "format", "expires", "expiry", "expiration",
        "ttl", "timeout", "hint", "policy", "strength", "required", "enabled", "reset",
        "endpoint", "uri", "url", "header", "scheme", "method", "mode", "store", "helper",
        "manager", "cmd", "command", "input", "stdin", "prefix", "tokens",
    }
)  # fmt: skip
# Names this certain are secrets even when their value is a number.
_STRONG_WORDS = frozenset({"password", "passwd", "pwd", "passphrase", "passcode", "secret"})
# Run-together names (PGPASSWORD, CSRFTOKEN) end with one of these.
_STRONG_ENDINGS = ("password", "passwd", "passphrase")
_SECRET_ENDINGS = ("secret", "token", "apikey")

_CAMEL_1 = LazyPattern(r"([a-z0-9])([A-Z])")
_CAMEL_2 = LazyPattern(r"([A-Z]+)([A-Z][a-z])")
_NON_ALNUM = LazyPattern(r"[^A-Za-z0-9]+")


@lru_cache(maxsize=512)
def _name_class(name: str) -> int:
    """0: not a secret name; 1: secret name; 2: secret name even for numeric values."""
    spaced = _CAMEL_2.sub(r"\1_\2", _CAMEL_1.sub(r"\1_\2", name))
    words = [w for w in _NON_ALNUM.split(spaced.lower()) if w]
    if not words or _GUARD_WORDS.intersection(words):
        return 0
    joined = "".join(words)
    if _STRONG_WORDS.intersection(words) or joined in _STRONG_WORDS:
        return 2
    if any(word.endswith(_STRONG_ENDINGS) for word in words):
        return 2
    if _SECRET_WORDS.intersection(words) or joined in _SECRET_WORDS:
        return 1
    if any(word.endswith(_SECRET_ENDINGS) for word in words):
        return 1
    for first, second in zip(words, words[1:], strict=False):
        if second == "key" and first in _KEY_QUALIFIERS:
            return 1
    return 0


def is_secret_name(name: str) -> bool:
    """Whether a key, variable or flag name says its value is a secret."""
    return _name_class(name) > 0


_NUMBER = LazyPattern(r"[+-]?\d+(?:[.,]\d+)*")
_BENIGN = LazyPattern(
    r"""(?ix) ^(?:
        \*{3} | \[REDACTED\] | \[private\]           # already masked
      | \$\{?[A-Za-z_][A-Za-z0-9_]*\}? | \$\(.*\)     # $VAR, ${VAR}, $(cmd)
      | %[A-Za-z_][A-Za-z0-9_]*%                     # %VAR%
      | \{\{.*\}\} | <[^<>]*> | \.\.\.|…             # templates and placeholders
      | true | false | yes | no | on | off | null | none | nil | undefined
      | bearer | basic | token | digest                # an auth scheme, its value follows
      | x+ | \*+ | -
    )$""",
)


def _benign(value: str, strength: int) -> bool:
    text = value.strip().strip("\"'").strip()
    if not text or MASK in text or REDACTED in text or text.startswith(("<", "{{")):
        return True  # empty, already masked, or a placeholder
    if _BENIGN.match(text):
        return True
    return strength < 2 and _NUMBER.fullmatch(text) is not None


def _quoted_mask(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return f"{value[0]}{MASK}{value[0]}"
    return MASK


# --------------------------------------------------------------------------- patterns

_PRIVATE_SPAN = LazyPattern(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)
_PRIVATE_KEY = LazyPattern(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.DOTALL
)
_URL_CREDENTIALS = LazyPattern(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^\s:/@'\"<>]*):([^\s@/'\"<>]+)@")
_AUTH_HEADER = LazyPattern(
    r"(?i)\b(authorization[\"']?\s*[:=]\s*[\"']?)((?:bearer|basic|token|digest)\s+)?"
    r"([^\s\"',;]+)"
)
_BEARER = LazyPattern(r"(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{8,})")
_TOKENS = LazyPattern(
    r"""\b(?:
        (?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}
      | gh[pousr]_[A-Za-z0-9]{30,}
      | github_pat_[A-Za-z0-9_]{30,}
      | glpat-[A-Za-z0-9_-]{20,}
      | xox[abposre]-[A-Za-z0-9-]{10,}
      | sk-(?:proj-|ant-(?:api\d\d-)?|live-)?[A-Za-z0-9_-]{20,}
      | (?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}
      | AIza[0-9A-Za-z_-]{35}
      | npm_[A-Za-z0-9]{36}
      | ya29\.[0-9A-Za-z_-]{20,}
      | eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}
      | hf_[A-Za-z0-9]{34,}
      | SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}
      | dapi[0-9a-f]{32}
      | do[opr]_v1_[0-9a-f]{64}
      | shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}
      | pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}
      | key-[0-9a-f]{32}
      | AGE-SECRET-KEY-1[0-9A-Z]{58}
      | hv[sbr]\.[A-Za-z0-9_-]{24,}
    )""",
    re.VERBOSE,
)
_TOKEN_HINTS = (
    "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "gh", "glpat-", "xox", "sk-", "sk_", "rk_",
    "AIza", "npm_", "ya29.", "eyJ", "hf_", "SG.", "dapi", "_v1_", "shp", "pypi-", "key-",
    "AGE-SECRET-KEY-", "hvs.", "hvb.", "hvr.",
)  # fmt: skip
_SLACK_WEBHOOK = LazyPattern(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")
# NAME=value (shell, .env files, URL query strings)
_ASSIGNMENT = LazyPattern(
    r"""(?<![\w$-])([A-Za-z_][A-Za-z0-9_.]*)=("[^"\n]*"|'[^'\n]*'|[^\s;&|)"',]+)"""
)
# "name": value  /  name: value  (JSON, YAML, headers)
_KEY_VALUE = LazyPattern(
    r"""(?<![\w-])(["']?)([A-Za-z_][A-Za-z0-9_.-]*)\1([ \t]*:[ \t]*)"""
    r"""("[^"\n]*"|'[^'\n]*'|[^\s,{}\[\]"']+)"""
)
# --flag value / --flag=value
_FLAG = LazyPattern(
    r"""(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)(=|[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s]+)"""
)
_EXPORT = LazyPattern(r"""\b(export\s+[A-Za-z_][A-Za-z0-9_]*=)("[^"\n]*"|'[^'\n]*'|[^\s;&|]*)""")
# Programs whose short options take a password (attached or as the next word), and curl's
# -u user:password. The value is masked; the program and the option stay readable.
_PASSWORD_OPTION = LazyPattern(
    r"""(?x)\b(
        (?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n;&|]*?\s-p
      | (?:sshpass|docker\s+login|podman\s+login|buildah\s+login|skopeo\s+login)\b[^\n;&|]*?\s-p\s*
      | redis-cli\b[^\n;&|]*?\s-a\s+
      | htpasswd(?:\s+-[A-Za-z]+)*?\s+-[A-Za-z]*b[A-Za-z]*(?:\s+-[A-Za-z]+)*  # -b: FILE USER PW
        \s+[^\s;&|]+\s+[^\s;&|]+\s+
      | vault\s+login\s+(?=[^\s=;&|]+(?:[\s;&|)]|$))
      | openssl\b[^\n;&|]*?\s(?:-k\s+|-pass\s+pass:)
      | (?:curl|wget)\b[^\n;&|]*?\s(?:-u\s*|--user[ =])[^\s:'"]+:
    )("[^"\n]*"|'[^'\n]*'|[^\s;&|)]+)"""
)
# `echo SECRET | docker login --password-stdin` (or `gh auth login --with-token`): what is
# echoed is the secret.
_PIPED_SECRET = LazyPattern(
    r"""(?x)\b((?:echo|printf)(?:\s+-[neE]+)*(?:\s+'%s'|\s+"%s"|\s+%s)?\s+)
    ("[^"\n]*"|'[^'\n]*'|[^\s|;&]+)
    (?=[ \t]*\|[^|;&\n]*\s--(?:password-stdin|with-token|token-stdin)\b)"""
)
_STDIN_FLAGS = ("--password-stdin", "--with-token", "--token-stdin")
# `git config`, `npm config set`, `aws configure set`, ... NAME VALUE, the name a secret's.
_CONFIG_SET = LazyPattern(
    r"""(?x)\b((?:config|configure)(?:\s+(?:set|--global|--local|--system|--add))*\s+)
    ([A-Za-z_][\w.:/-]*)(\s+)("[^"\n]*"|'[^'\n]*'|[^\s;&|]+)"""
)
# A bare 40-character secret (AWS's secret access key shape): upper, lower and digits mixed.
_BARE_SECRET = LazyPattern(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _assignment(match: re.Match[str]) -> str:
    name, value = match.group(1), match.group(2)
    strength = _name_class(name)
    if not strength or _benign(value, strength):
        return match.group(0)
    return f"{name}={_quoted_mask(value)}"


def _key_value(match: re.Match[str]) -> str:
    quote, name, sep, value = match.groups()
    strength = _name_class(name)
    if not strength or _benign(value, strength):
        return match.group(0)
    return f"{quote}{name}{quote}{sep}{_quoted_mask(value)}"


def _flag(match: re.Match[str]) -> str:
    flag, sep, value = match.groups()
    strength = _name_class(flag.lstrip("-"))
    if not strength or value.startswith("-") or _benign(value, strength):
        return match.group(0)
    return f"{flag}{sep}{_quoted_mask(value)}"


def _auth_header(match: re.Match[str]) -> str:
    prefix, scheme, value = match.group(1), match.group(2) or "", match.group(3)
    if _benign(value, 2) or value.lower() in ("bearer", "basic", "token", "digest"):
        return match.group(0)
    return f"{prefix}{scheme}{MASK}"


def _url_credentials(match: re.Match[str]) -> str:
    scheme, user, password = match.groups()
    if _benign(password, 2):
        return match.group(0)
    return f"{scheme}{user}:{MASK}@"


def _bearer(match: re.Match[str]) -> str:
    if match.group(3) == MASK:
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}{MASK}"


def _password_option(match: re.Match[str]) -> str:
    prefix, value = match.groups()
    if _benign(value, 2) or value.startswith("-"):
        return match.group(0)
    return f"{prefix}{_quoted_mask(value)}"


def _config_set(match: re.Match[str]) -> str:
    verb, name, space, value = match.groups()
    key = name.rsplit(".", 1)[-1].rsplit(":", 1)[-1].rsplit("/", 1)[-1]
    if not _name_class(key) or _benign(value, 2):
        return match.group(0)
    return f"{verb}{name}{space}{_quoted_mask(value)}"


def _bare_secret(match: re.Match[str]) -> str:
    word = match.group(0)
    mixed = (
        any(c.islower() for c in word)
        and any(c.isupper() for c in word)
        and any(c.isdigit() for c in word)
    )
    return MASK if mixed and len(set(word)) >= 20 else word


def redact_text(text: str) -> str:
    """`text` with secrets masked as ``***`` (idempotent)."""
    if not text:
        return text
    if "<" in text:
        text = _PRIVATE_SPAN.sub("[private]", text)
    if "PRIVATE KEY-----" in text:
        text = _PRIVATE_KEY.sub("[REDACTED PRIVATE KEY]", text)
    if "://" in text:
        text = _URL_CREDENTIALS.sub(_url_credentials, text)
        if "hooks.slack.com" in text:
            text = _SLACK_WEBHOOK.sub(MASK, text)
    # Cheap substring tests first: most text holds no secret, and a pattern compiles
    # only when something it could match is there.
    if any(hint in text for hint in _TOKEN_HINTS):
        text = _TOKENS.sub(MASK, text)
    lowered = text.lower()
    if "authorization" in lowered:
        text = _AUTH_HEADER.sub(_auth_header, text)
    if "bearer" in lowered or "basic" in lowered:
        text = _BEARER.sub(_bearer, text)
    if "=" in text:
        text = _ASSIGNMENT.sub(_assignment, text)
    if ":" in text:
        text = _KEY_VALUE.sub(_key_value, text)
    # Programs' own password options before flags: a password attached to ``-p`` must
    # not read as a flag's name (``-pMyTokenSecret`` would mask the word after it).
    if any(p in lowered for p in _PASSWORD_PROGRAMS):
        text = _PASSWORD_OPTION.sub(_password_option, text)
    if "-" in text:
        if any(f in lowered for f in _STDIN_FLAGS):
            text = _PIPED_SECRET.sub(_password_option, text)
        text = _FLAG.sub(_flag, text)
    if "config" in lowered:
        text = _CONFIG_SET.sub(_config_set, text)
    if len(text) >= 40:
        text = _BARE_SECRET.sub(_bare_secret, text)
    return text


_PASSWORD_PROGRAMS = (
    "mysql",
    "mariadb",
    "sshpass",
    "login",
    "redis-cli",
    "openssl",
    "curl",
    "wget",
    "htpasswd",
)


def mask_exports(command: str) -> str:
    """Every ``export NAME=value`` as ``export NAME=***`` (the env events of shell commands)."""
    return _EXPORT.sub(lambda m: m.group(1) + (MASK if m.group(2) else ""), command)


def redact_value(value: Any) -> Any:
    """A JSON-like value with secret-named keys as ``[REDACTED]`` and every string redacted."""
    return _redact(value, set())


def _redact(value: Any, seen: set[int]) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        if id(value) in seen:
            return CIRCULAR
        seen.add(id(value))
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and item is not None and is_secret_name(key):
                text = item if isinstance(item, str) else None
                benign = text is not None and _benign(text, 2)
                out[key] = item if benign else REDACTED
            else:
                out[key] = _redact(item, seen)
        seen.discard(id(value))
        return out
    if isinstance(value, list | tuple):
        if id(value) in seen:
            return CIRCULAR
        seen.add(id(value))
        items = [_redact(item, seen) for item in value]
        seen.discard(id(value))
        return items
    return value

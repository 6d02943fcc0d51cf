"""The environment and the temp directory a run starts with.

A run gets the environment ctxmode was started with, as the host's own shell tool does
(PATH, proxies, the tokens gh or npm read), minus: the variables that inject code into
interpreters and tools (`ENV_DENYLIST`), those ``CTXMODE_ENV_DROP`` names, and ctxmode's
own per-run variables inherited from an outer run (set afresh for this one).
"""

import os
import sys
import tempfile
import uuid
from fnmatch import fnmatchcase
from pathlib import Path

from ctxmode import settings
from ctxmode.executor.procs import RUN_ID_VAR, owner_env, workdir_prefix

FILE_PATH_VAR = "CTXMODE_FILE_PATH"

# Variables that let a parent inject code or change how interpreters and tools start.
ENV_DENYLIST = frozenset(
    """BASH_ENV ENV PROMPT_COMMAND PS4 SHELLOPTS BASHOPTS CDPATH INPUTRC BASH_XTRACEFD
    NODE_OPTIONS NODE_PATH PYTHONSTARTUP PYTHONHOME PYTHONWARNINGS PYTHONBREAKPOINT
    PYTHONINSPECT PYTHONPATH RUBYOPT RUBYLIB PERL5OPT PERL5LIB PERLLIB PERL5DB ERL_AFLAGS
    ERL_FLAGS ELIXIR_ERL_OPTIONS ERL_LIBS GOFLAGS CGO_CFLAGS CGO_LDFLAGS RUSTC RUSTC_WRAPPER
    RUSTC_WORKSPACE_WRAPPER CARGO_BUILD_RUSTC CARGO_BUILD_RUSTC_WRAPPER RUSTFLAGS PHPRC
    PHP_INI_SCAN_DIR R_PROFILE R_PROFILE_USER R_HOME DOTNET_STARTUP_HOOKS
    DOTNET_ADDITIONAL_DEPS DOTNET_SHARED_STORE DOTNET_ROOT DOTNET_ROOT(x86) DOTNET_HOST_PATH
    CORECLR_PROFILER CORECLR_PROFILER_PATH CORECLR_PROFILER_PATH_32 CORECLR_PROFILER_PATH_64
    CORECLR_PROFILER_PATH_ARM32 CORECLR_PROFILER_PATH_ARM64 CORECLR_ENABLE_PROFILING
    DOTNET_PROFILER_PATH DOTNET_PROFILER_PATH_32 DOTNET_PROFILER_PATH_64
    DOTNET_PROFILER_PATH_ARM32 DOTNET_PROFILER_PATH_ARM64 DOTNET_DiagnosticPorts
    DOTNET_BUNDLE_EXTRACT_BASE_DIR LD_PRELOAD LD_AUDIT DYLD_INSERT_LIBRARIES OPENSSL_CONF
    OPENSSL_ENGINES CC CXX AR GIT_TEMPLATE_DIR GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_EXEC_PATH
    GIT_SSH GIT_SSH_COMMAND GIT_ASKPASS""".split()
)
# ctxmode's own per-run variables: from an outer run they would mislead this one.
_PER_RUN = frozenset({FILE_PATH_VAR, RUN_ID_VAR, settings.RUN_OWNER.name})
_CA_BUNDLES = (
    "/etc/ssl/cert.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
)


def real_tmp(project_dir: Path | None) -> Path:
    """The OS temp dir, unless TMPDIR points into the project (then /tmp)."""
    tmp = Path(tempfile.gettempdir()).resolve()
    if project_dir is not None and (tmp == project_dir or project_dir in tmp.parents):
        fallback = Path("/tmp")
        return fallback if fallback.is_dir() else tmp
    return tmp


def make_workdir(project_dir: Path | None) -> Path:
    return Path(tempfile.mkdtemp(prefix=workdir_prefix(), dir=real_tmp(project_dir)))


def sandbox_env(workdir: Path, run_id: str, file_path: Path | None = None) -> dict[str, str]:
    """The parent environment minus injection vectors and the variables the user drops,
    plus the sandbox's own settings.

    Raises:
        UsageError: ``CTXMODE_ENV_DROP`` is set to a value that cannot be used.
    """
    settings.require_valid(settings.ENV_DROP)
    dropped = settings.env_drop()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ENV_DENYLIST
        and key not in _PER_RUN
        and not key.startswith("BASH_FUNC_")
        and not key.upper().startswith("COMPLUS_")
        and not (dropped and any(fnmatchcase(key, pattern) for pattern in dropped))
    }
    env.update(
        TMPDIR=str(workdir),
        TEMP=str(workdir),
        TMP=str(workdir),
        HOME=os.environ.get("HOME") or os.environ.get("USERPROFILE") or str(Path.home()),
        LANG=_utf8_locale(),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        PYTHONUTF8="1",
        PYTHONIOENCODING="utf-8",
        NO_COLOR="1",
    )
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if "SSL_CERT_FILE" not in env:
        bundle = next((p for p in _CA_BUNDLES if os.path.exists(p)), None)
        if bundle:
            env["SSL_CERT_FILE"] = bundle
    if "LC_ALL" in env and env["LC_ALL"] != env["LANG"]:
        del env["LC_ALL"]  # a non-UTF-8 LC_ALL would override LANG
    env[RUN_ID_VAR] = run_id
    env.update(owner_env())  # so the run dies with us, or with our data root's next server
    if file_path is not None:
        env[FILE_PATH_VAR] = str(file_path)
    return env


def _utf8_locale() -> str:
    """The caller's locale when it is UTF-8, else one every system has."""
    current = os.environ.get("LC_ALL") or os.environ.get("LANG") or ""
    if "utf-8" in current.lower() or "utf8" in current.lower():
        return current
    return "en_US.UTF-8" if sys.platform == "darwin" else "C.UTF-8"


def new_run_id() -> str:
    return uuid.uuid4().hex

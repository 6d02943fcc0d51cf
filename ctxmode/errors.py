"""Exit codes and the domain errors that map to them.

Core code raises a `CtxError` subclass; each front door maps it exactly once (the CLI to a
message and an exit code, the server to an error result, hooks to fail-open).
"""

from enum import IntEnum


class ExitCode(IntEnum):
    """Documented process exit codes (see `man ctxmode`, EXIT STATUS)."""

    OK = 0
    ERROR = 1
    USAGE = 2
    NOT_FOUND = 3
    ENVIRONMENT = 4
    DENIED = 5
    ASK = 6  # `policy check`: a rule says ask the user
    TIMEOUT = 124
    INTERRUPTED = 130


class CtxError(Exception):
    """Base class of errors shown to the user as-is."""

    exit_code: ExitCode = ExitCode.ERROR
    code: str = "error"


class UsageError(CtxError):
    """The request itself is wrong (bad argument, bad combination, home dir as project)."""

    exit_code = ExitCode.USAGE
    code = "usage"


class NotFoundError(CtxError):
    """A path, source or index the request names does not exist."""

    exit_code = ExitCode.NOT_FOUND
    code = "not_found"


class InputError(CtxError):
    """Input exists but cannot be used (binary, unreadable, not a regular file, too large)."""

    exit_code = ExitCode.ERROR
    code = "bad_input"


class StoreError(CtxError):
    """The knowledge base could not be read or written."""

    exit_code = ExitCode.ERROR
    code = "store"


class DiskFullError(StoreError):
    """A write was refused for want of room (a full disk or quota: ENOSPC, SQLITE_FULL)."""

    code = "disk_full"


class EnvironmentProblem(CtxError):
    """This machine lacks something ctxmode needs (FTS5 in SQLite, a runtime)."""

    exit_code = ExitCode.ENVIRONMENT
    code = "environment"


class PolicyDeniedError(CtxError):
    """A security rule denies the request."""

    exit_code = ExitCode.DENIED
    code = "denied"


class RuntimeMissingError(EnvironmentProblem):
    """No runtime for the requested language is installed."""

    code = "runtime_missing"

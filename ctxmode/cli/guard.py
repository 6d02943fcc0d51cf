"""The one place a command's errors become exit codes (Typer-free, so the fast paths of
`ctxmode.cli.fast` report errors exactly as the Typer app does)."""

from collections.abc import Callable

from ctxmode.cli import output
from ctxmode.errors import CtxError, ExitCode


def run(command: Callable[[], int]) -> int:
    """Run `command` and return its exit status; a domain error, an interruption or an
    unexpected refusal of the file system is reported on stderr (or as the JSON envelope)
    and becomes its documented exit code."""
    try:
        return command()
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except CtxError as exc:
        output.error(str(exc), exc.code, int(exc.exit_code))
        return int(exc.exit_code)
    except KeyboardInterrupt:
        output.error("interrupted", "interrupted", int(ExitCode.INTERRUPTED))
        return int(ExitCode.INTERRUPTED)
    except OSError as exc:  # the file system said no somewhere a command did not expect
        where = f": {exc.filename}" if exc.filename else ""
        output.error(f"{exc.strerror or exc}{where}", "os_error", int(ExitCode.ERROR))
        return int(ExitCode.ERROR)

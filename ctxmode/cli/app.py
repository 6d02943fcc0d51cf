"""The Typer application and the one place errors become exit codes."""

import typer

from ctxmode import __version__
from ctxmode.cli import output
from ctxmode.cli.commands import (
    doctor,
    execute,
    gc,
    hook,
    index,
    insight,
    policy,
    purge,
    search,
    serve,
    session,
    setup,
    sources,
    stats,
    upgrade,
)
from ctxmode.errors import CtxError, ExitCode

app = typer.Typer(
    name="ctxmode",
    help="Keep raw tool output out of your AI agent's context window: index, search, and more.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=True,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ctxmode {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """ctxmode: a local knowledge base and sandbox for AI coding agents."""


app.command()(index.index)
app.command()(search.search)
app.command()(sources.sources)
app.command("execute")(execute.execute_command)
app.command("execute-file")(execute.execute_file_command)
app.add_typer(policy.policy_app)
app.command()(serve.serve)
app.command()(hook.hook)
app.command("setup")(setup.setup)
app.command("uninstall")(setup.uninstall)
app.add_typer(session.session_app)
app.command()(stats.stats)
app.command()(stats.statusline)
app.command()(insight.insight)
app.command("purge")(purge.purge_command)
app.command("gc")(gc.gc)
app.command()(doctor.doctor)
app.command("upgrade")(upgrade.upgrade)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; map domain errors to their documented exit codes."""
    try:
        app(args=argv, prog_name="ctxmode")
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
    return 0

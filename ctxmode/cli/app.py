"""The Typer application and the one place errors become exit codes.

Commands are registered by name (`ctxmode.cli.registry`) and their modules imported only
when one is run, its help shown or its parameters completed: ``ctxmode stats`` does not
pay for the executor, ``ctxmode --help`` for no command module at all.
"""

import importlib
import os
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
from typer import _click
from typer.core import TyperCommand, TyperGroup

from ctxmode import __version__
from ctxmode.cli import guard
from ctxmode.cli.options import BareHelpGroup
from ctxmode.cli.registry import COMMANDS

COMPLETE_VAR = "_CTXMODE_COMPLETE"


class _Commands(MutableMapping[str, _click.Command]):
    """The group's commands: each built from its module on first use. While the group
    lists them (help, completing a name), a command not yet built is a stand-in that
    carries its name and summary only."""

    def __init__(self, group: "LazyGroup") -> None:
        self._group = group
        self._built: dict[str, _click.Command] = {}
        self._names = list(COMMANDS)
        self.listing = False

    def __getitem__(self, name: str) -> _click.Command:
        if name in self._built:
            return self._built[name]
        entry = COMMANDS[name]  # KeyError: no such command
        if self.listing:
            return TyperCommand(
                name=name, help=entry.summary, rich_markup_mode=self._group.rich_markup_mode
            )
        module = importlib.import_module(entry.module)
        target = getattr(module, entry.attr)
        if entry.group:
            command: _click.Command = typer.main.get_group(target)
        else:
            cls = getattr(module, entry.cls) if entry.cls else None
            command = typer.main.get_command_from_info(
                typer.models.CommandInfo(name=name, callback=target, cls=cls),
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=self._group.rich_markup_mode,
            )
        _reflow_help(command)
        self._built[name] = command
        return command

    def __setitem__(self, name: str, command: _click.Command) -> None:
        if name not in self._names:
            self._names.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._names.remove(name)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def reflow(text: str) -> str:
    """A docstring's prose paragraphs as one line each, for Rich to wrap at the terminal's
    width: it keeps every newline, so the source's own line breaks left a word or two
    alone on a line at 80 columns. `Example:` paragraphs and indented lines are kept as
    written, and so is what follows click's ``\\f`` cut."""
    head, cut, tail = text.partition("\f")
    paragraphs = []
    for block in head.split("\n\n"):
        lines = block.splitlines()
        if (
            len(lines) < 2
            or block.lstrip().startswith("Example")
            or any(line.startswith((" ", "\t")) for line in lines)
        ):
            paragraphs.append(block)
        else:
            paragraphs.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs) + cut + tail


def _reflow_help(command: _click.Command) -> None:
    """`reflow` the help of `command` and of the subcommands of a group."""
    if command.help:
        command.help = reflow(command.help)
    for sub in getattr(command, "commands", {}).values():
        _reflow_help(sub)


class LazyGroup(BareHelpGroup):
    """The root group: commands from the registry, built when first needed."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = self.lazy = _Commands(self)

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        self.lazy.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.lazy.listing = False

    def shell_complete(self, ctx: _click.Context, incomplete: str) -> list[Any]:
        self.lazy.listing = True
        try:
            return TyperGroup.shell_complete(self, ctx, incomplete)
        finally:
            self.lazy.listing = False


app = typer.Typer(
    name="ctxmode",
    cls=LazyGroup,
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


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; map domain errors to their documented exit codes."""
    args: list[str] | None = argv
    if argv is not None and not argv and COMPLETE_VAR not in os.environ:
        args = ["--help"]  # `ctxmode` alone: the help, on stdout, exit 0

    def run() -> int:
        app(args=args, prog_name="ctxmode")
        return 0

    return guard.run(run)

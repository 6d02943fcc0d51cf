"""Entry point. Standard library only: `ctxmode hook ...`, `ctxmode statusline`, a bare
`ctxmode serve`, and the plain forms of `--version`, `--help`, `search` and `execute`
(`ctxmode.cli.fast`) start without Typer or Rich."""

import os
import sys


def _only_thread() -> bool:
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _serve() -> int:
    from ctxmode.errors import CtxError
    from ctxmode.server.boot import run

    try:
        return run(None)
    except CtxError as exc:  # as the CLI reports it (home directory as project, ...)
        sys.stderr.write(f"Error: {exc}\n")
        return int(exc.exit_code)


def _known_platform(name: str) -> bool:
    from ctxmode.platforms import PLATFORMS

    return name in PLATFORMS


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"] and len(args) == 3 and _known_platform(args[1]):
        from ctxmode.hooks.entry import run

        code = run(args[1:])
        if argv is None and _only_thread():
            # A hook is a whole process on every tool call: once its answer is out and
            # its writes committed, skip the interpreter's teardown (a few ms each time).
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code
    if args == ["serve"]:
        return _serve()  # what hosts run at every session start: no Typer (~0.1 s)
    if args[:1] == ["statusline"] and len(args) == 1:
        from ctxmode.stats.statusline import run as statusline

        return statusline()  # status bars call it constantly: no Typer
    from ctxmode.cli.fast import run as fast

    answered = fast(args)
    if answered is not None:
        return answered
    from ctxmode.cli.app import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())

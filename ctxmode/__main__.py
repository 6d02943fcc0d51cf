"""Entry point. Standard library only: `ctxmode hook ...` and `ctxmode statusline` must start
without Typer or Rich."""

import os
import sys


def _only_thread() -> bool:
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"] and not {"--help", "-h"} & set(args):
        from ctxmode.hooks.entry import run

        code = run(args[1:])
        if argv is None and _only_thread():
            # A hook is a whole process on every tool call: once its answer is out and
            # its writes committed, skip the interpreter's teardown (a few ms each time).
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code
    if args[:1] == ["statusline"] and len(args) == 1:
        from ctxmode.stats.statusline import run as statusline

        return statusline()  # status bars call it constantly: no Typer
    from ctxmode.cli.app import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())

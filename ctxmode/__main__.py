"""Entry point. Standard library only: `ctxmode hook ...` must start without Typer or Rich."""

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"] and not {"--help", "-h"} & set(args):
        from ctxmode.hooks.entry import run

        return run(args[1:])
    from ctxmode.cli.app import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())

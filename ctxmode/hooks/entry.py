"""`ctxmode hook <platform> <event>`: the hook front door. Standard library only.

Hooks run as a whole process on every tool call of the host agent, so this path imports
nothing heavy and never breaks the host: whatever happens, it answers with the platform's
no-op and exit status 0. Platform adapters and event handlers plug in here.
"""

import sys


def run(argv: list[str]) -> int:
    """Read the hook payload from stdin and answer with a no-op (fail open)."""
    try:
        if not sys.stdin.isatty():
            sys.stdin.buffer.read()
    except (OSError, ValueError):
        pass
    return 0

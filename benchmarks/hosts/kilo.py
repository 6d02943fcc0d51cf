#!/usr/bin/env python3
"""ctxmode under the real Kilo Code CLI (npm ``@kilocode/cli``), headless, against the fake.

    .venv/bin/python benchmarks/hosts/kilo.py [--ctxmode PATH] [--keep] [--no-netns]

Kilo: ``$CTXMODE_KILO_PREFIX/bin/kilo`` (default ``~/.cache/ctxmode-hosts-extra/kilo``;
``npm install -g --prefix <that> @kilocode/cli@7.7.7``). Kilo is an OpenCode fork that keeps
``kilo run``, the plugin API and the config format, so the scenario is OpenCode's
(``opencode.drive``): the fake as an OpenAI-compatible provider in
``~/.config/kilo/kilo.json``, the project set up with ``ctxmode setup kilo`` (the shim in
``.kilo/plugins/ctxmode.js``, ``mcp.ctxmode`` in ``kilo.json``); run1 the task, run2
``--continue``, run3 an overflowing prompt that makes Kilo compact.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opencode  # noqa: E402
import scenario  # noqa: E402

HOST = "kilo"


def main() -> int:
    args = scenario.arguments(__doc__.split("\n")[0] if __doc__ else "").parse_args()
    scenario.isolate(args)
    kilo = scenario.find_bin("CTXMODE_KILO_PREFIX", "kilo", "bin/kilo")
    env = {
        "KILO_DISABLE_AUTOUPDATE": "1",
        "KILO_DISABLE_SHARE": "1",
        "KILO_DISABLE_MODELS_FETCH": "1",
        "KILO_DISABLE_SESSION_INGEST": "1",
        "KILO_DISABLE_PRESENCE": "1",
        "KILO_DISABLE_CODEBASE_INDEXING": "1",
    }
    config = os.path.join(".config", "kilo", "kilo.json")
    run, results = opencode.drive(HOST, kilo, config, env, os.path.abspath(args.ctxmode))
    return scenario.report(HOST, results, run.root, args.keep)


if __name__ == "__main__":
    raise SystemExit(main())

"""Options shared by several commands."""

from pathlib import Path
from typing import Annotated

import typer

JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (the result envelope) on stdout.")
]
ProjectOpt = Annotated[
    Path | None,
    typer.Option(
        "--project",
        "-p",
        help="Project directory (default: $CTXMODE_PROJECT_DIR, the host's project variable, "
        "the enclosing git work tree, or the current directory).",
        file_okay=False,
        show_default=False,
    ),
]

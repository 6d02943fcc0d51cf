"""What the fast commands do, without Typer: `ctxmode.cli.fast` calls these after parsing
argv itself, and the Typer commands of the same names call them after Typer parsed it."""

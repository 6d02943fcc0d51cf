"""What every setup target module shares: the server's name, where a host keeps its
config, and the shape of a stdio server entry. Imports no other target module, so
`ctxmode.setup.targets` and the modules it takes platforms from can all use it."""

from pathlib import Path
from typing import Any

from ctxmode.platforms.host import SERVER_KEY
from ctxmode.setup.command import Command

SERVER_NAME = SERVER_KEY


def config_dir(platform: str) -> Path:
    """The host's own config directory, as its descriptor resolves it."""
    from ctxmode.platforms import descriptor
    from ctxmode.platforms.host import config_dir as host_config_dir

    host = descriptor(platform)
    found = host_config_dir(host) if host is not None else None
    if found is None:
        raise KeyError(platform)
    return found


def stdio(cmd: Command, **extra: Any) -> dict[str, Any]:
    """A stdio server entry: ``type`` (when given) first, then command and args, then the rest."""
    argv = cmd.serve()
    value = {k: v for k, v in extra.items() if k == "type"}
    value.update(command=argv[0], args=argv[1:])
    value.update((k, v) for k, v in extra.items() if k != "type")
    return value

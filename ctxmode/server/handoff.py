"""What the start-up (`ctxmode.server.boot`) hands the SDK server (`ctxmode.server.app`)."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxmode.server.pipes import Wire


@dataclass
class Handoff:
    """The wire, what was read from it and answered before the SDK ran, the readiness
    marker and the parent process to watch."""

    wire: Wire | None  # None: stdin/stdout are not pipes, the SDK's transport serves
    marker: Path | None  # the readiness marker, None if it could not be written
    parent: int  # the parent process at start-up, for the watchdog
    prefix: bytes = b""  # read from the wire before the SDK ran: it reads these first
    answered: list[dict[str, Any]] = field(default_factory=list)  # responses already sent

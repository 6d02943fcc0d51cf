"""`ctxmode setup` / `ctxmode uninstall`: register ctxmode's hooks and MCP server in a host
agent's settings, and take them out again. Standard library only.

Design:

* `targets` says, per platform and scope, which files to touch and which entries they
  need (data only). `engine` reads every file, plans every change, then writes them all
  atomically, or nothing when any file cannot be parsed.
* Entries are ctxmode's by content: a hook whose command is ``<ctxmode> hook <platform>
  <event>``, a server entry that runs ``<ctxmode> serve``. Everything else in a file, the
  user's hooks and unknown keys included, is kept as it is. JSON files keep their key
  order, indentation and line endings; TOML files are edited as text.
* An ownership record (`record`) remembers what setup created (containers, files,
  directories, flag values it replaced) so that uninstall leaves no empty shells behind
  and restores what it changed.
* Commands are version-independent (``ctxmode hook ...``, ``ctxmode serve``): an upgrade
  never breaks them.
"""

from ctxmode.setup.engine import setup, uninstall
from ctxmode.setup.model import FileChange, SetupResult
from ctxmode.setup.targets import PLATFORMS

__all__ = ["PLATFORMS", "FileChange", "SetupResult", "setup", "uninstall"]

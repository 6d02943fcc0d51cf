"""Typed setup failures. Nothing is written when one of these is raised."""

from ctxmode.errors import CtxError, InputError


class SettingsFileError(InputError):
    """A host settings file cannot be parsed or has an unexpected shape.

    ctxmode never rewrites a file it cannot read back exactly, so the file is left as it is.
    """

    code = "bad_settings"


class SetupConflictError(InputError):
    """A file ctxmode would write exists and holds someone else's content."""

    code = "conflict"


class PluginInstalledError(InputError):
    """The host runs ctxmode from its plugin already: setup would register it a second time."""

    code = "plugin_installed"


class SetupWriteError(CtxError):
    """A settings file could not be written (permissions, disk)."""

    code = "write_failed"

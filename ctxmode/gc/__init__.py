"""Garbage collection: one storage budget across every project's databases.

Every project directory an agent works in gets a knowledge base (``content/<hash>.db``)
and session databases (``sessions/<hash><suffix>.db``), and nothing else ever removes
them, so the data root only grows. Expiring by age alone is wrong too: it throws away
the index of files that did not change. The rules, in order:

1. A project (its content DB and every session DB named after its hash) not written for
   more than ``max_age_days`` (default 30, ``CTXMODE_GC_MAX_AGE_DAYS``) is deleted whole,
   unless it is live: another process has one of its files open, or a running server's
   readiness marker names it. Inside the databases that stay, sessions idle for longer
   than the max age and orphaned events go, and so do sources without a file (fetched
   URLs, command output) indexed before the cutoff and sources whose file was deleted.
   A source whose file still exists never expires: the store re-checks it against the
   file's hash and mtime on every search, so it is as fresh as the file.
2. While all databases together exceed ``max_bytes`` (default 500 MB,
   ``CTXMODE_GC_MAX_MB``; 1 MB = 2**20 bytes), whole projects go, least recently used
   first. Live projects and the current one (gc's ``current``) are never deleted for
   size: the result then says "over budget" instead.
3. Every surviving database is checkpointed (``wal_checkpoint(TRUNCATE)``) and, when its
   free pages are worth it (over 10 % of the file or over 1 MB), vacuumed. A database
   another process has open, or of a project a running server names, only gets a
   ``PASSIVE`` checkpoint: its hooks and tools must not wait for gc.
4. Stale small files go: hook markers and guidance directories older than a day,
   readiness markers of dead servers, leftover ``*.tmp`` files older than a day, files
   of databases a gc that stopped half-way was deleting (``….gc-<pid>``).

`plan` only reads: databases through connections that create no file, readiness markers
without cleaning them; a folder or file it cannot read is skipped with a note. `apply`
carries a plan out and re-checks each step against the disk as it is then, so it never
deletes more than the plan lists (a project that became live, a session active again,
or a project no longer needed to meet the budget, stays). A database that cannot be
read is reported and left alone. Bytes in a plan are estimates; `apply` measures them.
A project is deleted by renaming its files to ``<name>.gc-<pid>`` first (the main file
first: ctxmode's openers wait while it is aside), checking once more that no process
opened them and that none wrote them since the last check, and only then unlinking them
(else they are renamed back): no process is ever left writing to a deleted file, and no
write made after the check is deleted.

Last use is the last write (`dbfiles.last_written`): hooks write a project's session
database whenever an agent works in it. gc's own writes are not use, so it puts the
modification time of a database it expired rows from or compacted back
(`dbfiles.keep_mtime`).
"""

from ctxmode.gc.applying import BUSY_TIMEOUT_S, apply
from ctxmode.gc.inventory import (
    CONTENT_OVERHEAD,
    SESSION_OVERHEAD,
    STALE_FILE_SECONDS,
)
from ctxmode.gc.limits import (
    DAY,
    DEFAULT_MAX_AGE_DAYS,
    DEFAULT_MAX_MB,
    MB,
    Budget,
    budget,
)
from ctxmode.gc.model import (
    VACUUM_MIN_BYTES,
    VACUUM_MIN_FRACTION,
    Action,
    Database,
    Deletion,
    Expiry,
    Note,
    Plan,
    Project,
    Report,
    StaleFile,
    human,
)
from ctxmode.gc.planning import plan

__all__ = [
    "BUSY_TIMEOUT_S",
    "CONTENT_OVERHEAD",
    "DAY",
    "DEFAULT_MAX_AGE_DAYS",
    "DEFAULT_MAX_MB",
    "MB",
    "SESSION_OVERHEAD",
    "STALE_FILE_SECONDS",
    "VACUUM_MIN_BYTES",
    "VACUUM_MIN_FRACTION",
    "Action",
    "Budget",
    "Database",
    "Deletion",
    "Expiry",
    "Note",
    "Plan",
    "Project",
    "Report",
    "StaleFile",
    "apply",
    "budget",
    "human",
    "plan",
]

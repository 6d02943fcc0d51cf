"""Session continuity: what an agent did in a session, kept so it survives compaction.

Hooks capture small *events* (a file edited, a git commit, a failed test, the user's prompt)
into one SQLite file per project (``<root>/sessions/<project-hash><worktree-suffix>.db``,
see `ctxmode.paths`). Before the host compacts the conversation, a *resume snapshot* of
the session is built within a byte budget; when the session starts again (after the
compaction, or on resume) the snapshot is injected back as context.

Modules, each importable on its own (the hook path loads only what it needs):

    events     the event catalogue: type → category, importance, public kind
    redact     secrets out of everything before it is stored
    extract    `HookEvent` → events (tool calls, prompts, turn ends)
    db         the session database (events, meta, resume snapshots, tool counters)
    snapshot   the resume snapshot, well-formed XML within a byte budget
    markers    small files PreToolUse leaves for the next PostToolUse of the session
    where      which session, project and database file a hook call belongs to

Invariants: events are keyed by session id inside a per-project file, so nothing read for
one session can come from another session or project; all stored text has been redacted;
losing the database loses continuity only, never user data.
"""

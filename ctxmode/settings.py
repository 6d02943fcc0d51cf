"""Every environment variable ctxmode reads, declared once: names, parser, default, doc.

Each variable is a module-level `Var` (a `Switch`, `Count`, `Millis`, `Text`, `Choice` or
`Argv`) in `REGISTRY`, with a typed accessor below it (``settings.inject_enabled()``).
Accessors read the environment at call time, never at import, and take an optional
mapping to read instead (a hook's adapter passes the environment it was given).

One set of rules for all of them (`RULES`, printed in the man page):

* names: where a variable has several (``CTXMODE_*`` first, then upstream context-mode's
  ``CONTEXT_MODE_*`` or ``CTX_*``), the first one set to a non-blank value is read and the
  others are ignored, whatever that value is;
* switches: ``1 true yes on`` are on, ``0 false no off none`` are off (any case, spaces
  ignored); any other value leaves the default;
* numbers, paths, lists: a value that cannot be used leaves the default. Accessors never
  raise (the hook path must never fail on a typo); a command that would act on a wrong
  value (a run's deadline, gc's budget, upgrade's command) calls `require_valid` and stops
  with a usage error instead, and ``ctxmode doctor`` warns about each (`problems`).

Standard library only, and only ``os`` at import: this module is on the hook path.
"""

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    Env = Mapping[str, str] | None

ON_WORDS = frozenset({"1", "true", "yes", "on"})
OFF_WORDS = frozenset({"0", "false", "no", "off", "none"})

READ = "read"
"""`Var.role`: ctxmode reads it."""
SET = "set"
"""`Var.role`: ctxmode sets it in the environment of the code it runs."""
PLUGIN = "plugin"
"""`Var.role`: read by the plugin ctxmode writes for a host (OpenCode's), not by Python."""

RULES = (
    "Where a variable has several names the first one set to a non-blank value is read. "
    "Switches are on with 1, true, yes or on and off with 0, false, no, off or none (any "
    "case); any other value leaves the default. A number, path or list that cannot be used "
    "also leaves the default, except where a command would act on it (the deadline of "
    "execute, the budget of gc, the command of upgrade): that command stops with a usage "
    "error. ctxmode doctor warns about every value it cannot use. Set but empty counts as "
    "set only where it means something ($CTXMODE_SESSION_SUFFIX)."
)


def parse_switch(raw: str) -> bool | None:
    """True for ``1 true yes on``, False for ``0 false no off none``, else None."""
    word = raw.strip().lower()
    if word in ON_WORDS:
        return True
    if word in OFF_WORDS:
        return False
    return None


class Var:
    """One environment variable: its names (the first set one is read), its doc, its role.

    Subclasses are the parsers: each has a typed ``get(env=None)`` that never raises and
    falls back to its default, and a `parse` that returns None for an unusable value.
    """

    expect = "a value"
    """What a usable value looks like, for `problem` messages."""

    def __init__(
        self, names: tuple[str, ...], doc: str, *, role: str = READ, keep_empty: bool = False
    ) -> None:
        self.names = names
        self.doc = doc
        self.role = role
        self.keep_empty = keep_empty

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def shown_default(self) -> str:
        """The default as the man page shows it; empty when there is none to show."""
        return ""

    def lookup(self, env: "Env" = None) -> tuple[str, str] | None:
        """``(name, value)`` of the first name set, stripped; blank counts as unset unless
        the variable keeps empty values (then it is given unstripped)."""
        source = os.environ if env is None else env
        for name in self.names:
            value = source.get(name)
            if value is None:
                continue
            if self.keep_empty:
                return name, value
            if value.strip():
                return name, value.strip()
        return None

    def parse(self, raw: str) -> object | None:
        return raw

    def problem(self, env: "Env" = None) -> str | None:
        """Why the value set cannot be used (``NAME='value' is not …``), or None."""
        found = self.lookup(env)
        if found is None or self.parse(found[1]) is not None:
            return None
        name, raw = found
        return f"{name}={raw!r} is not {self.expect}"


class Switch(Var):
    """On or off, by `parse_switch`."""

    expect = "a switch (1, true, yes, on or 0, false, no, off, none)"

    def __init__(self, names: tuple[str, ...], doc: str, *, default: bool) -> None:
        super().__init__(names, doc)
        self.default = default

    @property
    def shown_default(self) -> str:
        return "on" if self.default else "off"

    def parse(self, raw: str) -> bool | None:
        return parse_switch(raw)

    def get(self, env: "Env" = None) -> bool:
        found = self.lookup(env)
        value = None if found is None else self.parse(found[1])
        return self.default if value is None else value


class Count(Var):
    """A whole number in ``low..high``; out of range is clamped with `clamp`, else unusable."""

    def __init__(
        self,
        names: tuple[str, ...],
        doc: str,
        *,
        default: int,
        low: int,
        high: int | None = None,
        clamp: bool = False,
    ) -> None:
        super().__init__(names, doc)
        self.default, self.low, self.high, self.clamp = default, low, high, clamp
        span = f"of at least {low}" if high is None else f"in {low}..{high}"
        self.expect = "a whole number" if clamp else f"a whole number {span}"

    @property
    def shown_default(self) -> str:
        if self.clamp and self.high is not None:
            return f"{self.default}, clamped to {self.low}..{self.high}"
        return str(self.default)

    def parse(self, raw: str) -> int | None:
        try:
            value = int(raw.strip())
        except ValueError:
            return None
        if self.clamp:
            value = max(value, self.low)
            return value if self.high is None else min(value, self.high)
        if value < self.low or (self.high is not None and value > self.high):
            return None
        return value

    def get(self, env: "Env" = None) -> int:
        found = self.lookup(env)
        value = None if found is None else self.parse(found[1])
        return self.default if value is None else value


class Millis(Var):
    """A positive, finite number of milliseconds (fractions allowed)."""

    expect = "a positive number of milliseconds"

    def __init__(self, names: tuple[str, ...], doc: str, *, default: float) -> None:
        super().__init__(names, doc)
        self.default = default

    @property
    def shown_default(self) -> str:
        return f"{self.default:g}"

    def parse(self, raw: str) -> float | None:
        try:
            value = float(raw.strip())
        except ValueError:
            return None
        return value if 0 < value < float("inf") else None

    def get(self, env: "Env" = None) -> float:
        found = self.lookup(env)
        value = None if found is None else self.parse(found[1])
        return self.default if value is None else value


class Text(Var):
    """A string (a path, a name, an address); `absolute` accepts absolute paths only."""

    def __init__(
        self,
        names: tuple[str, ...],
        doc: str,
        *,
        default: str | None = None,
        shown: str = "",
        absolute: bool = False,
        keep_empty: bool = False,
        role: str = READ,
    ) -> None:
        super().__init__(names, doc, role=role, keep_empty=keep_empty)
        self.default, self.shown, self.absolute = default, shown, absolute
        self.expect = "an absolute path" if absolute else "a value"

    @property
    def shown_default(self) -> str:
        return self.shown or (self.default or "")

    def parse(self, raw: str) -> str | None:
        return raw if not self.absolute or os.path.isabs(raw) else None

    def get(self, env: "Env" = None) -> str | None:
        found = self.lookup(env)
        value = None if found is None else self.parse(found[1])
        return self.default if value is None else value


class Choice(Var):
    """One of a few words; `words` maps each accepted word (lower case) to its value."""

    expect = "one of the listed words"

    def __init__(
        self, names: tuple[str, ...], doc: str, *, default: str, words: dict[str, str]
    ) -> None:
        super().__init__(names, doc)
        self.default, self.words = default, words

    @property
    def shown_default(self) -> str:
        return self.default

    def parse(self, raw: str) -> str | None:
        return self.words.get(raw.strip().lower())

    def get(self, env: "Env" = None) -> str:
        found = self.lookup(env)
        value = None if found is None else self.parse(found[1])
        return self.default if value is None else value


class Argv(Var):
    """A command as a JSON list of strings, e.g. ``["pipx", "upgrade", "ctxmode"]``."""

    expect = "a JSON list of strings, e.g. '[\"pipx\", ...]'"

    def parse(self, raw: str) -> list[str] | None:
        import json  # only upgrade reads it

        try:
            value = json.loads(raw)
        except ValueError:
            return None
        if isinstance(value, list) and value and all(isinstance(w, str) for w in value):
            return value
        return None

    def get(self, env: "Env" = None) -> list[str] | None:
        found = self.lookup(env)
        return None if found is None else self.parse(found[1])


class Names(Var):
    """Environment variable names or shell-style patterns (``AWS_*``), separated by commas
    or blanks."""

    expect = "names or patterns (AWS_*) separated by commas or blanks, without '='"

    def parse(self, raw: str) -> tuple[str, ...] | None:
        items = tuple(item for item in raw.replace(",", " ").split() if item)
        return None if any("=" in item for item in items) else items

    def get(self, env: "Env" = None) -> tuple[str, ...]:
        found = self.lookup(env)
        value = None if found is None else self.parse(found[1])
        return value or ()


# --- the variables, in man page order -----------------------------------------------------

DIR = Text(
    ("CTXMODE_DIR", "CONTEXT_MODE_DIR", "CONTEXT_MODE_DATA_DIR"),
    "The data root, where knowledge bases, session databases and logs live (see FILES).",
    shown="$XDG_DATA_HOME/ctxmode or ~/.local/share/ctxmode on Linux, the platform's user "
    "data directory elsewhere",
)
XDG_DATA_HOME = Text(
    ("XDG_DATA_HOME",),
    "On Linux, without $CTXMODE_DIR, the data root is $XDG_DATA_HOME/ctxmode; a relative "
    "path is ignored, as the XDG base directory specification says.",
    shown="~/.local/share",
    absolute=True,
)
PROJECT_DIR = Text(
    ("CTXMODE_PROJECT_DIR", "CONTEXT_MODE_PROJECT_DIR"),
    "The project directory when --project is not given; it wins over the host agents' "
    "own project variables.",
)
SESSION_SUFFIX = Text(
    ("CTXMODE_SESSION_SUFFIX", "CONTEXT_MODE_SESSION_SUFFIX"),
    "Replaces the git-worktree suffix of session database names; set but empty means none.",
    keep_empty=True,
)
SESSION_ID = Text(
    ("CTXMODE_SESSION_ID",),
    "The session the MCP server's usage statistics are counted for (else the host's "
    "$CLAUDE_SESSION_ID, when set).",
)
INJECT = Switch(
    ("CTXMODE_INJECT", "CONTEXT_MODE_INJECT"),
    "Off: hooks still record session events but add nothing to the agent's context: no "
    "routing block, no resume snapshot, no nudge, no sub-agent block.",
    default=True,
)
SNAPSHOT_MIN_BYTES = 512
SNAPSHOT_MAX_BYTES = 65_536
SNAPSHOT_BYTES = Count(
    ("CTXMODE_SNAPSHOT_BYTES",),
    "Size budget in bytes of the session snapshot given back to the agent after compaction.",
    default=2048,
    low=SNAPSHOT_MIN_BYTES,
    high=SNAPSHOT_MAX_BYTES,
    clamp=True,
)
SUBAGENT_ROUTING = Choice(
    ("CTXMODE_SUBAGENT_ROUTING", "CONTEXT_MODE_SUBAGENT_ROUTING"),
    "Which sub-agents are told about the ctx tools: auto (general-purpose agents only), "
    "all (also: always, 1, true, yes, on) or off (also: 0, false, no, none).",
    default="auto",
    words={
        "auto": "auto",
        "all": "all",
        "always": "all",
        **dict.fromkeys(ON_WORDS, "all"),
        **dict.fromkeys(OFF_WORDS, "off"),
    },
)
NUDGE_EVERY = Count(
    ("CTXMODE_EXTERNAL_MCP_NUDGE_EVERY", "CONTEXT_MODE_EXTERNAL_MCP_NUDGE_EVERY"),
    "Remind the agent to use ctxmode on every Nth call of another MCP server's tool (1..100).",
    default=10,
    low=1,
    high=100,
)
REQUIRE_SECURITY = Switch(
    ("CTXMODE_REQUIRE_SECURITY", "CONTEXT_MODE_REQUIRE_SECURITY"),
    "On: fail closed, denying requests when the permission settings cannot be read.",
    default=False,
)
PLATFORM = Text(
    ("CTXMODE_PLATFORM", "CONTEXT_MODE_PLATFORM"),
    "The host agent whose global settings directory is read for permission rules besides "
    "Claude Code's.",
)
HOST_PLUGIN = Text(
    ("CTXMODE_PLUGIN",),
    "Set by the launcher of ctxmode's host plugin (claude-code, codex): ctxmode runs from "
    "that plugin's own environment, under its tool names, and its hooks step aside where "
    "`ctxmode setup` registered hooks too.",
)
FETCH_STRICT = Switch(
    ("CTXMODE_FETCH_STRICT", "CTX_FETCH_STRICT"),
    "On: fetching also refuses private network addresses (loopback, RFC 1918, "
    "unique-local); link-local and metadata addresses are always refused.",
    default=False,
)
FETCH_TIMEOUT_MS = Millis(
    ("CTXMODE_FETCH_TIMEOUT_MS",),
    "Total time limit of fetching one URL in milliseconds: name lookup, connecting, headers, "
    "body and redirects together.",
    default=30_000,
)
EXEC_TIMEOUT_MS = Millis(
    ("CTXMODE_EXEC_TIMEOUT_MS",),
    "Deadline of a sandboxed run in milliseconds when --timeout-ms is not given.",
    default=120_000,
)
ISOLATE = Switch(
    ("CTXMODE_ISOLATE",),
    "On: confine sandboxed runs with bubblewrap (Linux) unless --no-isolate is given.",
    default=False,
)
ISOLATE_NETWORK = Switch(
    ("CTXMODE_ISOLATE_NETWORK",),
    "On: confined runs (CTXMODE_ISOLATE, --isolate) keep network access unless --no-network "
    "is given; off, they have none, not even the host's loopback.",
    default=False,
)
ENV_DROP = Names(
    ("CTXMODE_ENV_DROP",),
    "Variables removed from the environment of every sandboxed run, by name or pattern "
    "(e.g. 'AWS_*,*_TOKEN'); runs otherwise get the environment ctxmode was started with, "
    "minus the variables that inject code into interpreters. A value that cannot be used "
    "stops the run.",
)
SEARCH_WINDOW_MS = Millis(
    ("CTXMODE_SEARCH_WINDOW_MS", "CONTEXT_MODE_SEARCH_WINDOW_MS"),
    "The ctx_search flood guard's window in milliseconds: calls are counted per caller within it.",
    default=60_000,
)
SEARCH_MAX_RESULTS_AFTER = Count(
    ("CTXMODE_SEARCH_MAX_RESULTS_AFTER", "CONTEXT_MODE_SEARCH_MAX_RESULTS_AFTER"),
    "After this many ctx_search calls in the window, each query gets one result.",
    default=3,
    low=1,
)
SEARCH_BLOCK_AFTER = Count(
    ("CTXMODE_SEARCH_BLOCK_AFTER", "CONTEXT_MODE_SEARCH_BLOCK_AFTER"),
    "After this many ctx_search calls in the window, ctx_search refuses and asks for "
    "batched queries.",
    default=8,
    low=1,
)
GC = Switch(
    ("CTXMODE_GC",),
    "Off: a running server never collects garbage on its own (it otherwise applies the gc "
    "budget at most once a day).",
    default=True,
)
GC_MAX_AGE_DAYS = Count(
    ("CTXMODE_GC_MAX_AGE_DAYS",),
    "Default of gc --max-age-days: projects unused, sessions idle and fetched sources older "
    "than this many days are deleted.",
    default=30,
    low=1,
)
GC_MAX_MB = Count(
    ("CTXMODE_GC_MAX_MB",),
    "Default of gc --max-size: the budget in MB (2^20 bytes) for all databases together.",
    default=500,
    low=1,
)
NO_BROWSER = Switch(
    ("CTXMODE_NO_BROWSER",),
    "On: insight never opens a browser (as with --no-open).",
    default=False,
)
UPGRADE_COMMAND = Argv(
    ("CTXMODE_UPGRADE_COMMAND",),
    "A JSON list of strings that replaces the package tool command upgrade runs (unusual "
    "installs).",
)
PYPI_JSON = "https://pypi.org/pypi/ctxmode/json"
PYPI_URL = Text(
    ("CTXMODE_PYPI_URL",),
    "The PyPI JSON address upgrade --check asks for the latest version (mirrors).",
    default=PYPI_JSON,
)
PRICES = Text(
    ("CTXMODE_PRICES",),
    'A JSON file of model prices in US dollars per million tokens, {"model": {"input": '
    '3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}}; its models '
    "replace or add to the bundled table that stats prices tokens with.",
    absolute=True,
    shown="the bundled table (see ctxmode stats)",
)
NO_COLOR = Text(
    ("NO_COLOR",),
    "Any non-empty value, as no-color.org defines it (not a switch: 0 counts too): the "
    "status line and the command-line output print no colours.",
)
BIN = Text(
    ("CTXMODE_BIN",),
    "The ctxmode executable the OpenCode plugin runs.",
    shown="ctxmode on PATH",
    role=PLUGIN,
)
PLUGIN_PYTHON = Text(
    ("CTXMODE_PYTHON",),
    "The Python (3.10 or later) the Claude Code and Codex plugins' launcher builds "
    "ctxmode's environment with.",
    shown="python3 on PATH",
    role=PLUGIN,
)
PLUGIN_WAIT = Text(
    ("CTXMODE_PLUGIN_WAIT",),
    "Seconds the plugins' launcher waits for the first build of ctxmode's environment "
    "before a command gives up; set, the MCP server waits for it too instead of answering "
    "at once with no tools.",
    shown="300",
    role=PLUGIN,
)
FILE_PATH = Text(
    ("CTXMODE_FILE_PATH",),
    "Set by execute-file for the code it runs: the path of the file to process (also given "
    "to the code as FILE_CONTENT_PATH).",
    role=SET,
)
RUN_ID = Text(
    ("CTXMODE_RUN_ID",),
    "Set in every sandboxed run; marks its processes so that all of them are killed when "
    "the run ends.",
    role=SET,
)
RUN_OWNER = Text(
    ("CTXMODE_RUN_OWNER",),
    "Set in every sandboxed run: the process that started it (pid, start time, pid "
    "namespace) and its data root, so that the run dies with that process, and if it "
    "outlives it anyway the next server of the data root kills it.",
    role=SET,
)

REGISTRY: tuple[Var, ...] = (
    DIR,
    XDG_DATA_HOME,
    PROJECT_DIR,
    EXEC_TIMEOUT_MS,
    ISOLATE,
    ISOLATE_NETWORK,
    ENV_DROP,
    REQUIRE_SECURITY,
    PLATFORM,
    HOST_PLUGIN,
    FETCH_STRICT,
    FETCH_TIMEOUT_MS,
    SEARCH_WINDOW_MS,
    SEARCH_MAX_RESULTS_AFTER,
    SEARCH_BLOCK_AFTER,
    INJECT,
    SNAPSHOT_BYTES,
    SESSION_SUFFIX,
    SESSION_ID,
    SUBAGENT_ROUTING,
    NUDGE_EVERY,
    GC_MAX_AGE_DAYS,
    GC_MAX_MB,
    GC,
    NO_BROWSER,
    UPGRADE_COMMAND,
    PYPI_URL,
    PRICES,
    NO_COLOR,
    BIN,
    PLUGIN_PYTHON,
    PLUGIN_WAIT,
    FILE_PATH,
    RUN_ID,
    RUN_OWNER,
)


def problems(env: "Env" = None) -> list[str]:
    """One message per variable ctxmode reads whose value it cannot use."""
    found = (var.problem(env) for var in REGISTRY if var.role == READ)
    return [message for message in found if message]


def require_valid(*variables: Var, env: "Env" = None) -> None:
    """For commands that act on a value: stop rather than fall back to the default.

    Raises:
        UsageError: one of `variables` is set to a value it cannot use.
    """
    for var in variables:
        message = var.problem(env)
        if message:
            from ctxmode.errors import UsageError

            raise UsageError(message)


# --- accessors ----------------------------------------------------------------------------


def data_dir(env: "Env" = None) -> str | None:
    """``CTXMODE_DIR`` / ``CONTEXT_MODE_DIR`` / ``CONTEXT_MODE_DATA_DIR``, unexpanded; None
    when unset."""
    return DIR.get(env)


def xdg_data_home(env: "Env" = None) -> str | None:
    """``XDG_DATA_HOME`` when it is an absolute path."""
    return XDG_DATA_HOME.get(env)


def project_dir(env: "Env" = None) -> str | None:
    """``CTXMODE_PROJECT_DIR`` / ``CONTEXT_MODE_PROJECT_DIR``: the project, before any host
    variable."""
    return PROJECT_DIR.get(env)


def session_suffix(env: "Env" = None) -> str | None:
    """The session database suffix override (``""``: none); None when unset."""
    return SESSION_SUFFIX.get(env)


def session_id(env: "Env" = None) -> str | None:
    return SESSION_ID.get(env)


def inject_enabled(env: "Env" = None) -> bool:
    """The one injection switch: off means no hook adds text to the agent's context."""
    return INJECT.get(env)


def snapshot_bytes(env: "Env" = None) -> int:
    return SNAPSHOT_BYTES.get(env)


def subagent_routing(env: "Env" = None) -> str:
    """``auto``, ``all`` or ``off``."""
    return SUBAGENT_ROUTING.get(env)


def nudge_every(env: "Env" = None) -> int:
    return NUDGE_EVERY.get(env)


def require_security(env: "Env" = None) -> bool:
    return REQUIRE_SECURITY.get(env)


def platform(env: "Env" = None) -> str | None:
    return PLATFORM.get(env)


def plugin(env: "Env" = None) -> str | None:
    return HOST_PLUGIN.get(env)


def fetch_strict(env: "Env" = None) -> bool:
    return FETCH_STRICT.get(env)


def fetch_timeout_ms(env: "Env" = None) -> float:
    return FETCH_TIMEOUT_MS.get(env)


def env_drop(env: "Env" = None) -> tuple[str, ...]:
    """``CTXMODE_ENV_DROP``: names and patterns of variables runs do not get."""
    return ENV_DROP.get(env)


def search_window_ms(env: "Env" = None) -> float:
    return SEARCH_WINDOW_MS.get(env)


def search_max_results_after(env: "Env" = None) -> int:
    return SEARCH_MAX_RESULTS_AFTER.get(env)


def search_block_after(env: "Env" = None) -> int:
    return SEARCH_BLOCK_AFTER.get(env)


def exec_timeout_ms(env: "Env" = None) -> float:
    return EXEC_TIMEOUT_MS.get(env)


def isolate(env: "Env" = None) -> bool:
    return ISOLATE.get(env)


def isolate_network(env: "Env" = None) -> bool:
    return ISOLATE_NETWORK.get(env)


def gc_enabled(env: "Env" = None) -> bool:
    return GC.get(env)


def gc_max_age_days(env: "Env" = None) -> int:
    return GC_MAX_AGE_DAYS.get(env)


def gc_max_mb(env: "Env" = None) -> int:
    return GC_MAX_MB.get(env)


def no_browser(env: "Env" = None) -> bool:
    return NO_BROWSER.get(env)


def upgrade_command(env: "Env" = None) -> list[str] | None:
    return UPGRADE_COMMAND.get(env)


def pypi_url(env: "Env" = None) -> str:
    return PYPI_URL.get(env) or PYPI_JSON


def prices_file(env: "Env" = None) -> str | None:
    """``CTXMODE_PRICES``: the user's model price file (an absolute path); None when unset."""
    return PRICES.get(env)


def no_color(env: "Env" = None) -> bool:
    return NO_COLOR.get(env) is not None

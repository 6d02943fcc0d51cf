"""The settings registry (ctxmode.settings): one switch rule, fallbacks that never raise,
alias precedence, values read at call time."""

import pytest

from ctxmode import settings
from ctxmode.errors import UsageError

SWITCHES = [v for v in settings.REGISTRY if isinstance(v, settings.Switch)]
NUMBERS = [v for v in settings.REGISTRY if isinstance(v, settings.Count | settings.Millis)]
ALIASED = [v for v in settings.REGISTRY if len(v.names) > 1]


def _ids(variables: list[settings.Var]) -> list[str]:
    return [v.name for v in variables]


def _two_values(var: settings.Var) -> tuple[tuple[str, object], tuple[str, object]]:
    """Two different usable values of `var`, raw and parsed."""
    if isinstance(var, settings.Switch):
        return ("on", True), ("off", False)
    if isinstance(var, settings.Count):
        return (str(var.low), var.low), (str(var.low + 1), var.low + 1)
    if isinstance(var, settings.Choice):
        return ("all", "all"), ("off", "off")
    if isinstance(var, settings.Millis):
        return ("250", 250.0), ("500", 500.0)
    return ("/first", "/first"), ("/second", "/second")


# --------------------------------------------------------------------------- switches


@pytest.mark.parametrize("var", SWITCHES, ids=_ids(SWITCHES))
@pytest.mark.parametrize("word", ["1", "true", "yes", "on", "TRUE", " On "])
def test_every_switch_is_on_with_the_on_words(monkeypatch, var, word):
    monkeypatch.setenv(var.name, word)
    assert var.get() is True
    assert var.problem() is None


@pytest.mark.parametrize("var", SWITCHES, ids=_ids(SWITCHES))
@pytest.mark.parametrize("word", ["0", "false", "no", "off", "none", "NO", " Off "])
def test_every_switch_is_off_with_the_off_words(monkeypatch, var, word):
    monkeypatch.setenv(var.name, word)
    assert var.get() is False
    assert var.problem() is None


@pytest.mark.parametrize("var", SWITCHES, ids=_ids(SWITCHES))
@pytest.mark.parametrize("word", ["", "  ", "maybe", "enabled", "2"])
def test_any_other_switch_value_leaves_the_default(monkeypatch, var, word):
    monkeypatch.setenv(var.name, word)
    assert var.get() is var.default
    assert (var.problem() is None) == (not word.strip())


def test_switch_defaults_are_what_the_man_page_says():
    assert settings.inject_enabled() and settings.gc_enabled()
    assert not any(
        f()
        for f in (
            settings.isolate,
            settings.require_security,
            settings.fetch_strict,
            settings.no_browser,
        )
    )


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("var", NUMBERS, ids=_ids(NUMBERS))
@pytest.mark.parametrize("raw", ["lots", "12ms", "1e3x", "", "nan", "inf", "0x10"])
def test_a_number_that_does_not_parse_leaves_the_default(monkeypatch, var, raw):
    monkeypatch.setenv(var.name, raw)
    assert var.get() == var.default


@pytest.mark.parametrize(
    ("var", "raw", "expected"),
    [
        (settings.NUDGE_EVERY, "0", 10),
        (settings.NUDGE_EVERY, "101", 10),
        (settings.NUDGE_EVERY, "-5", 10),
        (settings.NUDGE_EVERY, "2.5", 10),
        (settings.NUDGE_EVERY, "7", 7),
        (settings.SNAPSHOT_BYTES, "10", settings.SNAPSHOT_MIN_BYTES),
        (settings.SNAPSHOT_BYTES, "10000000", settings.SNAPSHOT_MAX_BYTES),
        (settings.SNAPSHOT_BYTES, " 4096 ", 4096),
        (settings.EXEC_TIMEOUT_MS, "0", 120_000),
        (settings.EXEC_TIMEOUT_MS, "-5", 120_000),
        (settings.EXEC_TIMEOUT_MS, "700.5", 700.5),
        (settings.GC_MAX_AGE_DAYS, "0", 30),
        (settings.GC_MAX_AGE_DAYS, "90", 90),
        (settings.GC_MAX_MB, "-1", 500),
    ],
)
def test_numbers_out_of_range_are_clamped_or_left_at_the_default(monkeypatch, var, raw, expected):
    monkeypatch.setenv(var.name, raw)
    assert var.get() == expected


def test_a_bad_value_is_reported_by_name_and_refused_only_on_request(monkeypatch):
    monkeypatch.setenv("CTXMODE_GC_MAX_MB", "lots")
    monkeypatch.setenv("CTXMODE_INJECT", "maybe")
    monkeypatch.setenv("CTXMODE_SNAPSHOT_BYTES", "10")  # clamped, so usable
    assert settings.gc_max_mb() == 500  # never raises
    assert settings.problems() == [
        "CTXMODE_INJECT='maybe' is not a switch (1, true, yes, on or 0, false, no, off, none)",
        "CTXMODE_GC_MAX_MB='lots' is not a whole number of at least 1",
    ]
    settings.require_valid(settings.GC_MAX_AGE_DAYS)
    with pytest.raises(UsageError, match="CTXMODE_GC_MAX_MB='lots'"):
        settings.require_valid(settings.GC_MAX_AGE_DAYS, settings.GC_MAX_MB)


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("var", ALIASED, ids=_ids(ALIASED))
def test_the_ctxmode_name_wins_over_the_upstream_alias(monkeypatch, var):
    (mine, mine_parsed), (theirs, theirs_parsed) = _two_values(var)
    monkeypatch.delenv(var.names[0], raising=False)  # conftest sets CTXMODE_DIR
    monkeypatch.setenv(var.names[1], theirs)
    assert var.get() == theirs_parsed  # the alias alone is read
    monkeypatch.setenv(var.names[0], mine)
    assert var.get() == mine_parsed
    if not var.keep_empty:
        monkeypatch.setenv(var.names[0], "   ")
        assert var.get() == theirs_parsed  # a blank value counts as unset


def test_an_unusable_ctxmode_value_does_not_fall_through_to_the_alias(monkeypatch):
    monkeypatch.setenv("CONTEXT_MODE_INJECT", "off")
    monkeypatch.setenv("CTXMODE_INJECT", "maybe")
    assert settings.inject_enabled() is True  # the default, not the alias's off


def test_an_empty_session_suffix_counts_as_set(monkeypatch):
    assert settings.session_suffix() is None
    monkeypatch.setenv("CONTEXT_MODE_SESSION_SUFFIX", "theirs")
    monkeypatch.setenv("CTXMODE_SESSION_SUFFIX", "")
    assert settings.session_suffix() == ""


def test_registry_names_are_unique_and_ctxmodes_own_come_first():
    names = [n for var in settings.REGISTRY for n in var.names]
    assert len(names) == len(set(names))
    for var in settings.REGISTRY:
        assert var.doc.strip() and var.role in (settings.READ, settings.SET, settings.PLUGIN)
        if len(var.names) > 1:
            assert var.names[0].startswith("CTXMODE_"), var.names


# --------------------------------------------------------------------------- reading


def test_values_are_read_at_call_time_or_from_the_mapping_given(monkeypatch):
    monkeypatch.setenv("CTXMODE_SUBAGENT_ROUTING", "always")
    assert settings.subagent_routing() == "all"
    monkeypatch.setenv("CTXMODE_SUBAGENT_ROUTING", "no")
    assert settings.subagent_routing() == "off"
    assert settings.subagent_routing({"CONTEXT_MODE_SUBAGENT_ROUTING": "yes"}) == "all"
    assert settings.subagent_routing({"CTXMODE_SUBAGENT_ROUTING": "sometimes"}) == "auto"
    assert settings.project_dir({}) is None
    assert settings.project_dir({"CONTEXT_MODE_PROJECT_DIR": " /p "}) == "/p"


def test_general_variables_follow_their_own_standards(monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")
    assert settings.xdg_data_home() is None  # the XDG spec: relative paths are ignored
    monkeypatch.setenv("XDG_DATA_HOME", "/xdg")
    assert settings.xdg_data_home() == "/xdg"
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert not settings.no_color()
    monkeypatch.setenv("NO_COLOR", "0")  # no-color.org: any non-empty value
    assert settings.no_color()


@pytest.mark.parametrize("bad", ["pipx upgrade", "[]", '["pipx", 1]', '{"a": 1}'])
def test_the_upgrade_command_is_a_json_list_of_strings(monkeypatch, bad):
    monkeypatch.setenv("CTXMODE_UPGRADE_COMMAND", '["pipx", "upgrade", "ctxmode"]')
    assert settings.upgrade_command() == ["pipx", "upgrade", "ctxmode"]
    monkeypatch.setenv("CTXMODE_UPGRADE_COMMAND", bad)
    assert settings.upgrade_command() is None
    assert "JSON list" in (settings.UPGRADE_COMMAND.problem() or "")


def test_the_pypi_address_defaults_to_pypi(monkeypatch):
    assert settings.pypi_url() == settings.PYPI_JSON
    monkeypatch.setenv("CTXMODE_PYPI_URL", "http://mirror/json")
    assert settings.pypi_url() == "http://mirror/json"

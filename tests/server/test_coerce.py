"""Lenient argument coercion (spec 1.0): only unambiguous forms are converted."""

import pytest

from ctxmode.errors import UsageError
from ctxmode.server import coerce


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ('["a", "b"]', ["a", "b"]),
        ('  ["only"]  ', ["only"]),
        ("[]", []),
        ("plain words", ["plain words"]),
        ("[not json", ["[not json"]),
        ('{"a": 1}', ['{"a": 1}']),
        ("", ""),
        ("   ", "   "),
        (["kept"], ["kept"]),
        (None, None),
        (5, 5),
    ],
)
def test_as_array_lifts_json_arrays_and_bare_strings_only(given, expected):
    assert coerce.as_array(given) == expected


def test_as_array_returns_a_real_list_untouched():
    value = ["x", "y"]
    assert coerce.as_array(value) is value


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("true", True),
        ("false", False),
        (" TRUE ", True),
        ("False", False),
        (True, True),
        (False, False),
        ("yes", "yes"),
        ("1", "1"),
        ("0", "0"),
        ("", ""),
        (1, 1),
        (None, None),
    ],
)
def test_as_bool_converts_only_the_literals_true_and_false(given, expected):
    result = coerce.as_bool(given)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("given", "expected"),
    [("5", 5), (" 250 ", 250), ("1.5", 1.5), ("-3", -3), (7, 7), (2.5, 2.5), ("abc", "abc")],
)
def test_as_number_converts_numeric_strings(given, expected):
    result = coerce.as_number(given)
    assert result == expected
    assert type(result) is type(expected)


def test_commands_lifts_plain_strings_to_numbered_labels():
    assert coerce.commands(["ls", {"label": "mine", "command": "pwd"}, "date"]) == [
        {"label": "cmd_1", "command": "ls"},
        {"label": "mine", "command": "pwd"},
        {"label": "cmd_3", "command": "date"},
    ]


def test_commands_accepts_a_json_string_and_a_bare_string():
    assert coerce.commands('["git status", "git log"]') == [
        {"label": "cmd_1", "command": "git status"},
        {"label": "cmd_2", "command": "git log"},
    ]
    assert coerce.commands("uname -a") == [{"label": "cmd_1", "command": "uname -a"}]


def test_commands_leaves_an_empty_string_for_validation_to_reject():
    assert coerce.commands("") == ""


def test_boolean_rejects_truthy_strings():
    assert coerce.boolean({"background": "true"}, "background") is True
    assert coerce.boolean({}, "background") is False
    with pytest.raises(UsageError, match="background must be true or false"):
        coerce.boolean({"background": "yes"}, "background")


def test_number_coerces_and_bounds():
    assert coerce.number({"timeout": "1500"}, "timeout", low=1) == 1500.0
    assert coerce.number({}, "timeout") is None
    with pytest.raises(UsageError, match="timeout must be a number"):
        coerce.number({"timeout": "soon"}, "timeout")
    with pytest.raises(UsageError, match="timeout must be a number"):
        coerce.number({"timeout": True}, "timeout")
    with pytest.raises(UsageError, match="concurrency must be between 1 and 8"):
        coerce.number({"concurrency": "9"}, "concurrency", low=1, high=8)


def test_strings_coerces_then_checks_the_item_type():
    assert coerce.strings({"queries": '["a","b"]'}, "queries") == ["a", "b"]
    assert coerce.strings({"queries": "one"}, "queries") == ["one"]
    assert coerce.strings({}, "queries") is None
    with pytest.raises(UsageError, match="queries must be an array of strings"):
        coerce.strings({"queries": [1, 2]}, "queries")
    with pytest.raises(UsageError, match="queries must be an array of strings"):
        coerce.strings({"queries": ""}, "queries")


def test_string_required_and_type_checked():
    assert coerce.string({"code": "x"}, "code", required=True) == "x"
    assert coerce.string({"intent": ""}, "intent") is None
    with pytest.raises(UsageError, match="code is required"):
        coerce.string({}, "code", required=True)
    with pytest.raises(UsageError, match="code must not be empty"):
        coerce.string({"code": "  "}, "code", required=True)
    with pytest.raises(UsageError, match="source must be a string"):
        coerce.string({"source": 3}, "source")

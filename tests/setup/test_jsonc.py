"""JSONC: read with comments and trailing commas; edits touch only the entries that change."""

import json

import pytest

from ctxmode.setup.jsonc import JsoncError, loads, patch

DOC = """// header
{
  "a": 1, /* one */
  "list": [
    "x", // first
    "y",
  ],
  "nested": {"k": "v"},
}
"""


def test_comments_and_trailing_commas_are_read():
    assert loads(DOC) == {"a": 1, "list": ["x", "y"], "nested": {"k": "v"}}
    assert loads('{"url": "http://x//not-a-comment", "s": "/* nor this */"}') == {
        "url": "http://x//not-a-comment",
        "s": "/* nor this */",
    }


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  "a": 1\n  "b": 2\n}', (3, 3)),
        ('{"a": [1,, 2]}', (1, 10)),
        ('{"a": 1} x', (1, 10)),
        ("{\n  /* open", (2, 3)),
        ("{'a': 1}", (1, 2)),
    ],
)
def test_errors_name_the_line_and_column(text, where):
    with pytest.raises(JsoncError) as info:
        loads(text)
    assert (info.value.line, info.value.column) == where


def test_a_changed_value_is_the_only_change():
    data = loads(DOC)
    data["nested"]["k"] = "w"
    assert patch(DOC, data) == DOC.replace('{"k": "v"}', '{"k": "w"}')


def test_items_inserted_in_the_middle_of_a_list_come_out_again_exactly():
    data = loads(DOC)
    data["list"] = ["x", {"new": True}, "y", "z"]
    edited = patch(DOC, data)
    assert "// first" in edited and loads(edited)["list"] == data["list"]
    assert '    {\n      "new": true\n    },\n    "y",\n    "z",\n  ],' in edited
    assert patch(edited, loads(DOC)) == DOC


def test_removing_a_key_removes_its_duplicates_too():
    text = '{\n  "a": 1,\n  "b": 2,\n  "a": 3\n}'
    assert loads(text) == {"a": 3, "b": 2}
    assert patch(text, {"b": 2}) == '{\n  "b": 2\n}'


def test_an_emptied_object_closes_up_and_refills_in_the_files_layout():
    text = '{\n    "keep": {},\n    "z": 0\n}\n'
    data = loads(text)
    data["keep"] = {"one": [1, 2]}
    edited = patch(text, data)
    assert edited == (
        '{\n    "keep": {\n        "one": [\n            1,\n            2\n        ]\n'
        '    },\n    "z": 0\n}\n'
    )
    assert patch(edited, loads(text)) == text


def test_json_that_is_not_an_edit_target_is_refused():
    with pytest.raises(JsoncError):
        patch('{"a": ', {"a": 1})
    assert json.loads(patch("{}", {"a": 1})) == {"a": 1}

"""The one reading of host-shaped tool input: commands, paths, patch targets, URLs."""

import pytest

from ctxmode.platforms.normalise import input_paths, input_urls, patch_targets, shell_command


@pytest.mark.parametrize(
    ("tool_input", "urls"),
    [
        ({"url": "https://a.example/x"}, ["https://a.example/x"]),
        ({"urls": ["https://a.example/x", "https://b.example/y"]}, None),
        ({"requests": [{"url": "https://a.example/x"}]}, ["https://a.example/x"]),
        (
            {"prompt": "Summarize https://docs.pydantic.dev/latest/migration/. Group by module"},
            ["https://docs.pydantic.dev/latest/migration/"],
        ),
        ({"query": "see https://a.example/x and (https://b.example/y)"}, None),
        ({"prompt": "no address here"}, []),
        ({"url": "", "urls": "not-a-list"}, []),
    ],
)
def test_urls_come_from_url_urls_requests_or_prompt_text(tool_input, urls):
    expected = urls if urls is not None else ["https://a.example/x", "https://b.example/y"]
    assert list(input_urls(tool_input)) == expected


def test_read_paths_are_found_under_every_hosts_key():
    for payload in (
        {"file_path": "/a"},
        {"absolute_path": "/a"},
        {"filePath": "/a"},
        {"path": "/a"},
        {"operations": [{"mode": "Line", "path": "/a"}]},
    ):
        assert input_paths(payload) == ("/a",)
    assert input_paths({"operations": "x"}) == ()


def test_shell_command_reads_command_cmd_and_argv():
    assert shell_command({"command": "ls"}) == "ls"
    assert shell_command({"cmd": "ls -la"}) == "ls -la"
    assert shell_command({"command": ["bash", "-lc", "curl x"]}) == "curl x"
    assert shell_command({"command": ["git", "log", "a b"]}) == "git log 'a b'"
    assert shell_command({"command": 3}) is None


def test_urls_are_read_from_values_not_from_their_json_text():
    command = 'curl -s "http://docs.example:8080/curl-target" -H "X: 1"'
    assert input_urls({"command": command}) == ("http://docs.example:8080/curl-target",)
    twice = {"command": f"curl {'http://a.example/x'} && curl http://a.example/x"}
    assert input_urls(twice) == ("http://a.example/x",)


def test_patch_targets_name_every_file_with_its_operation():
    patch = (
        "*** Begin Patch\n*** Add File: notes.txt\n+hi\n*** Update File: a.py\n"
        "*** Move to: b.py\n*** Delete File: c.py\n*** End Patch"
    )
    assert patch_targets(patch) == (
        ("Add", "notes.txt"),
        ("Update", "a.py"),
        ("Move", "b.py"),
        ("Delete", "c.py"),
    )

"""ctx_batch_execute through a real MCP session (spec 1.3, 1.12.4; section 12 items 19-21)."""

import pytest

from .support import call, deny

pytestmark = pytest.mark.anyio

SKIPPED = "(skipped — batch timeout exceeded)"


def answered(label: str, body: str) -> str:
    """A batch answer: the section title, then its chunk (its heading, which the title
    shows, left out)."""
    return f"### {label}\n{body}"


def batch(commands, queries, **extra):
    return {"commands": commands, "queries": queries, **extra}


async def test_runs_commands_indexes_sections_and_answers_queries(client):
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch(
            [
                {"label": "greeting", "command": "echo hello from the batch"},
                {"label": "listing", "command": "printf 'marmalade.txt\\nquince.txt\\n'"},
            ],
            ["quince"],
        ),
    )
    assert not is_error
    assert text.startswith("Executed 2 commands (")
    assert "Searched 1 queries." in text
    assert "## Indexed Sections\n\n- greeting (" in text
    assert "\n- listing (" in text
    assert "## quince\n\n" + answered("listing", "marmalade.txt") in text
    assert "quince.txt" in text


async def test_serial_commands_share_the_timeout_and_later_ones_are_skipped(client, project):
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch(
            [
                {"label": "slow", "command": "echo slow started; sleep 60"},
                {"label": "second", "command": "touch second.ran; echo second output"},
                {"label": "third", "command": "touch third.ran; echo third output"},
            ],
            ["skipped batch timeout exceeded", "slow started"],
            timeout=1500,
        ),
    )
    assert not is_error
    assert answered("second", SKIPPED) in text
    assert answered("third", SKIPPED) in text
    assert "slow started" in text
    assert "second output" not in text
    assert not (project / "second.ran").exists()
    assert not (project / "third.ran").exists()


async def test_serial_commands_without_timeout_all_complete(client):
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch(["echo one-done", "echo two-done", "echo three-done"], ["done"]),
    )
    assert not is_error
    assert SKIPPED not in text
    for word in ("one-done", "two-done", "three-done"):
        assert word in text


async def test_parallel_commands_keep_input_order(client, project):
    # `first` can only finish after `third` ran: that needs all three in flight at once,
    # and it makes the finishing order the reverse of the input order.
    wait_for_go = "for i in $(seq 2000); do [ -f go ] && break; sleep 0.01; done; cat go"
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch(
            [
                {"label": "first", "command": wait_for_go},
                {"label": "second", "command": "echo second-done"},
                {"label": "third", "command": "echo released > go; echo third-done"},
            ],
            ["released", "second-done"],
            concurrency=3,
            timeout=30_000,
        ),
    )
    assert not is_error
    positions = [text.index(f"\n- {label} (") for label in ("first", "second", "third")]
    assert positions == sorted(positions)
    assert answered("first", "released") in text
    assert "timed out" not in text


async def test_concurrency_accepts_a_numeric_string(client):
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch(["echo a-out", "echo b-out"], ["out"], concurrency="2"),
    )
    assert not is_error
    assert text.startswith("Executed 2 commands")


async def test_empty_output_is_rendered_as_no_output(client):
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch([{"label": "quiet", "command": "true"}], ["no output"]),
    )
    assert not is_error
    assert answered("quiet", "(no output)") in text


async def test_string_commands_are_lifted_to_numbered_labels(client):
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch(["echo alpha-line", "echo beta-line"], ["beta-line"]),
    )
    assert not is_error
    assert "\n- cmd_1 (" in text
    assert "\n- cmd_2 (" in text
    assert answered("cmd_2", "beta-line") in text


async def test_commands_and_queries_as_json_strings_are_coerced(client):
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        {"commands": '["echo gamma-line"]', "queries": '["gamma-line"]'},
    )
    assert not is_error
    assert answered("cmd_1", "gamma-line") in text


async def test_queries_are_answered_only_from_this_batch(client):
    _, is_error = await call(
        client,
        "ctx_index",
        {
            "content": "# Field notes\n\nThe pelican census counted flamingo flocks.",
            "source": "field-notes",
        },
    )
    assert not is_error
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch([{"label": "birds", "command": "echo pelican sightings: 3"}], ["pelican"]),
    )
    assert not is_error
    assert "pelican sightings: 3" in text
    assert "flamingo" not in text
    assert "Field notes" not in text


async def test_a_denied_command_blocks_the_whole_batch(client, project):
    deny(project, "Bash(sudo *)")
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch(
            [
                {"label": "harmless", "command": "touch harmless.ran"},
                {"label": "root", "command": "sudo ls /root"},
            ],
            ["anything"],
        ),
    )
    assert is_error
    assert text == "Command blocked by security policy: matches deny pattern Bash(sudo *)"
    assert not (project / "harmless.ran").exists()


async def test_all_commands_timed_out_is_an_error(client):
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch([{"label": "stuck", "command": "sleep 60"}, "echo never"], ["x"], timeout=1000),
    )
    assert is_error
    assert text == "Batch timed out after 1000ms. No output captured."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"queries": ["q"]}, "commands must be a non-empty array"),
        ({"commands": "", "queries": ["q"]}, "commands must be a non-empty array"),
        ({"commands": [], "queries": ["q"]}, "commands must be a non-empty array"),
        ({"commands": ["ls"]}, "queries must hold at least one question"),
        ({"commands": ["ls"], "queries": []}, "queries must hold at least one question"),
        ({"commands": [{"label": "x"}], "queries": ["q"]}, "each command must be"),
        ({"commands": ["ls"], "queries": ["q"], "concurrency": 9}, "concurrency must be"),
    ],
)
async def test_bad_arguments_are_error_results(client, args, message):
    text, is_error = await call(client, "ctx_batch_execute", args)
    assert is_error
    assert message in text


async def test_a_batch_searches_at_most_max_queries_and_says_so(client):
    from ctxmode.store.query import MAX_QUERIES

    queries = [f"quince {n}" for n in range(MAX_QUERIES + 3)]
    text, is_error = await call(
        client, "ctx_batch_execute", batch([{"label": "fruit", "command": "echo quince"}], queries)
    )
    assert not is_error
    assert f"Searched {MAX_QUERIES} queries." in text
    assert "(3 more queries not searched" in text


FAILING_SUITE = """
import pytest


def scale(x):
    return x * 3


@pytest.mark.parametrize("n", range(30))
def test_scale(n):
    assert scale(n) == n * 2, f"scale({n}) should double"


def test_passing():
    assert True
"""


async def test_a_test_run_and_its_diff_answer_with_every_failure_and_changed_line(client, project):
    import subprocess
    import sys

    (project / "test_scale.py").write_text(FAILING_SUITE.replace("x * 3", "x * 2"))
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "."], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=project, check=True)
    (project / "test_scale.py").write_text(FAILING_SUITE)  # the injected bug
    pytest_cmd = f"{sys.executable} -m pytest -q -p no:cacheprovider test_scale.py"
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        batch(
            [
                {"label": "tests", "command": pytest_cmd},
                {"label": "diff", "command": "git diff"},
            ],
            ["failing tests", "AssertionError"],
        ),
    )
    assert not is_error
    assert "## tests (exit 1)" in text
    assert "29 failed, 2 passed" in text  # n=0 passes: 0 * 3 == 0 * 2
    for n in range(1, 30):
        assert f"test_scale.py::test_scale[{n}]" in text
        assert f"scale({n}) should double" in text
    assert "-    return x * 2" in text and "+    return x * 3" in text
    assert len(text.encode()) < 16 * 1024

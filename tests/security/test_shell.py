"""The shell lexer's segments (`ctxmode.security.shell.segments`): besides the words the
policy checks, where each simple command sits, which hook routing reads."""

import pytest

from ctxmode.security.shell import Redirect, segments, split_command


def _where(command: str) -> list[tuple[str, int, int, str]]:
    """(text, pipeline, outer, via) of every segment."""
    return [(s.text, s.pipeline, s.outer, s.via) for s in segments(command)]


@pytest.mark.parametrize(
    ("command", "redirects"),
    [
        ("ls > out", [("", ">", "out")]),
        ("ls >out 2>&1", [("", ">", "out"), ("2", ">&", "1")]),
        ("ls 2> 'my log' >&2", [("2", ">", "my log"), ("", ">&", "2")]),
        ("ls >| f &>>log {fd}>x 2>&-", [("", ">|", "f"), ("", "&>>", "log"), ("{fd}", ">", "x")]),
        ("jq . < in.json <<< '{}'", [("", "<", "in.json"), ("", "<<<", "{}")]),
        ("cat <<'EOF'\nbody\nEOF", [("", "<<", "EOF")]),
        ("ls >", [("", ">", "")]),
    ],
)
def test_redirections_are_parsed_into_fd_operator_and_target(command, redirects):
    found = segments(command)[0].redirects
    assert found[: len(redirects)] == tuple(Redirect(*r) for r in redirects)


def test_here_document_bodies_belong_to_the_command_announcing_them():
    first, second = segments("cat <<A; wc -l <<-B\nalpha\nA\n\tbeta\n\tgamma\n\tB\necho done")[:2]
    assert (first.text, first.heredoc) == ("cat <<A", "alpha")
    assert (second.text, second.heredoc) == ("wc -l <<-B", "\tbeta\n\tgamma")


def test_segments_joined_by_a_pipe_share_a_pipeline():
    assert [(t, p) for t, p, _, _ in _where("a | b |& c && d | e; f || g")] == [
        ("a", 0),
        ("b", 0),
        ("c", 0),
        ("d", 3),
        ("e", 3),
        ("f", 5),
        ("g", 6),
    ]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('echo "$(curl u)"', [("curl u", 0, 1, "$("), ('echo "$(curl u)"', 1, -1, "")]),
        (
            "echo `curl u | jq`",
            [("curl u", 0, 2, "`"), ("jq", 0, 2, "`"), ("echo `curl u | jq`", 2, -1, "")],
        ),
        ("diff <(a) >(b)", [("a", 0, 2, "<("), ("b", 1, 2, ">("), ("diff <(a) >(b)", 2, -1, "")]),
        ('jq . <<< "$(a)"', [("a", 0, 1, "<"), ('jq . <<< "$(a)"', 1, -1, "")]),
        ("ls > $(a)", [("a", 0, 1, ">"), ("ls > $(a)", 1, -1, "")]),
        (
            "echo $(a $(b))",
            [("b", 0, 1, "$("), ("a $(b)", 1, 2, "$("), ("echo $(a $(b))", 2, -1, "")],
        ),
        (
            "cat <<EOF | sh\na\nEOF",
            [("cat <<EOF", 0, -1, ""), ("sh", 0, -1, ""), ("a", 2, 1, "<<")],
        ),
        ("cat <<EOF\n$(a)\nEOF", [("cat <<EOF", 0, -1, ""), ("a", 1, 0, "<<")]),
    ],
)
def test_nested_commands_know_the_command_they_ran_in_and_how(command, expected):
    assert _where(command) == expected


def test_the_text_of_each_segment_is_what_split_command_gives():
    command = 'x=$(curl -s u | jq .a) && echo "$x" > out; bash <<EOF\nwget -q u\nEOF'
    assert tuple(s.text for s in segments(command)) == split_command(command)
    assert split_command(command) == (
        "curl -s u",
        "jq .a",
        "x=$(curl -s u | jq .a)",
        'echo "$x" > out',
        "bash <<EOF",
        "wget -q u",
    )


def test_segments_are_computed_once_per_command():
    command = "echo $(date) | tee out"
    assert segments(command) is segments(command, 0)

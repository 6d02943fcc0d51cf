"""PreToolUse → PostToolUse markers (ctxmode.session.markers)."""

import os
import time

from ctxmode.session import markers


def _files() -> list[str]:
    folder = markers.markers_dir()
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_a_curl_redirect_gives_exactly_one_redirect_event_and_the_marker_is_deleted():
    markers.write_redirect("s1", "Bash", "bash_redirected", 8192, "curl -s https://x.dev")
    events = markers.consume("s1", "Read")
    assert [(e.type, e.data, e.bytes_avoided) for e in events] == [
        ("bash_redirected", "Bash: curl -s https://x.dev", 8192)
    ]
    assert _files() == []
    assert markers.consume("s1", "Read") == []


def test_a_large_read_gives_read_redirected_with_the_file_size():
    markers.write_redirect("s1", "Read", "read-redirected", 73_421)
    (event,) = markers.consume("s1", "Read")
    assert (event.type, event.bytes_avoided) == ("read_redirected", 73_421)


def test_no_marker_no_event():
    assert markers.consume("s1", "Bash") == []


def test_summaries_are_cut_to_200_characters():
    markers.write_redirect("s1", "WebFetch", "webfetch_redirected", 16_384, "u" * 500)
    (event,) = markers.consume("s1", "WebFetch")
    assert event.data == "WebFetch: " + "u" * 200


def test_a_redirect_of_unknown_size_is_recorded_without_claiming_bytes():
    markers.write_redirect("s1", "Bash", "bash_redirected", 0, "curl")
    (event,) = markers.consume("s1", "Bash")
    assert (event.type, event.bytes_avoided, event.data) == ("bash_redirected", 0, "Bash: curl")


def test_a_denial_becomes_a_rejected_event_at_the_next_post_tool_of_any_tool():
    markers.write_rejected("s1", "WebFetch", "use ctx_fetch_and_index")
    (event,) = markers.consume("s1", "Edit")
    assert (event.type, event.data) == ("rejected", "WebFetch: use ctx_fetch_and_index")


def test_markers_of_another_session_are_left_alone():
    markers.write_rejected("other", "Bash", "no")
    assert markers.consume("s1", "Bash") == []
    assert [e.type for e in markers.consume("other", "Bash")] == ["rejected"]


def test_a_slow_call_is_recorded_only_for_its_own_tool():
    markers.write_start("s1", "Bash")
    started = int(time.time() * 1000)
    assert markers.consume("s1", "Read", now_ms=started + 9000) == []
    (event,) = markers.consume("s1", "Bash", now_ms=started + 9000)
    assert event.type == "tool_latency"
    assert event.data.startswith("Bash: ") and event.data.endswith("ms")


def test_a_fast_call_records_no_latency_but_consumes_its_start():
    markers.write_start("s1", "Bash")
    assert markers.consume("s1", "Bash") == []
    assert _files() == []


def test_parallel_calls_of_one_tool_each_take_one_start():
    markers.write_start("s1", "Read")
    markers.write_start("s1", "Read")
    markers.consume("s1", "Read")
    assert len(_files()) == 1


def test_stale_markers_are_deleted_unread():
    path = markers.write_rejected("s1", "Bash", "old")
    old = time.time() - markers.STALE_SECONDS - 10
    os.utime(path, (old, old))
    assert markers.consume("s1", "Bash") == []
    assert _files() == []

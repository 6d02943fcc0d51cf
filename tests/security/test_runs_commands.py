"""Wrappers and commands that run other commands: a deny rule on ``rm`` also holds when
``rm`` is run through them (the red team's bypasses of the third hostile round)."""

import pytest

from ctxmode.security import check_command

from .policies import DENY, NONE, command_policy


@pytest.mark.parametrize(
    "command",
    [
        "setsid rm -rf build",
        "taskset 0x1 rm -rf build",
        "taskset -c 0 rm -rf build",
        "flock /tmp/lock rm -rf build",
        "flock /tmp/lock -c 'rm -rf build'",
        "chrt 10 rm -rf build",
        "strace -f -o /dev/null rm -rf build",
        "script -q -c 'rm -rf build' /dev/null",
        "awk 'BEGIN { system(\"rm -rf build\") }'",
        "awk 'BEGIN { \"rm -rf build\" | getline x }'",
        "sed -n '1e rm -rf build' notes.txt",
        "tar cf /dev/null notes.txt --checkpoint=1 --checkpoint-action=exec='rm -rf build'",
        "git -c alias.x='!rm -rf build' x",
        "vim -c '!rm -rf build' -c q",
        "mapfile -C 'rm -rf build' -c 1 < notes.txt",
        "find . -maxdepth 0 -exec rm -rf build ';'",
    ],
)
def test_a_denied_command_run_through_another_is_denied(project, command):
    policy = command_policy(project, deny=["Bash(rm *)"])
    assert check_command(policy, command).decision is DENY, command


@pytest.mark.parametrize(
    "command",
    [
        "awk '{ print $1 }' notes.txt",
        "sed -n '1p' notes.txt",
        "git -c color.ui=always log",
        "tar cf out.tar notes.txt",
        "setsid ls",
        "vim -c 'set number' notes.txt",
    ],
)
def test_the_same_tools_running_nothing_denied_are_left_alone(project, command):
    policy = command_policy(project, deny=["Bash(rm *)"])
    assert check_command(policy, command).decision is NONE, command

"""The words of one simple command: assignments, wrappers peeled off, shell quoting.

``sudo -u x timeout 5 rm -rf /`` is also read as ``timeout 5 rm -rf /`` and
``rm -rf /``: `_peeled` takes wrappers (``sudo``, ``env``, ``timeout``, ``nohup``,
``xargs`` ...) off one at a time. Plain word lists only: no lexing happens here.
"""

import os
import re

ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})


def _options(text: str) -> frozenset[str]:
    return frozenset(text.split())


# wrapper -> (options that take a value, positional arguments before the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (
        _options(
            "-u -g -C -D -h -p -r -t -U -T --user --group --chdir --prompt --role --type"
            " --other-user --host --close-from --command-timeout"
        ),
        0,
    ),
    "doas": (_options("-u -C"), 0),
    "env": (_options("-u -C -S --unset --chdir --split-string"), 0),
    "nice": (_options("-n --adjustment"), 0),
    "nohup": (frozenset(), 0),
    "timeout": (_options("-s -k --signal --kill-after"), 1),
    "time": (_options("-f -o --format --output"), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (_options("-a"), 0),
    "stdbuf": (_options("-i -o -e --input --output --error"), 0),
    "ionice": (_options("-c -n -p -P -u --class --classdata"), 0),
    "watch": (_options("-n --interval"), 0),
    "unbuffer": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "coproc": (frozenset(), 0),
    "taskset": (frozenset(), 1),  # taskset MASK cmd (-c LIST cmd: LIST is its one value)
    "flock": (_options("-w -E -c --timeout --conflict-exit-code --command"), 1),
    "chrt": (_options("-T -P -D --sched-runtime --sched-period --sched-deadline"), 1),
    "strace": (_options("-e -o -p -s -u -E -I -a -b -O -P -S -X --output --signal"), 0),
    "ltrace": (_options("-e -o -p -s -u -a -n --output"), 0),
    "firejail": (frozenset(), 0),
    "proxychains": (_options("-f"), 0),
    "proxychains4": (_options("-f"), 0),
    "torsocks": (frozenset(), 0),
    "chroot": (frozenset(), 1),
    "runuser": (_options("-u -g -G --user --group --supp-group"), 0),
    "caffeinate": (frozenset(), 0),
    "busybox": (frozenset(), 0),  # busybox rm ... (an applet; busybox sh is a shell too)
    "fakeroot": (_options("-l -s -i --lib --faked --save-file --load-file"), 0),
    "eatmydata": (frozenset(), 0),
    "unshare": (_options("-S -G -R -w --setuid --setgid --root --wd --map-user --map-group"), 0),
    "parallel": (
        _options(
            "-j -S -a -I -N -n -P -E -d --jobs --sshlogin --arg-file --delay --timeout"
            " --results --joblog --tmpdir --workdir --colsep --delimiter --max-args"
            " --max-replace-args --sshloginfile --env --memfree --load --retries --halt"
        ),
        0,
    ),
    "systemd-run": (_options("-u -p -E --unit --property --setenv --uid --gid"), 0),
    "xargs": (
        _options(
            "-I -L -n -P -s -d -E -a --arg-file --delimiter --max-args --max-procs"
            " --max-chars --replace --eof --max-lines --process-slot-var"
        ),
        0,
    ),
}


def peel(words: list[str]) -> list[str] | None:
    """``sudo -u x rm -rf /`` -> ``rm -rf /``; ``None`` when the command is no wrapper."""
    name = os.path.basename(words[0])
    spec = _WRAPPERS.get(name)
    if spec is None or (name == "command" and words[1:2] in (["-v"], ["-V"])):
        return None
    with_value, positional = spec
    i = 1
    while i < len(words):
        w = words[i]
        if w == "--":
            i += 1
            break
        if w.startswith("-") and len(w) > 1:
            i += 2 if w in with_value else 1
        elif name == "env" and ASSIGNMENT.match(w):
            i += 1
        elif positional:
            positional -= 1
            i += 1
        else:
            break
    return words[i:] or None


def _peeled(words: list[str]) -> list[list[str]]:
    """``words`` and each command left after peeling one more wrapper off it."""
    out = [words] if words else []
    while out and len(out) <= 8:
        inner = peel(out[-1])
        if inner is None:
            break
        out.append(inner)
    return out


_SAFE_WORD = re.compile(r"[\w@%+=:,./-]+")
_PLACEHOLDER = "$ARG"


def _quote(word: str) -> str:
    """Shell-quote ``word`` (the non-literal placeholder stays bare)."""
    if word == _PLACEHOLDER or _SAFE_WORD.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"

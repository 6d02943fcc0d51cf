"""Terminal control out of a run's output: what the agent gets is text, not a terminal's input.

A run's output may hold what only a terminal acts on: colour and cursor sequences (CSI),
title, clipboard and hyperlink commands (OSC), a bell, NULs, carriage returns of a progress
bar. Passed on raw, they reach the agent's context and the host's own terminal UI. `plain`
makes the decoded output text:

* escape sequences (CSI, OSC and the other string commands, two-byte escapes, and their
  8-bit C1 forms) are removed;
* CRLF becomes LF, and a line a carriage return rewrote keeps what was written last (a
  progress bar's final state);
* a backspace overstrike (``X\\bX`` bold, ``_\\bX`` underline, as `man` prints) keeps the
  character shown;
* any other C0 control but tab and newline, and DEL, is shown as its Unicode control
  picture (``\\0`` as ␀: a ``find -print0`` list keeps its separators); other C1
  controls are removed.

Most output holds none of these: `has_controls` says so on the raw bytes at C speed (one
``bytes.translate``, ~1 ms per MB), and only output that does is searched by a regex.
"""

import re

# C0 controls but tab and newline, DEL, and 0xC2: the lead byte of the UTF-8 form of the
# C1 controls (U+0080..U+009F); text with a "°" or "£" (also 0xC2) takes the slow path.
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, 0xC2])
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SEQUENCE_START = re.compile(r"[\x1b\x90\x98\x9b\x9d-\x9f]")
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor, erase
    # OSC, DCS, SOS, PM, APC: up to their terminator (BEL or ST), else to the line's end
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]"  # two-byte escapes (ESC 7, ESC c) and character set choices
)
_CRS = re.compile(r"\r+")
_OVERSTRIKE = re.compile(r"[^\x08\n]\x08")
_OVERSTRIKE_PASSES = 4  # ``a\b\bc``: each pass undoes one backspace in a run of them
_PICTURES = {chr(c): chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_PICTURES["\x7f"] = "\u2421"  # ␡
_TABLE = str.maketrans(_PICTURES)


def has_controls(data: bytes) -> bool:
    """Might the UTF-8 text of `data` hold anything `plain` changes? (False: it holds
    none; True may be a "°".)"""
    return len(data.translate(None, _CONTROL_BYTES)) != len(data)


def plain(text: str) -> str:
    """`text` without terminal controls (see the module's docstring)."""
    if _CONTROLS.search(text) is None:
        return text
    if _SEQUENCE_START.search(text) is not None:
        text = _SEQUENCE.sub("", text)
    if "\r" in text:
        if "\r\r" in text:
            text = _CRS.sub("\r", text)
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            text = _rewritten(text)
    for _ in range(_OVERSTRIKE_PASSES):
        if "\x08" not in text:
            break
        text = _OVERSTRIKE.sub("", text)
    # str.translate is fastest on ASCII text (a NUL flood), a regex on the rest
    return text.translate(_TABLE) if text.isascii() else _CONTROLS.sub(_picture, text)


def _picture(control: re.Match[str]) -> str:
    """A C0 control or DEL as its control picture (␀, ␇, ␛); a C1 control as nothing."""
    return _PICTURES.get(control.group(), "")


def _rewritten(text: str) -> str:
    """Each line rewritten with carriage returns as a terminal shows it last (its last
    non-empty part); the lines are found with `str.find`, not a regex tried everywhere."""
    parts: list[str] = []
    at = 0
    while True:
        cr = text.find("\r", at)
        if cr < 0:
            break
        start = text.rfind("\n", at, cr) + 1
        end = text.find("\n", cr)
        end = len(text) if end < 0 else end
        states = [state for state in text[start:end].split("\r") if state]
        parts += [text[at:start], states[-1] if states else ""]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def decode(data: bytes) -> str:
    """Output bytes as text: UTF-8 (invalid bytes replaced), terminal controls out."""
    text = data.decode("utf-8", "replace")
    return plain(text) if has_controls(data) else text

"""Turn user code into the script file a runtime runs.

The wrappers and file preambles are real files in ``preambles/``. A file given to
``execute_file`` reaches the code through the ``CTXMODE_FILE_PATH`` environment variable,
never spliced into source text, so no path can break quoting or be expanded by a shell.
"""

import re
from functools import cache
from pathlib import Path

from ctxmode.executor.runtimes import EXTENSIONS

_PREAMBLES = Path(__file__).parent / "preambles"
_USER_MARK = "//CTXMODE_USER_CODE"
_FILE_MARK = "//CTXMODE_FILE_CONTENT"
_ESM = re.compile(r"^\s*(import\s[^(]|export\s)", re.MULTILINE)
_AWAIT = re.compile(r"\bawait\b")
_PHP_OPEN = re.compile(r"^\s*<\?(php)?")
_FUTURE = re.compile(r"^from __future__ import [^\n]*\n", re.MULTILINE)


@cache
def _read(name: str) -> str:
    return (_PREAMBLES / name).read_text(encoding="utf-8")


def _javascript(code: str, with_file: bool) -> tuple[str, str]:
    if _ESM.search(code):  # ES module syntax: .mjs, where top-level await also works
        return "script.mjs", (_read("file_content.mjs") if with_file else "") + code
    if _AWAIT.search(code):
        code = (
            "(async () => {\n" + code + "\n})().catch((error) => {\n"
            "  console.error(error);\n  process.exitCode = 1;\n});\n"
        )
    return "script.js", (_read("file_content.js") if with_file else "") + code


def _wrapped_main(language: str, code: str, with_file: bool) -> str:
    """Go and Rust: code without its own entry point goes inside ``main``."""
    has_main = "package " in code if language == "go" else re.search(r"\bfn\s+main\s*\(", code)
    if has_main and not with_file:
        return code
    template = _read(f"main.{EXTENSIONS[language]}")
    preamble = _read(f"file_content.{EXTENSIONS[language]}") if with_file else ""
    return template.replace(_FILE_MARK, preamble.strip()).replace(_USER_MARK, code)


def build_script(language: str, code: str, with_file: bool = False) -> tuple[str, str]:
    """(file name, source) for running `code`; `with_file` adds the FILE_CONTENT preamble."""
    ext = EXTENSIONS[language]
    if language == "javascript":
        return _javascript(code, with_file)
    if language == "typescript":
        return "script.ts", (_read("file_content.ts") if with_file else "") + code
    if language in ("go", "rust"):
        return f"script.{ext}", _wrapped_main(language, code, with_file)
    if language == "php":
        body = _PHP_OPEN.sub("", code, count=1) if _PHP_OPEN.match(code) else code
        head = _read("file_content.php") if with_file else "<?php\n"
        return "script.php", head + body
    if language == "python" and with_file:
        futures = "".join(_FUTURE.findall(code))
        return "script.py", futures + _read("file_content.py") + _FUTURE.sub("", code)
    preamble = _read(f"file_content.{ext}") if with_file else ""
    return f"script.{ext}", preamble + code

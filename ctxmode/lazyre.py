"""Regular expressions compiled on first use.

A hook process lives for one call and uses a few of the patterns of the modules it loads
(extraction, redaction, the shell readers); compiling all of them at import cost it
several milliseconds for nothing.
"""

import re
from collections.abc import Callable, Iterator

from ctxmode.typenames import Any


class LazyPattern:
    """A `re.Pattern` compiled the first time it is used."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    @property
    def pattern(self) -> str:
        return self._source

    def search(self, text: str, *span: int) -> re.Match[str] | None:
        return self.compiled.search(text, *span)

    def match(self, text: str, *span: int) -> re.Match[str] | None:
        return self.compiled.match(text, *span)

    def fullmatch(self, text: str, *span: int) -> re.Match[str] | None:
        return self.compiled.fullmatch(text, *span)

    def findall(self, text: str, *span: int) -> list[Any]:
        return self.compiled.findall(text, *span)

    def finditer(self, text: str, *span: int) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text, *span)

    def split(self, text: str, maxsplit: int = 0) -> list[str]:
        return self.compiled.split(text, maxsplit=maxsplit)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        return self.compiled.sub(repl, text, count=count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0
    ) -> tuple[str, int]:
        return self.compiled.subn(repl, text, count=count)

"""Turn a fetched body into text plus the chunker kind it should be indexed as.

Dispatch on the media type, falling back on the URL's extension and on sniffing:

* HTML / XHTML → markdown (main content only, see `ctxmode.store.htmlmd`), kind
  ``markdown``.
* JSON (``application/json``, ``*+json``) → re-indented JSON, kind ``json`` for the JSON
  chunker; a body that does not parse is kept as ``plain``.
* ``text/markdown`` → as is, kind ``markdown``.
* Other text (``text/plain``, XML, CSS, scripts …) → as is; kind from the URL's file
  extension when it names one (a raw ``README.md`` is markdown, ``main.py`` is python
  code), else ``plain``.
* Images, audio, video, fonts, PDFs, archives and anything with NUL bytes → refused.

Text is decoded by the byte-order mark, then the ``charset`` parameter, then an HTML
``<meta charset>``, then UTF-8 (undecodable bytes replaced, never an error).
"""

import codecs
import json
import re
from typing import NamedTuple
from urllib.parse import urlsplit

from ctxmode.fetch.errors import UnsupportedContentError
from ctxmode.store.codechunks import EXTENSION_LANGUAGE
from ctxmode.store.kinds import (
    JSON_EXTENSIONS,
    MARKDOWN_EXTENSIONS,
    PLAIN_EXTENSIONS,
    kind_for_name,
)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
JSON_TYPES = frozenset({"application/json", "text/json", "application/x-ndjson"})
BINARY_TOPS = frozenset({"image", "audio", "video", "font", "model"})
BINARY_TYPES = frozenset(
    {
        "application/pdf",
        "application/zip",
        "application/gzip",
        "application/x-tar",
        "application/x-7z-compressed",
        "application/wasm",
        "application/vnd.ms-excel",
        "application/msword",
    }
)
SNIFF_BYTES = 4096
STRAY_NUL_SHARE = 0.01  # of the sniffed head, in a body labelled as text
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([\w.:-]+)""", re.I)
_HTML_START = re.compile(
    r"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_KNOWN_EXTENSIONS = (
    MARKDOWN_EXTENSIONS | JSON_EXTENSIONS | PLAIN_EXTENSIONS | frozenset(EXTENSION_LANGUAGE)
)


class Converted(NamedTuple):
    """Text ready for ``ContentStore.index_text(text, label, kind=kind)``."""

    text: str
    kind: str  # "markdown" | "json" | "plain" | a code language


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None


def decode_text(body: bytes, charset: str | None = None, *, html: bool = False) -> str:
    """Decode a body: BOM, then `charset`, then (for HTML) a meta charset, then UTF-8."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return body.decode(name, errors="replace")
    encoding = _codec(charset)
    if encoding is None and html:
        found = _META_CHARSET.search(body[:SNIFF_BYTES])
        encoding = _codec(found.group(1).decode("ascii", "replace")) if found else None
    return body.decode(encoding or "utf-8", errors="replace")


def _path_kind(url: str) -> str | None:
    """The chunker kind a URL's file extension names, or None when it names none."""
    path = urlsplit(url).path.lower()
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot <= 0 or name[dot:] not in _KNOWN_EXTENSIONS:
        return None
    return kind_for_name(name)


def _json(text: str) -> Converted:
    try:
        data = json.loads(text)
        return Converted(json.dumps(data, indent=2, ensure_ascii=False), "json")
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
        return Converted(text, "plain")


def _html(text: str, url: str) -> Converted:
    if "<" not in text:  # nothing to parse; bs4 would only warn
        return Converted(text, "plain")
    from ctxmode.store.htmlmd import html_to_markdown

    try:
        return Converted(html_to_markdown(text, url), "markdown")
    except RecursionError as exc:  # markdownify recurses per nesting level
        raise UnsupportedContentError("HTML nested too deeply to convert") from exc


def _is_binary(media: str, head: bytes) -> bool:
    if media.split("/", 1)[0] in BINARY_TOPS or media in BINARY_TYPES:
        return True
    if any(head.startswith(bom) for bom, _ in _BOMS):
        return False  # UTF-16/32 text has NUL bytes
    nuls = head.count(b"\x00")
    # A stray NUL in a page labelled as text is dropped, not a reason to refuse the page.
    return nuls > (len(head) * STRAY_NUL_SHARE if _is_textual(media) else 0)


def _is_textual(media: str) -> bool:
    return (
        media.startswith("text/")
        or media in HTML_TYPES
        or media in JSON_TYPES
        or media.endswith(("+json", "+xml"))
    )


def convert(
    body: bytes, content_type: str = "", *, charset: str | None = None, url: str = ""
) -> Converted:
    """Text and chunker kind for a fetched body.

    `content_type` is the bare media type (``text/html``), `url` the final URL: it
    resolves relative links and names the kind of extension-typed text files.

    Raises:
        UnsupportedContentError: binary content (images, PDFs, archives, NUL bytes).
    """
    media = content_type.split(";", 1)[0].strip().lower()
    if _is_binary(media, body[:SNIFF_BYTES]):
        if _is_textual(media):
            raise UnsupportedContentError(
                f"cannot index this {media} content: it holds binary data (NUL bytes)"
            )
        shown = media or "binary data"
        raise UnsupportedContentError(f"cannot index {shown} content (only text, HTML and JSON)")
    if b"\x00" in body and not any(body.startswith(bom) for bom, _ in _BOMS):
        body = body.replace(b"\x00", b"")
    if media in HTML_TYPES:
        return _html(decode_text(body, charset, html=True), url)
    text = decode_text(body, charset)
    if media in JSON_TYPES or media.endswith("+json"):
        return _json(text)
    if media in MARKDOWN_TYPES:
        return Converted(text, "markdown")
    by_path = _path_kind(url)
    if not media or media == "application/octet-stream":
        if _HTML_START.match(text[:SNIFF_BYTES]):
            return _html(decode_text(body, charset, html=True), url)
        if by_path is None and text.lstrip()[:1] in ("{", "["):
            converted = _json(text)
            if converted.kind == "json":
                return converted
    if by_path == "json":
        return _json(text)
    return Converted(text, by_path or "plain")

"""`convert`: HTML to compact markdown, JSON kept as JSON, text by media type and extension."""

import json
import subprocess
import sys

import pytest

from ctxmode.fetch.convert import convert, decode_text
from ctxmode.fetch.errors import UnsupportedContentError
from ctxmode.store.kinds import chunk_text

from .support import PAGE


def test_html_becomes_markdown_without_page_noise():
    text, kind = convert(PAGE.encode(), "text/html", url="https://docs.example/guide/")
    assert kind == "markdown"
    assert text.startswith("# Widget Guide")
    assert "## Install" in text and "## Configure" in text
    assert "```python\nimport widget\nwidget.frobnicate(level=3)\n```" in text
    assert "[the API](https://docs.example/api)" in text
    assert "`WIDGET_HOME`" in text
    for noise in ("tracking", "color: red", "Site banner", "Copyright footer", "About"):
        assert noise not in text


def test_page_title_heads_content_without_an_h1():
    html = "<html><head><title>Release notes</title></head><body><p>Fixed bugs.</p></body></html>"
    text, _ = convert(html.encode(), "text/html")
    assert text == "# Release notes\n\nFixed bugs."


def test_links_images_and_fences_stay_compact():
    html = (
        "<body><p><a href='#top'>top</a> <a href='javascript:void(0)'>js</a> "
        "<a href='https://x.example/'>https://x.example/</a> <img src='data:image/png;base64,AAAA'>"
        "</p><pre>a ``` b</pre><aside>sidebar</aside></body>"
    )
    text, _ = convert(html.encode(), "text/html")
    assert "top js <https://x.example/>" in text
    assert "data:" not in text and "sidebar" not in text
    assert "````\na ``` b\n````" in text


def test_base_href_resolves_relative_links():
    html = "<head><base href='https://cdn.example/v2/'></head><body><a href='x'>x doc</a></body>"
    assert convert(html.encode(), "text/html", url="https://e.com/").text == (
        "[x doc](https://cdn.example/v2/x)"
    )


def test_article_header_is_content_not_chrome():
    html = (
        "<body><header>site</header><article><header><h1>Post</h1></header>"
        "<p>Body.</p></article></body>"
    )
    text, _ = convert(html.encode(), "text/html")
    assert text.startswith("# Post") and "site" not in text


def test_hidden_and_navigation_roles_are_dropped():
    html = (
        "<body><div role='navigation'>menu</div><div hidden>secret</div>"
        "<div aria-hidden='true'>icon</div><p>kept</p></body>"
    )
    assert convert(html.encode(), "text/html").text == "kept"


def test_json_is_reindented_for_the_json_chunker():
    body = json.dumps({"users": [{"id": 1, "name": "ada"}]}).encode()
    text, kind = convert(body, "application/json")
    assert kind == "json"
    assert json.loads(text) == {"users": [{"id": 1, "name": "ada"}]}
    assert chunk_text(text, kind)
    assert convert(body, "application/vnd.api+json").kind == "json"


def test_invalid_json_falls_back_to_plain_text():
    assert convert(b"{not json", "application/json") == ("{not json", "plain")


@pytest.mark.parametrize("depth", [1_200, 500_000])
def test_json_nested_deeper_than_python_recurses_is_plain_text_not_a_crash(depth):
    body = b"[" * depth + b"]" * depth
    assert convert(body, "application/json") == (body.decode(), "plain")


@pytest.mark.parametrize(
    ("ctype", "url", "kind"),
    [
        ("text/plain", "https://x/notes.txt", "plain"),
        ("text/plain", "https://x/page", "plain"),
        ("text/plain", "https://raw.example/README.md", "markdown"),
        ("text/plain", "https://raw.example/data.json", "json"),
        ("text/plain", "https://raw.example/src/main.py", "python"),
        ("text/markdown", "https://x/page", "markdown"),
        ("text/xml", "https://x/feed", "plain"),
        ("", "https://x/page", "plain"),
    ],
)
def test_text_kind_follows_media_type_then_extension(ctype, url, kind):
    body = b'{"a": 1}' if kind == "json" else b"def main():\n    pass\n"
    assert convert(body, ctype, url=url).kind == kind


def test_untyped_bodies_are_sniffed():
    assert convert(b"<!DOCTYPE html><html><body><p>hi</p></body></html>", "").kind == "markdown"
    assert convert(b'[{"id": 1}]', "").kind == "json"
    assert convert(b"<not html at all", "").kind == "plain"


def test_html_without_markup_is_plain_text():
    assert convert(b"https://example.com/just-a-url.html", "text/html").kind == "plain"


@pytest.mark.parametrize(
    ("body", "ctype"),
    [
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"%PDF-1.7", "application/pdf"),
        (b"PK\x03\x04\x00\x00", "application/octet-stream"),
        (b"text\x00with nul", "text/plain"),
    ],
)
def test_binary_content_is_refused(body, ctype):
    with pytest.raises(UnsupportedContentError) as info:
        convert(body, ctype)
    assert info.value.code == "unsupported_content"


def test_charset_comes_from_header_then_meta_then_utf8():
    assert decode_text("café".encode("latin-1"), "iso-8859-1") == "café"
    meta = '<meta charset="windows-1252"><p>naïve</p>'.encode("cp1252")
    assert "naïve" in decode_text(meta, None, html=True)
    assert decode_text("ü".encode(), "no-such-charset") == "ü"
    assert decode_text(b"\xef\xbb\xbfbom", "latin-1") == "bom"
    assert decode_text("ütf16".encode("utf-16"), None) == "ütf16"
    assert decode_text(b"bad \xff byte") == "bad \ufffd byte"


def test_deeply_nested_html_is_refused_not_crashed():
    html = "<div>" * 5000 + "deep" + "</div>" * 5000
    with pytest.raises(UnsupportedContentError, match="nested too deeply"):
        convert(html.encode(), "text/html")


def test_importing_the_package_loads_no_html_library():
    probe = (
        "import sys, ctxmode.fetch\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('bs4', 'markdownify')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, encoding="utf-8", check=True
    )
    assert out.stdout.strip() == "[]"


def test_a_stray_nul_in_a_page_is_dropped_not_a_refusal():
    page = b"<html><body><h1>Guide</h1><p>Install with pip.\x00</p>" + b"<p>more</p>" * 20
    converted = convert(page, "text/html")
    assert "Install with pip." in converted.text and "\x00" not in converted.text


def test_binary_labelled_as_html_says_so():
    with pytest.raises(UnsupportedContentError) as info:
        convert(b"\x00\x01\x02\x00" * 100, "text/html")
    assert "holds binary data" in str(info.value) and "text/html" in str(info.value)

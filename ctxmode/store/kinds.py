"""Which chunker a text gets: by file name (`kind_for_name`), then by kind (`chunk_text`)."""

from ctxmode.store.chunking import Chunk, chunk_json, chunk_markdown, chunk_plain
from ctxmode.store.codechunks import EXTENSION_LANGUAGE, chunk_code
from ctxmode.store.markup import chunk_html, chunk_xml, chunk_yaml

MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdx", ".rst", ".mkd", ".mdown", ".qmd"})
JSON_EXTENSIONS = frozenset({".json", ".jsonl", ".geojson", ".ipynb", ".har"})
PLAIN_EXTENSIONS = frozenset({".txt", ".log", ".csv", ".tsv", ".out", ".text"})
XML_EXTENSIONS = frozenset({".xml", ".xsd", ".xsl", ".xslt", ".rss", ".atom", ".plist", ".pom"})
HTML_EXTENSIONS = frozenset({".html", ".htm", ".xhtml"})
YAML_EXTENSIONS = frozenset({".yaml", ".yml"})


def kind_for_name(name: str | None) -> str:
    """``markdown``, ``json``, ``xml``, ``html``, ``yaml``, ``plain`` or a code language,
    judged from a file name."""
    if not name:
        return "markdown"
    lowered = name.lower()
    dot = lowered.rfind(".")
    ext = lowered[dot:] if dot > lowered.rfind("/") else ""
    if ext in MARKDOWN_EXTENSIONS:
        return "markdown"
    if ext in JSON_EXTENSIONS:
        return "json"
    if ext in XML_EXTENSIONS:
        return "xml"
    if ext in HTML_EXTENSIONS:
        return "html"
    if ext in YAML_EXTENSIONS:
        return "yaml"
    if ext in EXTENSION_LANGUAGE:
        return EXTENSION_LANGUAGE[ext]
    if ext in PLAIN_EXTENSIONS:
        return "plain"
    return "markdown"


def chunk_text(text: str, kind: str = "markdown") -> list[Chunk]:
    """Chunk `text` as `kind` (see `kind_for_name`)."""
    if not text.strip():
        return []
    if kind == "markdown":
        head = text[:200].lstrip().lower()
        if head.startswith(("<!doctype html", "<html")):
            return chunk_html(text)
        if head.startswith("<?xml"):
            return chunk_xml(text)
        return chunk_markdown(text)
    if kind == "plain":
        return chunk_plain(text)
    if kind == "json":
        return chunk_json(text)
    if kind == "xml":
        return chunk_xml(text)
    if kind == "html":
        return chunk_html(text)
    if kind == "yaml":
        return chunk_yaml(text)
    return chunk_code(text, kind)

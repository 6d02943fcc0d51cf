"""HTML → markdown for fetched and indexed pages: the main content, compact, ready for chunking.

The only module that imports beautifulsoup4 and markdownify; `ctxmode.fetch.convert` and
`ctxmode.store.markup` import it inside a function, so neither library loads until a page
is converted.

Steps: parse with the stdlib-backed ``html.parser``; keep the main content (``<main>``,
``role=main``, a lone ``<article>``, else ``<body>``); drop what is never content (scripts,
styles, forms, embedded media, navigation, page-level header/footer/aside, hidden
elements); convert with ATX headings and fenced code blocks (language from
``language-*`` / ``lang-*`` / ``highlight-*`` classes); links become ``[text](absolute
url)``, in-page and ``javascript:`` links plain text, images are dropped.
"""

import re
from typing import Any
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag
from markdownify import ATX, MarkdownConverter

ALWAYS_DROP = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "form",
    "button",
    "input",
    "select",
    "textarea",
    "dialog",
    "nav",
    "link",
    "meta",
)
PAGE_CHROME = ("header", "footer", "aside")  # page-level only: kept inside main/article
NOISE_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "complementary"})
_LANG_CLASS = re.compile(r"^(?:language|lang|highlight(?:-source)?|sourceCode)-([\w+#.-]+)$")
_BLANK_RUNS = re.compile(r"\n{3,}")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)


def _language(pre: Any) -> str:
    """A fence language from ``language-*``-style classes on <pre> or its <code>."""
    nodes = [pre, *(c for c in pre.children if isinstance(c, Tag) and c.name == "code")]
    for node in nodes:
        for cls in node.get("class") or ():
            found = _LANG_CLASS.match(cls)
            if found:
                return found.group(1).lower()
    return ""


class _Converter(MarkdownConverter):
    """markdownify with compact links, no images and fences that survive backticks."""

    def __init__(self, base_url: str) -> None:
        super().__init__(
            heading_style=ATX,
            bullets="-",
            escape_asterisks=False,
            escape_underscores=False,
            strip_document="strip",
        )
        self.base_url = base_url

    def convert_a(self, el: Any, text: str, parent_tags: set[str]) -> str:
        label = text.strip()
        href = str(el.get("href") or "").strip()
        if "_noformat" in parent_tags or not label:
            return text
        if not href or href.startswith("#") or href.lower().startswith(("javascript:", "data:")):
            return text
        href = urljoin(self.base_url, href) if self.base_url else href
        lead = text[: len(text) - len(text.lstrip())]
        trail = text[len(text.rstrip()) :]
        if label == href:
            return f"{lead}<{href}>{trail}"
        return f"{lead}[{label}]({href}){trail}"

    def convert_img(self, el: Any, text: str, parent_tags: set[str]) -> str:
        return ""

    def convert_pre(self, el: Any, text: str, parent_tags: set[str]) -> str:
        body = text.strip("\n")
        if not body.strip():
            return ""
        fence = "```"
        while fence in body:
            fence += "`"
        return f"\n\n{fence}{_language(el)}\n{body}\n{fence}\n\n"


def _main_content(soup: BeautifulSoup) -> Tag:
    for found in (soup.find("main"), soup.find(True, attrs={"role": "main"})):
        if isinstance(found, Tag):
            return found
    articles = soup.find_all("article")
    if len(articles) == 1 and isinstance(articles[0], Tag):
        return articles[0]
    body = soup.find("body")
    return body if isinstance(body, Tag) else soup


def _is_noise(el: Tag, chrome: bool) -> bool:
    if el.name in ALWAYS_DROP or (chrome and el.name in PAGE_CHROME):
        return True
    if el.has_attr("hidden") or str(el.get("aria-hidden") or "").lower() == "true":
        return True
    return str(el.get("role") or "").lower() in NOISE_ROLES


def _strip_noise(root: Tag) -> None:
    """Drop noise in one top-down walk (never descending into what was dropped)."""
    # Inside <main> or <article>, a header/footer belongs to the content (the title).
    in_content = root.name in ("main", "article") or root.get("role") == "main"
    stack = [(root, in_content)]
    while stack:
        node, inside = stack.pop()
        for child in list(node.children):
            if not isinstance(child, Tag):
                continue
            if _is_noise(child, chrome=not inside):
                child.decompose()
            else:
                stack.append((child, inside or child.name in ("main", "article")))


def html_to_markdown(html: str, base_url: str = "") -> str:
    """The main content of an HTML page as markdown (empty when there is none)."""
    soup = BeautifulSoup(_XML_DECL.sub("", html, count=1), "html.parser")
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text().split()) if isinstance(title_tag, Tag) else ""
    base = soup.find("base", href=True)
    if isinstance(base, Tag):
        base_url = urljoin(base_url, str(base["href"]))
    root = _main_content(soup)
    _strip_noise(root)
    text = _Converter(base_url).convert_soup(root)
    text = _BLANK_RUNS.sub("\n\n", text).strip()
    if title and not re.search(r"^# ", text, re.MULTILINE):
        text = f"# {title}\n\n{text}" if text else ""
    return text

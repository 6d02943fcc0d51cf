"""Structured text that is not markdown (ctxmode.store.markup): XML, YAML and HTML chunks
with titles the agent can read, through the real store."""

from ctxmode.store import ContentStore
from ctxmode.store.kinds import chunk_text, kind_for_name
from ctxmode.store.markup import chunk_xml, chunk_yaml


def _changelog(releases: int = 40) -> str:
    out = ['<?xml version="1.0" encoding="utf-8"?>', "<changelog>"]
    for i in range(releases, 0, -1):
        out.append(f'  <release version="1.{i}.0" date="2026-01-{i % 28 + 1:02d}">')
        out.extend(
            f'    <change type="fix">Fixed issue {i * 10 + j} in the sync engine.</change>'
            for j in range(4)
        )
        out.append("  </release>")
    out.append("</changelog>")
    return "\n".join(out) + "\n"


def test_a_large_xml_file_is_split_by_element_and_titled_by_what_names_it():
    text = _changelog()
    chunks = chunk_xml(text)
    titles = [c.title for c in chunks]
    assert "changelog > release version=1.40.0" in titles
    assert not any("Untitled" in t for t in titles)
    lines = text.split("\n")
    for c in chunks:  # each chunk's line range points at its own lines in the file
        assert lines[c.start_line - 1].strip() == c.content.split("\n")[0].strip()


def test_xml_elements_are_named_by_a_child_when_no_attribute_names_them():
    items = "".join(
        f"  <item>\n    <title>Post number {i}</title>\n    <body>{'words ' * 120}</body>\n"
        "  </item>\n"
        for i in range(12)
    )
    chunks = chunk_xml(f"<rss>\n<channel>\n{items}</channel>\n</rss>\n")
    assert "rss > channel > item: Post number 3" in [c.title for c in chunks]


def test_xml_that_does_not_parse_is_plain_text():
    chunks = chunk_xml("<a>\n<b>unclosed\n</a>\nmore text\n")
    assert chunks and all(c.content for c in chunks)


def test_yaml_is_split_by_key_and_a_large_key_by_the_keys_under_it():
    services = "".join(
        f"  svc{i}:\n    image: app:{i}\n    command: run --worker {i}\n"
        + "".join(f"    # note {k} about service {i} and its settings\n" for k in range(12))
        for i in range(12)
    )
    text = f"version: '3'\nservices:\n{services}volumes:\n  data: {{}}\n"
    titles = [c.title for c in chunk_yaml(text)]
    assert "version" in titles and "volumes" in titles
    assert "services > svc7" in titles


def test_kinds_by_extension_and_by_content():
    assert kind_for_name("feed.xml") == "xml"
    assert kind_for_name("page.html") == "html"
    assert kind_for_name("ci.yml") == "yaml"
    titles = [c.title for c in chunk_text('<?xml version="1.0"?>\n<a>\n<b/>\n</a>\n')]
    assert titles == ["a"]


def test_an_html_file_by_path_is_searched_by_its_headings(tmp_path):
    page = tmp_path / "guide.html"
    page.write_text(
        "<html><head><title>Sync guide</title><script>var x = 1;</script></head><body>"
        "<nav>Home | Docs</nav><h1>Sync guide</h1><p>Intro.</p>"
        "<h2>Conflict resolution</h2><p>When two replicas disagree, the newest write wins"
        " unless the field is marked <code>merge</code>.</p></body></html>",
        encoding="utf-8",
    )
    with ContentStore(tmp_path / "kb.db") as store:
        store.index_file(page)
        hit = store.search("replicas disagree newest write").hits[0]
    assert hit.title == "Sync guide > Conflict resolution"
    assert "the newest write wins" in hit.snippet
    assert "<p>" not in hit.snippet and "var x" not in hit.snippet
    assert hit.start_line is None  # lines of the markdown, not of the file

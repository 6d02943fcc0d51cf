"""Chunkers in ctxmode.store.chunking: markdown, plain text, JSON and source code."""

import json
import re
from pathlib import Path

import pytest

from ctxmode.store.chunking import MAX_CHUNK_BYTES
from ctxmode.store.kinds import chunk_text, kind_for_name

FIXTURES = Path(__file__).parent / "fixtures" / "code"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _titles(chunks):
    return [c.title for c in chunks]


# --------------------------------------------------------------------------- markdown


def test_markdown_titles_carry_the_h1_to_h4_heading_path():
    text = (
        "# Guide\n\nintro text\n\n"
        "## Install\n\ninstall text\n\n"
        "### Linux\n\nlinux text\n\n"
        "#### Debian\n\ndebian text\n\n"
        "##### Not a heading\n\nstill debian\n\n"
        "## Usage\n\nusage text\n"
    )
    chunks = chunk_text(text, "markdown")
    assert _titles(chunks) == [
        "Guide",
        "Guide > Install",
        "Guide > Install > Linux",
        "Guide > Install > Linux > Debian",
        "Guide > Usage",
    ]
    debian = chunks[3]
    assert "##### Not a heading" in debian.content
    assert "still debian" in debian.content


def test_markdown_chunk_starts_with_its_heading_line():
    chunks = chunk_text("# Only a heading\n# Next\n\nbody\n", "markdown")
    assert chunks[0].title == "Only a heading"
    assert chunks[0].content == "# Only a heading"
    assert chunks[1].content.startswith("# Next")


def test_markdown_without_headings_is_titled_untitled():
    chunks = chunk_text("just some words\nand more words\n", "markdown")
    assert _titles(chunks) == ["Untitled"]


@pytest.mark.parametrize("rule", ["---", "___", "***", "- - -", "*****"])
def test_markdown_horizontal_rule_splits_and_is_dropped(rule):
    text = f"# Notes\n\nfirst part\n\n{rule}\n\nsecond part\n"
    chunks = chunk_text(text, "markdown")
    assert [c.content for c in chunks] == ["# Notes\n\nfirst part", "second part"]
    assert all(rule not in c.content for c in chunks)


def test_markdown_code_fence_is_never_split_and_marks_the_chunk_as_code():
    fence = "```python\n# not a heading inside a fence\ndef f():\n\n    return 1\n---\n```"
    text = f"# Example\n\nSome prose.\n\n{fence}\n\n# Plain\n\nno code here\n"
    chunks = chunk_text(text, "markdown")
    assert _titles(chunks) == ["Example", "Plain"]
    assert fence in chunks[0].content
    assert chunks[0].content_type == "code"
    assert chunks[1].content_type == "prose"


def test_markdown_oversized_section_splits_on_paragraphs_keeping_the_heading():
    paragraphs = [
        f"Paragraph {i}: " + ("lorem ipsum dolor sit amet " * 12).strip() for i in range(30)
    ]
    text = "# Guide\n\n## Install\n\n" + "\n\n".join(paragraphs) + "\n\n## Small\n\nshort\n"
    chunks = chunk_text(text, "markdown")
    install = [c for c in chunks if c.title.startswith("Guide > Install")]
    assert len(install) >= 2
    assert [c.title for c in install] == [
        f"Guide > Install ({i})" for i in range(1, len(install) + 1)
    ]
    assert all(_size(c.content) <= MAX_CHUNK_BYTES for c in install)
    joined = "\n\n".join(c.content for c in install)
    for paragraph in paragraphs:
        # every paragraph survives whole, inside exactly one part
        assert sum(paragraph in c.content for c in install) == 1
        assert paragraph in joined
    assert [c for c in chunks if c.title == "Guide > Small"][0].content == "## Small\n\nshort"


def test_markdown_fence_with_blank_lines_inside_an_oversized_section_stays_whole():
    filler = "\n\n".join(f"filler sentence number {i} " * 8 for i in range(12))
    fence = "```\n" + "\n\n".join(f"line_{i} = compute({i})" for i in range(60)) + "\n```"
    assert _size(fence) < MAX_CHUNK_BYTES
    text = f"# Big\n\n{filler}\n\n{fence}\n\n{filler}\n"
    chunks = chunk_text(text, "markdown")
    assert len(chunks) > 1
    holders = [c for c in chunks if fence in c.content]
    assert len(holders) == 1
    assert holders[0].content_type == "code"


def test_small_markdown_section_stays_one_chunk():
    chunks = chunk_text("# One\n\n" + "word " * 200 + "\n", "markdown")
    assert _titles(chunks) == ["One"]


@pytest.mark.parametrize("kind", ["markdown", "plain", "json", "python"])
@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\n"])
def test_whitespace_only_text_yields_no_chunks(text, kind):
    assert chunk_text(text, kind) == []


# --------------------------------------------------------------------------- plain text


def test_plain_text_with_blank_line_sections_chunks_per_section_titled_by_first_line():
    text = "alpha header\nalpha body\n\nbeta header\nbeta body\n\n\ngamma header\n"
    chunks = chunk_text(text, "plain")
    assert _titles(chunks) == ["alpha header", "beta header", "gamma header"]
    assert chunks[1].content == "beta header\nbeta body"
    assert all(c.content_type == "prose" for c in chunks)


def test_plain_text_section_title_is_capped_at_80_characters():
    long_first = "x" * 120
    text = f"{long_first}\nbody\n\nb\n\nc\n"
    assert chunk_text(text, "plain")[0].title == "x" * 80


def test_short_plain_text_with_fewer_than_three_sections_is_one_output_chunk():
    text = "line one\nline two\n\nline four\n"
    chunks = chunk_text(text, "plain")
    assert _titles(chunks) == ["Output"]
    assert "line four" in chunks[0].content


def test_long_plain_text_uses_20_line_windows_overlapping_by_2():
    lines = [f"log line {i:03d}" for i in range(1, 51)]
    chunks = chunk_text("\n".join(lines), "plain")
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 20), (19, 38), (37, 50)]
    # untitled: a window's first line is only where it starts; its lines say where it is
    assert [c.title for c in chunks] == ["", "", ""]
    assert chunks[1].content.split("\n")[0] == "log line 019"
    assert chunks[1].content.split("\n")[-1] == "log line 038"


def test_plain_text_with_more_than_200_sections_falls_back_to_windows():
    text = "\n\n".join(f"entry {i}" for i in range(250))
    chunks = chunk_text(text, "plain")
    assert len(chunks) < 250
    assert all(c.end_line - c.start_line + 1 <= 20 for c in chunks)


def test_plain_text_with_a_section_over_5000_bytes_falls_back_to_windows():
    big = "\n".join("y" * 100 for _ in range(60))  # one 6 KB section
    text = f"head\n\n{big}\n\ntail\n"
    chunks = chunk_text(text, "plain")
    assert [c.start_line for c in chunks] == list(range(1, len(text.split("\n")), 18))
    assert all(c.end_line - c.start_line + 1 <= 20 for c in chunks)
    assert all(_size(c.content) <= MAX_CHUNK_BYTES for c in chunks)


# --------------------------------------------------------------------------- JSON


def test_json_nested_objects_chunk_by_key_path():
    doc = {
        "server": {"tls": {"cert": "a.pem", "key": "a.key"}, "limits": {"rps": 10}},
        "name": "svc",
    }
    chunks = chunk_text(json.dumps(doc), "json")
    titles = _titles(chunks)
    assert "server > tls" in titles
    assert "server > limits" in titles
    tls = chunks[titles.index("server > tls")]
    assert json.loads(tls.content) == {"cert": "a.pem", "key": "a.key"}
    assert tls.content_type == "code"


def test_flat_json_object_is_one_root_chunk():
    chunks = chunk_text(json.dumps({"a": 1, "b": "two", "c": None}), "json")
    assert _titles(chunks) == ["(root)"]
    assert json.loads(chunks[0].content) == {"a": 1, "b": "two", "c": None}


def test_json_arrays_batch_by_size_with_identity_field_titles():
    users = [{"id": f"user{i}", "bio": "lorem ipsum " * 40} for i in range(12)]
    chunks = chunk_text(json.dumps({"users": users}), "json")
    assert len(chunks) >= 2
    assert all(re.fullmatch(r"users > user\d+\u2026user\d+", c.title) for c in chunks)
    assert all(_size(c.content) <= MAX_CHUNK_BYTES for c in chunks)
    recovered = [u for c in chunks for u in json.loads(c.content)]
    assert recovered == users
    assert chunks[0].title.startswith("users > user0\u2026")
    assert chunks[-1].title.endswith("\u2026user11")


def test_json_array_batches_of_one_to_three_items_list_their_ids():
    items = [{"name": f"n{i}", "pad": "z" * 1500} for i in range(4)]
    titles = _titles(chunk_text(json.dumps({"items": items}), "json"))
    assert titles == ["items > n0, n1", "items > n2, n3"]
    single = [{"name": "only", "pad": "z" * 5000}]
    # an item that alone exceeds the cap is walked by itself
    assert chunk_text(json.dumps({"items": single}), "json")


def test_json_array_without_identity_field_is_titled_by_index_range():
    items = [{"color": "red", "pad": "z" * 1500} for _ in range(5)]
    titles = _titles(chunk_text(json.dumps({"tags": items}), "json"))
    assert titles == ["tags > [0-1]", "tags > [2-3]", "tags > [4]"]


def test_invalid_json_falls_back_to_plain_text():
    chunks = chunk_text("{not json at all", "json")
    assert _titles(chunks) == ["Output"]
    assert chunks[0].content == "{not json at all"


# --------------------------------------------------------------------------- kinds


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("README.md", "markdown"),
        ("docs/guide.rst", "markdown"),
        ("data.json", "json"),
        ("notes.txt", "plain"),
        ("build.log", "plain"),
        ("app.py", "python"),
        ("App.TSX", "javascript"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("Main.java", "java"),
        ("x.c", "c"),
        ("x.hpp", "c"),
        ("execute:python", "markdown"),
        ("dir.v2/README", "markdown"),
        (None, "markdown"),
    ],
)
def test_kind_for_name_judges_by_extension(name, kind):
    assert kind_for_name(name) == kind


# --------------------------------------------------------------------------- source code

# (fixture file, top-level definitions that must each get their own chunk as
#  (name, first line of the definition, last line of its body))
CODE_CASES = {
    "sample.py": [
        ("load_config", "def load_config(path, defaults=None):", "    return merged"),
        ("HttpSession", "class HttpSession:", 'raise RuntimeError(f"{method} {url} failed'),
        ("expand_environment", "def expand_environment(value):", '    return "".join(out)'),
    ],
    "sample.js": [
        ("computeTotal", "export function computeTotal(items, taxRate) {", "Math.round("),
        ("ShoppingCart", "export class ShoppingCart {", "    return item;\n  }\n}"),
        (
            "renderReceipt",
            "export const renderReceipt = (cart, taxRate) => {",
            'lines.join("\\n");',
        ),
    ],
    "sample.ts": [
        ("fetchUserProfile", "export async function fetchUserProfile(", "roles: user.roles });\n}"),
        ("RateLimiter", "export class RateLimiter {", "    return true;\n  }\n}"),
    ],
    "sample.go": [
        (
            "Reserve",
            "func (w *Warehouse) Reserve(sku string, quantity int) error {",
            "return nil\n}",
        ),
        ("MergeInventories", "func MergeInventories(a, b *Warehouse) *Warehouse {", "return a\n}"),
    ],
    "sample.rs": [
        ("TokenBucket", "impl TokenBucket {", "labels: HashMap::new(),"),
        ("parse_duration", "pub fn parse_duration(text: &str) -> Option<u64> {", "_ => None,"),
    ],
    "sample.java": [
        ("InvoiceService", "public class InvoiceService {", "return Math.max(total, 0.0);"),
        ("PaymentGateway", "class PaymentGateway {", "return true;\n    }\n}"),
    ],
    "sample.c": [
        (
            "ring_buffer_push",
            "int ring_buffer_push(struct ring_buffer *rb, char value)",
            "return 0;\n}",
        ),
        ("count_words", "static size_t count_words(const char *text)", "return words;\n}"),
    ],
    "sample.cpp": [
        ("Polygon", "class Polygon {", "std::vector<double> ys_;\n};"),
        (
            "join_strings",
            "std::string join_strings(",
            'std::to_string(parts.size()) + " parts)";\n}',
        ),
    ],
}

# Small declarations that may share a chunk with the module preamble, but must be named.
NAMED_TOO = {
    "sample.ts": ["UserRecord"],
    "sample.go": ["Warehouse"],
    "sample.rs": ["TokenBucket"],
    "sample.c": ["ring_buffer"],
}


def _fixture_chunks(name):
    text = (FIXTURES / name).read_text("utf-8")
    return text, chunk_text(text, kind_for_name(name))


def _named(title: str, name: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", title) is not None


@pytest.mark.parametrize("fixture", sorted(CODE_CASES))
def test_each_top_level_definition_gets_its_own_chunk_titled_by_its_name(fixture):
    text, chunks = _fixture_chunks(fixture)
    cases = CODE_CASES[fixture]
    assert all(c.content_type == "code" for c in chunks)
    for name, first, last in cases:
        assert first in text and last in text  # the table matches the fixture
        holders = [c for c in chunks if first in c.content]
        assert len(holders) == 1, f"{name}: definition line in {len(holders)} chunks"
        chunk = holders[0]
        assert _named(chunk.title, name), f"{name} not in title {chunk.title!r}"
        assert last in chunk.content, f"{name}: body cut off in {chunk.title!r}"
        others = [n for n, _, _ in cases if n != name]
        assert not any(_named(chunk.title, other) for other in others), chunk.title
    for name in NAMED_TOO.get(fixture, []):
        assert any(_named(c.title, name) for c in chunks), (name, _titles(chunks))


@pytest.mark.parametrize("fixture", sorted(CODE_CASES))
def test_code_chunks_cover_every_line_of_the_file_in_order(fixture):
    text, chunks = _fixture_chunks(fixture)
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts)
    kept = "\n".join(c.content for c in chunks)
    for line in text.split("\n"):
        assert line.strip() in kept


def _python_function(name: str, lines: int, blank_every: int = 0) -> str:
    body = []
    for i in range(lines):
        body.append(f"    value_{i} = compute_step({i}, previous)  # step {i} of {name}")
        if blank_every and i % blank_every == blank_every - 1:
            body.append("")
    return f"def {name}(previous):\n" + "\n".join(body) + "\n    return previous\n"


def test_python_function_that_fits_4kb_is_never_split_even_with_blank_lines():
    big = _python_function("big_but_fits", 52, blank_every=5)
    assert 3500 < _size(big) <= MAX_CHUNK_BYTES
    text = "\n\n".join([_python_function("before_one", 20), big, _python_function("after_one", 20)])
    chunks = chunk_text(text, "python")
    holders = [c for c in chunks if "def big_but_fits" in c.content]
    assert len(holders) == 1
    assert holders[0].content == big.strip()
    assert holders[0].title == "def big_but_fits"


def test_brace_language_function_that_fits_4kb_is_never_split():
    body = "\n\n".join(
        f"  const part{i} = await step({i}, state); // keep going with step {i}\n"
        f"  state = merge(state, part{i});"
        for i in range(35)
    )
    big = f"export async function pipeline(state) {{\n{body}\n  return state;\n}}"
    assert 3000 < _size(big) <= MAX_CHUNK_BYTES
    small = (
        "export function helper(x) {\n"
        + "  x = x + 1; // padding line here\n" * 12
        + "  return x;\n}"
    )
    text = f"{small}\n\n{big}\n\n{small.replace('helper', 'other')}\n"
    chunks = chunk_text(text, "javascript")
    holders = [c for c in chunks if "function pipeline" in c.content]
    assert len(holders) == 1
    assert holders[0].content == big
    assert _named(holders[0].title, "pipeline")


def test_oversized_python_class_is_split_into_methods_titled_class_then_def():
    methods = "\n".join(
        "    " + _python_function(f"step_{i}", 28).replace("\n", "\n    ").rstrip() + "\n"
        for i in range(4)
    ).replace("(previous):", "(self, previous):")
    text = f'class Pipeline:\n    """Runs steps."""\n\n{methods}'
    assert _size(text) > MAX_CHUNK_BYTES
    chunks = chunk_text(text, "python")
    for i in range(4):
        holders = [c for c in chunks if f"def step_{i}(self, previous):" in c.content]
        assert len(holders) == 1
        assert holders[0].title == f"class Pipeline > def step_{i}"
        assert "return previous" in holders[0].content
    assert all(_size(c.content) <= MAX_CHUNK_BYTES for c in chunks)


@pytest.mark.parametrize(
    ("kind", "header", "method_title"),
    [
        ("javascript", "export class ReportBuilder {", "class ReportBuilder > method section{i}"),
        ("java", "public class ReportBuilder {", "class ReportBuilder > method section{i}"),
    ],
)
def test_oversized_class_in_brace_languages_is_split_into_titled_methods(
    kind, header, method_title
):
    if kind == "javascript":
        line = "    const v{j} = input.values[{j}] * factor + offset; // accumulate"
        sig = "  section{i}(input, factor, offset) {{"
        ret = "    return v0;\n  }}"
    else:
        line = "        total += values[{j}] * weight + bias; // accumulate weighted"
        sig = "    public double section{i}(double[] values, double weight, double bias) {{"
        ret = "        return total;\n    }}"
    body = "\n".join(line.format(j=j) for j in range(22))
    methods = "\n\n".join(sig.format(i=i) + "\n" + body + "\n" + ret.format() for i in range(4))
    text = f"{header}\n{methods}\n}}\n"
    assert _size(text) > MAX_CHUNK_BYTES
    chunks = chunk_text(text, kind)
    for i in range(4):
        signature = sig.format(i=i).rstrip("{").strip()
        holders = [c for c in chunks if signature in c.content]
        assert len(holders) == 1
        assert holders[0].title == method_title.format(i=i)


def _padded_function(name: str, indent: str = "") -> str:
    body = "".join(f"{indent}    total += step({i})  # a line of {name}\n" for i in range(12))
    return f"{indent}def {name}(total):\n{body}{indent}    return total\n"


def test_python_definitions_guarded_by_if_or_try_get_their_own_titled_chunks():
    text = (
        _padded_function("plain_before")
        + "\n\n# Linux only\n"
        + 'if hasattr(os, "sched_getaffinity"):\n\n'
        + _padded_function("cpu_affinity", "    ")
        + "\n\ntry:\n    from _speedups import fast_sum\n"
        + "except ImportError:\n"
        + _padded_function("fast_sum", "    ")
        + "\n\n"
        + _padded_function("plain_after")
    )
    chunks = chunk_text(text, "python")
    by_title = {c.title: c for c in chunks}
    guarded = by_title["def cpu_affinity"]
    assert guarded.content.startswith("# Linux only\nif hasattr(os")
    assert "return total" in guarded.content
    assert "def cpu_affinity" not in by_title["def plain_before"].content
    fallback = by_title["def fast_sum"]
    assert fallback.content.startswith("except ImportError:")
    assert "def plain_after" not in fallback.content
    assert by_title["def plain_after"].content.startswith("def plain_after")


@pytest.mark.parametrize(
    ("head", "last"),
    [
        # a signature over several lines, its `)` at the definition's own indent
        ("def outer(\n    first,\n    second,\n) -> int:\n", "    return inner(first)"),
        # a string at column 0 inside the function
        (
            "def outer(rows):\n    template = '''\n<table>\n{rows}\n</table>\n'''\n",
            "    return rows",
        ),
    ],
)
def test_a_python_function_holds_its_nested_function_whole(head, last):
    text = head + _padded_function("inner", "    ") + last + "\n\n\n" + _padded_function("after")
    chunks = chunk_text(text, "python")
    assert _titles(chunks) == ["def outer", "def after"]
    assert "def inner" in chunks[0].content
    assert chunks[0].content.endswith(last.strip())


def test_setext_and_restructuredtext_underlines_are_headings():
    text = "Title\n=====\n\nintro\n\nSub\n---\n\nmore\n\nOther\n~~~~~\n\nlast\n"
    chunks = chunk_text(text, "markdown")
    assert _titles(chunks) == ["Title", "Title > Sub", "Title > Sub > Other"]
    assert chunks[1].content.startswith("Sub")
    assert chunks[1].content.endswith("more")


# --------------------------------------------------------------------------- line ranges


def _line_range_cases():
    long_section = "# Big\n\n" + "\n\n".join(f"paragraph {i} " + "words " * 60 for i in range(20))
    yield "markdown", "# A\n\nalpha\n\n## B\n\n```\ncode\n\nmore\n```\n\n---\n\ntail\n"
    yield "markdown", long_section
    yield "plain", "one\ntwo\n\nthree\n\n\nfour\nfive\n"
    yield "plain", "\n".join(f"row {i}" if i % 7 else "" for i in range(1, 70))
    for path in sorted(FIXTURES.iterdir()):
        yield kind_for_name(path.name), path.read_text("utf-8")


@pytest.mark.parametrize(("kind", "text"), list(_line_range_cases()))
def test_chunk_line_ranges_point_at_their_first_and_last_lines(kind, text):
    lines = text.split("\n")
    chunks = chunk_text(text, kind)
    assert chunks
    for chunk in chunks:
        body = chunk.content.split("\n")
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert lines[chunk.start_line - 1].strip() == body[0].strip(), chunk.title
        assert lines[chunk.end_line - 1].strip() == body[-1].strip(), chunk.title


def test_a_progress_line_over_a_rule_is_not_a_heading():
    """unittest's dots line sits over its first ``=====``: it titled every failure."""
    text = (
        "# tests\n\n" + "." * 60 + "F..s\n" + "=" * 70 + "\nFAIL: test_x (m.T.test_x)\n"
        "Check the sum\n" + "-" * 70 + "\nTraceback (most recent call last):\nAssertionError\n"
    )
    titles = [c.title for c in chunk_text(text, "markdown")]
    assert titles == ["tests", "tests > FAIL: test_x (m.T.test_x)"] or titles == [
        "tests",
        "FAIL: test_x (m.T.test_x)",
    ]
    assert not any("...." in t for t in titles)

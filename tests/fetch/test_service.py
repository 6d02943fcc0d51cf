"""`fetch_and_index` + `render_report` on a real store and a real local server (spec 1.6)."""

import time

import pytest

from ctxmode.errors import UsageError
from ctxmode.fetch import (
    CACHE_TTL_S,
    FetchRequest,
    cache_label,
    fetch_and_index,
    render_report,
)
from ctxmode.fetch.render import BATCH_PREVIEW_CHARS, TRUNCATED, age_text
from ctxmode.fetch.service import GLIMPSE_BYTES, SECTIONS_BYTES, page_glimpse


def _labels(store):
    return {s.label for s in store.sources()}


def test_single_url_is_fetched_indexed_and_searchable(site, store):
    url = site.url("/page.html")
    report = fetch_and_index(store, url)
    [result] = report.results
    assert report.single and not report.is_error
    assert (result.label, result.kind, result.from_cache) == (url, "markdown", False)
    assert result.chunks >= 2 and result.bytes > 0 and result.fetched_bytes > 0
    assert result.preview.startswith("# Widget Guide")
    hits = store.search("frobnicator", source=url).hits
    assert hits and hits[0].source == url
    text = render_report(report)
    assert text.startswith(f"Fetched and indexed **{result.chunks} sections** (")
    assert f"KB) from: {url}\n" in text
    assert f'ctx_search(queries: [...], source: "{url}")' in text
    assert "\n\n---\n\n# Widget Guide" in text


def test_json_and_text_are_indexed_with_their_kinds(site, store):
    report = fetch_and_index(
        store, [{"url": site.url("/data.json")}, {"url": site.url("/notes.txt")}]
    )
    assert [r.kind for r in report.results] == ["json", "plain"]
    assert store.search("quokkas").hits


def test_a_fresh_url_answers_from_the_store_without_a_request(site, store):
    url = site.url("/page.html")
    fetch_and_index(store, url)
    report = fetch_and_index(store, url)
    [result] = report.results
    assert result.from_cache and result.chunks > 0 and result.age_seconds is not None
    assert site.served.hits["/page.html"] == 1
    text = render_report(report)
    assert text.startswith(f"Cached: **{url}** — {result.chunks} sections, indexed just now")
    assert (
        "(fresh, TTL: 24h).\nTo refresh: call ctx_fetch_and_index again with `force: true`." in text
    )
    assert "this cached response contains no content." in text
    assert text.endswith(f'Use: ctx_search(queries: [...], source: "{url}")')


def test_force_refetches(site, store):
    url = site.url("/page.html")
    fetch_and_index(store, url)
    [result] = fetch_and_index(store, url, force=True).results
    assert not result.from_cache
    assert site.served.hits["/page.html"] == 2


def test_a_stale_entry_is_fetched_again(site, store):
    url = site.url("/page.html")
    fetch_and_index(store, url)
    later = time.time() + CACHE_TTL_S + 60
    [result] = fetch_and_index(store, url, clock=lambda: later).results
    assert not result.from_cache
    assert site.served.hits["/page.html"] == 2


def test_same_source_two_urls_are_stored_and_cached_separately(site, store):
    a, b = site.url("/page.html"), site.url("/notes.txt")
    fetch_and_index(store, a, source="Docs")
    fetch_and_index(store, b, source="Docs")
    assert {f"Docs::{a}", f"Docs::{b}"} <= _labels(store)
    assert store.search("frobnicator", source="Docs").hits
    assert store.search("quokkas", source="Docs").hits
    report = fetch_and_index(store, [{"url": a, "source": "Docs"}, {"url": b, "source": "Docs"}])
    assert [r.from_cache for r in report.results] == [True, True]
    assert site.served.hits["/page.html"] == site.served.hits["/notes.txt"] == 1


def test_cache_label_composes_even_an_empty_source():
    assert cache_label("https://x/", None) == "https://x/"
    assert cache_label("https://x/", "Docs") == "Docs::https://x/"
    assert cache_label("https://x/", "") == "::https://x/"


def test_file_url_is_refused_before_the_cache_lookup(store):
    store.index_text("root:x:0:0", "file:///etc/passwd", kind="plain")
    [result] = fetch_and_index(store, "file:///etc/passwd").results
    assert not result.from_cache
    assert result.error_code == "bad_scheme"
    assert render_report(fetch_and_index(store, "file:///etc/passwd")).startswith(
        'Failed to fetch file:///etc/passwd: URL scheme "file:" not allowed'
    )


def test_strict_mode_refuses_even_a_cached_private_url(site, store, monkeypatch):
    url = site.url("/page.html")
    fetch_and_index(store, url)
    monkeypatch.setenv("CTXMODE_FETCH_STRICT", "1")
    [result] = fetch_and_index(store, url).results
    assert result.error_code == "blocked_address"


def test_batch_reports_each_url_and_fails_only_when_all_fail(site, store):
    report = fetch_and_index(
        store,
        [
            {"url": site.url("/page.html"), "source": "guide"},
            {"url": site.url("/missing")},
            {"url": "http://169.254.169.254/latest/meta-data/"},
        ],
        concurrency=3,
    )
    assert not report.single
    assert not report.is_error
    assert [r.ok for r in report.results] == [True, False, False]
    assert [r.error_code for r in report.failed] == ["http_status", "blocked_address"]
    text = render_report(report)
    lines = text.splitlines()
    sections = report.results[0].chunks
    assert lines[0].startswith(f"fetched 3 c=3. ok=1 cache=0 err=2. {sections} sections ")
    assert lines[2].startswith(f"- [new]   guide::{site.url('/page.html')} — {sections} sections (")
    assert lines[3] == f"- [err]   {site.url('/missing')}: HTTP 404 Not Found"
    assert lines[4].startswith("- [err]   http://169.254.169.254/latest/meta-data/: URL host")
    assert 'ctx_search(queries: [...], source: "guide") for full content.' in text
    assert f"### guide::{site.url('/page.html')}" in text


def test_batch_where_every_url_fails_is_an_error(site, store):
    report = fetch_and_index(store, [{"url": site.url("/missing")}, {"url": "ftp://x/"}])
    assert report.is_error
    assert "ok=0 cache=0 err=2. 0 sections 0.0KB." in render_report(report)


def test_single_failure_is_an_error_with_the_upstream_wording(site, store):
    report = fetch_and_index(store, site.url("/broken"))
    assert report.is_error
    assert (
        render_report(report)
        == f"Failed to fetch {site.url('/broken')}: HTTP 500 Internal Server Error"
    )


def test_empty_page_is_an_error(site, store):
    report = fetch_and_index(store, site.url("/empty.html"))
    assert report.results[0].error_code == "empty_content"
    assert render_report(report) == f"Fetched {site.url('/empty.html')} but got empty content"
    assert _labels(store) == set()


def test_header_is_singular_for_one_section(site, store):
    report = fetch_and_index(store, [FetchRequest(site.url("/notes.txt"))])
    assert report.results[0].chunks == 1
    text = render_report(report)
    assert ". 1 section " in text.splitlines()[0]
    assert "— 1 section (" in text


def test_cached_batch_lines_show_age(site, store):
    url = site.url("/notes.txt")
    fetch_and_index(store, url)
    later = time.time() + 2 * 3600 + 5
    report = fetch_and_index(store, [{"url": url}], clock=lambda: later)
    text = render_report(report)
    assert "ok=0 cache=1 err=0." in text
    assert f"- [cache] {url} — 1 section (2h ago)" in text
    assert "---" not in text  # nothing was fetched, so no previews


def test_long_pages_get_a_capped_preview(site, store):
    url = site.url("/long.md")
    single = fetch_and_index(store, url)
    [result] = single.results
    assert result.truncated
    assert len(result.preview.encode()) <= GLIMPSE_BYTES + SECTIONS_BYTES + 40
    assert render_report(single).endswith(result.preview + TRUNCATED)
    batch = render_report(fetch_and_index(store, [{"url": url}], force=True))
    preview = batch.split(f"### {url}\n\n", 1)[1]
    assert preview.endswith("…")
    assert len(preview) <= BATCH_PREVIEW_CHARS + 1


def test_duplicate_urls_in_a_batch_are_fetched_once(site, store):
    url = site.url("/notes.txt")
    report = fetch_and_index(store, [{"url": url}, {"url": url}], concurrency=2)
    assert [r.ok for r in report.results] == [True, True]
    assert site.served.hits["/notes.txt"] == 1


def test_concurrency_is_clamped(site, store):
    urls = [{"url": site.url(f"/notes.txt?{i}")} for i in range(10)]
    assert fetch_and_index(store, urls, concurrency=50).concurrency == 8
    assert fetch_and_index(store, urls[:2], concurrency=50, force=True).concurrency == 2
    assert fetch_and_index(store, urls[:3], concurrency=0, force=True).concurrency == 1
    assert site.served.hits["/notes.txt"] == 15


@pytest.mark.parametrize("bad", [None, "", "   ", [], [{"source": "x"}], [{"url": 3}], [""], [7]])
def test_missing_or_malformed_requests_are_usage_errors(store, bad):
    with pytest.raises(UsageError):
        fetch_and_index(store, bad)


def test_bare_url_strings_in_a_batch_are_requests(site, store):
    report = fetch_and_index(store, [site.url("/notes.txt"), "not a url"], source="S")
    assert [r.label for r in report.results] == [f"S::{site.url('/notes.txt')}", "S::not a url"]
    assert [r.error_code for r in report.results] == [None, "bad_url"]


def test_usage_message_names_both_shapes(store):
    with pytest.raises(UsageError, match=r"requires either `url` \(single\) or `requests"):
        fetch_and_index(store, None)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "just now"), (5, "just now"), (61, "1m ago"), (3599, "59m ago"), (7300, "2h ago")],
)
def test_age_text(seconds, text):
    assert age_text(seconds) == text


def test_a_page_glimpse_is_its_opening_in_whole_lines_then_its_sections():
    body = "\n".join(f"Intro line {i} " + "x" * 50 for i in range(40))
    text = f"# Guide\n\n{body}\n\n## Install\n\nsteps\n\n## Configure\n\nmore\n\n### Options\n"
    glimpse = page_glimpse(text)
    opening, sections = glimpse.split("\n\nSections: ")
    assert opening.startswith("# Guide")
    assert len(opening.encode()) <= GLIMPSE_BYTES
    assert all(line in text.split("\n") for line in opening.split("\n"))  # no line cut
    assert sections == "Install; Configure; Options"
    assert page_glimpse("# Short\n\nAll of it.") == "# Short\n\nAll of it."


def test_ttl_sets_how_long_a_page_stays_fresh(site, store):
    url = site.url("/page.html")
    fetch_and_index(store, url)
    later = lambda: time.time() + 120  # noqa: E731 - a clock two minutes on
    kept = fetch_and_index(store, url, ttl_s=3600, clock=later)
    assert kept.results[0].from_cache and site.served.hits["/page.html"] == 1
    assert "(fresh, TTL: 1h)." in render_report(kept)
    refetched = fetch_and_index(store, url, ttl_s=60, clock=later)
    assert not refetched.results[0].from_cache and site.served.hits["/page.html"] == 2
    fetch_and_index(store, url, ttl_s=0)  # 0: always fetched again
    assert site.served.hits["/page.html"] == 3

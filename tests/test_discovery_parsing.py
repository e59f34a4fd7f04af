"""The Scrapy-free discovery core on real-world-shaped samples and hostile input."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scrapy_maintext.discovery.feeds import find_feed_links, parse_feed
from scrapy_maintext.discovery.plan import Candidate, CrawlPlan, PlanOptions
from scrapy_maintext.discovery.robots import sitemaps_from_robots
from scrapy_maintext.discovery.safexml import XmlError, gunzip_capped
from scrapy_maintext.discovery.sitemaps import Alternate, SitemapEntry, parse_sitemap
from scrapy_maintext.discovery.urls import UrlPolicy, normalize_url, registrable_domain

from tests.sites import BILLION_LAUGHS, XXE

FIXTURES = Path(__file__).parent / "fixtures" / "discovery"


def read(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_wordpress_sitemap_index() -> None:
    result = parse_sitemap(read("wordpress-sitemap-index.xml"))
    assert result.kind == "index"
    assert [s.url.rsplit("/", 1)[-1] for s in result.sitemaps] == [
        "wp-sitemap-posts-post-1.xml",
        "wp-sitemap-posts-page-1.xml",
        "wp-sitemap-taxonomies-category-1.xml",
        "wp-sitemap-users-1.xml",
    ]


def test_yoast_urlset_with_images_and_timezones() -> None:
    result = parse_sitemap(read("yoast-post-sitemap.xml"))
    assert result.kind == "urlset"
    assert [e.url for e in result.entries] == [
        "https://news.example.com/2026/03/council-approves-budget/",
        "https://news.example.com/2026/03/river-festival-returns/",
        "https://news.example.com/2026/02/new-bus-lines/",
    ]
    assert result.entries[1].lastmod == datetime(2026, 3, 20, 5, 45, tzinfo=UTC)
    assert result.entries[2].lastmod == datetime(2026, 2, 2, tzinfo=UTC)


def test_google_news_sitemap_keeps_date_and_title() -> None:
    entries = parse_sitemap(read("google-news-sitemap.xml")).entries
    assert entries[0].news_title == "Companies A & B in Merger Talks"
    assert entries[0].date == datetime(2026, 11, 20, 13, 15, tzinfo=UTC)
    assert entries[1].news_title == "Late goal decides the final"
    assert entries[1].date == datetime(2026, 11, 21, tzinfo=UTC)


def test_hreflang_alternates_and_language_choice() -> None:
    entries = parse_sitemap(read("hreflang-sitemap.xml")).entries
    assert [a.lang for a in entries[0].alternates] == ["de", "de-ch", "en"]
    plan = CrawlPlan(UrlPolicy(frozenset({"www.example.com"})), PlanOptions(lang="de"))
    for entry in entries:
        plan.add_sitemap_entry(entry, "https://www.example.com/sitemap.xml")
    assert [c.url for c in plan.to_fetch(set())] == [
        "https://www.example.com/deutsch/page.html",
        "https://www.example.com/english/only.html",  # no alternates: language unknown, kept
    ]


def test_text_sitemap_with_bom_and_comments() -> None:
    result = parse_sitemap(read("text-sitemap.txt"))
    assert result.kind == "text"
    assert [e.url for e in result.entries] == [
        "https://docs.example.org/",
        "https://docs.example.org/guide/install.html",
        "https://docs.example.org/guide/usage.html",
    ]


def test_gzip_sitemap() -> None:
    result = parse_sitemap(gzip.compress(read("yoast-post-sitemap.xml")))
    assert len(result.entries) == 3


def test_hostile_and_broken_sitemaps_are_refused_not_expanded() -> None:
    assert parse_sitemap(BILLION_LAUGHS).error == "hostile_xml"
    assert parse_feed(XXE).error == "hostile_xml"
    bomb = gzip.compress(b"<urlset>" + b" " * (60 * 1024 * 1024) + b"</urlset>")
    assert parse_sitemap(bomb).error == "gzip_bomb"
    assert parse_sitemap(b"\x1f\x8bnot really gzip").error == "bad_gzip"
    assert parse_sitemap(b"<html><body>Not found</body></html>").error == "not_a_sitemap"
    assert parse_sitemap(b"").error == "not_a_sitemap"
    assert parse_sitemap(b"<urlset><url><loc>").kind in ("urlset", "invalid")


def test_gunzip_cap_is_exact() -> None:
    assert gunzip_capped(gzip.compress(b"x" * 100), limit=100) == b"x" * 100
    with pytest.raises(XmlError):
        gunzip_capped(gzip.compress(b"x" * 101), limit=100)


def test_wordpress_rss() -> None:
    result = parse_feed(read("wordpress-rss.xml"))
    assert result.kind == "rss"
    assert result.title == "Example Blog"
    first, second = result.entries
    assert first.url == "https://blog.example.org/2026/11/ten-years/"
    assert first.title == "Ten years of gardening notes"
    assert first.date == datetime(2026, 11, 20, 9, 12, 44, tzinfo=UTC)
    assert second.url == "https://blog.example.org/2026/11/guid-only/"


def test_atom_alternate_links_relative_to_feed() -> None:
    result = parse_feed(read("blog-atom.xml"), "https://blog.example.com/feeds/posts/default")
    assert result.kind == "atom"
    assert [e.url for e in result.entries] == [
        "https://blog.example.com/2026/11/profiling.html",
        "https://blog.example.com/2026/10/relative.html",
    ]
    assert result.entries[0].date == datetime(2026, 11, 18, 18, 0, tzinfo=UTC)


def test_json_feed() -> None:
    result = parse_feed(read("jsonfeed-1.0.json"))
    assert result.kind == "json"
    assert [e.url for e in result.entries] == [
        "https://example.org/second-item",
        "https://example.org/initial-post",
        "https://example.org/external",
    ]
    assert result.entries[1].title == "Initial post"
    assert parse_feed(b'{"version": 1, "items": []}').error == "not_a_feed"
    assert parse_feed(b"{" * 100_000).error == "malformed_json"


def test_rss1_rdf() -> None:
    result = parse_feed(read("rss1-rdf.xml"))
    assert result.kind == "rdf"
    assert [e.url for e in result.entries] == [
        "https://www.example.edu/news/1",
        "https://www.example.edu/news/2",
    ]
    assert result.entries[0].date == datetime(2026, 5, 4, 7, 0, tzinfo=UTC)


def test_feed_links_on_a_home_page() -> None:
    html = b"""<html><head>
    <link rel="alternate" type="application/rss+xml" href="/feed/">
    <link rel="alternate" type="application/atom+xml; charset=utf-8" href="https://x.org/atom">
    <link rel="alternate" hreflang="de" href="/de/">
    <link rel="stylesheet" type="text/css" href="/s.css">
    <link rel="alternate" type="application/feed+json" href="/feed/">
    </head></html>"""
    links = find_feed_links(html, "https://x.org/")
    assert [(link.url, link.kind) for link in links] == [
        ("https://x.org/feed/", "rss"),
        ("https://x.org/atom", "atom"),
    ]


def test_robots_sitemap_lines() -> None:
    body = (
        b"User-agent: *\nDisallow: /a\nSitemap: https://x.org/s1.xml\n"
        b"sitemap: https://x.org/s2.xml?x=1\nSitemap: https://x.org/s1.xml\n"
    )
    assert sitemaps_from_robots(body) == ["https://x.org/s1.xml", "https://x.org/s2.xml?x=1"]
    relative = b"Sitemap: /sitemap_index.xml\nSitemap: ftp://x.org/no.xml\n"
    assert sitemaps_from_robots(relative, "https://x.org/robots.txt") == [
        "https://x.org/sitemap_index.xml"
    ]


def test_normalisation_strips_tracking_and_fragments() -> None:
    assert normalize_url("https://x.org/a?utm_source=n&b=2&a=1#top") == "https://x.org/a?a=1&b=2"
    assert normalize_url("https://x.org/p?fbclid=abc") == "https://x.org/p"
    assert normalize_url("javascript:alert(1)") is None


def test_url_policy() -> None:
    policy = UrlPolicy(frozenset({"example.com"}))
    assert policy.reject_reason("https://www.example.com/a.html") is None
    assert policy.reject_reason("https://blog.example.com/a.html") == "offsite"
    assert policy.reject_reason("https://example.com/report.pdf") == "non_html"
    assert policy.reject_reason("https://other.org/") == "offsite"
    with_subs = UrlPolicy(frozenset({"example.com"}), allow_subdomains=True)
    assert with_subs.reject_reason("https://blog.example.com/a.html") is None


def test_plan_orders_newest_first_prunes_and_dedupes() -> None:
    since = datetime(2026, 2, 1, tzinfo=UTC)
    plan = CrawlPlan(UrlPolicy(frozenset({"x.org"})), PlanOptions(since=since, max_pages=3))
    days = {"old": 1, "mid": 5, "new": 9}
    for name, month in days.items():
        plan.add(
            Candidate(f"https://x.org/{name}", "sitemap", "s", datetime(2026, month, 1, tzinfo=UTC))
        )
    plan.add(Candidate("https://x.org/undated", "sitemap", "s"))
    plan.add(Candidate("https://x.org/new?utm_medium=x", "feed", "f", title="New"))
    plan.add(Candidate("https://x.org/late", "sitemap", "s", datetime(2026, 3, 1, tzinfo=UTC)))
    assert [c.url.rsplit("/", 1)[-1] for c in plan.to_fetch(set())] == ["new", "mid", "late"]
    assert [c.url.rsplit("/", 1)[-1] for c in plan.to_fetch({"https://x.org/new"})] == [
        "mid",
        "late",
    ]
    assert plan.candidates["https://x.org/new"].title == "New"  # merged from the duplicate
    assert plan.rejected == {"before_since": 1, "duplicate": 1}


def test_hostile_values_never_raise() -> None:
    base = "https://ex.com/s.xml"
    bad_loc = b"<urlset><url><loc>http://[bad/x</loc></url><url><loc>/ok</loc></url></urlset>"
    assert [e.url for e in parse_sitemap(bad_loc, base).entries] == ["https://ex.com/ok"]
    for lastmod in (b"0000", b"0001-01-01T00:00:00+05:00", b"9999-12-31T23:00:00-05:00", b"x"):
        doc = b"<urlset><url><loc>/a</loc><lastmod>" + lastmod + b"</lastmod></url></urlset>"
        (entry,) = parse_sitemap(doc, base).entries
        assert entry.lastmod is None
    assert (
        parse_feed(b"<rss><channel><item><link>http://[x</link></item></channel></rss>").entries
        == []
    )
    assert sitemaps_from_robots(b"Sitemap: http://[bad\n", "https://ex.com/robots.txt") == []
    assert (
        find_feed_links(b'<link rel="alternate" type="application/rss+xml" href="http://[x">', base)
        == []
    )


def test_encodings_and_compression_variants() -> None:
    bom_json = b'\xef\xbb\xbf{"version":"https://jsonfeed.org/version/1.1","items":[{"url":"/a"}]}'
    assert [e.url for e in parse_feed(bom_json, "https://ex.com/f").entries] == ["https://ex.com/a"]
    two_members = gzip.compress(b"https://ex.com/a\n") + gzip.compress(b"https://ex.com/b\n")
    assert [e.url for e in parse_sitemap(two_members).entries] == [
        "https://ex.com/a",
        "https://ex.com/b",
    ]
    truncated = gzip.compress(b"https://ex.com/a\n" * 1000)[:-20]
    assert parse_sitemap(truncated).error == "truncated_gzip"
    assert [e.url for e in parse_sitemap(b"HTTPS://EX.COM/A\n").entries] == ["HTTPS://EX.COM/A"]
    utf16 = read("yoast-post-sitemap.xml").decode().replace('encoding="UTF-8"', 'encoding="UTF-16"')
    assert len(parse_sitemap(utf16.encode("utf-16")).entries) == 3
    padded = b"<?xml version='1.0'?><!--" + b"x" * 10_000 + b"-->" + BILLION_LAUGHS[22:]
    assert parse_sitemap(padded).error == "hostile_xml"


def test_unescaped_ampersand_in_a_sitemap_loc_is_kept() -> None:
    body = (
        b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://shop.example/list?page=1&cat=2</loc></url>"
        b"<url><loc>https://shop.example/a?x=1&amp;y=2&#38;z=3</loc></url></urlset>"
    )
    urls = [e.url for e in parse_sitemap(body).entries]
    assert urls == [
        "https://shop.example/list?page=1&cat=2",
        "https://shop.example/a?x=1&y=2&z=3",
    ]


def test_rss_item_link_after_an_atom_link() -> None:
    body = (
        b'<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">'
        b"<channel><title>T</title><item><title>A</title>"
        b'<atom:link href="https://news.example/feed/" rel="self"/>'
        b"<link>https://news.example/a.html</link></item></channel></rss>"
    )
    assert [e.url for e in parse_feed(body).entries] == ["https://news.example/a.html"]


def test_json_feed_item_with_only_a_url_id() -> None:
    body = (
        b'{"version": "https://jsonfeed.org/version/1.1", "title": "T", "items": ['
        b'{"id": "https://blog.example/post-1", "content_text": "x"},'
        b'{"id": "42", "content_text": "no url at all"}]}'
    )
    assert [e.url for e in parse_feed(body).entries] == ["https://blog.example/post-1"]


def test_language_choice_prefers_the_exact_match() -> None:
    def entry(*langs: str) -> SitemapEntry:
        alternates = tuple(Alternate(lang, f"https://site.example/{lang}/") for lang in langs)
        return SitemapEntry("https://site.example/en/", alternates=alternates)

    def chosen(lang: str, *langs: str) -> list[str]:
        plan = CrawlPlan(UrlPolicy.for_urls(["https://site.example"]), PlanOptions(lang=lang))
        plan.add_sitemap_entry(entry(*langs), "https://site.example/sitemap.xml")
        return [c.url for c in plan.ordered()]

    assert chosen("de", "de-AT", "de") == ["https://site.example/de/"]
    assert chosen("de", "de-AT", "en") == ["https://site.example/de-AT/"]
    assert chosen("de-AT", "de", "de-AT") == ["https://site.example/de-AT/"]
    assert chosen("fr", "de", "en") == []


def test_feed_home_links() -> None:
    rss = (
        b'<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>T</title>'
        b'<atom:link href="https://feeds.example.org/rss" rel="self"/>'
        b"<link>https://www.example.org/</link></channel></rss>"
    )
    atom = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
        b'<link rel="self" href="https://feeds.example.org/atom"/>'
        b'<link rel="alternate" href="https://www.example.org/"/></feed>'
    )
    json_feed = (
        b'{"version": "https://jsonfeed.org/version/1.1", "title": "T",'
        b' "home_page_url": "https://www.example.org/", "items": []}'
    )
    for body in (rss, atom, json_feed):
        assert parse_feed(body, "https://feeds.example.org/x").home == "https://www.example.org/"


def test_policy_widened_by_registrable_domain() -> None:
    policy = UrlPolicy.for_urls(["https://feeds.example.org"])
    assert not policy.on_site("https://www.example.org/a.html")
    wide = policy.widened(set(), {registrable_domain("https://feeds.example.org/rss") or ""})
    assert wide.on_site("https://www.example.org/a.html")
    assert wide.on_site("https://example.org/a.html")
    assert not wide.on_site("https://example.com/a.html")
    assert not wide.on_site("https://notexample.org/a.html")
    assert registrable_domain("https://news.bbc.co.uk/x") == "bbc.co.uk"
    assert registrable_domain("http://127.0.0.1:8080/feed") is None


def test_a_child_sitemap_mixed_into_a_urlset_is_listed() -> None:
    # Some generators put <sitemap> references in a <urlset>: followed like an index's.
    body = (
        b'<?xml version="1.0" encoding="UTF-8"?>'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://site.example/a.html</loc></url>"
        b"<sitemap><loc>https://site.example/more.xml</loc><lastmod>2026-03-01</lastmod></sitemap>"
        b"<sitemap><loc>/relative.xml</loc></sitemap>"
        b"<sitemap><loc>javascript:alert(1)</loc></sitemap>"
        b"<url><loc>https://site.example/b.html</loc></url></urlset>"
    )
    result = parse_sitemap(body, "https://site.example/sitemap.xml")
    assert result.kind == "urlset"
    assert [e.url for e in result.entries] == [
        "https://site.example/a.html",
        "https://site.example/b.html",
    ]
    assert [(s.url, s.lastmod) for s in result.sitemaps] == [
        ("https://site.example/more.xml", datetime(2026, 3, 1, tzinfo=UTC)),
        ("https://site.example/relative.xml", None),
    ]


def _json_feed(*urls: bytes) -> bytes:
    items = b",".join(b'{"url": "' + url + b'", "title": "caf\xc3"}' for url in urls)
    return b'{"version": "https://jsonfeed.org/version/1.1", "title": "T\xff", "items": [' + (
        items + b"]}"
    )


@pytest.mark.parametrize(
    "junk",
    [b"\xff\xfe", b"\xc3", b"\xe2\x80", b"\xef\xbb\xbf", b"\x00 \t", b"\\u0000"],
)
def test_junk_before_a_json_feed_url_is_no_relative_path(junk: bytes) -> None:
    body = _json_feed(junk + b"https://news.example/a.html")
    result = parse_feed(body, "https://feeds.example/feed.json")
    assert result.kind == "json"
    assert [e.url for e in result.entries] == ["https://news.example/a.html"]
    assert not result.rejected


def test_a_json_feed_url_broken_beyond_cleaning_is_rejected_and_counted() -> None:
    body = _json_feed(
        b"https://news.example/good.html",
        b"\xffttps://news.example/lost-its-h.html",  # "ttps:" is a scheme, not http(s)
        b"ht\xfftps://news.example/inside.html",
        b"https://news.\xffexample/host.html",
        b"h ttps://news.example/space.html",
        b"/relative/ok.html",
    )
    result = parse_feed(body, "https://feeds.example/feed.json")
    assert [e.url for e in result.entries] == [
        "https://news.example/good.html",
        "https://feeds.example/relative/ok.html",
    ]
    assert result.rejected == {"invalid": 4}
    # The crawl plan counts them with its own rejections (discovery/rejected/invalid).
    plan = CrawlPlan(UrlPolicy.for_urls(["https://news.example", "https://feeds.example"]))
    plan.add_feed_result(result, "https://feeds.example/feed.json")
    assert [c.url for c in plan.ordered()] == [e.url for e in result.entries]
    assert plan.rejected == {"invalid": 4}


def test_a_bad_byte_elsewhere_in_a_json_feed_spoils_nothing() -> None:
    # A raw control byte in a title no longer makes the whole feed malformed JSON, and a
    # bad byte just before a closing quote does not swallow the quote.
    body = (
        b'{"version": "https://jsonfeed.org/version/1.1", "title": "T\x01\xc3", "items": ['
        b'{"title": "x\x00\xe2", "url": "https://news.example/a.html"},'
        b'{"url": "https://news.example/b.html\xe2"}]}'
    )
    result = parse_feed(body)
    assert [e.url for e in result.entries] == [
        "https://news.example/a.html",
        "https://news.example/b.html",
    ]
    utf16 = '{"version": "https://jsonfeed.org/version/1", "items": [{"url": "/a"}]}'
    for encoded in (utf16.encode("utf-16-le"), utf16.encode("utf-16-be"), utf16.encode("utf-16")):
        assert [e.url for e in parse_feed(encoded, "https://x.example/f").entries] == [
            "https://x.example/a"
        ]


def test_broken_absolute_urls_never_become_relative_ones() -> None:
    base = "https://site.example/feeds/rss.xml"
    rss = (
        b"<rss version='2.0'><channel><title>T</title>"
        b"<item><link>\xef\xbf\xbdhttps://site.example/a.html</link></item>"
        b"<item><link>ht tp://site.example/b.html</link></item>"
        b"<item><link>relative.html</link></item></channel></rss>"
    )
    result = parse_feed(rss, base)
    assert [e.url for e in result.entries] == [
        "https://site.example/a.html",
        "https://site.example/feeds/relative.html",
    ]
    assert result.rejected == {"invalid": 1}
    sitemap = (
        b"<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
        b"<url><loc>\xef\xbf\xbd\xef\xbf\xbdhttps://site.example/c.html</loc></url>"
        b"<url><loc>https://site.example/d\xef\xbf\xbd.html</loc></url>"
        b"<url><loc>/e.html?next=https://other.example/</loc></url></urlset>"
    )
    assert [e.url for e in parse_sitemap(sitemap, base).entries] == [
        "https://site.example/c.html",
        "https://site.example/e.html?next=https://other.example/",
    ]

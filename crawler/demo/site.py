"""A generated website with robots.txt, sitemaps, feeds and article pages, served from memory.

Used by the README's demo command (``maintext demo``). The test suite builds its own variants
on top of it (``tests/sites.py``: hostile pages, 429s, slow answers, a request log).
"""

from __future__ import annotations

import gzip
import html
import json
from dataclasses import dataclass, field
from datetime import datetime

from scrapy_maintext.demo.content import Article, make_articles

NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"


@dataclass
class Route:
    """What the server answers for one path."""

    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SiteOptions:
    articles: int = 12
    crawl_delay: float | None = 1.0
    #: Publish sitemaps (named in robots.txt).
    sitemaps: bool = True
    #: Publish feeds (RSS 2.0, Atom, JSON Feed, RSS 1.0), announced on the home page.
    feeds: bool = True


@dataclass
class Site:
    routes: dict[str, Route]
    articles: list[Article]
    #: Paths of the pages a polite sitemap crawl must fetch (and export) exactly once.
    expected_pages: set[str]
    #: Paths robots.txt forbids.
    disallowed: set[str]


def page_html(article: Article, others: list[Article]) -> str:
    """An article page with the usual boilerplate around the main content."""
    half = len(article.paragraphs) // 2
    paras = [f"<p>{html.escape(p)}</p>" for p in article.paragraphs]
    bullets = "".join(f"<li>{html.escape(b)}</li>" for b in article.bullets)
    related = "".join(
        f'<li><a href="/articles/{o.slug}.html">{html.escape(o.title)}</a></li>' for o in others
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(article.title)} | Valley Chronicle</title>
<meta name="author" content="{html.escape(article.author)}">
<meta property="og:site_name" content="Valley Chronicle">
<meta name="description" content="{html.escape(article.paragraphs[0][:120])}">
<link rel="alternate" type="application/rss+xml" href="/feed.xml" title="RSS">
</head><body>
<div class="cookie-banner">We use cookies to improve your experience.
<a href="/privacy.html">Learn more</a></div>
<header class="site-header"><a href="/">Valley Chronicle</a>
<nav class="menu"><ul><li><a href="/">Home</a></li><li><a href="/about.html">About us</a></li>
<li><a href="/contact.html">Contact</a></li><li><a href="/archive.html">Archive</a></li>
</ul></nav></header>
<main><article class="post">
<h1>{html.escape(article.title)}</h1>
<p class="byline">By <span class="author">{html.escape(article.author)}</span>,
<time datetime="{article.date}">{article.date}</time></p>
{"".join(paras[:half])}
<h2>{html.escape(article.subheading)}</h2>
<ul>{bullets}</ul>
{"".join(paras[half:])}
</article>
<section class="comments"><h3>2 comments</h3>
<div class="comment"><p>Great read, thanks for sharing!</p></div>
<div class="comment"><p>I visited last summer and loved it.</p></div></section>
</main>
<aside class="sidebar"><h3>Related stories</h3><ul>{related}</ul>
<div class="newsletter">Subscribe to our newsletter for weekly updates.</div></aside>
<footer><p>&copy; 2026 Valley Chronicle. All rights reserved.</p>
<a href="/imprint.html">Imprint</a> <a href="/privacy.html">Privacy</a></footer>
</body></html>"""


def _home_html(articles: list[Article], feeds: bool) -> str:
    links = "".join(
        f'<li><a href="/articles/{a.slug}.html?utm_source=home">{html.escape(a.title)}</a></li>'
        for a in articles
    )
    alternates = (
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
        '<link rel="alternate" type="application/atom+xml" href="/atom.xml">'
        '<link rel="alternate" type="application/feed+json" href="/feed.json">'
        '<link rel="alternate" type="application/rdf+xml" href="/index.rdf">'
        if feeds
        else ""
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Valley Chronicle'
        f"</title>{alternates}</head><body><h1>Valley Chronicle</h1><ul>{links}</ul>"
        '<a href="/private/drafts.html">Drafts</a></body></html>'
    )


def _urlset(entries: list[str], news: bool = False) -> bytes:
    ns = f' xmlns:news="{NEWS_NS}"' if news else ""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="{XHTML_NS}"{ns}>'
        + "".join(entries)
        + "</urlset>"
    ).encode()


def _url(base: str, path: str, lastmod: str | None = None, extra: str = "") -> str:
    mod = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    return f"<url><loc>{html.escape(base + path)}</loc>{mod}{extra}</url>"


def _news(article: Article) -> str:
    return (
        "<news:news><news:publication><news:name>Valley Chronicle</news:name>"
        "<news:language>en</news:language></news:publication>"
        f"<news:publication_date>{article.date}T08:00:00+00:00</news:publication_date>"
        f"<news:title>{html.escape(article.title)}</news:title></news:news>"
    )


def _about_html(lang: str) -> str:
    text = (
        "Die Valley Chronicle berichtet seit 1952 über das Leben im Tal und seine Geschichte."
        if lang == "de"
        else "The Valley Chronicle has reported on life in the valley and its history since 1952."
    )
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>About</title>'
        f"</head><body><nav><a href='/'>Home</a></nav><main><h1>About</h1><p>{text}</p>"
        "</main></body></html>"
    )


def _alternates(base: str) -> str:
    return (
        f'<xhtml:link rel="alternate" hreflang="en" href="{base}/about.html"/>'
        f'<xhtml:link rel="alternate" hreflang="de" href="{base}/de/about.html"/>'
    )


def _sitemaps(base: str, arts: list[Article]) -> dict[str, Route]:
    xml = "application/xml"
    pages = [_url(base, f"/articles/{a.slug}.html", a.date) for a in arts[:6]]
    pages.append(_url(base, f"/articles/{arts[0].slug}.html?utm_source=sitemap&utm_medium=x"))
    pages += [_url(base, "/private/drafts.html"), _url(base, "/files/report.pdf")]
    news = [_url(base, f"/articles/{a.slug}.html", extra=_news(a)) for a in arts[6:9]]
    text = "".join(f"{base}/articles/{a.slug}.html\n" for a in arts[9:11])
    archive = [_url(base, f"/articles/{a.slug}.html", a.date) for a in arts[11:]]
    archive.append(_url(base, "/about.html", extra=_alternates(base)))
    children = ["/sitemaps/pages.xml.gz", "/sitemaps/news.xml", "/sitemaps/pages.txt"]
    children.append("/sitemap.php?section=archive&amp;page=1")
    index = "".join(f"<sitemap><loc>{base}{c}</loc></sitemap>" for c in children)
    return {
        "/sitemap_index.xml": Route(
            b'<?xml version="1.0" encoding="UTF-8"?><sitemapindex '
            b'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + index.encode()
            + b"</sitemapindex>",
            xml,
        ),
        "/sitemaps/pages.xml.gz": Route(gzip.compress(_urlset(pages)), "application/x-gzip"),
        "/sitemaps/news.xml": Route(_urlset(news, news=True), xml),
        "/sitemaps/pages.txt": Route(text.encode(), "text/plain"),
        "/sitemap.php?section=archive&page=1": Route(_urlset(archive), xml),
    }


def _rss(base: str, arts: list[Article]) -> bytes:
    items = "".join(
        f"<item><title>{html.escape(a.title)}</title><link>{base}/articles/{a.slug}.html</link>"
        f"<pubDate>{_rfc822(a.date)}</pubDate></item>"
        for a in arts
    )
    tracked = f"{base}/articles/{arts[0].slug}.html?utm_campaign=rss"
    items += f"<item><title>dup</title><link>{tracked}</link></item>"
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Valley Chronicle</title>'
        f"{items}</channel></rss>"
    ).encode()


def _rfc822(day: str) -> str:
    return datetime.fromisoformat(day).strftime("%a, %d %b %Y 09:30:00 +0000")


def _atom(base: str, arts: list[Article]) -> bytes:
    entries = "".join(
        f"<entry><title>{html.escape(a.title)}</title>"
        f'<link rel="alternate" href="{base}/articles/{a.slug}.html"/>'
        f"<id>urn:demo:{a.slug}</id><published>{a.date}T09:30:00Z</published></entry>"
        for a in arts
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>Valley Chronicle</title>{entries}</feed>"
    ).encode()


def _json_feed(base: str, arts: list[Article]) -> bytes:
    items = [
        {
            "id": a.slug,
            "url": f"{base}/articles/{a.slug}.html",
            "title": a.title,
            "date_published": f"{a.date}T09:30:00Z",
        }
        for a in arts
    ]
    feed = {"version": "https://jsonfeed.org/version/1.1", "title": "Valley Chronicle"}
    return json.dumps({**feed, "items": items}).encode()


def _rdf(base: str, arts: list[Article]) -> bytes:
    items = "".join(
        f'<item rdf:about="{base}/articles/{a.slug}.html"><title>{html.escape(a.title)}</title>'
        f"<link>{base}/articles/{a.slug}.html</link><dc:date>{a.date}</dc:date></item>"
        for a in arts
    )
    return (
        '<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<channel><title>Valley Chronicle</title></channel>{items}</rdf:RDF>"
    ).encode()


def _feeds(base: str, arts: list[Article]) -> dict[str, Route]:
    return {
        "/feed.xml": Route(_rss(base, arts[:4]), "application/rss+xml"),
        "/atom.xml": Route(_atom(base, arts[4:7]), "application/atom+xml"),
        "/feed.json": Route(_json_feed(base, arts[7:10]), "application/feed+json"),
        "/index.rdf": Route(_rdf(base, arts[10:]), "application/rdf+xml"),
    }


def _robots(base: str, options: SiteOptions) -> bytes:
    lines = ["User-agent: *", "Disallow: /private/"]
    if options.crawl_delay:
        lines.append(f"Crawl-delay: {options.crawl_delay:g}")
    if options.sitemaps:
        lines.append(f"Sitemap: {base}/sitemap_index.xml")
    return ("\n".join(lines) + "\n").encode()


def build_site(base: str, options: SiteOptions | None = None) -> Site:
    """The whole site for a server reachable at ``base`` (scheme://host:port)."""
    options = options or SiteOptions()
    arts = make_articles(options.articles)
    routes: dict[str, Route] = {
        "/robots.txt": Route(_robots(base, options), "text/plain"),
        "/": Route(_home_html(arts, options.feeds).encode()),
        "/about.html": Route(_about_html("en").encode()),
        "/de/about.html": Route(_about_html("de").encode()),
        "/private/drafts.html": Route(b"<html><body><p>Secret drafts</p></body></html>"),
        "/files/report.pdf": Route(b"%PDF-1.4 demo", "application/pdf"),
    }
    for i, article in enumerate(arts):
        others = [arts[(i + k) % len(arts)] for k in (1, 2, 3)]
        routes[f"/articles/{article.slug}.html"] = Route(page_html(article, others).encode())
    if options.sitemaps:
        routes.update(_sitemaps(base, arts))
    if options.feeds:
        routes.update(_feeds(base, arts))
    expected = {f"/articles/{a.slug}.html" for a in arts} | {"/about.html", "/de/about.html"}
    return Site(routes, arts, expected, {"/private/drafts.html"})

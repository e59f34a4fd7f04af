"""The news site of the simulated month (``benchmarks.recrawl_month``): a known change process.

2,000 articles at the start, 50 published a day before it; every hour about 50 / 24 new
articles (Poisson) and each article older than a day edited with a chance of 2% a day; 10% of
the articles (new ones too) have no ``lastmod`` in the sitemap. robots.txt names a sitemap
index with one child sitemap per month of publication (its ``lastmod`` the newest of its
entries'); ``/feed.xml`` is an RSS feed of the 50 newest with ``sy:updatePeriod`` hourly, as
WordPress writes it. Every answer has an ``ETag`` (a hash of its body) and ``Last-Modified``.
An edit bumps an article's ``lastmod`` (announced) unless it has none (a silent change). The
same seed gives the same month. :meth:`MonthSite.routes` serves the site as it is now.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import formatdate

HOUR = 3_600
DAY = 86_400
#: The simulated month starts here (epoch s): the first run.
START = int(datetime(2026, 10, 1, tzinfo=UTC).timestamp())
FEED_SIZE = 50
#: Where the site is served for real crawls (``--crawl-hours``), and the base of its URLs in
#: the simulation too: due times are spread by a hash of the URL.
HOST, PORT = "127.0.0.31", 8031
BASE = f"http://{HOST}:{PORT}"


@dataclass
class Article:
    slug: str
    published: int
    modified: int
    dated: bool
    version: int = 1


@dataclass(frozen=True)
class Change:
    """An article published (version 1) or edited (version > 1) at ``when``."""

    slug: str
    version: int
    when: int
    #: Announced by a sitemap ``lastmod`` or the feed; silent otherwise.
    announced: bool


class MonthSite:
    """The site's articles and every change of the month, advanced hour by hour."""

    def __init__(
        self,
        base: str = BASE,
        seed: int = 31,
        articles: int = 2_000,
        per_day: float = 50.0,
        edits_per_day: float = 0.02,
        undated: float = 0.10,
    ) -> None:
        self.base = base
        self.rng = random.Random(seed)
        self.per_day = per_day
        self.edits_per_day = edits_per_day
        self.undated = undated
        self.articles: dict[str, Article] = {}
        self.changes: list[Change] = []
        self.now = START
        for i in range(articles):
            self._publish(START - int((articles - i) * DAY / per_day), record=False)

    def _publish(self, when: int, record: bool = True) -> Article:
        slug = f"a{len(self.articles):05d}"
        dated = self.rng.random() >= self.undated
        article = Article(slug, when, when, dated)
        self.articles[slug] = article
        if record:
            self.changes.append(Change(slug, 1, when, announced=True))
        return article

    def advance(self, until: int) -> None:
        """Publish and edit what the hours up to ``until`` bring."""
        while self.now < until:
            hour_end = min(self.now + HOUR, until)
            span = hour_end - self.now
            older = [a for a in self.articles.values() if a.published < self.now - DAY]
            edits = _poisson(self.rng, len(older) * self.edits_per_day * span / DAY)
            for article in self.rng.sample(older, min(edits, len(older))):
                self._edit(article, self.now + self.rng.randrange(1, span + 1))
            for _ in range(_poisson(self.rng, self.per_day * span / DAY)):
                self._publish(self.now + self.rng.randrange(1, span + 1))
            self.now = hour_end

    def _edit(self, article: Article, when: int) -> None:
        article.version += 1
        article.modified = when
        self.changes.append(Change(article.slug, article.version, when, article.dated))

    # What the site serves now.

    def url(self, slug: str) -> str:
        return f"{self.base}/articles/{slug}.html"

    @property
    def index_url(self) -> str:
        return f"{self.base}/sitemap_index.xml"

    @property
    def feed_url(self) -> str:
        return f"{self.base}/feed.xml"

    def months(self) -> dict[str, list[Article]]:
        by_month: dict[str, list[Article]] = {}
        for article in self.articles.values():
            month = datetime.fromtimestamp(article.published, UTC).strftime("%Y-%m")
            by_month.setdefault(month, []).append(article)
        return by_month

    def documents(self) -> dict[str, tuple[bytes, int]]:
        """Path to (body, Last-Modified) of robots.txt, the sitemaps and the feed."""
        docs: dict[str, tuple[bytes, int]] = {}
        refs = []
        for month, articles in sorted(self.months().items()):
            newest = max(a.modified if a.dated else a.published for a in articles)
            rows = "".join(
                f"<url><loc>{self.url(a.slug)}</loc>"
                + (f"<lastmod>{_iso(a.modified)}</lastmod>" if a.dated else "")
                + "</url>"
                for a in articles
            )
            docs[f"/sitemaps/posts-{month}.xml"] = (_urlset(rows), newest)
            refs.append(
                f"<sitemap><loc>{self.base}/sitemaps/posts-{month}.xml</loc>"
                f"<lastmod>{_iso(newest)}</lastmod></sitemap>"
            )
        latest = max(modified for _, modified in docs.values())
        index = (
            '<?xml version="1.0" encoding="UTF-8"?><sitemapindex '
            f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{"".join(refs)}</sitemapindex>'
        )
        docs["/sitemap_index.xml"] = (index.encode(), latest)
        docs["/feed.xml"] = (self._rss(), latest)
        robots = f"User-agent: *\nSitemap: {self.index_url}\n"
        docs["/robots.txt"] = (robots.encode(), START)
        return docs

    def _rss(self) -> bytes:
        newest = sorted(self.articles.values(), key=lambda a: a.published, reverse=True)
        items = "".join(
            f"<item><title>Article {a.slug}</title><link>{self.url(a.slug)}</link>"
            f"<guid>{a.slug}</guid><pubDate>{formatdate(a.published, usegmt=True)}</pubDate>"
            "</item>"
            for a in newest[:FEED_SIZE]
        )
        return (
            '<?xml version="1.0"?><rss version="2.0" '
            'xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel>'
            f"<title>Month news</title><link>{self.base}/</link>"
            "<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>1</sy:updateFrequency>"
            f"{items}</channel></rss>"
        ).encode()

    def page(self, slug: str) -> bytes:
        a = self.articles[slug]
        words = " ".join(f"w{(int(a.slug[1:]) * 7 + i) % 997}" for i in range(120))
        return (
            f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>Article {slug}</title></head><body><article><h1>Article {slug}</h1>"
            f"<p>{words}.</p><p>Revision {a.version} of article {slug}: {words[:300]}.</p>"
            "</article></body></html>"
        ).encode()

    def routes(self) -> dict[str, tuple[bytes, str, dict[str, str]]]:
        """Path to (body, content type, headers) of every URL of the site now."""
        out = {}
        for path, (body, modified) in self.documents().items():
            kind = "text/plain" if path.endswith(".txt") else "application/xml"
            out[path] = (body, kind, _headers(body, modified))
        for slug, a in self.articles.items():
            body = self.page(slug)
            out[f"/articles/{slug}.html"] = (
                body,
                "text/html; charset=utf-8",
                _headers(body, a.modified),
            )
        return out


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def _urlset(rows: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</urlset>'
    ).encode()


def etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:16] + '"'


def _headers(body: bytes, modified: int) -> dict[str, str]:
    return {"ETag": etag(body), "Last-Modified": formatdate(modified, usegmt=True)}


def _poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw (Knuth's method; the means here are small)."""
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1

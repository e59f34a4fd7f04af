"""A news site that changes between crawls, for the recurring-crawl tests and benchmark.

Every answer has an ``ETag`` (a hash of its body) and a ``Last-Modified``, and the test
server (:class:`~tests.sites.TestSiteServer`) answers a matching conditional request with
``304``. robots.txt names a sitemap index whose one child lists every article (most with a
``lastmod``, :data:`UNDATED` without); ``/feed.xml`` is an RSS feed of the
:data:`FEED_SIZE` newest. :meth:`ChangingSite.edit`, :meth:`add` and :meth:`remove` change it
as a newsroom does; :meth:`publish` puts the new version on the server.
"""

from __future__ import annotations

import hashlib
import html
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from scrapy_maintext.demo.content import Article, make_articles
from scrapy_maintext.demo.site import page_html

from tests.sites import Route, TestSiteServer

#: Articles listed in the sitemap without a ``lastmod`` (the first ones).
UNDATED = 3
#: Entries of the RSS feed (the newest articles).
FEED_SIZE = 10
#: When the site's articles were first published (each a day after the one before).
EPOCH = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)


@dataclass
class Story:
    """An article as the site shows it now."""

    article: Article
    published: datetime
    modified: datetime
    #: Listed in the sitemap with its ``lastmod``.
    dated: bool = True
    #: Links to other articles beside the article (boilerplate: not its text).
    related: tuple[Article, ...] = ()


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:16] + '"'


def _route(body: bytes, content_type: str, modified: datetime) -> Route:
    headers = {"ETag": _etag(body), "Last-Modified": format_datetime(modified, usegmt=True)}
    return Route(body, content_type, headers=headers)


class ChangingSite:
    """``count`` articles on ``server``, changed and published again at will."""

    def __init__(self, server: TestSiteServer, count: int = 20) -> None:
        self.server = server
        self.base = server.base_url
        self._spare = make_articles(count + 20, seed=11)
        self.stories: dict[str, Story] = {}
        #: Articles ever published (removed ones included): the next one's number.
        self._made = 0
        #: Lines of robots.txt before its Sitemap line, and when they last changed (it
        #: answers with ETag and Last-Modified, and 304 to a conditional request).
        self.robots_rules = ""
        self.robots_modified = EPOCH
        for i in range(count):
            self._add(dated=i >= UNDATED)
        self.publish()

    def _add(self, dated: bool = True) -> Story:
        article = self._spare[self._made]
        when = EPOCH + timedelta(days=self._made)
        self._made += 1
        story = Story(article, when, when, dated)
        self.stories[article.slug] = story
        return story

    def path(self, slug: str) -> str:
        return f"/articles/{slug}.html"

    def edit(self, slug: str, note: str, bump_lastmod: bool = True) -> None:
        """A correction appended to the article; its ``lastmod`` moves unless told not to
        (its Last-Modified header moves anyway)."""
        story = self.stories[slug]
        article = story.article
        paragraphs = (*article.paragraphs, f"Correction: {note}")
        story.article = replace(article, paragraphs=paragraphs)
        story.modified = story.modified + timedelta(days=60)
        if not bump_lastmod:
            story.dated = False

    def add(self) -> str:
        return self._add().article.slug

    def republish(self, slug: str) -> str:
        """A new page at a new URL with the text of article ``slug`` (a syndicated copy)."""
        story = self._add()
        copy = replace(self.stories[slug].article, slug=story.article.slug)
        story.article = copy
        return copy.slug

    def relink(self, slug: str) -> None:
        """New related links beside article ``slug``: its page changes, its text does not
        (its ``lastmod``, Last-Modified and ETag move)."""
        story = self.stories[slug]
        story.related = tuple(s.article for s in self.stories.values() if s is not story)[:3]
        story.modified = story.modified + timedelta(days=30)

    def remove(self, slug: str) -> None:
        del self.stories[slug]

    def publish(self) -> None:
        """Serve the site as it is now (routes replaced at once)."""
        robots = f"User-agent: *\n{self.robots_rules}Sitemap: {self.base}/sitemap_index.xml\n"
        routes = {"/robots.txt": _route(robots.encode(), "text/plain", self.robots_modified)}
        newest = max(s.modified for s in self.stories.values())
        for slug, story in self.stories.items():
            body = page_html(story.article, list(story.related)).encode()
            routes[self.path(slug)] = _route(body, "text/html; charset=utf-8", story.modified)
        urlset = self._urlset()
        routes["/sitemaps/posts.xml"] = _route(urlset, "application/xml", newest)
        index = (
            '<?xml version="1.0" encoding="UTF-8"?><sitemapindex '
            'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap>'
            f"<loc>{self.base}/sitemaps/posts.xml</loc><lastmod>{newest.isoformat()}</lastmod>"
            "</sitemap></sitemapindex>"
        ).encode()
        routes["/sitemap_index.xml"] = _route(index, "application/xml", newest)
        routes["/feed.xml"] = _route(self._rss(), "application/rss+xml", newest)
        assert self.server.site is not None
        self.server.site.routes = routes

    def _urlset(self) -> bytes:
        rows = []
        for slug, story in self.stories.items():
            lastmod = f"<lastmod>{story.modified.isoformat()}</lastmod>" if story.dated else ""
            rows.append(f"<url><loc>{self.base}{self.path(slug)}</loc>{lastmod}</url>")
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join(rows)
            + "</urlset>"
        ).encode()

    def _rss(self) -> bytes:
        newest = sorted(self.stories.values(), key=lambda s: s.published, reverse=True)
        items = "".join(
            f"<item><title>{html.escape(s.article.title)}</title>"
            f"<link>{self.base}{self.path(s.article.slug)}</link>"
            f"<guid>{s.article.slug}</guid>"
            f"<pubDate>{format_datetime(s.modified, usegmt=True)}</pubDate></item>"
            for s in newest[:FEED_SIZE]
        )
        return (
            '<?xml version="1.0"?><rss version="2.0"><channel><title>Changing news</title>'
            f"<link>{self.base}/</link>{items}</channel></rss>"
        ).encode()


@dataclass(frozen=True)
class NewsroomDay:
    """What :func:`newsroom_day` changed: paths on the site."""

    #: Edited with their lastmod bumped, and one edited without (a silent change).
    changed: frozenset[str]
    added: frozenset[str]
    removed: str

    @property
    def exported(self) -> frozenset[str]:
        """What the next run of a recurring crawl exports: exactly these."""
        return self.changed | self.added


#: The ``recrawl/`` outcomes of the run after :func:`newsroom_day` on a 20-article site.
NEWSROOM_DAY_OUTCOMES = {
    "new": 2,
    "changed": 3,
    "gone": 1,
    "not_modified": UNDATED - 1,
    "skipped_by_date": 20 - UNDATED - 2 - 1,
}


def newsroom_day(news: ChangingSite) -> NewsroomDay:
    """2 edits with lastmod bumped, 1 without, 2 articles added, 1 removed; published."""
    slugs = list(news.stories)
    bumped, silent, removed = slugs[UNDATED : UNDATED + 2], slugs[0], slugs[-1]
    for slug in bumped:
        news.edit(slug, f"the {slug} story was corrected")
    news.edit(silent, "an undated correction", bump_lastmod=False)
    added = [news.add(), news.add()]
    news.remove(removed)
    news.publish()
    return NewsroomDay(
        frozenset(news.path(s) for s in [*bumped, silent]),
        frozenset(news.path(s) for s in added),
        news.path(removed),
    )

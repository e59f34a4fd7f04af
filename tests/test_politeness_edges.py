"""Politeness corner cases, each on a tiny site of its own served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawl import DISCOVERY_ONLY, QUICK_DISCOVERY, run_crawl
from tests.sites import Route, SiteOptions, TestSiteServer

PAGE = b"<html><body><p>A page.</p></body></html>"
#: Retry-After's pause when a 429/503 names none (5 s by default): the retries are counted,
#: their waits are not what these tests are about.
SHORT_DEFAULT_PAUSE = {"RETRY_AFTER_DEFAULT_DELAY": "0.1"}


@pytest.fixture
def tiny_site() -> Iterator[TestSiteServer]:
    """robots.txt naming a text sitemap of three pages; tests replace routes as needed."""
    with TestSiteServer(
        SiteOptions(articles=1, sitemaps=False, feeds=False, crawl_delay=None)
    ) as srv:
        assert srv.site is not None
        pages = ["/a.html", "/b.html", "/c.html"]
        srv.site.routes.update(
            {
                "/robots.txt": Route(f"User-agent: *\nSitemap: {srv.base_url}/s.txt\n".encode()),
                "/s.txt": Route("".join(f"{srv.base_url}{p}\n" for p in pages).encode()),
                **{p: Route(PAGE) for p in pages},
            }
        )
        yield srv


def page_hits(server: TestSiteServer) -> list[tuple[float, str, int]]:
    return [(h.time, h.path, h.status) for h in server.hits if h.path.endswith(".html")]


@pytest.mark.slow
def test_slow_503_pauses_the_domain_from_when_it_arrives(
    tiny_site: TestSiteServer, tmp_path: Path
) -> None:
    assert tiny_site.site is not None
    serve_time = 0.6  # longer than the slot delay: the next request is due on arrival
    tiny_site.site.routes["/b.html"] = Route(
        PAGE, retry_after_once=1, retry_status=503, delay=serve_time
    )
    result = run_crawl(
        "sitemap", tmp_path, {"domain": tiny_site.base_url}, DISCOVERY_ONLY, fresh_process=True
    )
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == 3
    hits = page_hits(tiny_site)
    index = next(i for i, (_, _, status) in enumerate(hits) if status == 503)
    gap = hits[index + 1][0] - hits[index][0]
    assert gap >= serve_time + 1.0 - 0.1, hits


def test_retry_after_gives_up_without_extra_retries(
    tiny_site: TestSiteServer, tmp_path: Path
) -> None:
    assert tiny_site.site is not None
    tiny_site.site.routes["/b.html"] = Route(b"busy", status=429, headers={"Retry-After": "0"})
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": tiny_site.base_url},
        {**QUICK_DISCOVERY, "RETRY_AFTER_MAX_RETRIES": "2"},
    )
    assert result.returncode == 0
    assert [p for _, p, _ in page_hits(tiny_site)].count("/b.html") == 3  # 1 + 2 retries
    assert result.stats["politeness/retry_after"] == 2
    assert result.stats["politeness/retry_after/gave_up"] == 1
    assert len(result.items) == 2


@pytest.mark.parametrize("status", [500, 503])
def test_robots_txt_server_error_forbids_the_site(
    tiny_site: TestSiteServer, tmp_path: Path, status: int
) -> None:
    assert tiny_site.site is not None
    tiny_site.site.routes["/robots.txt"] = Route(b"oops", status=status)
    tiny_site.site.routes["/sitemap.xml"] = Route(b"<urlset><url><loc>/a.html</loc></url></urlset>")
    settings = {**QUICK_DISCOVERY, **SHORT_DEFAULT_PAUSE}
    result = run_crawl("sitemap", tmp_path, {"domain": tiny_site.base_url}, settings)
    assert result.returncode == 1  # the crawl's only site could not be crawled
    assert result.items == []
    assert not any(h.path.endswith(".html") for h in tiny_site.hits)
    assert result.stats["politeness/robots_unreachable"] == 1
    errors = [line for line in result.log.splitlines() if "] ERROR:" in line]
    assert len(errors) == 1, errors
    assert f"answered HTTP {status}, so the whole site is off limits" in errors[0]


def test_huge_and_broken_pages_are_counted_skips(tiny_site: TestSiteServer, tmp_path: Path) -> None:
    assert tiny_site.site is not None
    huge = b"<html><body>" + b"<p>big</p>" * 20_000 + b"</body></html>"
    tiny_site.site.routes["/a.html"] = Route(huge)
    # Declared UTF-8, but Latin-1 bytes: decoded with replacement characters, still an item.
    tiny_site.site.routes["/b.html"] = Route(
        "<html><body><p>Caf\u00e9 cr\u00e8me</p></body></html>".encode("latin-1")
    )
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": tiny_site.base_url},
        {**QUICK_DISCOVERY, "DOWNLOAD_MAXSIZE": "100000", "DOWNLOAD_WARNSIZE": "0"},
    )
    assert result.returncode == 0
    assert result.stats["discovery/page_errors/too_large"] == 1
    assert sorted(i["url"].rsplit("/", 1)[-1] for i in result.items) == ["b.html", "c.html"]

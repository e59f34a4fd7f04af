"""Several recurring crawls on one Redis (issue 41): each crawl state has its own shared
run, a worker never joins another state's run, and the messages name their cause."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.distributed import Worker, news_site, redis_server_per_test, start_worker, wait_for
from tests.recrawl_site import ChangingSite
from tests.redis_server import RedisServer
from tests.sites import TestSiteServer
from tests.state_backends import redis_client

#: Fixtures.
_ = (news_site, redis_server_per_test)


@pytest.fixture(name="two_sites")
def two_sites_fixture() -> Iterator[tuple[ChangingSite, ChangingSite]]:
    """Two news sites of their own hosts (two slots: two sites of one crawl or of two)."""
    from scrapy_maintext.demo.site import SiteOptions

    with (
        TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.7") as one,
        TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.8") as two,
    ):
        yield ChangingSite(one), ChangingSite(two)


def joined(worker: Worker) -> bool:
    log = worker.out_dir / "log.txt"
    return log.exists() and "joined shared crawl" in log.read_text(errors="replace")


@pytest.mark.parametrize("prefix", [{}, {"DISTRIBUTED_KEY_PREFIX": "shared"}])
def test_two_crawls_of_two_states_started_together_never_mix(
    prefix: dict[str, str],
    two_sites: tuple[ChangingSite, ChangingSite],
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    """The documented line (REDIS_URL + its own CRAWL_STATE, no DISTRIBUTED_KEY_PREFIX), or
    one prefix given to both, for two crawls at once: each exports exactly its own site's
    pages, into its own state."""
    sites = list(two_sites)
    for site in sites:
        site.server.gate.clear()  # both workers join before either site answers
    workers = []
    try:
        for i, site in enumerate(sites):
            settings = {"REDIS_URL": redis_server.url, "CRAWL_STATE": f"site{i}", **prefix}
            workers.append(
                start_worker(f"w{i}", tmp_path, "sitemap", {"domain": site.base}, settings)
            )
        assert wait_for(lambda: all(joined(w) for w in workers), 60), "the workers did not join"
    finally:
        for site in sites:
            site.server.gate.set()
    for worker, site in zip(workers, sites, strict=True):
        worker.wait()
        assert worker.returncode == 0, worker.log[-3000:]
        assert sorted(worker.paths(site.base)) == sorted(site.path(s) for s in site.stories)


def test_a_worker_of_another_state_is_refused_in_one_line(
    news: ChangingSite,
    redis_server: RedisServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A prefix set to the run of a recurring crawl: a crawl of no state (or another) does
    not join it, finish it or clear it."""
    settings = {**QUICK_DISCOVERY, "REDIS_URL": redis_server.url, "DISTRIBUTED_KEY_PREFIX": "x"}
    first = run_crawl(
        "sitemap", tmp_path / "a", {"domain": news.base}, {**settings, "CRAWL_STATE": "news"}
    )
    assert first.returncode == 0 and len(first.items) == len(news.stories)
    capsys.readouterr()
    news.server.reset()
    settings["DISTRIBUTED_KEY_PREFIX"] = "x:state:news"
    refused = run_crawl("sitemap", tmp_path / "b", {"domain": news.base}, settings)
    assert refused.returncode == 2 and "Traceback" not in refused.log
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "x:state:news" in err and "belongs to crawl state 'news'" in err, err
    assert "DISTRIBUTED_KEY_PREFIX" in err and not news.server.hits


def test_a_run_changed_hands_is_refused_at_join(redis_server: RedisServer) -> None:
    """Two workers of two states on one prefix (the crawl command checked before either
    began): the second is refused when it joins, and the run is left as it was."""
    from scrapy_maintext.distributed.state import CrawlState, ForeignRun

    client = redis_client(redis_server)
    first = CrawlState(client, "p", "w1", 60, crawl_state="news")
    assert first.start_run("run1", renew=True) == ("run1", False)
    with pytest.raises(ForeignRun, match="belongs to crawl state 'news'; CRAWL_STATE=blog"):
        CrawlState(client, "p", "w2", 60, crawl_state="blog").start_run("run2", renew=True)
    with pytest.raises(ForeignRun, match="a crawl without CRAWL_STATE does not join"):
        CrawlState(client, "p", "w3", 60).start_run("run3", renew=True)
    assert first.run_id_now() == "run1"

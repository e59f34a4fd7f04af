"""The add-on merges its components and defaults without overriding the project."""

from __future__ import annotations

import os
from typing import Any

import pytest
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.extensions.throttle import AutoThrottle
from scrapy.settings import Settings
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler
from scrapy_maintext import Addon
from scrapy_maintext.politeness.defaults import user_agent

ROBOTSTXT = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
ROBOTS_OURS = "scrapy_maintext.politeness.robots.RobotsPolitenessMiddleware"
THROTTLE = "scrapy.extensions.throttle.AutoThrottle"
THROTTLE_OURS = "scrapy_maintext.politeness.throttle.PoliteAutoThrottle"


def applied(project: dict[str, Any]) -> Settings:
    """Settings as Scrapy builds them: project values, then the add-on."""
    return get_crawler(settings_dict={"ADDONS": {Addon: 500}, **project}).settings


def test_empty_project_gets_everything() -> None:
    settings = applied({})
    assert settings.getdict("ITEM_PIPELINES") == {
        "scrapy_maintext.pipelines.extraction.ExtractionPipeline": 400,
        "scrapy_maintext.state.recrawl_stage.RecrawlPipeline": 450,
        "scrapy_maintext.exporters.docdir.DocDirPipeline": 800,
    }
    assert settings.getdict("FEED_EXPORTERS") == {
        "tei": "scrapy_maintext.exporters.tei.TeiItemExporter",
        "txt": "scrapy_maintext.exporters.txt.TxtItemExporter",
        "markdown": "scrapy_maintext.exporters.markdown.MarkdownItemExporter",
        "md": "scrapy_maintext.exporters.markdown.MarkdownItemExporter",
    }
    downloader = _by_path(settings, "DOWNLOADER_MIDDLEWARES")
    assert downloader[ROBOTSTXT] is None
    assert downloader[ROBOTS_OURS] == 100
    assert downloader["scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware"] is None
    assert downloader["scrapy_maintext.middlewares.metarefresh.HeadMetaRefreshMiddleware"] == 580
    assert downloader["scrapy_maintext.politeness.retry_after.RetryAfterMiddleware"] == 560
    assert downloader["scrapy_maintext.state.conditional.ConditionalRequestMiddleware"] == 570
    spider = settings.getdict("SPIDER_MIDDLEWARES")
    assert spider == {
        "scrapy_maintext.middlewares.urlfilter.UrlFilterMiddleware": 600,
        "scrapy_maintext.archive.extension.WarcProvenanceMiddleware": 650,
    }
    assert downloader["scrapy_maintext.archive.extension.WarcCaptureMiddleware"] == 950
    assert settings.getbool("ROBOTSTXT_OBEY") is True
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 1
    assert settings.getfloat("DOWNLOAD_DELAY") == 1.0
    assert settings.getbool("AUTOTHROTTLE_ENABLED") is True
    assert settings.get("USER_AGENT") == "scrapy-maintext/0.1.0"


def test_project_values_win_and_dicts_are_merged() -> None:
    settings = applied(
        {
            "ITEM_PIPELINES": {"myproject.pipelines.Store": 900},
            "FEED_EXPORTERS": {"tei": "myproject.exporters.MyTei"},
            "DOWNLOADER_MIDDLEWARES": {RobotsTxtMiddleware: 120},
            "ROBOTSTXT_OBEY": False,
            "DOWNLOAD_DELAY": 3.5,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
            "AUTOTHROTTLE_ENABLED": False,
            "USER_AGENT": "mybot/2.0",
            "CRAWLER_CONTACT": "https://example.org/bot",
        }
    )
    pipelines = settings.getdict("ITEM_PIPELINES")
    assert pipelines["myproject.pipelines.Store"] == 900
    assert pipelines["scrapy_maintext.pipelines.extraction.ExtractionPipeline"] == 400
    exporters = settings.getdict("FEED_EXPORTERS")
    assert exporters["tei"] == "myproject.exporters.MyTei"
    assert exporters["txt"] == "scrapy_maintext.exporters.txt.TxtItemExporter"
    downloader = _by_path(settings, "DOWNLOADER_MIDDLEWARES")
    # Scrapy's robots.txt middleware is replaced by ours, at the project's order.
    assert downloader[ROBOTSTXT] is None and downloader[ROBOTS_OURS] == 120
    assert settings.getbool("ROBOTSTXT_OBEY") is False
    assert settings.getfloat("DOWNLOAD_DELAY") == 3.5
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 4
    assert settings.getbool("AUTOTHROTTLE_ENABLED") is False
    assert settings.get("USER_AGENT") == "mybot/2.0"


def test_project_can_disable_a_component_by_path() -> None:
    settings = applied(
        {"ITEM_PIPELINES": {"scrapy_maintext.exporters.docdir.DocDirPipeline": None}}
    )
    pipelines = settings.getdict("ITEM_PIPELINES")
    assert pipelines["scrapy_maintext.exporters.docdir.DocDirPipeline"] is None
    assert pipelines["scrapy_maintext.pipelines.extraction.ExtractionPipeline"] == 400


def test_user_agent_names_the_contact() -> None:
    settings = applied({"CRAWLER_CONTACT": "mailto:crawl@example.org"})
    assert settings.get("USER_AGENT") == "scrapy-maintext/0.1.0 (+mailto:crawl@example.org)"
    assert user_agent(None) == "scrapy-maintext/0.1.0"


def test_update_settings_on_plain_settings_object() -> None:
    settings = Settings({"DOWNLOAD_DELAY": 5})
    Addon().update_settings(settings)
    assert settings.getfloat("DOWNLOAD_DELAY") == 5
    assert settings.getpriority("ROBOTSTXT_OBEY") == settings.getpriority("USER_AGENT")
    assert "tei" in settings.getdict("FEED_EXPORTERS")


def _by_path(settings: Settings, name: str) -> dict[str, Any]:
    return {_path(key): value for key, value in settings.getdict(name).items()}


def _enabled(settings: Settings, name: str) -> list[str]:
    """The components Scrapy will build, by import path, in order."""
    return [
        _path(c) for c in build_component_list(settings.get_component_priority_dict_with_base(name))
    ]


def _path(component: Any) -> str:
    cls = load_object(component)
    return f"{cls.__module__}.{cls.__qualname__}"


def test_scrapy_components_listed_by_the_project_are_replaced_not_doubled() -> None:
    settings = applied(
        {
            "DOWNLOADER_MIDDLEWARES": {ROBOTSTXT: 120},
            "EXTENSIONS": {AutoThrottle: 5},
        }
    )
    downloader = _enabled(settings, "DOWNLOADER_MIDDLEWARES")
    assert ROBOTS_OURS in downloader and ROBOTSTXT not in downloader
    order = settings.get_component_priority_dict_with_base("DOWNLOADER_MIDDLEWARES")
    assert order[load_object(ROBOTS_OURS)] == 120
    extensions = _enabled(settings, "EXTENSIONS")
    assert THROTTLE_OURS in extensions and THROTTLE not in extensions


def test_scrapy_defaults_are_replaced_too() -> None:
    settings = applied({})
    assert ROBOTSTXT not in _enabled(settings, "DOWNLOADER_MIDDLEWARES")
    assert THROTTLE not in _enabled(settings, "EXTENSIONS")
    assert THROTTLE_OURS in _enabled(settings, "EXTENSIONS")


def test_project_that_disables_ours_keeps_scrapys() -> None:
    settings = applied(
        {"DOWNLOADER_MIDDLEWARES": {ROBOTS_OURS: None, ROBOTSTXT: 120}, "EXTENSIONS": {}}
    )
    downloader = _enabled(settings, "DOWNLOADER_MIDDLEWARES")
    assert ROBOTSTXT in downloader and ROBOTS_OURS not in downloader


def test_response_buffer_grows_with_extraction_workers() -> None:
    assert applied({"EXTRACT_WORKERS": 1}).getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE") == 5_000_000
    assert applied({"EXTRACT_WORKERS": 3}).getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE") == 15_000_000
    assert applied({"EXTRACT_WORKERS": 0}).getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE") == 5_000_000
    cores = os.cpu_count() or 1
    assert applied({}).getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE") == 5_000_000 * cores
    # Scrapy's own default without extraction; the project's value wins.
    off = applied({"EXTRACT_ENABLED": False, "EXTRACT_WORKERS": 4})
    assert off.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE") == 5_000_000
    own = applied({"EXTRACT_WORKERS": 4, "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 1_000_000})
    assert own.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE") == 1_000_000


def test_discovery_spiders_start_few_item_tasks_per_response() -> None:
    from scrapy_maintext.spiders.base import PAGE_CONCURRENT_ITEMS
    from scrapy_maintext.spiders.sitemap import SitemapSpider

    settings = get_crawler(SitemapSpider, {"ADDONS": {Addon: 500}}).settings
    assert settings.getint("CONCURRENT_ITEMS") == PAGE_CONCURRENT_ITEMS < 100
    assert settings.getbool("WARN_ON_GENERATOR_RETURN_VALUE") is False
    project = {"CONCURRENT_ITEMS": 50, "WARN_ON_GENERATOR_RETURN_VALUE": True}
    settings = get_crawler(SitemapSpider, project).settings
    assert settings.getint("CONCURRENT_ITEMS") == 50
    assert settings.getbool("WARN_ON_GENERATOR_RETURN_VALUE") is True


def test_project_that_disables_scrapys_component_gets_ours_disabled_too() -> None:
    metarefresh = "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware"
    ours = "scrapy_maintext.middlewares.metarefresh.HeadMetaRefreshMiddleware"
    settings = applied({"DOWNLOADER_MIDDLEWARES": {metarefresh: None}})
    downloader = _enabled(settings, "DOWNLOADER_MIDDLEWARES")
    assert metarefresh not in downloader and ours not in downloader
    assert ROBOTS_OURS in downloader


def test_http_handlers_bound_idle_connections_unless_the_project_chose_its_own() -> None:
    ours = "scrapy_maintext.scrapy_internals.BoundedHTTP11DownloadHandler"
    never = {"RENDER_JS": "never"}
    handlers = applied(never).getdict("DOWNLOAD_HANDLERS")
    assert handlers == {"http": ours, "https": ours}
    own = "myproject.handlers.OwnHandler"
    settings = {**never, "DOWNLOAD_HANDLERS": {"https": own}}
    handlers = applied(settings).getdict("DOWNLOAD_HANDLERS")
    assert handlers == {"http": ours, "https": own}


@pytest.mark.skipif(not os.access("/usr/bin/chromium", os.X_OK), reason="no Chromium")
def test_a_crawl_that_may_render_gets_the_rendering_handler_over_ours() -> None:
    from scrapy_maintext.render.handler import RenderDownloadHandler
    from scrapy_maintext.scrapy_internals import BoundedHTTP11DownloadHandler

    assert issubclass(RenderDownloadHandler, BoundedHTTP11DownloadHandler)
    render = "scrapy_maintext.render.handler.RenderDownloadHandler"
    settings = applied({})
    assert settings.getdict("DOWNLOAD_HANDLERS") == {"http": render, "https": render}
    launch = settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert launch["executable_path"] == "/usr/bin/chromium" and "--disable-quic" in launch["args"]
    ours = "scrapy_maintext.scrapy_internals.BoundedHTTP11DownloadHandler"
    for off in ({"RENDER_AVAILABLE": "unavailable"}, {"RENDER_BROWSER_PATH": "/nowhere/chrome"}):
        assert applied(off).getdict("DOWNLOAD_HANDLERS") == {"http": ours, "https": ours}
    with pytest.raises(ValueError, match="RENDER_JS"):
        applied({"RENDER_JS": "sometimes"})

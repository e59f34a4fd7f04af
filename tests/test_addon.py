"""The add-on merges its components and defaults without overriding the project."""

from __future__ import annotations

from typing import Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler
from scrapy_maintext import Addon
from scrapy_maintext.addon import user_agent

ROBOTSTXT = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


def applied(project: dict[str, Any]) -> Settings:
    """Settings as Scrapy builds them: project values, then the add-on."""
    return get_crawler(settings_dict={"ADDONS": {Addon: 500}, **project}).settings


def test_empty_project_gets_everything() -> None:
    settings = applied({})
    assert settings.getdict("ITEM_PIPELINES") == {
        "scrapy_maintext.pipeline.ExtractionPipeline": 400,
        "scrapy_maintext.exporters.docdir.DocDirPipeline": 800,
    }
    assert settings.getdict("FEED_EXPORTERS") == {
        "tei": "scrapy_maintext.exporters.tei.TeiItemExporter",
        "txt": "scrapy_maintext.exporters.txt.TxtItemExporter",
    }
    downloader = settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert downloader[ROBOTSTXT] is None
    assert downloader["scrapy_maintext.middlewares.robots.RobotsPolitenessMiddleware"] == 100
    assert downloader["scrapy_maintext.middlewares.politeness.RetryAfterMiddleware"] == 560
    spider = settings.getdict("SPIDER_MIDDLEWARES")
    assert spider == {"scrapy_maintext.middlewares.urlfilter.UrlFilterMiddleware": 600}
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
    assert pipelines["scrapy_maintext.pipeline.ExtractionPipeline"] == 400
    exporters = settings.getdict("FEED_EXPORTERS")
    assert exporters["tei"] == "myproject.exporters.MyTei"
    assert exporters["txt"] == "scrapy_maintext.exporters.txt.TxtItemExporter"
    downloader = settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert downloader[RobotsTxtMiddleware] == 120 and ROBOTSTXT not in downloader
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
    assert pipelines["scrapy_maintext.pipeline.ExtractionPipeline"] == 400


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

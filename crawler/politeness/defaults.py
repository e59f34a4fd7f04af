"""What makes a crawl polite by default: Scrapy settings (``SCRAPY_DEFAULTS`` in the
vocabulary), an AutoThrottle that starts at the floor, and an identifiable User-Agent."""

from __future__ import annotations

import scrapy_maintext
from scrapy.settings import BaseSettings
from scrapy_maintext.vocabulary.settings import SCRAPY_DEFAULTS, setting

PRIORITY = "addon"
USER_AGENT_PRODUCT = f"scrapy-maintext/{scrapy_maintext.__version__}"
LOG_FORMATTER = "scrapy_maintext.logformatter.SummaryLogFormatter"
#: Keeps CONCURRENT_REQUESTS_PER_DOMAIN when a site has no delay (Scrapy's own does not).
DOWNLOADER = "scrapy_maintext.scrapy_internals.OneAtATimeDownloader"


def apply_politeness(settings: BaseSettings) -> None:
    """Polite crawling defaults; the project's own values win (they have higher priority)."""
    for name, spec in SCRAPY_DEFAULTS.items():
        settings.set(name, spec.default, priority=PRIORITY)
    # AutoThrottle starts from its own (5 s) delay unless told otherwise: start at the floor.
    start_delay = max(settings.getfloat("DOWNLOAD_DELAY"), 1.0)
    settings.set("AUTOTHROTTLE_START_DELAY", start_delay, priority=PRIORITY)
    settings.set("USER_AGENT", user_agent(setting(settings, "CRAWLER_CONTACT")), priority=PRIORITY)
    # Scrapy's own formatter logs whole items: a dropped page's HTML would fill the log.
    settings.set("LOG_FORMATTER", LOG_FORMATTER, priority=PRIORITY)
    if settings.get("DOWNLOADER") == "scrapy.core.downloader.Downloader":
        settings.set("DOWNLOADER", DOWNLOADER, priority=PRIORITY)


def user_agent(contact: str | None) -> str:
    """An identifiable User-Agent: product/version plus a contact URL or e-mail."""
    return f"{USER_AGENT_PRODUCT} (+{contact})" if contact else USER_AGENT_PRODUCT

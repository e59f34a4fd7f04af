"""``ContactCheck``: one warning when a crawl of a real site tells site owners no contact.

The add-on puts ``CRAWLER_CONTACT`` into the User-Agent, so that whoever runs a site can
reach whoever crawls it. Without one, the first request to a host that is not loopback
(``localhost``, ``127.0.0.0/8``, ``::1``: tests, the demo) logs one line saying how to set it.
A project's own ``USER_AGENT`` is its own business: no warning then. An extension of its
own (the add-on enables it), off when a contact is set.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.http import Request
from scrapy.settings import BaseSettings
from scrapy_maintext.politeness.defaults import user_agent
from scrapy_maintext.vocabulary.reasons import switched_off
from scrapy_maintext.vocabulary.settings import setting

logger = logging.getLogger(__name__)

#: How to set a contact, as the warning says it.
HOW_TO_SET = "-s CRAWLER_CONTACT=mailto:you@example.org (or a URL; or in a project's settings.py)"


@dataclass(frozen=True)
class ContactSettings:
    contact: str
    user_agent: str

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ContactSettings:
        return cls(setting(settings, "CRAWLER_CONTACT"), settings.get("USER_AGENT") or "")

    @property
    def missing(self) -> bool:
        """No contact, and the User-Agent is the add-on's (which would carry one)."""
        return not self.contact and self.user_agent == user_agent(None)


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine: ``localhost`` or a loopback address."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ContactCheck:
    """Warns once, at the first request to a real site, when no contact is set."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = ContactSettings.from_settings(crawler.settings)
        if not self.config.missing:
            raise switched_off("ContactCheck", "a contact or a User-Agent of the project's is set")
        crawler.signals.connect(
            self.request_reached_downloader, signal=signals.request_reached_downloader
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ContactCheck:
        return cls(crawler)

    def request_reached_downloader(self, request: Request, spider: Spider) -> None:
        if is_loopback(request.url):
            return
        self.crawler.signals.disconnect(
            self.request_reached_downloader, signal=signals.request_reached_downloader
        )
        logger.warning(
            "CRAWLER_CONTACT is not set, so site owners cannot reach you through the "
            "User-Agent: add %s",
            HOW_TO_SET,
        )

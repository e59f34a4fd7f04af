"""Retry-After: honour 429/503 back-off requests with a per-domain pause."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy_maintext.scrapy_internals import live_slot, slot_key
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import switched_off
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

_SECONDS = re.compile(r"\d{1,9}", re.ASCII)
#: A slot with no delay never waits; this tiny one makes the downloader honour a pause.
_MIN_PAUSE_DELAY = 0.001


@dataclass(frozen=True)
class RetryAfterSettings:
    """``RETRY_AFTER_*`` settings."""

    enabled: bool
    #: Statuses whose Retry-After header is honoured.
    http_codes: frozenset[int]
    #: Longest pause honoured (seconds); longer requests are capped.
    max_delay: float
    #: Pause when the status comes without a usable Retry-After header (seconds).
    default_delay: float
    #: Retries of one request before giving up on it.
    max_retries: int

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RetryAfterSettings:
        return cls(
            enabled=setting(settings, "RETRY_AFTER_ENABLED"),
            http_codes=frozenset(setting(settings, "RETRY_AFTER_HTTP_CODES")),
            max_delay=setting(settings, "RETRY_AFTER_MAX_DELAY"),
            default_delay=setting(settings, "RETRY_AFTER_DEFAULT_DELAY"),
            max_retries=setting(settings, "RETRY_AFTER_MAX_RETRIES"),
        )


def parse_retry_after(value: str | bytes | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date)."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if _SECONDS.fullmatch(text):
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class RetryAfterMiddleware:
    """Pauses the whole domain for Retry-After seconds, then retries the request.

    The pause starts when the response arrives (``response_downloaded``), before the
    downloader sends the domain's next request; the retry happens in ``process_response``.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.config = RetryAfterSettings.from_settings(crawler.settings)
        if not self.config.enabled:
            raise switched_off("RetryAfterMiddleware", "RETRY_AFTER_ENABLED is off")
        self.crawler = crawler
        crawler.signals.connect(self.response_downloaded, signal=signals.response_downloaded)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _applies(self, request: Request, response: Response) -> bool:
        return response.status in self.config.http_codes and not request.meta.get("dont_retry")

    def response_downloaded(self, response: Response, request: Request, spider: object) -> None:
        if not self._applies(request, response):
            return
        if request.meta.get(Meta.RETRY_AFTER_TIMES, 0) >= self.config.max_retries:
            return
        delay = parse_retry_after(response.headers.get("Retry-After"))
        if delay is None:
            delay = self.config.default_delay
        delay = min(delay, self.config.max_delay)
        request.meta[Meta.RETRY_AFTER_PAUSE] = delay
        self._pause_slot(request, delay)

    def process_response(self, request: Request, response: Response) -> Request | Response:
        if not self._applies(request, response):
            return response
        stats = self.crawler.stats
        assert stats is not None
        retries = request.meta.get(Meta.RETRY_AFTER_TIMES, 0)
        if retries >= self.config.max_retries:
            stats.inc_value(Stat.RETRY_AFTER_GAVE_UP)
            logger.warning("Gave up on %s after %d Retry-After pauses", request.url, retries)
            # Scrapy's RetryMiddleware would retry it again, without any pause.
            request.meta["dont_retry"] = True
            return response
        stats.inc_value(Stat.RETRY_AFTER)
        delay = request.meta.pop(Meta.RETRY_AFTER_PAUSE, self.config.default_delay)
        logger.info("%s answered %d: pausing its domain %.1fs", request.url, response.status, delay)
        retry = request.replace(dont_filter=True, priority=request.priority + 1)
        retry.meta[Meta.RETRY_AFTER_TIMES] = retries + 1
        return retry

    def _pause_slot(self, request: Request, delay: float) -> None:
        slot = live_slot(self.crawler, slot_key(self.crawler, request))
        if slot is None:
            return
        slot.delay = max(slot.delay, _MIN_PAUSE_DELAY)
        # The downloader waits until ``lastseen + delay``; moving lastseen into the future
        # pauses this domain alone, without changing its delay for later requests.
        slot.lastseen = max(slot.lastseen, time.monotonic() + delay - slot.delay)

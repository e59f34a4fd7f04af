"""Scrapy glue of the archive: every response into WARC, and provenance into the items.

:class:`WarcCaptureMiddleware` is a downloader middleware next to the downloader (after
HTTP compression, redirects and retries in Scrapy's response order), so it sees every
response as received: robots.txt, sitemaps, feeds, pages, redirects and error answers, with
the body still content-encoded. :class:`WarcProvenanceMiddleware` (a spider middleware) adds
the response record's location to the items a response yields. Both are off without
``WARC_OUTPUT``.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import platform
import weakref
from collections.abc import AsyncIterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import scrapy
import scrapy_maintext
from itemadapter import ItemAdapter
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Headers, Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy_maintext.archive.provenance import Provenance
from scrapy_maintext.archive.records import Exchange
from scrapy_maintext.archive.writer import (
    ArchiveConfig,
    RecordLocation,
    WarcArchive,
    check_folder,
)
from scrapy_maintext.vocabulary.names import ROBOTS_COPY_FLAG, Meta, Stat
from scrapy_maintext.vocabulary.settings import SETTINGS, setting
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread

logger = logging.getLogger(__name__)

#: Settings that say how the crawl fetched, recorded in every file's ``warcinfo``.
WARCINFO_SETTINGS = (
    "USER_AGENT",
    "CRAWLER_CONTACT",
    "ROBOTSTXT_OBEY",
    "DOWNLOAD_DELAY",
    "AUTOTHROTTLE_ENABLED",
    "CONCURRENT_REQUESTS_PER_DOMAIN",
    "DOWNLOAD_MAXSIZE",
    "EXTRACT_ENGINE",
)


@dataclass(frozen=True)
class WarcSettings:
    """The ``WARC_*`` settings, read once."""

    output: str
    max_size: int
    prefix: str
    level: int

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> WarcSettings:
        config = cls(
            output=setting(settings, "WARC_OUTPUT"),
            max_size=setting(settings, "WARC_MAX_SIZE"),
            prefix=setting(settings, "WARC_PREFIX"),
            level=setting(settings, "WARC_COMPRESSION_LEVEL"),
        )
        if not 1 <= config.level <= 9:
            raise ValueError(f"WARC_COMPRESSION_LEVEL must be 1 to 9, not {config.level}")
        if config.max_size <= 0:
            raise ValueError(f"WARC_MAX_SIZE must be a positive size, not {config.max_size}")
        if not config.prefix or "-" in config.prefix or "/" in config.prefix:
            raise ValueError(f"WARC_PREFIX must be a word without '-' or '/': {config.prefix!r}")
        if config.output:
            check_folder(Path(config.output))
        return config


def warcinfo(crawler: Crawler) -> dict[str, str]:
    """The ``warcinfo`` fields: software, format, host and the settings that matter."""
    info = {
        "software": f"scrapy-maintext/{scrapy_maintext.__version__} "
        f"(Scrapy/{scrapy.__version__}; Python/{platform.python_version()})",
        "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
        "warc-format/warc-1.1/",
        "hostname": platform.node(),
        "robots": "obey" if crawler.settings.getbool("ROBOTSTXT_OBEY") else "ignore",
    }
    if crawler.spidercls is not None:
        info["spider"] = str(crawler.spidercls.name)
    for name in WARCINFO_SETTINGS:
        value = setting(crawler.settings, name) if name in SETTINGS else crawler.settings.get(name)
        if value not in (None, ""):
            info[f"setting-{name}"] = str(value)
    return info


def _header_list(headers: Headers) -> list[tuple[str, str]]:
    return [
        (name.decode("latin-1"), value.decode("latin-1"))
        for name, values in headers.items()
        for value in values
    ]


def exchange_of(request: Request, response: Response) -> Exchange:
    """What the crawl fetched, as the archive stores it (no copy of the body)."""
    ip = getattr(response, "ip_address", None)
    protocol = getattr(response, "protocol", None) or "HTTP/1.1"
    return Exchange(
        url=response.url,
        status=response.status,
        headers=_header_list(response.headers),
        payload=response.body,
        date=datetime.datetime.now(datetime.UTC),
        method=request.method,
        request_headers=_header_list(request.headers),
        request_body=request.body,
        protocol=protocol.upper(),
        ip_address=str(ip) if ip else None,
    )


class WarcCaptureMiddleware:
    """Downloader middleware: hands every HTTP response to the WARC writer thread."""

    def __init__(self, crawler: Crawler) -> None:
        self.config = WarcSettings.from_settings(crawler.settings)
        if not self.config.output:
            # No message: Scrapy would warn about an option that is off by default.
            raise NotConfigured
        self.crawler = crawler
        self.archive: WarcArchive | None = None
        #: The write of each request's response; gone with the request.
        self.pending: weakref.WeakKeyDictionary[Request, Future[RecordLocation]] = (
            weakref.WeakKeyDictionary()
        )
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def spider_opened(self) -> None:
        self.archive = WarcArchive(
            ArchiveConfig(
                directory=Path(self.config.output),
                max_size=self.config.max_size,
                prefix=self.config.prefix,
                info=warcinfo(self.crawler),
                level=self.config.level,
            )
        )
        logger.info("Archiving every response as WARC in %s", self.config.output)

    def process_response(self, request: Request, response: Response) -> Response:
        if self.archive is None or not response.url.startswith(("http://", "https://")):
            return response
        if ROBOTS_COPY_FLAG in response.flags:
            # The robots middleware's copy of a robots.txt, archived when it was fetched
            # (a spider's robots.txt request that downloaded it is archived as received).
            return response
        exchange = exchange_of(request, response)
        job = request.meta.get(Meta.RENDER)
        if job is not None:
            # The rendered page (issue 46): a conversion record of the fetched response,
            # or nothing when the page was not archived.
            refers_to = getattr(job, "refers_to", None)
            if not refers_to:
                return response
            exchange = dataclasses.replace(exchange, refers_to=refers_to)
        future = self.archive.submit(exchange)
        self.pending[request] = future
        future.add_done_callback(self._written)
        return response

    def _written(self, _: Future[RecordLocation]) -> None:
        from twisted.internet import reactor

        # Stats are updated on the reactor thread, like every other stat.
        reactor.callFromThread(self._update_stats)

    def _update_stats(self, archive: WarcArchive | None = None) -> None:
        archive = archive or self.archive
        stats = self.crawler.stats
        if archive is None or stats is None:
            return
        counts = archive.counts
        stats.set_value(Stat.WARC_RECORDS, counts.records)
        stats.set_value(Stat.WARC_BYTES, counts.bytes)
        stats.set_value(Stat.WARC_FILES, counts.files)
        if counts.errors:
            stats.set_value(Stat.WARC_ERRORS, counts.errors)

    def location(self, request: Request) -> Future[RecordLocation] | None:
        return self.pending.get(request)

    async def spider_closed(self) -> None:
        archive, self.archive = self.archive, None
        if archive is None:
            return
        # The queue's last records are written off the reactor thread too.
        await maybe_deferred_to_future(deferToThread(archive.close))
        self._update_stats(archive)
        logger.info(
            "WARC: %d records, %d bytes in %d files in %s",
            archive.counts.records,
            archive.counts.bytes,
            archive.counts.files,
            self.config.output,
        )


class WarcProvenanceMiddleware:
    """Spider middleware: the items of a response get its WARC record's location."""

    def __init__(self, crawler: Crawler) -> None:
        if not setting(crawler.settings, "WARC_OUTPUT"):
            raise NotConfigured
        self.crawler = crawler
        self._capture: WarcCaptureMiddleware | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _pending(self, response: Response) -> Future[RecordLocation] | None:
        if self._capture is None:
            self._capture = self.crawler.get_downloader_middleware(WarcCaptureMiddleware)
        if self._capture is None or response.request is None:
            return None
        return self._capture.location(response.request)

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        async for obj in result:
            if not isinstance(obj, Request):
                obj = await self._with_provenance(response, obj)
            yield obj

    async def _with_provenance(self, response: Response, item: Any) -> Any:
        future = self._pending(response)
        if future is None:
            return item
        try:
            location = await _wait(future)
        except Exception:
            # Logged and counted by the writer; the item goes on without provenance.
            return item
        provenance = Provenance.of_location(location, response.status).to_dict()
        adapter = ItemAdapter(item)
        if not isinstance(item, dict) and not set(provenance) <= set(adapter.field_names()):
            item = adapter.asdict()
            adapter = ItemAdapter(item)
        for key, value in provenance.items():
            adapter[key] = value
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(Stat.WARC_DOCUMENTS)
        return item


async def _wait(future: Future[RecordLocation]) -> RecordLocation:
    """The writer thread's result, awaited without blocking the reactor."""
    if future.done():
        return future.result()
    from twisted.internet import reactor

    deferred: Deferred[RecordLocation] = Deferred()

    def done(finished: Future[RecordLocation]) -> None:
        exc = finished.exception()
        if exc is None:
            reactor.callFromThread(deferred.callback, finished.result())
        else:
            reactor.callFromThread(deferred.errback, exc)

    future.add_done_callback(done)
    return await maybe_deferred_to_future(deferred)

"""``DocDirPipeline``: also write each document to its own file in a directory.

Corpus tools often want one file per document; ``DOCDIR_PATH`` turns this on, with
``DOCDIR_FORMAT`` tei / txt / json / md and files named by a hash of the URL (or by the
fingerprint, so that identical texts share a file).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings
from scrapy_maintext.exporters.markdown import markdown_document
from scrapy_maintext.exporters.records import to_record
from scrapy_maintext.exporters.tei import tei_bytes
from scrapy_maintext.exporters.txt import format_document
from scrapy_maintext.report.losses import output_failed, reason_of
from scrapy_maintext.vocabulary.names import Stat
from scrapy_maintext.vocabulary.reasons import OutputFailed
from scrapy_maintext.vocabulary.settings import setting

logger = logging.getLogger(__name__)

FORMATS = ("tei", "txt", "json", "md")
NAMINGS = ("url", "fingerprint")
_EXTENSIONS = {"tei": ".xml", "txt": ".txt", "json": ".json", "md": ".md"}
#: Hex digits of SHA-256 kept in URL-hash file names: 128 bits, no collisions in practice.
URL_HASH_DIGITS = 32


@dataclass(frozen=True)
class DocDirConfig:
    """The ``DOCDIR_*`` settings, read once."""

    path: str
    format: str
    naming: str

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> DocDirConfig:
        config = cls(
            path=setting(settings, "DOCDIR_PATH"),
            format=setting(settings, "DOCDIR_FORMAT"),
            naming=setting(settings, "DOCDIR_NAMING"),
        )
        if config.format not in FORMATS:
            raise ValueError(f"DOCDIR_FORMAT must be one of {FORMATS}, not {config.format!r}")
        if config.naming not in NAMINGS:
            raise ValueError(f"DOCDIR_NAMING must be one of {NAMINGS}, not {config.naming!r}")
        return config


def render(item: Any, fmt: str) -> bytes:
    """One document in ``fmt`` (tei, txt, json or md)."""
    if fmt == "tei":
        return tei_bytes(item)
    if fmt == "txt":
        return format_document(item).encode("utf-8")
    if fmt == "md":
        return markdown_document(item).encode("utf-8")
    record = to_record(item)
    record["body"] = [block.to_dict() for block in record["body"]]
    record["images"] = [image.to_dict() for image in record["images"]]
    return json.dumps(record, ensure_ascii=False, indent=2, default=str).encode("utf-8") + b"\n"


def file_name(item: Any, naming: str, fmt: str) -> str | None:
    """Hash-based file name for an item, or None when it has neither URL nor text."""
    record = to_record(item)
    if naming == "fingerprint" and record.get("fingerprint"):
        stem = str(record["fingerprint"])
    elif record.get("url"):
        stem = hashlib.sha256(str(record["url"]).encode("utf-8")).hexdigest()[:URL_HASH_DIGITS]
    else:
        return None
    return stem + _EXTENSIONS[fmt]


def write_atomic(path: Path, data: bytes) -> None:
    """Readers never see half a file, even if the crawl is killed mid-write."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class DocDirPipeline:
    """Item pipeline writing every item to ``DOCDIR_PATH/<hash>.<ext>``; items pass on."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = DocDirConfig.from_settings(crawler.settings)
        if not self.config.path:
            # No message: Scrapy would log it as a warning on every crawl of a feature
            # that is off by default.
            raise NotConfigured
        self.directory = Path(self.config.path)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DocDirPipeline:
        return cls(crawler)

    def open_spider(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        logger.info("Writing one %s file per document to %s", self.config.format, self.directory)

    def process_item(self, item: Any) -> Any:
        name = file_name(item, self.config.naming, self.config.format)
        if name is None:
            return item
        try:
            write_atomic(self.directory / name, render(item, self.config.format))
        except OSError as exc:
            output_failed(self.crawler, f"DOCDIR_PATH {self.directory}", exc)
            raise OutputFailed(f"Not written to {self.directory}: {reason_of(exc)}") from None
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(Stat.DOCDIR_WRITTEN)
        return item

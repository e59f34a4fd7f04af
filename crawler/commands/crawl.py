"""``scrapy crawl`` / ``maintext crawl``: Scrapy's crawl command, with clear failures.

Spider arguments are checked before anything starts (a typo costs one line, no traceback,
and leaves an earlier ``-O`` output alone); the exit status is 1 when no site of the crawl
could be crawled, so scripts and schedulers notice.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError
from scrapy.settings import BaseSettings
from scrapy_maintext.state.page_journal import JOURNAL_FILE

logger = logging.getLogger(__name__)

#: Exit status of a crawl in which no site could be reached (argument errors give 2).
EXIT_NO_SITE = 1


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            return super().run(args, opts)
        assert self.crawler_process
        spidercls = self.crawler_process.spider_loader.load(args[0])
        check = getattr(spidercls, "check_arguments", None)
        if check is not None:
            try:
                check(opts.spargs)
            except ValueError as exc:
                raise UsageError(str(exc), print_help=False) from None
        assert self.settings is not None
        continue_feeds(self.settings)
        # Scrapy's own crawl command creates its crawler the same way.
        crawler = self._create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        elif _no_site_crawled(crawler.spider):
            self.exitcode = EXIT_NO_SITE
        return None


def continue_feeds(settings: BaseSettings) -> None:
    """A resumed JOBDIR crawl appends to its ``-O`` outputs instead of replacing them.

    Running the same command again is how a stopped crawl resumes; with ``-O`` that would
    replace what the first run exported with the rest. JSON Lines, txt and TEI (whose
    exporter goes on inside the existing corpus) continue cleanly; a JSON array cannot.
    """
    jobdir = settings.get("JOBDIR")
    if not jobdir or not Path(jobdir, JOURNAL_FILE).exists():
        return
    feeds = settings.getdict("FEEDS")
    replaced = [uri for uri, options in feeds.items() if options.get("overwrite")]
    if not replaced:
        return
    for uri in replaced:
        feeds[uri] = {**feeds[uri], "overwrite": False}
        if feeds[uri].get("format") == "json":
            logger.warning("Resuming: a JSON array cannot be continued (%s); use jsonl", uri)
    settings.set("FEEDS", feeds, priority="cmdline")
    logger.info("Resuming JOBDIR %s: appending to %s", jobdir, ", ".join(map(str, replaced)))


def _no_site_crawled(spider: Any) -> bool:
    failed = getattr(spider, "all_sites_failed", None)
    return bool(failed()) if callable(failed) else False

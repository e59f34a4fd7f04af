"""``scrapy crawl`` / ``maintext crawl``: Scrapy's crawl command, with clear failures.

Spider arguments are checked before anything starts (a typo costs one line, no traceback,
and leaves an earlier ``-O`` output alone); the exit status is 1 when no site of the crawl
could be crawled, so scripts and schedulers notice.
"""

from __future__ import annotations

import argparse
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

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
        crawler = self._create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        elif _no_site_crawled(crawler.spider):
            self.exitcode = EXIT_NO_SITE
        return None


def _no_site_crawled(spider: Any) -> bool:
    failed = getattr(spider, "all_sites_failed", None)
    return bool(failed()) if callable(failed) else False

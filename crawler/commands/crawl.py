"""``scrapy crawl`` / ``maintext crawl``: Scrapy's crawl command, short and with clear failures.

Spider arguments are checked before anything starts (a typo costs one line, no traceback,
and leaves an earlier ``-O`` output alone); the exit status is 1 when no site of the crawl
could be crawled, so scripts and schedulers notice. ``REDIS_URL`` without the distributed
extra installed, malformed, or naming a Redis that does not answer is one line and exit
status 2.

Without ``-v`` the crawl writes the short console to stderr (progress lines, the report,
warnings and errors; see :mod:`scrapy_maintext.logformatter`); ``-v``, or a level asked for
with ``-L``, gives Scrapy's log. The end report is shown at every level.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from pathlib import Path
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError
from scrapy.settings import BaseSettings
from scrapy_maintext.archive.extension import WarcSettings
from scrapy_maintext.distributed.components import distributed_problem, missing_dependency
from scrapy_maintext.exporters.paths import outputs_problem
from scrapy_maintext.logformatter import PROGRESS, ConsoleFilter, console, console_filter
from scrapy_maintext.open_files import limit_problem
from scrapy_maintext.pipelines.config import ExtractConfig
from scrapy_maintext.report.extension import ReportSettings
from scrapy_maintext.report.losses import lost
from scrapy_maintext.state.crawl_state import CrawlStateError, check_state_file
from scrapy_maintext.state.page_journal import JOURNAL_FILE
from scrapy_maintext.state.recrawl import WRITE_ERRORS, RecrawlSettings, open_configured
from scrapy_maintext.vocabulary.names import Stat
from scrapy_maintext.vocabulary.settings import setting

logger = logging.getLogger(__name__)

#: Exit status of a crawl in which no site could be reached.
EXIT_NO_SITE = 1
#: Exit status of a command line that cannot run (as ``scrapy`` exits on a usage error).
EXIT_USAGE = 2


class Command(ScrapyCrawlCommand):
    #: What its one-line errors start with (``maintext crawl`` checks its own beforehand).
    prog = "scrapy crawl"
    #: The short console's filter, None for Scrapy's log (decided by ``process_options``).
    shown: ConsoleFilter | None = None

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="Scrapy's whole log at INFO (settings, components, the stats dump) instead "
            "of the short console (progress lines, the report, warnings and errors)",
        )
        parser.add_argument(
            "-L",
            "--loglevel",
            "--log-level",
            dest="loglevel",
            metavar="LEVEL",
            default=None,
            help="log level: DEBUG, INFO (Scrapy's whole log), WARNING or ERROR; the end "
            "report is shown at every level (default: the short console)",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        self.shown = console_filter(self.settings, getattr(opts, "verbose", False))
        if self.shown is not None:
            # The short console replaces Scrapy's root handler (installed by run()).
            self.settings.set("LOG_INSTALL_ROOT_HANDLER", False, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        with contextlib.ExitStack() as stack:
            # A log file set after the options were read (an embedding test harness) gets
            # Scrapy's handler as usual.
            if self.shown is not None and not self.settings.get("LOG_FILE"):
                stack.enter_context(console(self.settings, self.shown))
            self._run(args, opts)

    def _run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        if len(args) != 1:
            super().run(args, opts)
            return
        assert self.crawler_process
        spidercls = self.crawler_process.spider_loader.load(args[0])
        check = getattr(spidercls, "check_arguments", None)
        if check is not None:
            try:
                check(opts.spargs)
            except ValueError as exc:
                raise UsageError(str(exc), print_help=False) from None
        try:
            # The extraction settings, read as the pipeline will read them: a wrong value
            # (EXTRACT_ENGINE, EXTRACT_LANGUAGES, ...) is one line, not a traceback.
            if setting(self.settings, "EXTRACT_ENABLED"):
                ExtractConfig.from_settings(self.settings)
            WarcSettings.from_settings(self.settings)
            ReportSettings.from_settings(self.settings)
        except (ValueError, OSError) as exc:
            raise UsageError(str(exc), print_help=False) from None
        problem = (
            outputs_problem(self.settings)
            or limit_problem(self.settings)
            or distributed_problem(self.settings, args[0])
            or crawl_state_problem(self.settings, hold=True)
        )
        if problem is not None:
            print(f"{self.prog}: error: {problem}", file=sys.stderr, flush=True)
            self.exitcode = EXIT_USAGE
            return
        continue_feeds(self.settings)
        # Scrapy's own crawl command creates its crawler the same way.
        crawler = self._create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if refused(crawler.stats):
            self.exitcode = EXIT_USAGE
        elif self.crawler_process.bootstrap_failed or lost(crawler.stats):
            self.exitcode = 1
        elif _no_site_crawled(crawler.spider):
            self.exitcode = EXIT_NO_SITE


def crawl_state_problem(settings: BaseSettings, hold: bool = False) -> str | None:
    """Why ``CRAWL_STATE`` cannot be used (not ours, corrupt, emptied, newer, in use, not
    writable; with ``REDIS_URL``: Redis unreachable, a name that is not one), in one line;
    None when it can (or is not set). With ``hold`` a state file is opened now and kept
    locked for the crawl that follows."""
    path = setting(settings, "CRAWL_STATE")
    if not path:
        return None
    try:
        config = RecrawlSettings.from_settings(settings)
    except ValueError as exc:
        return str(exc)
    try:
        if config.redis_url:
            missing = missing_dependency()
            if missing is not None:
                return missing
            open_configured(settings, config).close()
        else:
            check_state_file(path, hold=hold)
    except (CrawlStateError, *WRITE_ERRORS) as exc:
        return str(exc)
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
    logger.info(
        "Resuming JOBDIR %s: appending to %s",
        jobdir,
        ", ".join(map(str, replaced)),
        extra=PROGRESS,
    )


def refused(stats: Any) -> bool:
    """A worker refused to join a shared run of another crawl state (said in one line)."""
    return bool(stats is not None and stats.get_value(Stat.DISTRIBUTED_REFUSED))


def _no_site_crawled(spider: Any) -> bool:
    failed = getattr(spider, "all_sites_failed", None)
    return bool(failed()) if callable(failed) else False

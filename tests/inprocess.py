"""``scrapy crawl`` inside the test process, on one Twisted reactor that lives for the session.

A crawl in a fresh process pays the interpreter's start, Scrapy's and the project's imports
and, with extraction workers, the start of their fork server (onnxruntime, the model and
dateparser's warm-up), a few seconds before the first request. Here the project's own crawl
command (``COMMANDS_MODULE``: spider argument checks, ``-a``/``-s``/``-O`` parsing, JOBDIR feed
continuation, exit status) runs in this process instead: Scrapy's ``AsyncCrawlerProcess`` is
replaced by a runner whose crawls go to an asyncio reactor running in a background thread,
started on the first crawl and stopped at exit (a reactor cannot be restarted, so one serves
every crawl). The extraction workers' fork server is started by the first crawl that uses
workers and reused by the later ones, as in any long-lived process.

The crawl's log goes to a file (``LOG_FILE``) through Scrapy's root handler, as the crawl
process's stderr would get it. What does not go through ``logging`` (a worker process writing
to its stderr) is not in it: tests about everything a crawl writes run it in a fresh process
(``run_crawl(..., fresh_process=True)``).
"""

from __future__ import annotations

import argparse
import atexit
import configparser
import contextlib
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scrapy.commands import ScrapyCommand, ScrapyHelpFormatter
from scrapy.crawler import AsyncCrawlerRunner
from scrapy.exceptions import UsageError
from scrapy.settings import Settings
from scrapy.utils.log import get_scrapy_root_handler, install_scrapy_root_handler
from scrapy.utils.project import get_project_settings

ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
#: The project's settings module (scrapy.cfg of the checkout names it too).
SETTINGS_MODULE = "scrapy_maintext.settings"
#: Exit status of a command line error, as ``scrapy`` exits.
USAGE_ERROR = 2

_lock = threading.Lock()
_thread: threading.Thread | None = None


def _reactor() -> Any:
    """The session's reactor, running in its thread (started on the first call)."""
    global _thread
    from scrapy.utils.reactor import install_reactor, is_reactor_installed

    with _lock:
        if not is_reactor_installed():
            install_reactor(ASYNCIO_REACTOR)
        from twisted.internet import reactor as installed

        reactor: Any = installed
        if _thread is None:
            if type(reactor).__module__ + "." + type(reactor).__name__ != ASYNCIO_REACTOR:
                raise RuntimeError(f"in-process crawls need {ASYNCIO_REACTOR}, not {reactor!r}")
            _setup(reactor)
            _route_twisted_logging()
            started = threading.Event()
            reactor.callWhenRunning(started.set)
            _thread = threading.Thread(
                target=reactor.run,
                kwargs={"installSignalHandlers": False},
                name="session-reactor",
                daemon=True,
            )
            _thread.start()
            if not started.wait(30):
                raise RuntimeError("the session's reactor did not start")
            atexit.register(_stop, reactor)
    return reactor


def _setup(reactor: Any) -> None:
    """What ``AsyncCrawlerProcess`` does to its reactor before it runs: Scrapy's DNS
    resolver and thread pool size (the project's defaults)."""
    from scrapy.utils.misc import build_from_crawler, load_object

    settings = _project_settings()
    resolver_class = load_object(settings["TWISTED_DNS_RESOLVER"])
    holder = type("SettingsHolder", (), {"settings": settings})()
    build_from_crawler(resolver_class, holder, reactor=reactor).install_on_reactor()
    reactor.getThreadPool().adjustPoolsize(maxthreads=settings.getint("REACTOR_THREADPOOL_MAXSIZE"))


def _route_twisted_logging() -> None:
    """Twisted's log into ``logging``, errors only, as ``configure_logging`` routes it for a
    crawl process (the rest of that function would change logging for the whole session)."""
    from twisted.python import log as twisted_log

    logging.getLogger("twisted").setLevel(logging.ERROR)
    twisted_log.PythonLoggingObserver("twisted").start()


def _stop(reactor: Any) -> None:
    with contextlib.suppress(Exception):
        reactor.callFromThread(reactor.stop)
    if _thread is not None:
        _thread.join(10)


def _in_reactor(reactor: Any, function: Callable[[], Any], timeout: float) -> Any:
    """Run ``function`` in the reactor's thread; wait up to ``timeout`` s for its result
    (a Deferred or an awaitable is waited for)."""
    from scrapy.utils.defer import deferred_from_coro
    from twisted.internet.defer import Deferred, maybeDeferred
    from twisted.python.failure import Failure

    done = threading.Event()
    outcome: list[Any] = []

    def finished(result: Any) -> None:
        outcome.append(result)
        done.set()

    def call() -> None:
        d: Deferred[Any] = maybeDeferred(lambda: deferred_from_coro(function()))
        d.addBoth(finished)

    reactor.callFromThread(call)
    if not done.wait(timeout):
        raise TimeoutError(f"no result from the reactor within {timeout:g} s")
    result = outcome[0]
    if isinstance(result, Failure):
        result.raiseException()
    return result


class SessionCrawlerProcess(AsyncCrawlerRunner):
    """What a crawl command drives (``crawl()`` then ``start()``), on the session's reactor."""

    def __init__(self, settings: Settings, timeout: float) -> None:
        super().__init__(settings)
        self.timeout = timeout
        self._reactor = _reactor()

    def crawl(self, crawler_or_spidercls: Any, *args: Any, **kwargs: Any) -> Any:
        crawl = super().crawl

        def start() -> None:
            # The task runs on; start() waits for it through join().
            crawl(crawler_or_spidercls, *args, **kwargs)

        return _in_reactor(self._reactor, start, self.timeout)

    def start(self, stop_after_crawl: bool = True, install_signal_handlers: bool = True) -> None:
        try:
            _in_reactor(self._reactor, self.join, self.timeout)
        except TimeoutError:
            # Stop what still runs, so that it does not go on under the next test.
            with contextlib.suppress(Exception):
                _in_reactor(self._reactor, self.stop, 60)
            raise


def _project_settings(project: Path | None = None) -> Settings:
    """The settings ``scrapy`` reads in the checkout, or in the Scrapy project ``project``
    (the folder of its scrapy.cfg, put on ``sys.path`` as ``scrapy`` puts it)."""
    module = SETTINGS_MODULE
    if project is not None:
        config = configparser.ConfigParser()
        config.read(project / "scrapy.cfg")
        module = config.get("settings", "default")
        if str(project) not in sys.path:
            sys.path.append(str(project))
    with _environ(SCRAPY_SETTINGS_MODULE=module):
        return get_project_settings()


@contextlib.contextmanager
def _environ(**values: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _command(settings: Settings, name: str) -> ScrapyCommand:
    """The command ``scrapy NAME`` runs: the project's (COMMANDS_MODULE), else Scrapy's."""
    for package in (settings.get("COMMANDS_MODULE"), "scrapy.commands"):
        if not package:
            continue
        try:
            module = importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError:
            continue
        command: ScrapyCommand = module.Command()
        return command
    raise ValueError(f"no command {name!r}")


def run_command(
    argv: list[str], log_file: Path, timeout: float = 240, project: Path | None = None
) -> int:
    """``scrapy ARGV...`` (``argv[0]`` is the command: ``crawl``, ``runspider``) in this
    process, in the checkout or in the Scrapy project ``project``; its log is written to
    ``log_file``. Returns the exit status ``scrapy`` would."""
    name, *rest = argv
    settings = _project_settings(project)
    command = _command(settings, name)
    parser = argparse.ArgumentParser(
        prog=f"scrapy {name}",
        formatter_class=ScrapyHelpFormatter,
        conflict_handler="resolve",
    )
    settings.setdict(command.default_settings, priority="command")
    command.settings = settings
    command.add_options(parser)
    logger = logging.getLogger("scrapy.cmdline")
    handler = None
    root_level = logging.root.level
    try:
        opts, args = parser.parse_known_args(rest)
        command.process_options(args, opts)
        settings.set("LOG_FILE", str(log_file), priority="cmdline")
        settings.set("LOG_FILE_APPEND", False, priority="cmdline")
        # As AsyncCrawlerProcess does in __init__ (configure_logging: Scrapy's root handler).
        install_scrapy_root_handler(settings)
        handler = get_scrapy_root_handler()
        # Duck-typed: what the command calls of a crawler process, on the session reactor.
        command.crawler_process = SessionCrawlerProcess(settings, timeout)  # type: ignore[assignment]
        command.run(args, opts)
    except UsageError as error:
        logger.error("%s", error)
        _write_line(log_file, f"scrapy {name}: error: {error}")
        return USAGE_ERROR
    finally:
        if handler is not None:
            logging.root.removeHandler(handler)
            handler.close()
        logging.root.setLevel(root_level)
    return int(command.exitcode)


def _write_line(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(line + "\n")

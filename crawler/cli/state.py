"""``maintext state PATH``: what a recurring crawl's state file holds, per site."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from scrapy_maintext.cli.subcommand import Subcommand

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy_maintext.state.overview import SiteOverview
    from scrapy_maintext.state.redis.overview import RedisStateView
    from scrapy_maintext.state.schedule import SchedulePolicy

_EPILOG = """\
Per site (scheme and host): URLs known (pages, and listings: sitemaps and feeds), how many
are due now and in the next 24 hours, changed in the last day (pages exported new or
changed, sitemaps and feeds read changed), gone (404/410), and revisions (documents
exported over all runs).
Due counts are of what is revisited on a schedule (RECRAWL_SCHEDULE=adaptive): sitemaps,
feeds and pages listed without a date; a page listed with a date is requested whenever its
sitemap or feed lists it with a newer one. Due now is what a run started now requests (due
by now + RECRAWL_MIN_INTERVAL/2, no later than the last visit + RECRAWL_MAX_INTERVAL): give
the crawl's -s RECRAWL_MIN_INTERVAL, RECRAWL_MAX_INTERVAL and RECRAWL_SCHEDULE if it sets them.

The file is only read (a crawl may be running on it; a read-only folder or file is fine);
--forget SITE drops the rows of one site (a host with its port if it has one, such as
example.org or 127.0.0.1:8080, or a base URL such as https://example.org): its pages are new
to the next run. --forget waits for no crawl: while one runs on the file it refuses.

A state kept in Redis (CRAWL_STATE=NAME with REDIS_URL) is read by its name with the crawl's
-s REDIS_URL (and REDIS_PARAMS, DISTRIBUTED_REDIS_TIMEOUT if it sets them): the same table,
--json and --forget; --forget refuses while a worker of a crawl holds the state. A state
written by an earlier version (its schema older) is refused by a crawl; --upgrade brings it
to this version's (while no crawl holds it).

exit status: 0 done, 2 a file that is missing, cannot be read, not a crawl state, corrupt,
of an older or newer schema, in use or read-only (--forget), or an unknown site (one line
says which; nothing is dropped).

examples:
  maintext state state/news.sqlite
  maintext state state/news.sqlite --json > state.json
  maintext state state/news.sqlite -s RECRAWL_MIN_INTERVAL=21600
  maintext state state/news.sqlite --forget example.org
  maintext state news -s REDIS_URL=redis://redis-host:6379/0
  maintext state redis://redis-host:6379/0 news --json
"""
#: The settings of the crawl that ``-s`` may give (what is due depends on them).
_SCHEDULE = ("RECRAWL_SCHEDULE", "RECRAWL_MIN_INTERVAL", "RECRAWL_MAX_INTERVAL")
#: Where a state kept in Redis is (the crawl's own settings).
_REDIS = ("REDIS_URL", "REDIS_PARAMS", "DISTRIBUTED_REDIS_TIMEOUT")
_SETTINGS = _SCHEDULE + _REDIS
_HELP = "show what a recurring crawl's state (CRAWL_STATE: a file, or in Redis) holds, per site"
_DESCRIPTION = "What a crawl state file holds per site: known, due, changed, gone, revisions."
_COLUMNS = (
    ("site", "site"),
    ("known", "known"),
    ("listings", "listings"),
    ("due_now", "due now"),
    ("due_24h", "due 24h"),
    ("changed_24h", "changed 24h"),
    ("gone", "gone"),
    ("revisions", "revisions"),
    ("last_visit", "last visit (UTC)"),
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``state`` among ``maintext``'s commands (its help; :func:`main` runs it)."""
    COMMAND.add_to(commands)


def main(argv: list[str]) -> int:
    """``maintext state ARGS``, parsed without the other commands' imports."""
    return run(COMMAND.parser().parse_args(argv))


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        metavar="PATH",
        help="the CRAWL_STATE file; with -s REDIS_URL, a state's name; or a redis:// URL",
    )
    parser.add_argument("name", metavar="NAME", nargs="?", help="after a redis:// URL: the state")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--forget", metavar="SITE", help="drop the rows of this site")
    parser.add_argument(
        "--upgrade",
        action="store_true",
        help="bring a state kept in Redis, written by an earlier version, to this one's schema",
    )
    parser.add_argument(
        "--now",
        type=_now,
        metavar="TIME",
        help="count as if now were TIME (ISO date or epoch s; RECRAWL_NOW of a simulation)",
    )
    parser.add_argument(
        "-s",
        dest="settings",
        type=_setting,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"the crawl's setting: for the due counts, {', '.join(_SCHEDULE)}; for a state "
        f"kept in Redis, {', '.join(_REDIS)}",
    )


COMMAND = Subcommand("state", _HELP, _DESCRIPTION, _EPILOG, _add_arguments)


def _now(text: str) -> float:
    from scrapy_maintext.state.schedule import parse_now

    try:
        value = parse_now(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("RECRAWL_NOW=", "")) from None
    if value is None:
        raise argparse.ArgumentTypeError("an ISO date or epoch seconds")
    return value


def _setting(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or name not in _SETTINGS:
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME=VALUE, NAME one of {_SETTINGS}")
    if name in _SCHEDULE[1:] and not value.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: seconds, a whole number")
    return name, value.strip()


def _policy(settings: list[tuple[str, str]]) -> SchedulePolicy:
    """The crawl's schedule: ``-s`` values over the settings' defaults; ValueError (one
    line) when they do not fit together."""
    from scrapy_maintext.state.schedule import SchedulePolicy
    from scrapy_maintext.vocabulary.settings import default_of

    values = {name: default_of(name) for name in _SCHEDULE} | dict(settings)
    return SchedulePolicy(
        str(values["RECRAWL_SCHEDULE"]),
        int(values["RECRAWL_MIN_INTERVAL"]),
        int(values["RECRAWL_MAX_INTERVAL"]),
    )


def run(args: argparse.Namespace) -> int:
    from scrapy_maintext.state.crawl_state import CrawlStateError

    try:
        _redis_url_form(args)
        if args.upgrade:
            rewritten, where = _upgrade(args)
            print(f"Upgraded crawl state {where}: {rewritten} rows rewritten", file=sys.stderr)
            return 0
        if args.forget:
            sites, dropped, where = _forget(args)
            print(f"Forgot {dropped} URLs of {', '.join(sites)} in {where}", file=sys.stderr)
            return 0
        now = int(args.now if args.now is not None else time.time())
        rows = _overview(args, now, _policy(args.settings))
    except (CrawlStateError, ValueError) as exc:
        print(f"maintext state: error: {exc}", file=sys.stderr)
        return 2
    try:
        _print(args, now, rows)
    except BrokenPipeError:  # `maintext state ... | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Python flushes it at exit
    return 0


#: What a Redis URL starts with (redis-py's schemes).
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def _redis_url_form(args: argparse.Namespace) -> None:
    """``maintext state redis://host:port/db NAME`` as ``maintext state NAME -s REDIS_URL=...``."""
    if not args.path.startswith(_REDIS_SCHEMES):
        if args.name:
            raise ValueError(f"one PATH ({args.path}); a NAME follows a redis:// URL only")
        return
    if not args.name:
        raise ValueError(f"{args.path}: give the state's name after the Redis URL")
    args.settings = [*args.settings, ("REDIS_URL", args.path)]
    args.path = args.name


def _forget(args: argparse.Namespace) -> tuple[list[str], int, str]:
    """``--forget``: the sites matched, the URLs dropped, and the state's name for the line."""
    from scrapy_maintext.state.overview import forget

    redis = dict(args.settings).get("REDIS_URL")
    if not redis:
        return (*forget(args.path, args.forget), args.path)
    with _redis_state(args) as view:
        return (*view.forget(args.forget), view.path)


def _upgrade(args: argparse.Namespace) -> tuple[int, str]:
    """``--upgrade``: the rows rewritten, and the state's name for the line."""
    if not dict(args.settings).get("REDIS_URL"):
        raise ValueError(
            f"{args.path}: --upgrade is for a state kept in Redis (-s REDIS_URL); a state "
            "file is brought up to date by the crawl that opens it"
        )
    with _redis_state(args, older=True) as view:
        return view.upgrade(), view.path


def _overview(args: argparse.Namespace, now: int, policy: SchedulePolicy) -> list[SiteOverview]:
    from scrapy_maintext.state.overview import overview, reading

    if not dict(args.settings).get("REDIS_URL"):
        with reading(args.path) as db:
            return overview(db, now, policy)
    with _redis_state(args) as view:
        return view.overview(now, policy)


@contextlib.contextmanager
def _redis_state(args: argparse.Namespace, older: bool = False) -> Iterator[RedisStateView]:
    """The state named ``PATH`` in the crawl's Redis (``-s REDIS_URL``); a Redis that does
    not answer, or refuses, is one line (:class:`CrawlStateError`)."""
    from redis.exceptions import RedisError
    from scrapy.settings import Settings
    from scrapy_maintext.distributed.components import missing_dependency
    from scrapy_maintext.distributed.connection import redis_client
    from scrapy_maintext.state.crawl_state import CrawlStateError
    from scrapy_maintext.state.recrawl import redact_url
    from scrapy_maintext.state.redis.overview import RedisStateView
    from scrapy_maintext.state.redis.state import redis_cause

    missing = missing_dependency()
    if missing is not None:
        raise CrawlStateError(missing)
    settings = Settings(dict(args.settings))
    where = redact_url(settings["REDIS_URL"])
    client = redis_client(settings)
    try:
        yield RedisStateView(client, args.path, where, older)
    except RedisError as exc:
        raise CrawlStateError(
            f"crawl state {args.path} (Redis {where}): {redis_cause(exc)}"
        ) from None
    finally:
        client.close()


def _print(args: argparse.Namespace, now: int, rows: list[SiteOverview]) -> None:
    from scrapy_maintext.state.overview import total

    if args.json:
        data = {
            "path": args.path,
            **({"redis": _where(args)} if _where(args) else {}),
            "now": _iso(now),
            "sites": [_jsonable(r.as_dict()) for r in rows],
            "total": _jsonable(total(rows).as_dict()),
        }
        print(json.dumps(data, indent=2))
        return
    table = [[title for _, title in _COLUMNS]]
    for row in [*rows, total(rows)]:
        values = row.as_dict()
        table.append([_cell(name, values[name]) for name, _ in _COLUMNS])
    widths = [max(len(line[i]) for line in table) for i in range(len(_COLUMNS))]
    for line in table:
        cells = [line[0].ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True)]
        print("  ".join(cells).rstrip())


def _where(args: argparse.Namespace) -> str:
    """The Redis a state is kept in (without its password), '' for a file."""
    from scrapy_maintext.state.recrawl import redact_url

    url = dict(args.settings).get("REDIS_URL")
    return redact_url(url) if url else ""


def _jsonable(values: dict[str, object]) -> dict[str, object]:
    last = values["last_visit"]
    return {**values, "last_visit": _iso(last) if isinstance(last, int) else None}


def _cell(name: str, value: object) -> str:
    if name == "last_visit":
        return _iso(value)[:16].replace("T", " ") if isinstance(value, int) else "-"
    return str(value)


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")

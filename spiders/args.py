"""The spiders' ``-a`` arguments: checked before a crawl starts, one clear line per mistake."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from scrapy_maintext.discovery.dates import parse_since
from scrapy_maintext.discovery.plan import PlanOptions
from scrapy_maintext.spiders.sites import base_url_of, feed_url, split_list

#: Accepted forms of each argument, as error messages and ``maintext crawl --help`` show them.
ARGUMENT_FORMS: dict[str, str] = {
    "domain": "a host (example.com) or base URL (http://127.0.0.1:8080); several comma-separated",
    "domains_file": "a readable file with one host or base URL per line",
    "since": "an ISO date or datetime (2026-01-31, 2026-01-31T08:00:00+01:00)",
    "max_pages": "a whole number of pages per site, at least 1",
    "lang": "a language code (de, en, pt-BR)",
    "subdomains": "1 or 0 (also true/false, yes/no, on/off)",
    "explore": "1 or 0 (also true/false, yes/no, on/off)",
}
#: Only the feed spider takes feed URLs.
FEED_ARGUMENT_FORMS: dict[str, str] = {
    "url": "feed URLs (http:// or https://), comma- or space-separated",
    "urls_file": "a readable file with one feed URL per line",
}
_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True}
_BOOLEANS |= {"0": False, "false": False, "no": False, "off": False, "": False}
_LANG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")


class SpiderArgumentError(ValueError):
    """A missing, unknown or invalid ``-a`` argument; the message names it and its forms."""


def invalid(name: str, value: Any, forms: Mapping[str, str]) -> SpiderArgumentError:
    return SpiderArgumentError(f"-a {name}={value}: expected {forms[name]}")


def check_names(kwargs: Mapping[str, Any], forms: Mapping[str, str], spider: str) -> None:
    """Unknown names (a typo such as ``domian``) are refused, with the closest known one."""
    for name in kwargs:
        if name in forms:
            continue
        close = difflib.get_close_matches(name, list(forms), n=1)
        hint = f"did you mean -a {close[0]}=...? " if close else ""
        known = ", ".join(forms)
        raise SpiderArgumentError(
            f"-a {name}: not an argument of the {spider} spider ({hint}arguments: {known})"
        )


def parse_bool(name: str, value: Any, forms: Mapping[str, str]) -> bool:
    if isinstance(value, bool):
        return value
    key = str(value).strip().lower() if value is not None else ""
    if key not in _BOOLEANS:
        raise invalid(name, value, forms)
    return _BOOLEANS[key]


def parse_max_pages(value: Any, forms: Mapping[str, str]) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise invalid("max_pages", value, forms) from None
    if number < 1:
        raise invalid("max_pages", value, forms)
    return number


def parse_lang(value: Any, forms: Mapping[str, str]) -> str | None:
    if value in (None, ""):
        return None
    if not _LANG.match(str(value).strip()):
        raise invalid("lang", value, forms)
    return str(value).strip()


def parse_since_argument(value: Any, forms: Mapping[str, str]) -> datetime | None:
    try:
        return parse_since(value)
    except ValueError:
        raise invalid("since", value, forms) from None


def read_list_file(
    name: str,
    path: str | None,
    forms: Mapping[str, str],
    parse: Callable[[str], str] = str,
) -> list[str]:
    """``parse`` of each line's value; blank lines and ``#`` comments skipped. ``parse``
    raises ``ValueError`` on a bad value: the error then names the file's line."""
    if not path:
        return []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise SpiderArgumentError(f"-a {name}={path}: {reason}; expected {forms[name]}") from None
    values = []
    for number, line in enumerate(lines, start=1):
        value = line.strip()
        if not value or value.startswith("#"):
            continue
        try:
            values.append(parse(value))
        except ValueError:
            raise SpiderArgumentError(
                f"-a {name}={path}, line {number}: {value!r}: expected {forms[name]}"
            ) from None
    return values


@dataclass(frozen=True)
class SpiderArguments:
    """The ``-a`` arguments of a discovery spider, parsed and checked."""

    sites: tuple[str, ...]
    feed_urls: tuple[str, ...]
    plan: PlanOptions
    subdomains: bool
    explore: bool


def _parsed(parse: Callable[[str], str], name: str, value: str, forms: Mapping[str, str]) -> str:
    """``parse(value)``, or the error naming ``-a name=value`` and its accepted forms."""
    try:
        return parse(value)
    except ValueError:
        raise invalid(name, value, forms) from None


def parse_arguments(
    kwargs: Mapping[str, Any], forms: Mapping[str, str], name: str
) -> SpiderArguments:
    """The ``-a`` arguments of spider ``name`` parsed, or :class:`SpiderArgumentError` naming
    the bad one (``forms``: the arguments it takes, with their accepted forms)."""
    check_names(kwargs, forms, name)
    get = kwargs.get
    listed_sites = read_list_file("domains_file", get("domains_file"), forms, base_url_of)
    listed_feeds = read_list_file("urls_file", get("urls_file"), forms, feed_url)
    sites = [_parsed(base_url_of, "domain", v, forms) for v in split_list(get("domain"))]
    sites += listed_sites
    feed_urls = [_parsed(feed_url, "url", v, forms) for v in split_list(get("url"))]
    feed_urls += listed_feeds
    if not sites and not feed_urls:
        needed = " or ".join(f"-a {arg}=..." for arg in ("domain", "url") if arg in forms)
        raise SpiderArgumentError(f"the {name} spider needs {needed}: {forms['domain']}")
    plan = PlanOptions(
        since=parse_since_argument(kwargs.get("since"), forms),
        max_pages=parse_max_pages(kwargs.get("max_pages"), forms),
        lang=parse_lang(kwargs.get("lang"), forms),
    )
    return SpiderArguments(
        sites=tuple(sites),
        feed_urls=tuple(feed_urls),
        plan=plan,
        subdomains=parse_bool("subdomains", kwargs.get("subdomains"), forms),
        explore=parse_bool("explore", kwargs.get("explore"), forms),
    )

"""The Redis clients of a crawl: a deadline on every call, and a Redis that stopped answering
is not asked again.

scrapy-redis's defaults (``REDIS_PARAMS``) wait 30 s for an answer and ask twice: a Redis that
stops answering (``CLIENT PAUSE``, a frozen host) froze the reactor a minute per call, so a
crawl told to stop went on asking, and SIGTERM waited for Redis. Here every call has a deadline
(``DISTRIBUTED_REDIS_TIMEOUT``, at most a third of ``SHUTDOWN_TIMEOUT``) and no retry. The
first call that gets no answer (a timeout, a lost connection) trips the crawl's
:class:`Breaker`: one ERROR line, the crawl stops, and every later call of any component
fails at once (:class:`RedisGone`), so the stop takes at most one deadline more.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from scrapy_maintext.state.recrawl import redact_url
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from redis import Redis
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

#: What a Redis that does not answer raises.
FAILURES = (RedisConnectionError, RedisTimeoutError)
#: What a redis-py client is built from besides ``REDIS_PARAMS`` (scrapy-redis's names).
_URL_SETTINGS = {"REDIS_URL": "url", "REDIS_HOST": "host", "REDIS_PORT": "port"}


class RedisGone(RedisConnectionError):
    """Redis did not answer earlier in this crawl: it is not asked again."""


class Breaker:
    """Whether the crawl's Redis stopped answering; ``on_trip`` is told once."""

    def __init__(self, on_trip: Callable[[BaseException], None] | None = None) -> None:
        self.on_trip = on_trip
        self.failure: BaseException | None = None

    @property
    def down(self) -> bool:
        return self.failure is not None

    def trip(self, exc: BaseException) -> None:
        if self.failure is not None:
            return
        self.failure = exc
        if self.on_trip is not None:
            self.on_trip(exc)

    def check(self) -> None:
        if self.failure is not None:
            raise RedisGone(f"Redis stopped answering earlier ({self.failure})")


class _Guarded:
    """Mixed into the client's connection class: every command goes through ``connect``."""

    breaker: Breaker

    def connect(self, *args: Any, **kwargs: Any) -> Any:
        self.breaker.check()
        return self._guard(super().connect, *args, **kwargs)  # type: ignore[misc]

    def send_packed_command(self, *args: Any, **kwargs: Any) -> Any:
        return self._guard(super().send_packed_command, *args, **kwargs)  # type: ignore[misc]

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        return self._guard(super().read_response, *args, **kwargs)  # type: ignore[misc]

    def _guard(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except FAILURES as exc:
            self.breaker.trip(exc)
            raise


def deadline(settings: BaseSettings) -> float:
    """Seconds a Redis call may take: ``DISTRIBUTED_REDIS_TIMEOUT``, at most a third of
    ``SHUTDOWN_TIMEOUT`` (a stopping crawl waits for one call, then closes its files).
    ValueError naming the setting when it is no number of seconds above 0 (0 would make
    every call fail at once, as a Redis that cannot be reached)."""
    timeout = _seconds(settings, "DISTRIBUTED_REDIS_TIMEOUT")
    budget = _seconds(settings, "SHUTDOWN_TIMEOUT", zero=True)
    return min(timeout, budget / 3) if budget > 0 else timeout


def _seconds(settings: BaseSettings, name: str, zero: bool = False) -> float:
    given = settings.get(name)
    try:
        value = float(setting(settings, name))
    except (TypeError, ValueError):
        value = -1.0
    if value > 0 or (zero and value == 0):
        return value
    above = "0 or more" if zero else "above 0"
    raise ValueError(f"{name}={given}: give a number of seconds {above}")


def client_params(settings: BaseSettings) -> dict[str, Any]:
    """scrapy-redis's client parameters (``REDIS_PARAMS``, ``REDIS_URL``), with the deadline
    instead of its 30 s and without its retry on timeout; ValueError naming the setting
    that is wrong."""
    from scrapy_redis import defaults

    try:
        given = settings.getdict("REDIS_PARAMS")
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"REDIS_PARAMS: not a JSON object of redis-py parameters ({exc})"
        ) from None
    params: dict[str, Any] = {**defaults.REDIS_PARAMS, **given}
    for name, param in _URL_SETTINGS.items():
        if settings.get(name):
            params[param] = settings.get(name)
    limit = deadline(settings)
    for name in ("socket_timeout", "socket_connect_timeout"):
        value = params.get(name)
        try:
            params[name] = min(float(value), limit) if value else limit
        except (TypeError, ValueError):
            raise ValueError(f"REDIS_PARAMS: {name}={value!r} is no number of seconds") from None
    params.pop("retry_on_timeout", None)
    params["retry"] = Retry(NoBackoff(), 0)
    return params


def redis_client(settings: BaseSettings, breaker: Breaker | None = None) -> Redis:
    """A client of the crawl's Redis (no connection yet); ValueError naming the setting at
    fault (a malformed ``REDIS_URL``, a bad ``REDIS_PARAMS`` or ``DISTRIBUTED_REDIS_TIMEOUT``).
    With ``breaker``, its calls trip and obey it."""
    from scrapy.utils.misc import load_object
    from scrapy_redis.connection import get_redis

    params = client_params(settings)
    if isinstance(params.get("redis_cls"), str):
        try:
            params["redis_cls"] = load_object(params["redis_cls"])
        except (ImportError, NameError, ValueError) as exc:
            raise ValueError(f"REDIS_PARAMS: redis_cls: {exc}") from None
    try:
        client: Redis = get_redis(**params)
    except TypeError as exc:
        # An argument redis-py does not take: it came from REDIS_PARAMS.
        raise ValueError(f"REDIS_PARAMS: {exc}") from None
    except (IndexError, ValueError) as exc:
        where = redact_url(str(params.get("url", "")))
        raise ValueError(f"REDIS_URL {where}: {exc}") from None
    if breaker is not None:
        pool = client.connection_pool
        base = pool.connection_class
        guarded = {"breaker": breaker}
        pool.connection_class = type(f"Guarded{base.__name__}", (_Guarded, base), guarded)
    return client


def redis_problem(settings: BaseSettings) -> str | None:
    """Why this crawl cannot use its ``REDIS_URL`` (malformed, unreachable within the
    deadline), in one line; None when Redis answers (or no ``REDIS_URL`` is set)."""
    url = setting(settings, "REDIS_URL")
    if not url:
        return None
    where = redact_url(url)
    try:
        client = redis_client(settings)
    except ValueError as exc:
        return str(exc)
    try:
        client.ping()
    except FAILURES as exc:
        return f"REDIS_URL {where}: Redis unreachable ({exc})"
    except TypeError as exc:  # a connection argument redis-py does not take
        return f"REDIS_PARAMS: {exc}"
    except Exception as exc:  # an answer that is not Redis's (a password asked, ...)
        return f"REDIS_URL {where}: {exc}"
    finally:
        client.close()
    return None


def run_problem(settings: BaseSettings, spider: str) -> str | None:
    """Why a worker of ``spider`` with these settings may not join the shared run under its
    prefix (it belongs to another crawl state), in one line; None when it may."""
    from redis.exceptions import RedisError
    from scrapy_maintext.distributed.settings import DistributedSettings
    from scrapy_maintext.distributed.state import foreign_run_message, run_owner

    config = DistributedSettings.from_settings(settings)
    prefix = config.prefix(spider)
    client = redis_client(settings)
    try:
        owner = run_owner(client, prefix)
    except RedisError:
        return None  # said by the crawl that follows, as any failure of Redis
    finally:
        client.close()
    if owner is None or owner == config.crawl_state:
        return None
    return foreign_run_message(prefix, owner, config.crawl_state)


_BREAKERS: weakref.WeakKeyDictionary[Crawler, Breaker] = weakref.WeakKeyDictionary()


def breaker_of(crawler: Crawler) -> Breaker:
    """The crawl's one breaker: the first component that gets no answer stops the crawl."""
    found = _BREAKERS.get(crawler)
    if found is None:
        found = _BREAKERS[crawler] = Breaker(lambda exc: redis_lost(crawler, exc))
    return found


def crawl_client(crawler: Crawler) -> Redis:
    """A client of the crawl's Redis, on the crawl's breaker."""
    return redis_client(crawler.settings, breaker_of(crawler))


def server_name(settings: BaseSettings) -> str:
    """What the messages call the crawl's Redis (``Redis redis://host:port/db``)."""
    return f"Redis {redact_url(setting(settings, 'REDIS_URL'))}"


def redis_lost(crawler: Crawler, exc: BaseException) -> None:
    """Said once (one ERROR line, the ``Lost`` line and exit status 1 at the end); the crawl
    stops once the call that found it has returned."""
    from scrapy_maintext.report.losses import write_failed
    from scrapy_maintext.vocabulary.names import Stat

    if crawler.stats is not None:
        crawler.stats.set_value(Stat.DISTRIBUTED_REDIS_LOST, 1)
    write_failed(crawler, server_name(crawler.settings), exc, later=True)

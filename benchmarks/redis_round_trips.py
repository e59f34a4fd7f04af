"""Benchmark-only: the commands clients send a Redis server, counted by watching ``MONITOR``
from a thread (``recrawl_scale --round-trips``); and the server's own counters of commands
(``INFO commandstats``) and of reads from its clients (``total_reads_processed``: a round
trip each, a pipeline of many commands one).

A command a Lua script calls is shown by ``MONITOR`` as from ``lua`` and is not counted (it
is part of its ``EVALSHA``); a ``MULTI``/``EXEC`` block is one round trip (redis-py sends it
as one pipeline), counted under ``multi``. A non-transactional pipeline's commands are each
counted (an over-count: the crawl sends few, the workers' heartbeat). ``MONITOR`` costs the
server time, not the crawl process's, but its CPU figures are best taken in a run without it.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import redis


class RoundTrips:
    """Counts, by command, what clients send ``url``'s server between :meth:`start` and
    :meth:`stop`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.counts: Counter[str] = Counter()
        self._in_multi: set[str] = set()
        self._lock = threading.Lock()
        self._client: Any = None
        self._thread: threading.Thread | None = None
        self.failure: Exception | None = None

    def start(self) -> None:
        self.counts = Counter()
        self._client = redis.Redis.from_url(self.url)
        monitor = self._client.monitor().__enter__()
        self._thread = threading.Thread(target=self._watch, args=(monitor,), daemon=True)
        self._thread.start()

    def _watch(self, monitor: Any) -> None:
        connection = monitor.connection
        while True:
            try:
                line = connection.read_response()
            except Exception as exc:  # closed by stop(), or the server stopped
                self.failure = exc
                return
            if isinstance(line, bytes):
                line = line.decode("utf-8", "replace")
            self._count(str(line))

    def _count(self, line: str) -> None:
        # 1700000000.123456 [0 127.0.0.1:40000] "EVALSHA" "..." ...
        _, _, rest = line.partition(" [")
        client, _, command = rest.partition("] ")
        if client.endswith(" lua"):
            return
        name = command.split(" ", 1)[0].strip('"').lower()
        with self._lock:
            if client in self._in_multi:
                if name in ("exec", "discard"):
                    self._in_multi.discard(client)
                return
            if name == "multi":
                self._in_multi.add(client)
            self.counts[name] += 1

    def stop(self) -> Counter[str]:
        """What was counted since :meth:`start`, once the thread has read what the server
        had sent it (no new line for 0.5 s)."""
        last = -1
        while last != sum(self.counts.values()):
            last = sum(self.counts.values())
            time.sleep(0.5)
        self._client.connection_pool.disconnect()
        self._client.close()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self._lock:
            return Counter(self.counts)


def redis_reads(client: Any) -> int:
    """Reads Redis made from its clients' sockets so far (one per round trip)."""
    return int(client.info("stats")["total_reads_processed"])


def redis_cpu(client: Any) -> float:
    """CPU seconds the Redis server has used so far (``INFO cpu``: user and system)."""
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def redis_calls(client: Any) -> dict[str, int]:
    """Calls so far by command, from ``INFO commandstats``."""
    stats = client.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}

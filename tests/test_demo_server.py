"""The bundled site server: HTTP/1.0 by default (one connection per request), keep-alive on ask."""

from __future__ import annotations

import http.client

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions

from tests.sites import TestSiteServer


def _two_requests(server: SiteServer) -> tuple[list[int], bool]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    statuses = []
    for path in ("/robots.txt", "/robots.txt"):
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        statuses.append(response.status)
    # http.client reopens a closed connection on its own; a kept one keeps its socket.
    kept = conn.sock is not None
    conn.close()
    return statuses, kept


def test_keep_alive_serves_several_requests_on_one_connection() -> None:
    options = SiteOptions(articles=2, crawl_delay=None, feeds=False)
    with TestSiteServer(options, keep_alive=True) as server:
        statuses, kept = _two_requests(server)
        assert statuses == [200, 200]
        assert kept
        assert server.paths() == ["/robots.txt", "/robots.txt"]


def test_default_closes_each_connection() -> None:
    with SiteServer(SiteOptions(articles=2, crawl_delay=None, feeds=False)) as server:
        statuses, kept = _two_requests(server)
        assert statuses == [200, 200]
        assert not kept

"""The window of sites under way (``discovery.window.SiteWindow``)."""

from __future__ import annotations

from scrapy_maintext.discovery.window import SiteWindow, sites_at_once


def test_the_window_size_follows_the_requests_in_flight_unless_set() -> None:
    assert sites_at_once(0, 16) == 64
    assert sites_at_once(10, 16) == 10
    assert sites_at_once(-1, 16) == 0  # every site at once


def test_sites_start_in_order_and_one_starts_when_one_is_done() -> None:
    window = SiteWindow.of(["a", "b", "c", "d", "e"], 2)
    assert window.admit() == ["a", "b"]
    assert window.admit() == []
    assert window.done("c") == []  # not under way: nothing changes
    assert window.done("a") == ["c"]
    assert window.done("a") == []  # said twice: once only
    assert window.done("b") == ["d"]
    assert window.done("c") == ["e"]
    assert window.done("d") == [] and window.done("e") == []
    assert window.most == 2 and not window.under_way and not window.waiting


def test_a_window_of_zero_starts_every_site() -> None:
    window = SiteWindow.of(["a", "b", "c"], 0)
    assert window.admit() == ["a", "b", "c"]
    assert window.most == 3


def test_an_idle_crawl_starts_a_site_even_when_the_window_looks_full() -> None:
    """A site whose end never came (a request dropped without a word) does not hold the
    crawl: when the crawl goes idle, the done ones leave and at least one site starts."""
    window = SiteWindow.of(["a", "b", "c", "d"], 2)
    window.admit()
    assert window.when_idle(lambda site: False) == ["c"]
    assert window.when_idle(lambda site: site == "a") == ["d"]
    assert window.under_way == {"b", "c", "d"}
    assert window.when_idle(lambda site: True) == []
    assert not window.under_way

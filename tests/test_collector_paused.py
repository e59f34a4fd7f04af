"""The collector paused page by page in processes that only extract pages
(``extraction.worker.collector_paused``): off during the page, what the page left in
cycles collected after it, a full pass now and then, and the same results."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.extraction import worker
from scrapy_maintext.extraction.core import extract_page
from scrapy_maintext.extraction.worker import collector_paused, worker_extract_page

PAGE = Path(__file__).parent / "fixtures" / "extraction" / "site" / "article.html"


class Node:
    """An object that can sit in a reference cycle and be watched by a weak reference."""

    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def generations() -> Iterator[list[int]]:
    """The generation of every collector pass while the test runs."""
    passes: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    gc.callbacks.append(record)
    try:
        yield passes
    finally:
        gc.callbacks.remove(record)


def test_off_for_the_page_and_its_cycles_collected_after(generations: list[int]) -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        first, second = Node(), Node()
        first.other, second.other = second, first
        watched = weakref.ref(first)
        del first, second
        # Allocations that would start passes with the collector on.
        junk = [[index] for index in range(50_000)]
        del junk
        assert watched() is not None
    assert gc.isenabled()
    assert watched() is None
    assert 2 not in generations[:-1]


def test_a_full_pass_every_so_many_pages(
    generations: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "FULL_PASS_EVERY", 3)
    monkeypatch.setattr(worker, "_pages_since_full_pass", [0])
    for _ in range(6):
        with collector_paused():
            pass
    assert generations == [1, 1, 2, 1, 1, 2]


def test_left_off_where_someone_turned_it_off(generations: list[int]) -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
        assert generations == []
    finally:
        gc.enable()


def test_back_on_when_the_page_fails() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a page that breaks the extraction")
    assert gc.isenabled()


def test_worker_extracts_what_extract_page_does() -> None:
    html = PAGE.read_text(encoding="utf-8")
    url = "https://example.org/news/story"
    ours, plain = worker_extract_page(html, url), extract_page(html, url)
    assert ours.doc.to_dict() == plain.doc.to_dict()
    assert gc.isenabled()

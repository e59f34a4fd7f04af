"""Site memory: signatures, the decision rule, warm-up buffers, caps, LRU and the journal."""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scrapy.utils.test import get_crawler
from scrapy_maintext.document import Block, Document, blocks_to_text
from scrapy_maintext.extraction import ExtractOptions, extract
from scrapy_maintext.extraction.core import extract_page
from scrapy_maintext.fields.fingerprint import fingerprint
from scrapy_maintext.fields.fingerprint_parts import fingerprint_parts
from scrapy_maintext.site_memory.memory import (
    PageSignatures,
    SiteMemory,
    SiteMemoryOptions,
    block_signature,
)
from scrapy_maintext.site_memory.registry import (
    Pending,
    SiteMemories,
    SiteMemoriesOptions,
    site_key,
)
from scrapy_maintext.site_memory.stage import SiteMemoryConfig, SiteMemoryStage
from scrapy_maintext.state.site_memory_journal import JOURNAL_FILE, MemoryJournal

WORDS = [
    "harbour", "lagoon", "tidal", "ferry", "council", "bridge", "orchard", "valley",
    "museum", "archive", "railway", "station", "market", "bakery", "vineyard", "forest",
    "observatory", "theatre", "library", "river", "meadow", "granite", "lantern", "copper",
]  # fmt: skip
#: A template line no phrase of the text convention names (a "Share this ..." line would be
#: furniture on every page, memory or not: ``extraction.phrases``).
SHARE = "Every story of the Valley Chronicle is free to forward to your friends"
NEWSLETTER = "Get the Valley Chronicle newsletter every Friday morning for free"


def sentence(rng: random.Random, n: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def page(i: int, paragraphs: int = 4) -> str:
    """An article of one site: its own paragraphs inside a template the extractor keeps."""
    rng = random.Random(i)
    body = "".join(f"<p>{sentence(rng)} {sentence(rng)}</p>" for _ in range(paragraphs))
    return (
        "<html><head><title>Story</title></head><body>"
        "<nav><ul><li><a href='/'>Home</a></li><li><a href='/news'>News</a></li></ul></nav>"
        f"<article><h1>Story number {i}: {sentence(rng, 5)}</h1><p>{SHARE}</p>{body}"
        f"<p>{NEWSLETTER}</p></article>"
        "<footer><p>Copyright 2026 Valley Chronicle</p></footer></body></html>"
    )


TRAFILATURA = ExtractOptions(engine="trafilatura", with_metadata=False)


def signatures(i: int) -> tuple[Document, PageSignatures]:
    result = extract_page(page(i), f"https://valley.example/{i}", TRAFILATURA)
    assert result.signatures is not None
    return result.doc, result.signatures


def test_signature_tells_tag_path_apart_and_folds_digits_and_case() -> None:
    assert block_signature(["body", "div", "p"], "12 comments") == block_signature(
        ["html", "body", "div", "p"], "3 Comments"
    )
    assert block_signature(["article", "h1"], "Flood") != block_signature(["ul", "li"], "Flood")


def test_body_blocks_get_the_signature_of_their_page_block() -> None:
    doc, sigs = signatures(1)
    texts = [b.text for b in doc.body]
    assert SHARE in texts and NEWSLETTER in texts
    assert len(sigs.body) == len(doc.body) and (sigs.body != 0).all()
    assert set(sigs.body.tolist()) <= set(sigs.page.tolist())
    _, other = signatures(2)
    share_sig = sigs.body[texts.index(SHARE)]
    assert share_sig in other.page and sigs.body[texts.index(texts[2])] not in other.page


def test_template_blocks_are_removed_once_the_site_has_enough_pages() -> None:
    memory = SiteMemory()
    pages = [signatures(i) for i in range(4)]
    for _, sigs in pages:
        memory.add(sigs)
    doc, sigs = pages[0]
    before = [b.text for b in doc.body]
    outcome = memory.apply(doc, sigs)
    assert outcome.removed == 2 and outcome.pages == 4
    assert [b.text for b in doc.body] == [t for t in before if t not in (SHARE, NEWSLETTER)]
    assert doc.text == blocks_to_text(doc.body) and doc.fingerprint == fingerprint(doc.text)


def test_no_change_below_min_pages_or_on_a_single_page_site() -> None:
    memory = SiteMemory(SiteMemoryOptions(min_pages=3))
    for i in range(2):
        memory.add(signatures(i)[1])
    doc, sigs = signatures(0)
    assert memory.apply(doc, sigs).removed == 0 and SHARE in doc.text
    alone = SiteMemory()
    doc, sigs = signatures(5)
    alone.add(sigs)
    text = doc.text
    assert alone.apply(doc, sigs).removed == 0 and doc.text == text


def test_a_page_made_only_of_template_keeps_its_text() -> None:
    memory = SiteMemory()
    sig = block_signature(["p"], "same")
    page_sigs = PageSignatures(np.array([sig], dtype=np.uint64), np.array([sig], np.uint64))
    for _ in range(5):
        memory.add(page_sigs)
    doc = Document(body=[Block("p", "same")], text="same")
    assert memory.apply(doc, page_sigs).removed == 0 and doc.text == "same"


def test_extract_with_site_learns_and_decides() -> None:
    site = SiteMemory()
    urls = [f"https://valley.example/{i}" for i in range(4)]
    docs = [extract(page(i), url, TRAFILATURA, site=site) for i, url in enumerate(urls)]
    assert site.pages == 4
    assert SHARE in docs[0].text  # decided before the template repeats
    assert all(SHARE not in d.text and NEWSLETTER not in d.text for d in docs[1:])
    with pytest.raises(TypeError):
        extract(page(1), "https://valley.example/1", site="valley")  # type: ignore[arg-type]


def fake_page(*sigs: int) -> PageSignatures:
    return PageSignatures(np.unique(np.array(sigs, dtype=np.uint64)), np.zeros(0, np.uint64))


def test_prune_keeps_the_most_frequent_signatures_within_the_cap() -> None:
    memory = SiteMemory(SiteMemoryOptions(max_blocks=20))
    for n in range(30):
        memory.add(fake_page(1, 2, 3, 1000 + n, 2000 + n))
    assert len(memory) <= 20
    assert {1, 2, 3} <= set(memory.sigs.tolist())
    idx = np.searchsorted(memory.sigs, np.array([1, 2, 3], dtype=np.uint64))
    assert memory.counts[idx].tolist() == [30, 30, 30]


def test_state_round_trips() -> None:
    memory = SiteMemory()
    for i in range(3):
        memory.add(signatures(i)[1])
    again = SiteMemory.from_dict(memory.to_dict())
    assert again.pages == 3 and np.array_equal(again.sigs, memory.sigs)
    assert np.array_equal(again.counts, memory.counts) and np.array_equal(again.last, memory.last)


def test_site_key() -> None:
    assert site_key("https://WWW.Example.com/a?b") == "example.com"
    assert site_key("http://127.0.0.1:8080/x") == "127.0.0.1:8080"
    assert site_key(None) is None and site_key("not a url") is None


def arrive_all(memories: SiteMemories[int], items: list[tuple[str, int]]) -> list[list[int]]:
    """Feed (site, page number) pairs; the page numbers decided after each arrival."""
    out = []
    for site, i in items:
        doc, sigs = signatures(i)
        decided = memories.arrive(Pending(site, doc, sigs, i, size=100))
        out.append([d.pending.token for d in decided])
    return out


def test_warmup_holds_first_pages_then_decides_them_in_order() -> None:
    memories: SiteMemories[int] = SiteMemories(SiteMemoriesOptions(warmup=3))
    steps = arrive_all(memories, [("a", 0), ("b", 10), ("a", 1), ("a", 2), ("a", 3)])
    assert steps == [[], [], [], [0, 1, 2], [3]]
    assert memories.held_pages == 1
    assert [d.pending.token for d in memories.flush()] == [10] and not memories.held


def test_first_pages_lose_their_template_too() -> None:
    memories: SiteMemories[int] = SiteMemories(SiteMemoriesOptions(warmup=4))
    decided = []
    for i in range(6):
        doc, sigs = signatures(i)
        decided += memories.arrive(Pending("a", doc, sigs, i))
    assert [d.pending.token for d in decided] == list(range(6))
    assert all(SHARE not in d.pending.doc.text and d.outcome.removed == 2 for d in decided)


def test_held_bytes_cap_decides_the_site_waiting_longest() -> None:
    memories: SiteMemories[int] = SiteMemories(SiteMemoriesOptions(warmup=5, max_held_bytes=250))
    steps = arrive_all(memories, [("a", 0), ("b", 1), ("a", 2)])
    assert steps == [[], [], [0, 2]] and list(memories.held) == ["b"]


def test_lru_evicts_the_least_recently_used_site_and_releases_its_pages() -> None:
    memories: SiteMemories[int] = SiteMemories(SiteMemoriesOptions(warmup=2, max_sites=2))
    steps = arrive_all(memories, [("a", 0), ("b", 1), ("a", 2), ("c", 3)])
    assert steps == [[], [], [0, 2], [1]]
    assert list(memories.memories) == ["a", "c"] and memories.evicted == 1


def test_pages_without_site_or_signatures_are_decided_at_once() -> None:
    memories: SiteMemories[int] = SiteMemories()
    decided = memories.arrive(Pending(None, Document(), None, 7))
    assert [(d.pending.token, d.outcome.removed) for d in decided] == [(7, 0)]


def run_journal(tmp: Path, items: list[tuple[str, int]], snapshot_after: int | None) -> dict:
    memories: SiteMemories[int] = SiteMemories(SiteMemoriesOptions(warmup=0))
    journal = MemoryJournal(tmp)
    journal.restore(memories)
    for n, (site, i) in enumerate(items):
        memories.arrive(Pending(site, *signatures(i), token=i))
        if n == snapshot_after:
            journal.snapshot(memories)
    journal.close()
    return memories.state()


@pytest.mark.parametrize("snapshot_after", [None, 2])
def test_resumed_memory_equals_the_uninterrupted_one(tmp_path: Path, snapshot_after: int) -> None:
    items = [("a", 0), ("b", 1), ("a", 2), ("a", 3), ("b", 4), ("a", 5)]
    whole = run_journal(tmp_path / "whole", items, None)
    run_journal(tmp_path / "resumed", items[:4], snapshot_after)  # killed: no final snapshot
    with (tmp_path / "resumed" / JOURNAL_FILE).open("a") as fh:
        fh.write('{"seq": 99, "site": "a", "si')  # torn by the kill
    assert run_journal(tmp_path / "resumed", items[4:], None) == whole


def test_journal_is_not_applied_twice_after_a_crash_during_snapshot(tmp_path: Path) -> None:
    items = [("a", 0), ("a", 1), ("b", 2)]
    memories: SiteMemories[int] = SiteMemories()
    journal = MemoryJournal(tmp_path)
    journal.restore(memories)
    for site, i in items:
        memories.arrive(Pending(site, *signatures(i), token=i))
    kept = (tmp_path / JOURNAL_FILE).read_text()
    journal.snapshot(memories)
    journal.close()
    (tmp_path / JOURNAL_FILE).write_text(kept)  # the snapshot landed, the truncation did not
    again: SiteMemories[int] = SiteMemories()
    assert MemoryJournal(tmp_path).restore(again) == 0
    assert again.state() == memories.state()


@pytest.mark.parametrize(
    "texts",
    [
        ["one", "two", "three four five six seven", "eight"],
        ["a b", "c", "", "—", "d e f g h i j k", "l m"],
        ["just two", "words"],
        ["solo"],
        ["日本語のテキスト 東京", "Grüße aus Köln, 12 Äpfel", "x y z"],
    ],
)
def test_fingerprint_parts_give_the_fingerprint_of_any_kept_subset(texts: list[str]) -> None:
    body = [Block("p", t) for t in texts]
    parts = fingerprint_parts(body)
    for mask in range(1 << len(body)):
        keep = np.array([bool(mask >> i & 1) for i in range(len(body))])
        kept = [b for b, k in zip(body, keep, strict=True) if k]
        assert parts.fingerprint(keep) == fingerprint(blocks_to_text(kept)), (texts, mask)


def test_a_long_journal_is_compacted_into_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("scrapy_maintext.site_memory.registry.JOURNAL_COMPACT_RECORDS", 3)
    items = [("a", 0), ("b", 1), ("a", 2), ("a", 3), ("b", 4)]
    state = run_journal(tmp_path, items, None)
    assert len((tmp_path / JOURNAL_FILE).read_text().splitlines()) == 2
    again: SiteMemories[int] = SiteMemories()
    MemoryJournal(tmp_path).restore(again)
    assert again.state() == state


def _engine(inprogress: int, active: int, itemproc: int) -> SimpleNamespace:
    """The engine state the drain check reads: nothing downloading or scheduled."""
    slot = SimpleNamespace(queue=deque(), active=set(range(active)), itemproc_size=itemproc)
    return SimpleNamespace(
        downloader=SimpleNamespace(active=set()),
        scraper=SimpleNamespace(slot=slot),
        _slot=SimpleNamespace(inprogress=set(range(inprogress))),
        _start=None,
        scheduler=SimpleNamespace(has_pending_requests=lambda: False),
        needs_backout=lambda: False,
    )


@pytest.mark.parametrize(
    ("inprogress", "active", "itemproc", "drained"),
    [
        pytest.param(2, 2, 2, True, id="only the held items are left"),
        pytest.param(3, 2, 2, False, id="a response between downloader and scraper"),
        pytest.param(3, 3, 2, False, id="a callback still running"),
        pytest.param(3, 3, 3, False, id="an item still in the pipelines"),
    ],
)
def test_the_drain_check_waits_for_anything_still_on_its_way(
    inprogress: int, active: int, itemproc: int, drained: bool
) -> None:
    crawler = get_crawler(settings_dict={"SITE_MEMORY_ENABLED": True})
    stage = SiteMemoryStage(crawler, SiteMemoryConfig.from_settings(crawler.settings))
    stage.memories.held_pages = 2
    crawler.engine = _engine(inprogress, active, itemproc)  # type: ignore[assignment]
    assert stage._nothing_else_can_come() is drained

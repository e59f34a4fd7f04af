"""Weak labels from snippets: only the blocks a snippet falls in are labelled."""

from __future__ import annotations

from scrapy_maintext.models.dataset import Page, is_snippet_train
from scrapy_maintext.models.snippets import snippet_example

HTML = """<html><body><nav><a href="/">Startseite</a></nav>
<article><h1>Ein Titel</h1><p>Der erste Absatz des Artikels steht hier.</p>
<p>Noch ein   Absatz ohne Schnipsel.</p><p>Beitrag teilen auf allen Kanälen</p></article>
</body></html>"""


def _page(with_: list[str], without: list[str]) -> Page:
    return Page("trafilatura/x", "trafilatura", "test", None, HTML, None, with_, without)


def test_labels_and_mask_follow_the_snippets() -> None:
    example = snippet_example(_page(["erste Absatz des"], ["Beitrag teilen", "mehr"]))
    assert example is not None and example.mask is not None
    texts = [" ".join(t) for t in example.block_tokens]
    labelled = {texts[i]: float(example.labels[i]) for i in range(len(texts)) if example.mask[i]}
    # "mehr" is too short to label a block; blocks without a snippet carry no label.
    assert labelled == {
        "der erste absatz des artikels steht hier": 1.0,
        "beitrag teilen auf allen kanälen": 0.0,
    }
    assert example.split == "train" and example.gold_tokens == []


def test_pages_without_a_matching_snippet_are_skipped() -> None:
    assert snippet_example(_page(["nicht auf der Seite"], [])) is None


def test_the_sites_split_in_two_halves() -> None:
    sites = [f"site{i}.de" for i in range(400)]
    share = sum(map(is_snippet_train, sites)) / len(sites)
    assert 0.4 < share < 0.6

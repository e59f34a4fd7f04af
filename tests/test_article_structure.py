"""Articles as structures: authors as a list, the article's images with their captions and
credits where they stand, dates with their time; through both engines, every exporter, a
real crawl and ``maintext extract``. The text stays the convention's."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from scrapy.exporters import JsonLinesItemExporter
from scrapy_maintext.cli import main as maintext
from scrapy_maintext.document import Document, Image
from scrapy_maintext.exporters import TeiItemExporter, TxtItemExporter
from scrapy_maintext.exporters.docdir import render
from scrapy_maintext.exporters.markdown import MarkdownItemExporter, markdown_image
from scrapy_maintext.exporters.records import images_of
from scrapy_maintext.exporters.tei import TEI_NS, build_tei
from scrapy_maintext.exporters.txt import HEADER_RULE
from scrapy_maintext.extraction import ExtractOptions, extract
from scrapy_maintext.fields.people import split_authors
from scrapy_maintext.pictures.captions import split_credit
from scrapy_maintext.pictures.renditions import same_picture

from tests.crawl import NO_WAITS, run_crawl
from tests.schema import tei_errors
from tests.sites import TestSiteServer, serve_with_page

PAGE = Path(__file__).parent / "fixtures" / "articles" / "lighthouse.html"
URL = "https://courier.example/news/lighthouse.html"
AUTHORS = ["Maria Lindqvist", "Tomás Ferreira"]
LEAD = "https://cdn.courier.example/photos/lighthouse-1600.webp"
KEEPER = "/photos/keeper-room.jpg"
LEAD_CAPTION = "The lighthouse on Gull Point at dawn."
KEEPER_CAPTION = "The keeper's room, kept as it was in 1962"
#: The body's paragraphs the pictures stand before.
FIRST = "After eleven years behind a locked gate"
THIRD = "Visitors climb one hundred and twelve steps"
#: What the page shows that is not the article's picture.
NOT_IMAGES = ("logo", "avatar", "authors/", "pixel", "ferry-thumb", "footer")
TEI = f"{{{TEI_NS}}}"
ENGINES = {"auto": "neural", "trafilatura": "trafilatura"}


@pytest.fixture(scope="module", params=list(ENGINES))
def doc(request: pytest.FixtureRequest) -> Document:
    doc = extract(PAGE.read_bytes(), URL, ExtractOptions(engine=request.param))
    assert doc.extractor == ENGINES[request.param]
    return doc


def check_images(images: list[dict[str, Any]], base: str, where: str) -> None:
    """The two pictures of the article, in order, each with its caption, credit and place."""
    assert [i["url"] for i in images] == [LEAD, base + KEEPER], where
    lead, keeper = images
    assert (lead["caption"], lead["credit"], lead["cover"]) == (LEAD_CAPTION, "Erik Holm", True)
    assert lead["alt"] == "A white lighthouse on a rocky point", where
    assert (keeper["caption"], keeper["credit"]) == (KEEPER_CAPTION, "Harbour Archive"), where
    assert keeper["cover"] is False, where
    assert (lead["position"], keeper["position"]) == (0, 2), where
    for url in (i["url"] for i in images):
        assert not any(word in url for word in NOT_IMAGES), (where, url)


def test_authors_are_a_list_and_author_stays_a_string(doc: Document) -> None:
    assert doc.authors == AUTHORS
    assert doc.author == "Maria Lindqvist, Tomás Ferreira"


def test_images_with_captions_credits_and_places(doc: Document) -> None:
    check_images([i.to_dict() for i in doc.images], "https://courier.example", doc.extractor)
    assert doc.body[0].text.startswith(FIRST) and doc.body[2].text.startswith(THIRD)
    # The cover: the page's own picture (og:image is another crop of it), its largest rendition.
    assert doc.image == LEAD


def test_dates_keep_their_time_and_the_change(doc: Document) -> None:
    assert doc.date == "2025-04-02T09:15:00+02:00"
    assert doc.date_modified == "2025-04-03T18:40:00+02:00"


def test_the_text_is_unchanged_and_images_can_be_left_out(doc: Document) -> None:
    for caption in (LEAD_CAPTION, KEEPER_CAPTION, "Erik Holm", "Harbour Archive"):
        assert caption not in doc.text
    engine = "auto" if doc.extractor == "neural" else "trafilatura"
    without = extract(PAGE.read_bytes(), URL, ExtractOptions(engine=engine, images=False))
    assert without.images == [] and without.text == doc.text
    # Without images, ``image`` is the page's og:image, as before.
    assert without.image == "https://cdn.courier.example/photos/lighthouse-1200x630.jpg"


# -- Exporters --------------------------------------------------------------------------------


def _export(exporter_class: Any, doc: Document) -> str:
    buffer = io.BytesIO()
    exporter = exporter_class(buffer)
    exporter.start_exporting()
    exporter.export_item(doc.to_dict())
    exporter.finish_exporting()
    return buffer.getvalue().decode("utf-8")


def check_json(record: dict[str, Any], base: str, where: str) -> None:
    assert record["authors"] == AUTHORS, where
    assert record["date_modified"] == "2025-04-03T18:40:00+02:00", where
    check_images(record["images"], base, where)


def check_markdown(section: str, base: str, where: str) -> None:
    """Each picture as ``![alt](url "caption")`` and its credit, before its paragraph."""
    lines = [line for line in section.splitlines() if line.strip()]
    lead = lines.index(f'![A white lighthouse on a rocky point](<{LEAD}> "{LEAD_CAPTION}")\\')
    assert lines[lead + 1] == "*Erik Holm*" and lines[lead + 2].startswith(FIRST), where
    keeper = next(i for i, line in enumerate(lines) if line.startswith("![A narrow room"))
    assert f'(<{base}{KEEPER}> "{KEEPER_CAPTION}")' in lines[keeper], where
    assert lines[keeper + 1] == "*Harbour Archive*" and lines[keeper + 2].startswith(THIRD), where


def check_tei(tei: Any, base: str, where: str) -> None:
    """Valid TEI P5; each ``<figure>`` in place among the paragraphs, one author per name."""
    assert tei_errors(tei) == "", where
    assert [a.text for a in tei.iterfind(f".//{TEI}titleStmt/{TEI}author")] == AUTHORS, where
    body = tei.find(f".//{TEI}text/{TEI}body")
    order = [
        e.find(f"{TEI}graphic").get("url") if e.tag == f"{TEI}figure" else (e.text or "")[:20]
        for e in body.iter(f"{TEI}figure", f"{TEI}p")
    ]
    assert order[0] == LEAD and order[1] == FIRST[:20], (where, order)
    assert order[3] == base + KEEPER and order[4] == THIRD[:20], (where, order)
    lead = body.find(f".//{TEI}figure")
    assert lead.get("type") == "cover" and lead.findtext(f"{TEI}head") == LEAD_CAPTION
    assert lead.findtext(f"{TEI}note[@type='credit']") == "Erik Holm", where
    assert lead.findtext(f"{TEI}figDesc") == "A white lighthouse on a rocky point", where


def test_json_lines(doc: Document) -> None:
    check_json(json.loads(_export(JsonLinesItemExporter, doc)), "https://courier.example", "jl")


def test_markdown_puts_the_pictures_in_place(doc: Document) -> None:
    check_markdown(_export(MarkdownItemExporter, doc), "https://courier.example", "markdown")


def test_tei_figures_in_place_and_valid(doc: Document) -> None:
    corpus = etree.fromstring(_export(TeiItemExporter, doc).encode())
    (tei,) = corpus.findall(f"{TEI}TEI")
    check_tei(tei, "https://courier.example", "tei")


def test_txt_text_is_the_text(doc: Document) -> None:
    text = _export(TxtItemExporter, doc)
    assert text.split(HEADER_RULE + "\n", 1)[1].rstrip("\n") == doc.text
    assert "\nDate-Modified: 2025-04-03T18:40:00+02:00\n" in text


def test_one_file_per_document(doc: Document) -> None:
    base = "https://courier.example"
    check_tei(etree.fromstring(render(doc.to_dict(), "tei")), base, "docdir tei")
    check_markdown(render(doc.to_dict(), "md").decode(), base, "docdir md")
    check_json(json.loads(render(doc.to_dict(), "json")), base, "docdir json")


def test_exporters_take_odd_image_values() -> None:
    """Items from elsewhere (a pipeline of the user's, an older export) never break a feed."""
    odd = [
        None,
        "x",
        {"url": ""},
        {"alt": "no url"},
        {"url": "https://a.example/p.jpg", "position": "x"},
    ]
    assert images_of(odd) == [] and images_of("not a list") == []
    record = {"title": "T", "body": [{"kind": "p", "text": "One."}], "images": odd}
    assert tei_errors(build_tei(record)) == ""
    spaced = Image("https://a.example/a b(1).jpg", alt="[x]", caption='say "hi"', credit="*A*")
    assert markdown_image(spaced) == (
        '![\\[x\\]](<https://a.example/a%20b(1).jpg> "say \\"hi\\"")\\\n*\\*A\\**'
    )
    item = {"title": "T", "body": [{"kind": "p", "text": "One."}], "images": [spaced.to_dict()]}
    assert tei_errors(build_tei(item)) == ""


# -- The parts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ("By Jane Doe, John Roe and Ann Lee", ["Jane Doe", "John Roe", "Ann Lee"]),
        ("Von Anna Maier und Ben Roth", ["Anna Maier", "Ben Roth"]),
        ("Par Marie Dupont et Luc Martin", ["Marie Dupont", "Luc Martin"]),
        ("Jane Doe; John Roe", ["Jane Doe", "John Roe"]),
        ("Sarah Lazare Twitter", ["Sarah Lazare"]),
        ("Redaktion hessenschau.de", ["Redaktion hessenschau.de"]),
        ("Di Maio Rossi", ["Di Maio Rossi"]),
        ("박준석, 김태연", ["박준석", "김태연"]),
        ("Jane Doe, jane doe", ["Jane Doe"]),
        ("", []),
        (None, []),
    ],
)
def test_split_authors(value: str | None, names: list[str]) -> None:
    assert split_authors(value) == names


def test_credits_written_in_captions() -> None:
    assert split_credit("Trams in Basel. Foto: Anna Maier") == (
        "Trams in Basel.",
        "Foto: Anna Maier",
    )
    assert split_credit("The quay at night (Photo: AP)") == ("The quay at night", "Photo: AP")
    assert split_credit("No credit here") == ("No credit here", None)


def test_renditions_of_one_picture() -> None:
    assert same_picture("https://a.example/p/x.jpg?w=300", "https://a.example/p/x.jpg?w=1200")
    assert same_picture("https://a.example/u/lake-640x480.jpg", "https://a.example/u/lake.webp")
    assert not same_picture("https://a.example/u/lake.jpg", "https://a.example/u/river.jpg")


def test_hostile_pictures_cost_nothing() -> None:
    """Thousands of pictures, broken srcsets and sizes: bounded, never an error."""
    pictures = "".join(
        f'<figure><img src="/p/{i}.jpg" srcset=", ,, 12q {i}" width="wide"><figcaption>'
        f"Picture {i}</figcaption></figure><p>{'Words of the body. ' * 10}</p>"
        for i in range(3000)
    )
    html = f"<html><body><article><h1>Many</h1>{pictures}</article></body></html>"
    doc = extract(html, "https://a.example/many.html", ExtractOptions(engine="trafilatura"))
    assert doc.reason is None and 0 < len(doc.images) <= 60


# -- A crawl and maintext extract ---------------------------------------------------------------


@pytest.fixture(scope="module")
def article_site() -> Iterator[TestSiteServer]:
    """The demo site with the lighthouse article beside its articles, listed in its sitemap."""
    with serve_with_page("/news/lighthouse.html", PAGE.read_bytes()) as server:
        yield server


def test_a_crawl_writes_the_structure_to_every_output(
    article_site: TestSiteServer, tmp_path: Path
) -> None:
    tei, md = tmp_path / "c.xml", tmp_path / "c.md"
    settings = {**NO_WAITS, "EXTRACT_WORKERS": "1"}
    args = {"domain": article_site.base_url}
    outputs = (f"{tei}:tei", f"{md}:markdown")
    result = run_crawl("sitemap", tmp_path, args, settings, extra_outputs=outputs)
    assert result.returncode == 0, result.log[-3000:]
    url = f"{article_site.base_url}/news/lighthouse.html"
    (item,) = [i for i in result.items if i["url"] == url]
    check_json(item, article_site.base_url, "crawl jsonl")
    corpus = etree.parse(str(tei)).getroot()
    by_url = {t.findtext(f".//{TEI}idno[@type='URL']"): t for t in corpus.iter(f"{TEI}TEI")}
    check_tei(by_url[url], article_site.base_url, "crawl tei")
    (section,) = [s for s in md.read_text("utf-8").split("\n# ") if f"<{url}>" in s]
    check_markdown(section, article_site.base_url, "crawl md")


def test_a_crawl_without_images(article_site: TestSiteServer, tmp_path: Path) -> None:
    settings = {**NO_WAITS, "EXTRACT_WORKERS": "0", "EXTRACT_IMAGES": "False"}
    result = run_crawl("sitemap", tmp_path, {"domain": article_site.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    url = f"{article_site.base_url}/news/lighthouse.html"
    (item,) = [i for i in result.items if i["url"] == url]
    assert item.get("images", []) == [] and item["authors"] == AUTHORS


def test_maintext_extract_no_images(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "lighthouse.html").write_bytes(PAGE.read_bytes())
    base = ["extract", str(pages), "--base-url", "https://courier.example", "--workers", "0"]
    with_images, without = tmp_path / "with.jsonl", tmp_path / "without.jsonl"
    assert maintext([*base, "-o", str(with_images), "--no-progress"]) == 0
    assert maintext([*base, "--no-images", "-o", str(without), "--no-progress"]) == 0
    (record,) = [json.loads(line) for line in with_images.read_text("utf-8").splitlines()]
    assert [i["caption"] for i in record["images"]] == [LEAD_CAPTION, KEEPER_CAPTION]
    (record,) = [json.loads(line) for line in without.read_text("utf-8").splitlines()]
    assert record["images"] == [] and record["authors"] == AUTHORS

"""The extraction systems compared by ``models.studies.evaluate``: HTML (+URL) in, text out."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import lxml.html

logger = logging.getLogger(__name__)

System = Callable[[str, str | None], str]


def parse_html(html: str) -> Any:
    """lxml tree of a decoded page (lxml refuses str input that declares an encoding)."""
    try:
        return lxml.html.fromstring(html)
    except ValueError:
        parser = lxml.html.HTMLParser(encoding="utf-8")
        return lxml.html.fromstring(html.encode("utf-8", "replace"), parser=parser)


def neural(version: str | None = None) -> Callable[[], System]:
    """The neural extractor alone (its own trafilatura reference for stacking models)."""

    def factory() -> System:
        from scrapy_maintext.document import blocks_to_text

        extractor = _extractor(version)

        def run(html: str, url: str | None) -> str:
            return blocks_to_text(extractor.extract(parse_html(html), url).blocks)

        return run

    return factory


def auto(version: str | None = None) -> Callable[[], System]:
    """The product's ``auto`` engine (page decoding, neural, trafilatura fallback with the
    product's default options) with the given model; metadata off, as no score uses it."""

    def factory() -> System:
        from scrapy_maintext import ExtractOptions
        from scrapy_maintext.document import blocks_to_text
        from scrapy_maintext.extraction.body import parse_page
        from scrapy_maintext.extraction.engines import run_neural

        extractor = _extractor(version)
        options = ExtractOptions(engine="auto", with_metadata=False)

        def run(html: str, url: str | None) -> str:
            tree = parse_page(html, options).tree
            if tree is None:
                return ""
            return blocks_to_text(run_neural(extractor, tree, url, options).blocks)

        return run

    return factory


def _extractor(version: str | None) -> Any:
    from scrapy_maintext.neural import NeuralExtractor, default_extractor
    from scrapy_maintext.neural.inference import MODELS_DIR

    return default_extractor() if version is None else NeuralExtractor.load(MODELS_DIR / version)


def trafilatura_system(**kwargs: bool) -> Callable[[], System]:
    """trafilatura.extract with the given options (none: its defaults)."""

    def factory() -> System:
        import trafilatura

        def run(html: str, url: str | None) -> str:
            return trafilatura.extract(html, url=url, **kwargs) or ""

        return run

    return factory


def readability_lxml() -> System:
    from readability import Document

    def run(html: str, url: str | None) -> str:
        summary = Document(html, url=url).summary(html_partial=True)
        return str(parse_html(summary).text_content()) if summary.strip() else ""

    return run


def justext_system() -> System:
    import justext

    stoplist = justext.get_stoplist("English")

    def run(html: str, url: str | None) -> str:
        paragraphs = justext.justext(html.encode("utf-8", "replace"), stoplist, encoding="utf-8")
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return run


def resiliparse_system() -> System:
    from resiliparse.extract.html2text import extract_plain_text

    def run(html: str, url: str | None) -> str:
        return str(extract_plain_text(html, main_content=True))

    return run


def boilerpy3_system() -> System:
    from boilerpy3 import extractors

    extractor = extractors.ArticleExtractor(raise_on_failure=False)

    def run(html: str, url: str | None) -> str:
        return str(extractor.get_content(html) or "")

    return run


def html_text_system() -> System:
    import html_text

    def run(html: str, url: str | None) -> str:
        return str(html_text.extract_text(html))

    return run


#: Name in the table -> factory. Factories import lazily so a missing package skips one row.
#: Only shipped model versions (v5: offered beside the default v4.1, issue 30): v1, v2, v3
#: and v4 left the package (``models/CHANGELOG.md``
#: says how to recover their folders; ``neural("v1")`` then scores one again).
FACTORIES: dict[str, Callable[[], System]] = {
    "neural v4.1 (v4's plain model, no cascade)": neural("v4.1"),
    "auto v4.1 (neural + trafilatura fallback)": auto("v4.1"),
    "neural v5 (commercially usable training data)": neural("v5"),
    "auto v5 (neural + trafilatura fallback)": auto("v5"),
    "trafilatura (default)": trafilatura_system(),
    "trafilatura (fast)": trafilatura_system(fast=True),
    "trafilatura (favor_recall)": trafilatura_system(favor_recall=True),
    "readability-lxml": readability_lxml,
    "jusText (English stoplist)": justext_system,
    "resiliparse (main_content)": resiliparse_system,
    "boilerpy3 (ArticleExtractor)": boilerpy3_system,
    "html-text (all text)": html_text_system,
}

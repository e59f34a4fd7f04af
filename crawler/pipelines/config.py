"""The extraction pipeline's settings, read once, and what they imply for the spiders."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from scrapy.settings import BaseSettings, Settings
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object
from scrapy_maintext.extraction import ENGINES, ExtractOptions
from scrapy_maintext.extraction.options import model_folder
from scrapy_maintext.vocabulary.settings import cpu_count, setting


@dataclass(frozen=True)
class ExtractConfig:
    """The ``EXTRACT_*`` settings, read once (defaults in ``vocabulary.settings``)."""

    enabled: bool
    #: How each page is extracted (EXTRACT_ENGINE, EXTRACT_INCLUDE_*, EXTRACT_FAVOR_*, ...).
    options: ExtractOptions
    workers: int
    timeout: float
    url_field: str
    html_field: str
    keep_html: bool
    dedup: bool
    dedup_distance: int
    min_text_length: int
    drop_no_text: bool
    date_field: str
    title_field: str
    jobdir: str | None
    gc_freeze: bool
    dedup_store: str | None
    #: EXTRACT_LANGUAGES: ISO 639-1 codes of the documents kept (empty: all).
    languages: frozenset[str] = frozenset()
    #: EXTRACT_MARKDOWN: items also get a ``markdown`` field.
    markdown: bool = False

    @property
    def engine(self) -> str:
        return self.options.engine

    @classmethod
    def with_defaults(cls, **changes: Any) -> ExtractConfig:
        """The defaults with ``changes``, for code that has no crawl settings."""
        return replace(cls.from_settings(Settings()), **changes)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ExtractConfig:
        engine = setting(settings, "EXTRACT_ENGINE")
        if engine not in ENGINES:
            raise ValueError(f"EXTRACT_ENGINE must be one of {ENGINES}, not {engine!r}")
        options = ExtractOptions(
            engine=engine,
            include_comments=setting(settings, "EXTRACT_INCLUDE_COMMENTS"),
            include_tables=setting(settings, "EXTRACT_INCLUDE_TABLES"),
            include_captions=setting(settings, "EXTRACT_CAPTIONS"),
            page_types=setting(settings, "EXTRACT_PAGE_TYPES"),
            second_opinion=setting(settings, "EXTRACT_SECOND_OPINION"),
            images=setting(settings, "EXTRACT_IMAGES"),
            favor_precision=setting(settings, "EXTRACT_FAVOR_PRECISION"),
            favor_recall=setting(settings, "EXTRACT_FAVOR_RECALL"),
            max_bytes=setting(settings, "EXTRACT_MAX_BYTES"),
            model=model_folder(setting(settings, "EXTRACT_MODEL"), "EXTRACT_MODEL"),
        )
        return cls(
            enabled=setting(settings, "EXTRACT_ENABLED"),
            options=options,
            workers=extract_workers(settings),
            timeout=setting(settings, "EXTRACT_TIMEOUT"),
            url_field=setting(settings, "EXTRACT_URL_FIELD"),
            html_field=setting(settings, "EXTRACT_HTML_FIELD"),
            keep_html=setting(settings, "EXTRACT_KEEP_HTML"),
            dedup=setting(settings, "EXTRACT_DEDUP"),
            dedup_distance=setting(settings, "EXTRACT_DEDUP_DISTANCE"),
            min_text_length=setting(settings, "EXTRACT_MIN_TEXT_LENGTH"),
            drop_no_text=setting(settings, "EXTRACT_DROP_NO_TEXT"),
            date_field=setting(settings, "EXTRACT_DATE_FALLBACK_FIELD") or "",
            title_field=setting(settings, "EXTRACT_TITLE_FALLBACK_FIELD") or "",
            jobdir=settings.get("JOBDIR") or None,
            gc_freeze=setting(settings, "EXTRACT_GC_FREEZE"),
            dedup_store=setting(settings, "EXTRACT_DEDUP_STORE"),
            languages=languages(setting(settings, "EXTRACT_LANGUAGES")),
            markdown=setting(settings, "EXTRACT_MARKDOWN"),
        )


def languages(values: list[str]) -> frozenset[str]:
    """EXTRACT_LANGUAGES as lower-case primary subtags ("de-AT" keeps "de")."""
    codes = {str(v).strip().lower().replace("_", "-").split("-")[0] for v in values}
    for code in codes - {""}:
        if not (code.isalpha() and 2 <= len(code) <= 3):
            raise ValueError(f"EXTRACT_LANGUAGES: {code!r} is no ISO 639-1 language code")
    return frozenset(codes - {""})


def extract_workers(settings: BaseSettings) -> int:
    """``EXTRACT_WORKERS``, or one worker per CPU core when it is unset."""
    workers = setting(settings, "EXTRACT_WORKERS")
    return cpu_count() if workers is None else workers


def takes_body_bytes(settings: BaseSettings) -> bool:
    """Whether this crawl's ExtractionPipeline takes a bytes ``html`` field and removes it.

    The bundled spiders then send ``response.body`` (decoded in the worker); otherwise
    ``response.text``, so that items exported with their HTML (extraction off, another
    HTML field, ``EXTRACT_KEEP_HTML``) carry text as before. ``DISCOVERY_HTML_BYTES=False``
    keeps the text for a pipeline of the project's that reads ``html`` before extraction.
    """
    if not setting(settings, "DISCOVERY_HTML_BYTES"):
        return False
    if not setting(settings, "EXTRACT_ENABLED") or setting(settings, "EXTRACT_KEEP_HTML"):
        return False
    if setting(settings, "EXTRACT_HTML_FIELD") != "html":
        return False
    pipelines = build_component_list(settings.getwithbase("ITEM_PIPELINES"))
    return any(_is_extraction_pipeline(load_object(path)) for path in pipelines)


def _is_extraction_pipeline(component: Any) -> bool:
    # Imported here: the pipeline module imports this one.
    from scrapy_maintext.pipelines.extraction import ExtractionPipeline

    return isinstance(component, type) and issubclass(component, ExtractionPipeline)

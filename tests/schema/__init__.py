"""The TEI P5 schema (``tei_all.rng``, TEI P5 4.3.0), compiled once per test process."""

from __future__ import annotations

import functools
from pathlib import Path

from lxml import etree

TEI_ALL = Path(__file__).with_name("tei_all.rng")


@functools.cache
def tei_schema() -> etree.RelaxNG:
    return etree.RelaxNG(etree.parse(str(TEI_ALL)))


def tei_errors(document: etree._Element) -> str:
    """ "" when ``document`` is valid TEI, else the validator's messages."""
    schema = tei_schema()
    if schema.validate(document):
        return ""
    return "\n".join(f"{e.line}: {e.message}" for e in schema.error_log)

"""The language of a document (ISO 639-1) from its text, with the page's markup as a hint.

py3langid (the model trafilatura uses, bundled in its wheel: nothing is downloaded) gives a
probability per language, calibrated for the text's length. The markup's language
(``lang``, ``xml:lang``, ``Content-Language``, ``og:locale``) is believed unless the text
makes it improbable: pages declare the template's language, and sites often leave a CMS's
default "en" on pages in other languages; short texts (a title, a caption) are where the
text alone is least sure. ``benchmarks.metadata`` measures text alone, markup alone and both
on pages whose language is known.
"""

from __future__ import annotations

import functools
import logging
import lzma
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapy_maintext.fields import startup_cache

logger = logging.getLogger(__name__)

#: Characters of text read: the first few thousand decide as well as the whole text (the
#: detector's cost grows with the length).
MAX_TEXT_CHARS = 1000
#: The markup's language stands unless the text gives it less than this probability.
HINT_MIN_PROBABILITY = 0.01
#: Labels of the detector that are no language.
NOT_LANGUAGES = frozenset({"zxx", "und"})


@dataclass(frozen=True)
class Language:
    """A language and how sure the detector is of it (None: the markup's word alone)."""

    code: str | None = None
    confidence: float | None = None


@functools.cache
def identifier() -> Any:
    """py3langid's identifier with probabilities (loaded once per process; the decompressed
    model is read from the start-up cache)."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    try:
        return _from_cache(MODEL_DIR / MODEL_FILE)
    # py3langid's own load below says what is wrong with its model, if anything is.
    except Exception as exc:
        logger.debug("Language model not loaded through the start-up cache: %r", exc)
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _from_cache(path: Path) -> Any:
    """``LanguageIdentifier.from_model_file(path, norm_probs=True)``, the model's npz read
    from the start-up cache instead of decompressed (what py3langid's ``load_model`` does
    once it is)."""
    import numpy as np
    from py3langid.langid import LanguageIdentifier
    from py3langid.modelio import _to_array

    def unpacked(source: Path) -> bytes:
        with lzma.open(source) as f:
            return f.read()

    with (
        startup_cache.decompressed(path, "py3langid-model.npz", unpacked) as f,
        np.load(f, allow_pickle=False) as data,
    ):
        return LanguageIdentifier(
            np.asarray(data["ptc"]),
            np.asarray(data["pc"]),
            data["classes"].tolist(),
            _to_array(data["nextmove"]),
            data["out_feat"].tolist(),
            norm_probs=True,
            tk_row=_to_array(data["nextmove_row"]),
        )


def detect(text: str, hint: str | None = None, hint_min: float = HINT_MIN_PROBABILITY) -> Language:
    """The language of ``text``; ``hint`` (the markup's, ISO 639-1) when the text gives it at
    least ``hint_min`` probability."""
    sample = text[:MAX_TEXT_CHARS].strip()
    if not sample:
        return Language(hint, None)
    ranked = identifier().rank(sample)
    probabilities = dict(ranked)
    best, best_p = next(((c, p) for c, p in ranked if c not in NOT_LANGUAGES), (None, 0.0))
    if hint is not None and probabilities.get(hint, 0.0) >= hint_min:
        return Language(hint, round(float(probabilities[hint]), 4))
    if best is None:
        return Language(hint, None)
    return Language(best, round(float(best_p), 4))

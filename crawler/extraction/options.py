"""Options of :func:`scrapy_maintext.extraction.extract`, one frozen object passed everywhere."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from scrapy_maintext.vocabulary.settings import default_of

#: Engines: "auto" (neural, trafilatura when the neural engine falls back or is missing),
#: "neural" (neural only) and "trafilatura".
ENGINES = ("auto", "neural", "trafilatura")

#: What a neural model folder holds, as ``python -m scrapy_maintext.models.train`` writes it.
MODEL_FILES = ("model.onnx", "config.json")
#: The model folders shipped in the package (``neural.inference.MODELS_DIR``, not imported:
#: the neural package imports onnxruntime): ``EXTRACT_MODEL=v4.1`` names one of them.
SHIPPED_MODELS = Path(__file__).resolve().parent.parent / "neural" / "models"

#: Bodies above this size are refused: real article pages are far below it and parsing
#: bigger ones costs seconds of CPU for no text gain (trafilatura caps at 20 MB too).
DEFAULT_MAX_BYTES: int = default_of("EXTRACT_MAX_BYTES")
#: Parsed trees above this many elements are refused (same reasoning, counted in nodes).
DEFAULT_MAX_ELEMENTS = 200_000


@dataclass(frozen=True)
class ExtractOptions:
    """How to turn one page into a :class:`~crawler.document.Document`."""

    engine: str = "auto"
    include_comments: bool = False
    include_tables: bool = True
    #: Keep the captions and photo credits the text convention leaves out
    #: (``extraction.convention``, ``EXTRACT_CAPTIONS``).
    include_captions: bool = False
    #: Predict the page's type (``extraction.page_type``, ``EXTRACT_PAGE_TYPES``): the
    #: convention's article rules then apply to article pages only.
    page_types: bool = True
    #: Ask trafilatura too when the neural text is empty or a sliver of the page
    #: (``extraction.second_opinion``, ``EXTRACT_SECOND_OPINION``).
    second_opinion: bool = True
    #: Find the article's pictures with their captions and credits (``Document.images``,
    #: ``EXTRACT_IMAGES``).
    images: bool = True
    favor_precision: bool = False
    favor_recall: bool = False
    #: Extract title, author, date, ... (url and hostname are always set).
    with_metadata: bool = True
    max_bytes: int = DEFAULT_MAX_BYTES
    max_elements: int = DEFAULT_MAX_ELEMENTS
    #: Folder of a neural model (``model.onnx``, ``config.json``) to use instead of the
    #: shipped one, e.g. one trained with ``python -m scrapy_maintext.models.train``.
    model: str | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, not {self.engine!r}")
        if self.max_bytes <= 0 or self.max_elements <= 0:
            raise ValueError("max_bytes and max_elements must be positive")


def model_folder(value: str | None, name: str = "model") -> str | None:
    """``value`` as an absolute model folder (None when empty): a path, or the name of a
    folder shipped in the package (``v4.1``) where no such path exists; ValueError, naming the
    setting or option ``name``, when it holds no model."""
    if not value:
        return None
    folder = Path(value).expanduser()
    if not folder.exists() and folder.name == value and (SHIPPED_MODELS / value).is_dir():
        folder = SHIPPED_MODELS / value  # a shipped folder by its name, e.g. "v4.1"
    folder = folder.resolve()
    _check_model_files(folder, f"{name} {value!r}")
    following = _cascade_next(folder)
    if following is not None:
        # A cascade's next model is a sibling folder, as ``neural._cascade`` loads it
        # (which this cheap check cannot call: the neural package imports onnxruntime).
        _check_model_files(folder.parent / following, f"{name} {value!r}: its cascade")
    return str(folder)


def _check_model_files(folder: Path, what: str) -> None:
    missing = [file for file in MODEL_FILES if not (folder / file).is_file()]
    if missing:
        raise ValueError(f"{what}: no {' or '.join(missing)} in {folder}")


def _cascade_next(folder: Path) -> str | None:
    """The folder name of the model a cascade hands unsure pages to, if ``folder`` is one."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{folder / 'config.json'}: not a model configuration ({exc})") from exc
    cascade = config.get("cascade") if isinstance(config, dict) else None
    following = cascade.get("next") if isinstance(cascade, dict) else None
    return following if isinstance(following, str) else None

"""The extraction options ``maintext extract`` and ``maintext explain`` share."""

from __future__ import annotations

import argparse

from scrapy_maintext.extraction.options import ENGINES, ExtractOptions, model_folder


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """--engine, --model, --comments, --no-tables, --captions, --no-images, --favor-precision,
    --favor-recall."""
    add = parser.add_argument
    add("--engine", choices=ENGINES, default="auto", help="extraction engine (default: auto)")
    add(
        "--model",
        type=model,
        metavar="DIR",
        help="a neural model folder (model.onnx, config.json) instead of the shipped model",
    )
    add("--comments", action="store_true", help="also extract reader comments")
    add("--no-tables", action="store_true", help="leave tables out of the main text")
    add("--captions", action="store_true", help="keep image captions and photo credits")
    add("--no-images", action="store_true", help="leave the article's images out (images)")
    add("--favor-precision", action="store_true", help="less text, less boilerplate")
    add("--favor-recall", action="store_true", help="more text, more boilerplate")


def engine_options(args: argparse.Namespace) -> ExtractOptions:
    """The :class:`ExtractOptions` of :func:`add_engine_options`' arguments."""
    return ExtractOptions(
        engine=args.engine,
        include_comments=args.comments,
        include_tables=not args.no_tables,
        include_captions=args.captions,
        images=not args.no_images,
        favor_precision=args.favor_precision,
        favor_recall=args.favor_recall,
        model=args.model,
    )


def seconds(text: str) -> float:
    """A positive number of seconds (argparse type)."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text}")
    return value


def model(text: str) -> str | None:
    """A model folder, or a shipped model's name (argparse type)."""
    try:
        return model_folder(text, "--model")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None

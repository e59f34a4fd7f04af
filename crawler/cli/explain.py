"""``maintext explain PAGE_OR_URL -o page.html``: what the extractor keeps of a page, and why."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from scrapy_maintext.cli.engine_options import add_engine_options, engine_options, seconds
from scrapy_maintext.cli.subcommand import Subcommand
from scrapy_maintext.extraction.page_type import describe

_EPILOG = """\
The page's blocks in order, each kept or dropped, with the model's probability, what
decided it and why a block was dropped: below the model's threshold, a repeated run, the
text convention (title, byline, dateline, caption, furniture), a trailing heading, or left
out by trafilatura when it decided the page (the model unsure or keeping nothing). The
blocks kept are the text `maintext extract` writes for the page with the same options.

PAGE_OR_URL is an HTML file or an http(s) URL, fetched with one GET (redirects followed,
--timeout, at most EXTRACT_MAX_BYTES). --render runs its scripts in Chromium first, as a
crawl renders a page that needs JavaScript (its own site only, robots.txt obeyed). OUTPUT
is one standalone HTML page: no script, no request when opened.

exit status: 0 written, 2 a page that cannot be read or fetched, is not HTML, or an output
that cannot be written (one line says why).

examples:
  maintext explain saved/article.html -o explain.html
  maintext explain https://example.com/news/1 -o explain.html --engine neural
  maintext explain page.html --url https://example.com/page -o explain.html --model v4.1
"""
_HELP = "show, block by block, what the extractor keeps of one page and why (HTML)"
_DESCRIPTION = "What the extractor keeps of one page: every block, kept or dropped, and why."
HTML_SUFFIXES = (".html", ".htm")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``explain`` among ``maintext``'s commands (its help; :func:`main` runs it)."""
    COMMAND.add_to(commands)


def main(argv: list[str]) -> int:
    """``maintext explain ARGS``, parsed without the crawl's imports."""
    return run(COMMAND.parser().parse_args(argv))


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("source", metavar="PAGE_OR_URL", help="an HTML file or an http(s) URL")
    add("-o", "--output", required=True, type=_html_path, metavar="OUTPUT", help="page.html")
    add("--url", help="the page's URL, for a file (default: its file:// URL)")
    add("--timeout", type=seconds, default=30.0, help="seconds to fetch a URL (default: 30)")
    add(
        "--render",
        action="store_true",
        help="run the page's scripts in Chromium first (the render extra; RENDER_* defaults)",
    )
    add_engine_options(parser)


COMMAND = Subcommand("explain", _HELP, _DESCRIPTION, _EPILOG, _add_arguments)


def _html_path(text: str) -> str:
    if not text.lower().endswith(HTML_SUFFIXES):
        raise argparse.ArgumentTypeError(f"{text}: name a .html file")
    return text


def run(args: argparse.Namespace) -> int:
    from scrapy_maintext.explain.source import SourceError, read_source
    from scrapy_maintext.writable import path_problem

    output = Path(args.output)
    problem = path_problem(output, "output")
    if problem:
        return _error(problem)
    options = engine_options(args)
    try:
        page = read_source(args.source, options.max_bytes, args.timeout, args.url)
    except SourceError as exc:
        return _error(str(exc))
    from scrapy_maintext.explain.html import render
    from scrapy_maintext.explain.trace import explain

    if args.render:
        try:
            page = _rendered(page)
        except ValueError as exc:
            return _error(str(exc))
    trace = explain(page.body, page.url, options, page.encoding)
    if trace.doc.reason in _NOT_A_PAGE:
        return _error(f"{args.source}: not an HTML page ({trace.doc.reason})")
    if trace.doc.reason == "neural-error":
        return _error(f"{args.source}: the neural engine failed ({trace.doc.neural_error})")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(render(trace, options), encoding="utf-8")
    except OSError as exc:
        return _error(f"{output}: {exc.strerror or exc}")
    kept = sum(1 for row in trace.rows if row.verdict.kept)
    print(
        f"Explained {page.url}{' (rendered)' if args.render else ''}: {kept} of "
        f"{len(trace.rows)} blocks kept "
        f"({trace.doc.extractor or 'no engine'}); page type "
        f"{describe(trace.doc.page_type, trace.doc.page_type_probability)}; written to {output}",
        file=sys.stderr,
    )
    return 0


def _rendered(page: Any) -> Any:
    """The page after its scripts ran (``--render``), as the crawl would render it."""
    from scrapy.settings import Settings
    from scrapy_maintext.explain.source import USER_AGENT, Source
    from scrapy_maintext.render.availability import availability
    from scrapy_maintext.render.config import RenderConfig
    from scrapy_maintext.render.standalone import RenderFailed, render_page

    config = RenderConfig.from_settings(Settings())
    found = availability(config.browser_path)
    if not found.ok:
        raise ValueError(f"--render: {found.why}")
    try:
        html = render_page(page.body, page.url, page.encoding, USER_AGENT, config)
    except RenderFailed as exc:
        raise ValueError(str(exc)) from None
    return Source(html, page.url, "utf-8")


#: ``Document.reason`` of a body the extraction refuses to parse (``extraction.body``).
_NOT_A_PAGE = frozenset({"binary", "not-html", "empty-page", "unparsable", "too-large"})


def _error(message: str) -> int:
    # One line, whatever a server or the system put in its message.
    line = " ".join(message.splitlines())
    print(f"maintext explain: error: {line}", file=sys.stderr)
    return 2

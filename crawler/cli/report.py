"""``maintext report``: draw a saved crawl report again (JSON to HTML, or HTML to JSON)."""

from __future__ import annotations

import argparse
import sys

from scrapy_maintext.cli.subcommand import Subcommand
from scrapy_maintext.report.files import HTML_SUFFIXES

REPORT_SUFFIXES = (*HTML_SUFFIXES, ".json")

_EPILOG = """\
INPUT is a JSON report (CRAWL_REPORT=report.json, maintext extract --report report.json)
or an HTML report (it holds its JSON). OUTPUT's suffix chooses: .html for one standalone
page with plots (pip install "scrapy-maintext[report]" for the plots), .json for the numbers.

exit status: 0 written, 2 a report that cannot be read or written (one line says why).

examples:
  maintext report report.json -o report.html
  maintext report old-report.html -o report.json
"""


_HELP = "render a saved crawl report as HTML (or JSON)"
_DESCRIPTION = "Render a saved crawl report: one standalone HTML page with plots."


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``report`` among ``maintext``'s commands (its help; :func:`main` runs it)."""
    COMMAND.add_to(commands)


def main(argv: list[str]) -> int:
    """``maintext report ARGS``, parsed without the other commands' imports."""
    return run(COMMAND.parser().parse_args(argv))


def _add_arguments(report: argparse.ArgumentParser) -> None:
    report.add_argument("input", metavar="INPUT", help="report.json or report.html")
    report.add_argument(
        "-o", "--output", required=True, type=report_path, metavar="OUTPUT", help="where to write"
    )


COMMAND = Subcommand("report", _HELP, _DESCRIPTION, _EPILOG, _add_arguments)


def report_path(text: str) -> str:
    """A report's path: its suffix says JSON or HTML (argparse type)."""
    if not text.lower().endswith(REPORT_SUFFIXES):
        raise argparse.ArgumentTypeError(f"{text}: name a .html or .json file")
    return text


def run(args: argparse.Namespace) -> int:
    from scrapy_maintext.report.files import ReportError, load_report, write_report

    try:
        write_report(load_report(args.input), args.output)
    except ReportError as exc:
        print(f"maintext report: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"maintext report: error: {args.output}: {exc}", file=sys.stderr)
        return 2
    print(f"Crawl report written to {args.output}", file=sys.stderr)
    return 0


def write_extract_report(data: dict[str, object], path: str) -> bool:
    """``maintext extract --report``: False (and one line said) when it cannot be written."""
    from scrapy_maintext.report.files import write_report

    try:
        write_report(data, path)
    except OSError as exc:
        print(f"maintext extract: error: report not written to {path}: {exc}", file=sys.stderr)
        return False
    print(f"Report written to {path}", file=sys.stderr)
    return True

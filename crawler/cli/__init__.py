"""``maintext``: crawl with the bundled spiders, extract files offline, explain what the
extractor keeps of a page, render a crawl report, show a recurring crawl's state, run the demo.

Also ``python -m scrapy_maintext``. Each subcommand has its own ``--help``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from scrapy_maintext.cli import explain as explain_command
from scrapy_maintext.cli import report as report_command
from scrapy_maintext.cli import state as state_command
from scrapy_maintext.cli.engine_options import add_engine_options, engine_options, seconds
from scrapy_maintext.cpu import usable_cores

if TYPE_CHECKING:
    from scrapy.settings import Settings
    from scrapy_maintext.cli.inputs import InputFile
    from scrapy_maintext.cli.outputs import OutputSpec

#: Settings of the bundled project, used by ``maintext crawl`` from any directory.
SETTINGS_MODULE = "scrapy_maintext.settings"
SPIDERS = ("sitemap", "feed")

_CRAWL_EPILOG = """\
spider arguments (-a NAME=VALUE):
{arguments}
  feed spider only:
{feed_arguments}

common Scrapy options (all of `scrapy crawl`'s are accepted; see `maintext crawl sitemap -h`):
  -O FILE[:FORMAT]   write items to FILE, replacing it (formats: jsonl, json, tei, txt,
                     markdown, csv, xml)
  -o FILE[:FORMAT]   append items to FILE
  -s NAME=VALUE      set a setting (CRAWLER_CONTACT, JOBDIR, EXTRACT_ENGINE, ... see README)
  -s WARC_OUTPUT=DIR archive every response as WARC/1.1 in DIR (documents say where)
  -v, --verbose      Scrapy's whole log: settings, components, the stats dump
  -L, --loglevel LEVEL
                     DEBUG, INFO (Scrapy's whole log), WARNING or ERROR

output: progress lines, warnings, errors and the end-of-crawl report (shown at every
log level; -s CRAWL_REPORT=report.json also writes it as JSON, -s CRAWL_REPORT=report.html
as one HTML page with plots).

exit status: 0 done, 1 no site could be crawled (or the crawl failed to start), or an
output, the crawl state, the WARC archive or the report failed to write (the end says what
was lost), 2 wrong arguments, a path that cannot be written, a missing extra or an open-file
limit (ulimit -n) too low for the crawl (one line says which; nothing is written).

examples:
  maintext crawl sitemap -a domain=example.com -s CRAWLER_CONTACT=mailto:me@example.org \\
      -O corpus.xml:tei
  maintext crawl feed -a url=https://example.com/feed.xml -a since=2026-01-01 -O news.jsonl
  maintext crawl sitemap -a domains_file=sites.txt -s JOBDIR=state/ -O items.jsonl
"""

_EXTRACT_EPILOG = """\
inputs: HTML files (any name), directories (searched recursively for *.html, *.htm,
*.xhtml, *.shtml, *.warc, *.warc.gz), WARC or WARC.gz files (HTML responses with status 2xx)
and - for standard input (an HTML page or a WARC).

output: -o FILE[:FORMAT] with FORMAT jsonl, json, tei, txt or markdown (taken from the
suffix when left out: .jsonl, .json, .xml, .txt, .md), or -o DIR/[:FORMAT] for one file per
document (tei, txt, json or md; default tei), named by a hash of the URL.

A WARC's documents get its provenance: warc_file, warc_offset, warc_record_id,
payload_digest, status and fetched_at (as a crawl with -s WARC_OUTPUT=DIR gives them).

A document's URL comes from its WARC record, or from --base-url plus its path under the
directory given, else it is the file's file:// URL. -o replaces an existing output; --resume
instead skips documents whose URL the output already holds (a document left half written by
a kill is replaced) and appends.

exit status: 0 done, 1 an input could not be read or there was nothing to read,
2 wrong arguments, 130 interrupted (Ctrl-C; what was written is complete: --resume goes on).

examples:
  maintext extract pages/ -o corpus.jsonl
  maintext extract crawl.warc.gz -o corpus.xml:tei --workers 8
  maintext extract site-mirror/ --base-url https://example.com -o docs/:txt --resume
  maintext extract crawl.warc.gz -o corpus.jsonl --report report.html
  curl -s https://example.com/ | maintext extract - --base-url https://example.com/ -o page.jsonl
"""


def _forms(forms: dict[str, str]) -> str:
    return "\n".join(f"  {name:<14}{text}" for name, text in forms.items())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="maintext",
        description="Polite sitemap/feed crawling and neural main-text extraction.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_crawl(commands)
    _add_extract(commands)
    explain_command.add_parser(commands)
    report_command.add_parser(commands)
    state_command.add_parser(commands)
    demo = commands.add_parser(
        "demo",
        help="crawl the bundled demo site, served on 127.0.0.1",
        description="Serve the bundled demo site on 127.0.0.1 and crawl it politely into "
        "JSON Lines, a TEI corpus and plain text.",
    )
    demo.add_argument("--out", default="demo-output", help="output folder (default: %(default)s)")
    demo.add_argument("--spider", choices=SPIDERS, default="sitemap", help="spider to run")
    demo.add_argument(
        "--report",
        type=report_command.report_path,
        metavar="FILE",
        help="also write the crawl report: FILE.html (a page with plots) or FILE.json",
    )
    return parser


def _add_crawl(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from scrapy_maintext.spiders.args import ARGUMENT_FORMS, FEED_ARGUMENT_FORMS

    epilog = _CRAWL_EPILOG.format(
        arguments=_forms(ARGUMENT_FORMS), feed_arguments=_forms(FEED_ARGUMENT_FORMS)
    )
    crawl = commands.add_parser(
        "crawl",
        help="crawl sites through their sitemaps or feeds (any directory)",
        description="Run a bundled spider with the bundled settings, from any directory.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    crawl.add_argument(
        "-v", "--verbose", action="store_true", help="Scrapy's whole log (also after SPIDER)"
    )
    crawl.add_argument("spider", choices=SPIDERS, help="sitemap or feed")
    crawl.add_argument("scrapy_args", nargs=argparse.REMAINDER, help="-a, -O, -o, -s, ...")


def _add_extract(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    extract = commands.add_parser(
        "extract",
        help="extract main text from HTML files, directories and WARC archives",
        description="Offline extraction into the crawl's formats, on all cores.",
        epilog=_EXTRACT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = extract.add_argument
    add("inputs", nargs="+", metavar="INPUT", help="file, directory, WARC[.gz] or -")
    add("-o", "--output", required=True, metavar="OUT[:FORMAT]", help="where to write")
    add("--base-url", help="URL that file paths are appended to")
    add(
        "--workers",
        type=_count,
        default=usable_cores(),
        help="processes (default: the cores this process may use: affinity, cgroup quota); "
        "0 extracts in this process, without --timeout",
    )
    add("--timeout", type=seconds, default=30.0, help="seconds per document (default: 30)")
    add("--resume", action="store_true", help="skip documents already in the output")
    add("--keep-empty", action="store_true", help="also write documents without main text")
    add(
        "--site-memory",
        action="store_true",
        help="remove blocks repeated across a site's pages, as a crawl with "
        "SITE_MEMORY_ENABLED=True does",
    )
    add("--no-progress", action="store_true", help="no progress bar")
    add(
        "--report",
        type=report_command.report_path,
        metavar="FILE",
        help="also write the crawl report: FILE.html (a page with plots) or FILE.json",
    )
    add_engine_options(extract)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["report"]:
        # Rendering a saved report needs neither Scrapy nor the extraction: it starts fast.
        return report_command.main(argv[1:])
    if argv[:1] == ["explain"]:
        # One page: the extraction without Scrapy.
        return explain_command.main(argv[1:])
    if argv[:1] == ["state"]:
        # Reading a state file needs neither Scrapy nor the extraction.
        return state_command.main(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "crawl":
        return run_crawl(args.spider, args.scrapy_args, verbose=args.verbose)
    if args.command == "extract":
        return run_extract(args)
    if args.command == "report":
        return report_command.run(args)
    from scrapy_maintext.demo.__main__ import main as demo_main

    report = ["--report", args.report] if args.report else []
    return demo_main(["--out", args.out, "--spider", args.spider, *report])


def spider_arguments(scrapy_args: list[str]) -> dict[str, str]:
    """The ``-a NAME=VALUE`` arguments among ``scrapy crawl``'s, read as Scrapy reads them."""
    try:
        return _name_values(scrapy_args, "-a")
    except ValueError:
        raise ValueError("invalid -a value: use -a NAME=VALUE") from None


def command_line_settings(scrapy_args: list[str]) -> dict[str, str]:
    """The ``-s NAME=VALUE`` (``--set``) settings among ``scrapy crawl``'s arguments."""
    try:
        return _name_values(scrapy_args, "-s", "--set")
    except ValueError:
        raise ValueError("invalid -s value: use -s NAME=VALUE") from None


def output_feeds(settings: Settings, scrapy_args: list[str]) -> dict[str, Any]:
    """The ``-o``/``-O`` outputs among ``scrapy crawl``'s arguments, as Scrapy reads them
    (with the project's feed formats: ``tei``, ``txt``, ``markdown``)."""
    from scrapy.exceptions import UsageError
    from scrapy.utils.conf import feed_process_params_from_cli
    from scrapy_maintext.settings import FEED_EXPORTERS

    settings.set("FEED_EXPORTERS", {**settings.getdict("FEED_EXPORTERS"), **FEED_EXPORTERS})
    # Read by hand: argparse takes "-:jsonl" (standard output) for an option.
    found: dict[str, list[str]] = {"-o": [], "-O": []}
    names = {"-o": "-o", "--output": "-o", "-O": "-O", "--overwrite-output": "-O"}
    for i, arg in enumerate(scrapy_args):
        name, equals, value = arg.partition("=")
        if arg in names and i + 1 < len(scrapy_args):
            found[names[arg]].append(scrapy_args[i + 1])
        elif equals and name in names and name.startswith("--"):
            found[names[name]].append(value)
    try:
        return feed_process_params_from_cli(settings, found["-o"], overwrite_output=found["-O"])
    except UsageError as exc:
        raise ValueError(str(exc)) from None


def _name_values(scrapy_args: list[str], *flags: str) -> dict[str, str]:
    from scrapy.utils.conf import arglist_to_dict

    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument(*flags, dest="values", action="append", default=[])
    known, _ = parser.parse_known_args(scrapy_args)
    return arglist_to_dict(known.values)


def check_spider_arguments(spider: str, scrapy_args: list[str]) -> str | None:
    """The error line for bad ``-a`` arguments, or None: before Scrapy starts or logs."""
    from scrapy_maintext.spiders.feed import FeedSpider
    from scrapy_maintext.spiders.sitemap import SitemapSpider

    spidercls = {"sitemap": SitemapSpider, "feed": FeedSpider}[spider]
    try:
        spidercls.check_arguments(spider_arguments(scrapy_args))
    except ValueError as exc:
        return f"maintext crawl: error: {exc}"
    return None


def check_settings(scrapy_args: list[str]) -> str | None:
    """The error line for ``-s`` settings this Python cannot crawl with, or None."""
    from scrapy.settings import Settings
    from scrapy_maintext.commands.crawl import crawl_state_problem
    from scrapy_maintext.distributed.components import distributed_problem
    from scrapy_maintext.exporters.paths import outputs_problem
    from scrapy_maintext.pipelines.config import ExtractConfig
    from scrapy_maintext.vocabulary.settings import setting

    try:
        settings = Settings(command_line_settings(scrapy_args))
        settings.set("FEEDS", output_feeds(settings, scrapy_args))
        if setting(settings, "EXTRACT_ENABLED"):
            # As the extraction pipeline reads them (EXTRACT_ENGINE, EXTRACT_LANGUAGES, ...).
            ExtractConfig.from_settings(settings)
    except ValueError as exc:
        return f"maintext crawl: error: {exc}"
    from scrapy_maintext.open_files import limit_problem

    problem = (
        distributed_problem(settings)
        or crawl_state_problem(settings)
        or outputs_problem(settings)
        or limit_problem(settings)
    )
    if problem:
        return f"maintext crawl: error: {problem}"
    from scrapy_maintext.archive.extension import WarcSettings
    from scrapy_maintext.report.extension import ReportSettings

    try:
        WarcSettings.from_settings(settings)
        ReportSettings.from_settings(settings)
    except ValueError as exc:
        return f"maintext crawl: error: {exc}"
    return None


def spider_help(spider: str) -> str:
    """What ``maintext crawl SPIDER -h`` shows before Scrapy's own list of options."""
    from scrapy_maintext.spiders.args import ARGUMENT_FORMS, FEED_ARGUMENT_FORMS

    forms = {**ARGUMENT_FORMS, **(FEED_ARGUMENT_FORMS if spider == "feed" else {})}
    return (
        f"usage: maintext crawl {spider} -a NAME=VALUE [-a ...] [-O FILE[:FORMAT]] "
        "[-s NAME=VALUE] [scrapy crawl options]\n\n"
        f"spider arguments of {spider} (-a NAME=VALUE):\n{_forms(forms)}\n\n"
        "`maintext crawl -h` has examples and exit statuses. Every option of `scrapy crawl`"
        " is accepted (Scrapy's list follows; read `maintext crawl` for `scrapy crawl`):\n"
    )


def run_crawl(spider: str, scrapy_args: list[str], verbose: bool = False) -> int:
    """``scrapy crawl SPIDER ...`` with the bundled settings, wherever it is run from."""
    # Every crawl loads it (the HTTP download handler does); loaded here, before the spiders,
    # its deprecated-class shims (``inspect.stack()``, which looks up the module of every
    # frame in ``sys.modules``) walk a short stack: about 0.1 s of each run's start.
    import scrapy.core.downloader.contextfactory  # noqa: F401

    if "-h" in scrapy_args or "--help" in scrapy_args:
        print(spider_help(spider), flush=True)
    else:
        error = check_spider_arguments(spider, scrapy_args) or check_settings(scrapy_args)
        if error:
            print(error, file=sys.stderr)
            return 2
    os.environ["SCRAPY_SETTINGS_MODULE"] = SETTINGS_MODULE
    from scrapy.cmdline import execute

    try:
        execute(["maintext", "crawl", spider, *(["-v"] if verbose else []), *scrapy_args])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return 0


def run_extract(args: argparse.Namespace) -> int:
    from scrapy_maintext.cli.extract import ExtractJob, run
    from scrapy_maintext.cli.inputs import InputOptions, expand
    from scrapy_maintext.cli.outputs import OutputError, OutputSpec
    from scrapy_maintext.site_memory.registry import SiteMemoriesOptions

    try:
        inputs = expand(args.inputs)
        output = OutputSpec.parse(args.output)
        check_not_an_input(output, inputs)
        if args.report:
            check_report(args.report)
        job = ExtractJob(
            inputs=inputs,
            output=output,
            options=engine_options(args),
            input_options=InputOptions(base_url=args.base_url),
            workers=args.workers,
            timeout=args.timeout,
            resume=args.resume,
            keep_empty=args.keep_empty,
            progress=not args.no_progress and sys.stderr.isatty(),
            site_memory=SiteMemoriesOptions() if args.site_memory else None,
        )
        summary = run(job)
    except (OSError, OutputError) as exc:
        print(f"maintext extract: error: {exc}", file=sys.stderr)
        return 2
    print(summary.line(job.output), file=sys.stderr)
    if args.report and not report_command.write_extract_report(
        summary.report_data(job), args.report
    ):
        return max(summary.exit_status, 1)
    return summary.exit_status


def check_report(path: str) -> None:
    """``--report``'s path, before the run: OutputError (one line) if it cannot be written."""
    from scrapy_maintext.cli.outputs import OutputError
    from scrapy_maintext.report.files import check_report_path

    try:
        check_report_path(path, "--report")
    except ValueError as exc:
        raise OutputError(str(exc)) from None


def check_not_an_input(output: OutputSpec, inputs: list[InputFile]) -> None:
    """Refuse an output that would overwrite one of the inputs before it is read."""
    from scrapy_maintext.cli.outputs import OutputError

    target = output.path.resolve()
    if any(item.path is not None and item.path.resolve() == target for item in inputs):
        raise OutputError(f"{output.path}: the output would overwrite this input")


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a count: {text}")
    return value

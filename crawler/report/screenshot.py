"""The crawl report as a person sees it: a page opened in headless Chromium, saved as PNG.

``python -m scrapy_maintext.report.screenshot`` crawls the bundled demo site (as
``python -m scrapy_maintext.demo --report``), writes its HTML report and saves what a laptop
screen shows of it as ``docs/report.png`` (the picture in ``docs/report.md``). It needs
Debian's ``chromium`` (``apt-get install chromium``) and the ``report`` extra for the plots.

    python -m scrapy_maintext.report.screenshot [--out docs/report.png] [--html report.html]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: Chromium's names on Debian and elsewhere.
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
#: A laptop's screen (CSS pixels); the picture shows the page's top this high.
WINDOW = (1280, 2000)
TIMEOUT = 120.0


class ChromiumMissing(RuntimeError):
    """No headless Chromium to open the page in."""


def find_chromium() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _run_chromium(arguments: list[str], page: Path, fragment: str = "") -> str:
    browser = find_chromium()
    if browser is None:
        raise ChromiumMissing("no chromium on PATH (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="report-chromium-") as profile:
        command = [
            browser,
            "--headless",
            "--no-sandbox",  # root in a container has no user namespace sandbox
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *arguments,
            page.resolve().as_uri() + (f"#{fragment}" if fragment else ""),
        ]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def screenshot(page: Path, png: Path, window: tuple[int, int] = WINDOW) -> Path:
    """Open ``page`` in headless Chromium and save what its window shows as ``png``."""
    png.parent.mkdir(parents=True, exist_ok=True)
    _run_chromium([f"--screenshot={png.resolve()}", f"--window-size={window[0]},{window[1]}"], page)
    if not png.exists():
        raise RuntimeError(f"chromium wrote no screenshot to {png}")
    return png


def rendered_dom(page: Path, fragment: str = "") -> str:
    """The page's DOM after its scripts ran (``page.html#fragment``), as Chromium has it."""
    return _run_chromium(["--dump-dom"], page, fragment)


def print_to_pdf(page: Path, pdf: Path) -> Path:
    """Print ``page`` as Chromium prints it (A4/Letter, the page's print styles)."""
    pdf.parent.mkdir(parents=True, exist_ok=True)
    _run_chromium([f"--print-to-pdf={pdf.resolve()}", "--no-pdf-header-footer"], page)
    if not pdf.exists():
        raise RuntimeError(f"chromium wrote no PDF to {pdf}")
    return pdf


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/report.png"))
    parser.add_argument("--html", type=Path, help="keep the demo crawl's report here")
    args = parser.parse_args(argv)
    from scrapy_maintext.demo.__main__ import main as demo

    with tempfile.TemporaryDirectory(prefix="report-demo-") as work:
        page = args.html or Path(work) / "report.html"
        status = demo(["--out", str(Path(work) / "demo-output"), "--report", str(page)])
        if status != 0:
            print(f"the demo crawl failed (exit status {status})", file=sys.stderr)
            return status
        try:
            screenshot(page, args.out)
        except ChromiumMissing as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    print(f"Screenshot of the demo crawl's report: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Does every step of extraction stay linear on huge and pathological pages, against an
earlier commit?

    python -m benchmarks.huge_pages [--against bcbbc68] [--shapes paragraphs,inline,...]
        [--sizes 20000,60000] [--rounds 2] [--timeout 120]

Pages are generated (nothing is read from disk): a shape (``paragraphs``: one ``<p>`` per
sentence; ``marked``: the same with one word in bold; ``inline``: paragraphs with a link,
bold and italics each; ``figures``: a picture with its caption before every paragraph;
``itemtype``: every paragraph in a microdata item; ``table``: rows of three cells; ``divs``:
classed ``<div>``s with a ``<span>``; ``nested``: paragraphs in twelve levels of ``<div>``)
at a number of repeats. Each page is extracted by
``scrapy_maintext.extract(html, url)`` with the product's defaults, in two long-lived
processes: one running this checkout, one running the commit ``--against`` (exported with
``git archive`` into a temporary folder, with its own import path), interleaved (the order
alternates from page to page and round to round). A page that runs past ``--timeout`` seconds
is reported as such and its worker replaced.

Prints, per page: its elements, each side's best time over the rounds, their ratio
(this / against) and whether the two texts are the same; then the largest ratio. The
budget: no page slower than the earlier commit by more than 10%, and the 60,000-paragraph
page under the extraction's default 30 s timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "The council met on Tuesday to decide the future of the old quay and voted."


def _page(body: str) -> str:
    head = "<head><meta charset='utf-8'><title>A huge page</title></head>"
    article = f"<article><h1>A huge page</h1>{body}</article>"
    return f"<!DOCTYPE html><html>{head}<body>{article}</body></html>"


SHAPES: dict[str, Callable[[int], str]] = {
    "paragraphs": lambda n: _page("".join(f"<p>{SENTENCE} {i}</p>" for i in range(n))),
    "marked": lambda n: _page("".join(f"<p>{SENTENCE} <b>{i}</b> more</p>" for i in range(n))),
    "inline": lambda n: _page(
        "".join(
            f"<p>{SENTENCE} <a href='/x{i}'>link</a> <b>b</b> <i>i</i> {i}</p>" for i in range(n)
        )
    ),
    "figures": lambda n: _page(
        "".join(
            f"<figure><img src='/p{i}.jpg' width='400' height='300' alt='a'>"
            f"<figcaption>Caption {i}</figcaption></figure><p>{SENTENCE}</p>"
            for i in range(n)
        )
    ),
    "itemtype": lambda n: _page(
        "".join(
            f"<div itemscope itemtype='https://schema.org/Thing'><p>{SENTENCE} {i}</p></div>"
            for i in range(n)
        )
    ),
    "table": lambda n: _page(
        "<table>"
        + "".join(f"<tr><td>{i}</td><td>{SENTENCE}</td><td>x</td></tr>" for i in range(n))
        + "</table>"
    ),
    "divs": lambda n: _page(
        "".join(f"<div class='c{i % 7}' id='d{i}'><span>{SENTENCE}</span></div>" for i in range(n))
    ),
    "nested": lambda n: _page(
        "".join("<div>" * 12 + f"<p>{SENTENCE} {i}</p>" + "</div>" * 12 for i in range(n))
    ),
}
#: The default pages: (shape, repeats), from 60,000 to about 190,000 elements.
DEFAULT_PAGES = (
    ("paragraphs", 60_000),
    ("marked", 60_000),
    ("inline", 40_000),
    ("figures", 40_000),
    ("itemtype", 60_000),
    ("table", 45_000),
    ("divs", 60_000),
    ("nested", 14_000),
)

#: The worker: reads a page's path per line, answers its time and text's hash as JSON.
WORKER = """
import hashlib, json, sys, time
from scrapy_maintext.extraction import extract
extract(b"<html><body><p>warm-up</p></body></html>", "https://example.com/")
for line in sys.stdin:
    data = open(line.strip(), "rb").read()
    start = time.perf_counter()
    doc = extract(data, "https://example.com/huge.html")
    seconds = time.perf_counter() - start
    text = doc.text or ""
    digest = hashlib.sha1(text.encode()).hexdigest()
    print(json.dumps({"seconds": seconds, "text": digest, "chars": len(text)}), flush=True)
"""


@dataclass
class Worker:
    """A long-lived extraction process on one import path."""

    name: str
    path: str
    process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": self.path, "OMP_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),
        )

    def run(self, page: Path, timeout: float) -> dict[str, object] | None:
        if self.process is None:
            self.start()
        assert self.process is not None and self.process.stdin and self.process.stdout
        self.process.stdin.write(f"{page}\n")
        self.process.stdin.flush()
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                self.process.kill()
                self.process.wait()
                self.process = None
                return None
        answer: dict[str, object] = json.loads(self.process.stdout.readline())
        return answer

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()


@dataclass
class Result:
    shape: str
    repeats: int
    elements: int
    seconds: dict[str, list[float]] = field(default_factory=dict)
    texts: dict[str, set[str]] = field(default_factory=dict)


def importable(commit: str | None, folder: Path) -> str:
    """A folder whose ``scrapy_maintext`` is this checkout's library or the commit's."""
    source = ROOT
    if commit:
        source = folder / "tree"
        source.mkdir()
        archive = subprocess.run(
            ["git", "archive", commit], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    package = folder / ("old" if commit else "new") / "scrapy_maintext"
    package.mkdir(parents=True)
    for child in (source / "crawler").iterdir():
        (package / child.name).symlink_to(child)
    for name in ("spiders", "middlewares"):
        (package / name).symlink_to(source / name)
    return str(package.parent)


def measure(
    pages: list[tuple[str, int]], against: str, rounds: int, timeout: float
) -> list[Result]:
    from lxml import html

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        workers = [
            Worker("this", importable(None, folder)),
            Worker(against, importable(against, folder)),
        ]
        results = []
        for shape, repeats in pages:
            path = folder / f"{shape}-{repeats}.html"
            path.write_text(SHAPES[shape](repeats), encoding="utf-8")
            elements = sum(1 for _ in html.parse(str(path)).getroot().iter())
            results.append(Result(shape, repeats, elements))
        try:
            for round_ in range(rounds):
                for number, result in enumerate(results):
                    order = workers if (number + round_) % 2 == 0 else workers[::-1]
                    for worker in order:
                        path = folder / f"{result.shape}-{result.repeats}.html"
                        answer = worker.run(path, timeout)
                        seconds = float(answer["seconds"]) if answer else float("inf")  # type: ignore[arg-type]
                        result.seconds.setdefault(worker.name, []).append(seconds)
                        text = str(answer["text"]) if answer else "timeout"
                        result.texts.setdefault(worker.name, set()).add(text)
        finally:
            for worker in workers:
                worker.stop()
    return results


def report(results: list[Result], against: str) -> float:
    """The table; a side past the timeout shows ``timeout`` (its ratio none)."""
    print(
        f"{'page':<22} {'elements':>9} {'this s':>8} {against + ' s':>10} {'ratio':>6}  same text"
    )
    worst = 0.0
    for result in results:
        this, old = min(result.seconds["this"]), min(result.seconds[against])
        cells = [
            f"{seconds:.2f}" if seconds != float("inf") else "timeout" for seconds in (this, old)
        ]
        ratio = "" if float("inf") in (this, old) or not old else f"{this / old:.2f}"
        if ratio:
            worst = max(worst, this / old)
        same = result.texts["this"] == result.texts[against]
        name = f"{result.shape} x{result.repeats}"
        print(f"{name:<22} {result.elements:>9} {cells[0]:>8} {cells[1]:>10} {ratio:>6}  {same}")
    print(f"largest ratio: {worst:.2f}")
    return worst


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="bcbbc68", help="the earlier commit")
    parser.add_argument("--shapes", default=",".join(shape for shape, _ in DEFAULT_PAGES))
    parser.add_argument("--sizes", default="", help="repeats for every shape (default: per shape)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    shapes = args.shapes.split(",")
    if args.sizes:
        pages = [(shape, int(size)) for shape in shapes for size in args.sizes.split(",")]
    else:
        pages = [(shape, repeats) for shape, repeats in DEFAULT_PAGES if shape in shapes]
    report(measure(pages, args.against, args.rounds, args.timeout), args.against)


if __name__ == "__main__":
    main()

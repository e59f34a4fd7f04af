"""Does ``extract()`` give the same Document as an earlier commit on the labelled pages?

    python -m benchmarks.extract_equivalence --data ../shared/data --against 8a809f0
        [--limit 200] [--datasets wcxb-dev,fundus-dev] [--show 5]

A check for changes that must not change any output (speed work). The pages (every split,
``--limit`` per dataset, 0 = all) go through ``scrapy_maintext.extract(html, url)`` with the
product's defaults in two processes: one running this checkout, one the commit
``--against`` (exported with ``git archive``, as ``benchmarks.huge_pages`` does). Each
Document is compared whole: :meth:`Document.to_dict` and the internal fields
(``INTERNAL_FIELDS``: notes, neural error, escalation, bounds).

Prints the pages compared, the pages that differ per dataset and, for the first ``--show``
of them, which fields differ; exits 1 when any page differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from scrapy_maintext.models.dataset import DATASETS, iter_pages

from benchmarks.huge_pages import importable

#: The worker: reads pages (JSON lines: key, url, html), writes each Document as a JSON line.
WORKER = """
import json, sys
from scrapy_maintext.document import INTERNAL_FIELDS
from scrapy_maintext.extraction import extract
with open(sys.argv[1], encoding="utf-8") as pages, open(sys.argv[2], "w") as out:
    for line in pages:
        page = json.loads(line)
        doc = extract(page["html"], page["url"])
        data = doc.to_dict()
        data.update({name: str(getattr(doc, name)) for name in INTERNAL_FIELDS})
        line = json.dumps({"key": page["key"], "doc": data}, sort_keys=True, default=str)
        out.write(line + "\\n")
"""


def write_pages(data: str, datasets: tuple[str, ...], limit: int, path: Path) -> int:
    counts: Counter[str] = Counter()
    with path.open("w", encoding="utf-8") as out:
        for page in iter_pages(data, datasets):
            if limit and counts[page.dataset] >= limit:
                continue
            counts[page.dataset] += 1
            key = f"{page.dataset}/{page.id}"
            out.write(json.dumps({"key": key, "url": page.url, "html": page.html}) + "\n")
    return sum(counts.values())


def run_both(pages: Path, against: str, folder: Path) -> tuple[Path, Path]:
    """Both sides over ``pages`` at once (two processes), their Documents' files."""
    sides = {"this": importable(None, folder), "against": importable(against, folder)}
    running, outputs = [], []
    for name, path in sides.items():
        output = folder / f"{name}.jsonl"
        env = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}
        command = [sys.executable, "-c", WORKER, str(pages), str(output)]
        running.append(subprocess.Popen(command, env=env, cwd=tempfile.gettempdir()))
        outputs.append(output)
    for process in running:
        if process.wait() != 0:
            raise SystemExit(f"a worker failed (exit {process.returncode})")
    return outputs[0], outputs[1]


def compare(this: Path, against: Path, show: int) -> int:
    """Pages whose Documents differ, printed per dataset; the first ``show`` in detail."""
    differing: Counter[str] = Counter()
    compared = 0
    one_side: set[str] = set()
    with this.open() as new, against.open() as old:
        for new_line, old_line in zip(new, old, strict=True):
            a, b = json.loads(new_line), json.loads(old_line)
            compared += 1
            # A field one commit has and the other lacks is said once, not compared.
            one_side |= set(a["doc"]) ^ set(b["doc"])
            fields = sorted(k for k in set(a["doc"]) & set(b["doc"]) if a["doc"][k] != b["doc"][k])
            if not fields:
                continue
            differing[a["key"].split("/")[0]] += 1
            if sum(differing.values()) <= show:
                print(f"differs: {a['key']}: {', '.join(fields)}")
    if one_side:
        print(f"fields only one side has (not compared): {', '.join(sorted(one_side))}")
    print(f"{compared} pages compared, {sum(differing.values())} differ")
    for dataset, count in sorted(differing.items()):
        print(f"  {dataset}: {count}")
    return sum(differing.values())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--against", required=True, help="the earlier commit")
    parser.add_argument("--limit", type=int, default=0, help="pages per dataset (0: all)")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--show", type=int, default=5, help="differing pages shown in detail")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pages = folder / "pages.jsonl"
        count = write_pages(args.data, tuple(args.datasets.split(",")), args.limit, pages)
        print(f"{count} pages")
        this, against = run_both(pages, args.against, folder)
        sys.exit(1 if compare(this, against, args.show) else 0)


if __name__ == "__main__":
    main()

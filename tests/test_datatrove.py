"""The datatrove step on a WARC our crawl wrote, in a real LocalPipelineExecutor run."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.cli import main as maintext
from scrapy_maintext.demo.site import SiteOptions

from tests.crawl import NO_WAITS, ROOT, run_crawl
from tests.sites import TestSiteServer


@pytest.fixture(scope="module")
def warc_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The WARC files of a crawl of a 12-article site (rotated: several files)."""
    out = tmp_path_factory.mktemp("crawl")
    options = SiteOptions(articles=12, crawl_delay=None)
    with TestSiteServer(options, host="127.0.0.5") as server:
        result = run_crawl(
            "sitemap",
            out,
            {"domain": server.base_url},
            {**NO_WAITS, "WARC_OUTPUT": str(out / "warc"), "WARC_MAX_SIZE": "20000"},
        )
    assert result.returncode == 0, result.log[-3000:]
    assert len(list((out / "warc").glob("*.warc.gz"))) >= 2
    yield out / "warc"


def _jsonl_folder(folder: Path) -> list[dict]:
    records = []
    for path in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            records += [json.loads(line) for line in handle if line.strip()]
    return records


@pytest.mark.slow
def test_local_executor_with_two_tasks_gives_the_documents_of_maintext_extract(
    warc_dir: Path, tmp_path: Path
) -> None:
    pytest.importorskip("datatrove", reason='needs pip install "scrapy-maintext[datatrove]"')
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter
    from scrapy_maintext.datatrove import Maintext, WarcReader

    LocalPipelineExecutor(
        pipeline=[WarcReader(str(warc_dir)), Maintext(), JsonlWriter(str(tmp_path / "out"))],
        tasks=2,
        workers=2,
        logging_dir=str(tmp_path / "logs"),
    ).run()
    documents = _jsonl_folder(tmp_path / "out")
    extracted = tmp_path / "extract.jsonl"
    args = ["extract", str(warc_dir), "-o", str(extracted), "--workers", "0", "--no-progress"]
    assert maintext(args) == 0
    expected = [json.loads(line) for line in extracted.read_text(encoding="utf-8").splitlines()]
    assert len(expected) > 10
    by_url = {d["metadata"]["url"]: d for d in documents}
    assert set(by_url) == {e["url"] for e in expected}
    provenance = ("warc_file", "warc_offset", "warc_record_id", "payload_digest", "status")
    for record in expected:
        document = by_url[record["url"]]
        metadata = document["metadata"]
        assert document["text"] == record["text"], record["url"]
        for name in ("title", "author", "date", "language", "extractor", *provenance):
            assert metadata[name] == record[name], (record["url"], name)
        assert metadata["fetched_at"] == record["fetched_at"]
    # Both tasks read documents and extracted them with our step.
    for task in ("00000", "00001"):
        steps = json.loads((tmp_path / "logs" / "stats" / f"{task}.json").read_text())
        reader, extractor = steps[0], steps[1]
        assert reader["stats"]["documents"]["total"] > 0
        assert extractor["name"].endswith("Maintext")
        assert extractor["stats"]["forwarded"] > 0


def test_without_datatrove_the_import_says_how_to_install_it() -> None:
    code = "import sys; sys.modules['datatrove'] = None\nimport scrapy_maintext.datatrove"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        "ImportError: scrapy_maintext.datatrove needs datatrove: "
        'pip install "scrapy-maintext[datatrove]"'
    )

"""The crawl report's pieces: drop reasons, ETA, the table."""

from __future__ import annotations

from scrapy.exceptions import DropItem
from scrapy_maintext.report.extension import SiteReport, format_report, format_seconds
from scrapy_maintext.vocabulary.reasons import (
    ExtractionFailed,
    ExtractionTimeout,
    NearDuplicate,
    NoMainText,
    drop_reason,
)


def test_drop_reasons_are_the_exception_types() -> None:
    assert drop_reason(NoMainText("No main text (no-main-text): https://a")) == "no_text"
    assert (
        drop_reason(NearDuplicate("Near-duplicate of fingerprint 12ab: https://a")) == "duplicate"
    )
    assert drop_reason(ExtractionTimeout("Extraction timed out after 30s: https://a")) == "timeout"
    assert drop_reason(ExtractionFailed("Extraction failed (ValueError): https://a")) == "error"
    # A project's own DropItem, whatever its message says.
    assert drop_reason(DropItem("No main text, says my pipeline")) == "other"


def test_eta_from_the_pace_so_far() -> None:
    report = SiteReport("https://a.example", planned=10, first_seen=100.0)
    assert report.eta_seconds(110.0) is None  # nothing done yet: no pace
    report.extracted["neural"] = 4
    report.skipped["http_404"] = 1
    assert report.eta_seconds(110.0) == 10.0  # 5 pages in 10 s, 5 to go
    assert format_seconds(3725) == "1h02m"
    assert format_seconds(65) == "1m05s"


def test_table_has_a_row_per_site_and_the_reasons() -> None:
    ok = SiteReport("https://a.example", planned=3, fetched=3, text_chars=300)
    ok.extracted.update({"neural": 2, "trafilatura": 1})
    ok.not_planned["offsite"] = 2
    down = SiteReport("https://b.example", failure="connection refused by b.example")
    table = format_report({r.site: r for r in (ok, down)}, "finished").splitlines()
    assert table[0] == "Crawl report (2 sites, finished: finished)"
    assert table[2].split() == ["https://a.example", "3", "3", "3", "0", "0", "100"]
    assert table[3].strip() == "by neural 2, trafilatura 1; not planned offsite 2"
    assert table[5].strip() == "not crawled: connection refused by b.example"


def test_site_failures_name_what_happened_with_a_hint() -> None:
    from scrapy.exceptions import (
        CannotResolveHostError,
        DownloadConnectionRefusedError,
        DownloadFailedError,
        DownloadTimeoutError,
    )
    from scrapy_maintext.politeness.site_failure import describe_failure, robots_refusal

    dns = describe_failure(CannotResolveHostError("no results"), "https://nope.invalid")
    assert (dns.reason, dns.message) == (
        "dns_error",
        "host nope.invalid not found (DNS lookup failed)",
    )
    refused = describe_failure(DownloadConnectionRefusedError(), "http://127.0.0.1:9")
    assert refused.line("http://127.0.0.1:9") == (
        "Cannot crawl http://127.0.0.1:9: connection refused by 127.0.0.1:9"
    )
    tls = describe_failure(
        DownloadFailedError("[('SSL routines', '', 'wrong version number')]"),
        "https://a.example:8080",
    )
    assert tls.reason == "tls_error"
    assert tls.hint == "did you mean http://a.example:8080? (the server may not speak TLS)"
    timeout = describe_failure(
        DownloadTimeoutError("took longer than 1.0 seconds"), "https://a.example"
    )
    assert timeout.message == "no answer from a.example (took longer than 1.0 seconds)"
    assert robots_refusal(503, "a.example").reason == "robots_unavailable"


def test_timeline_keeps_at_most_its_buckets_and_every_request() -> None:
    from scrapy_maintext.report.sites import MAX_BUCKETS, Timeline

    timeline = Timeline(start=100.0)
    for second in range(0, 1000, 2):  # one request every 2 s for 1000 s
        timeline.add("a", 100.0 + second)
    timeline.add("b", 100.0 + 999.5)
    assert timeline.width == 16.0  # 1 s doubled until 1000 s fit in MAX_BUCKETS buckets
    assert len(timeline.counts["a"]) <= MAX_BUCKETS
    assert sum(timeline.counts["a"]) == 500 and timeline.counts["a"][0] == 8
    assert timeline.counts["b"] == [0] * 62 + [1]


def test_site_report_counts_documents_and_gaps() -> None:
    from scrapy_maintext.report.sites import engine_of, length_bin, month_of

    report = SiteReport("https://a.example")
    report.add_document(engine_of("trafilatura", "v4"), "x" * 300, "de", "2026-02-29")
    report.add_document(engine_of("neural", "v4"), "x" * 40_000, None, "not a date")
    for when in (10.0, 11.5, 12.0, 14.0):
        report.add_request(when)
    assert report.extracted == {"fallback": 1, "neural": 1}
    assert report.languages == {"de": 1, "unknown": 1}
    assert report.months == {"2026-02": 1, "unknown": 1}
    assert report.text_lengths[length_bin(300)] == 1 and report.text_lengths[-1] == 1
    assert (report.requests, report.min_gap) == (4, 0.5)
    assert month_of("2026-13-01") == "unknown" and engine_of(None, None) == "none"

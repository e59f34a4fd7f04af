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

"""A page whose extraction takes seconds, for the tests of the per-page timeout."""

from __future__ import annotations

#: About 3 s of extraction (engine auto) on the 2-core development machine: far above the
#: timeouts of the tests that use it (0.5 s), which pebble checks every 0.1 s.
SLOW_PARAGRAPHS = 60_000


def slow_page() -> str:
    paragraphs = "".join(
        f"<div><p>Paragraph {i} with some words to read here.</p></div>"
        for i in range(SLOW_PARAGRAPHS)
    )
    return f"<html><body>{paragraphs}</body></html>"

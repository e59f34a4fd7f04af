"""``maintext explain``: what the extractor keeps of one page, block by block, and why.

Scrapy-free. :mod:`.trace` runs the page through :func:`~scrapy_maintext.extraction.core.
extract_page` (the code ``extract()`` runs, so the two cannot disagree) and gives every
page block a :class:`~.trace.Verdict`; :mod:`.html` draws the trace as one standalone page;
:mod:`.source` reads a file or fetches a URL.
"""

"""The crawl's archive: every fetched response as WARC/1.1, and where a document came from.

Scrapy-free: :mod:`.records` builds the records, :mod:`.writer` writes and rotates the files
off the reactor thread, :mod:`.provenance` reads a record's location back. Scrapy glue:
:mod:`.extension` (a downloader middleware that hands every response to the writer and a
spider middleware that puts the provenance into the items).
"""

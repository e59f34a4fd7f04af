"""Scrapy-free: the document's fields besides its text, read from the parsed page.

Title, authors, dates, site name and description (``metadata``, chosen among structured
sources by ``metadata_rules``), tags and categories, language, and the near-duplicate
fingerprint. The body's text is ``extraction``'s; the pictures are ``pictures``'.
"""

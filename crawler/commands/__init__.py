"""Scrapy commands of the runnable project (``COMMANDS_MODULE``): ``crawl`` with checks."""

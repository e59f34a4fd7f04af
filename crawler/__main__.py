"""``python -m scrapy_maintext``: the ``maintext`` command line."""

from __future__ import annotations

from scrapy_maintext.cli import main

raise SystemExit(main())

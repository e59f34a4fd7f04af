"""The project's one vocabulary: settings (:mod:`.settings`), meta keys, stat names and
signals (:mod:`.names`), and why a page was skipped or dropped (:mod:`.reasons`).

Scrapy-free at import (the reasons subclass Scrapy's exceptions, imported lazily there)."""

"""Pages that need JavaScript (issue 46): told apart from pages without text, read from the
data they ship (``embedded``), rendered in a headless browser only when that fails.

Scrapy-free: :mod:`.marks` (the signs of a script-built page), :mod:`.embedded` and
:mod:`.json_text` (text out of ``__NEXT_DATA__``, Nuxt's payload, hydration state, JSON-LD),
:mod:`.policy` (which of the browser's requests may go out), :mod:`.settle` (when a page
is done). Scrapy glue: :mod:`.config` (``RENDER_*``), :mod:`.handler` (scrapy-playwright's
download handler, started lazily, bounded), :mod:`.page` (one page's routes and waits),
:mod:`.renderer` (the extraction pipeline's side), :mod:`.availability`.
"""

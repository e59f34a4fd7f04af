"""Pages that need JavaScript (issue 46): told apart from pages without text, read from the
data they ship, rendered in a headless browser only when that fails.

Scrapy-free: :mod:`.marks` (the signs of a script-built page), :mod:`.embedded` and
:mod:`.json_text` (text out of ``__NEXT_DATA__``, Nuxt's payload, hydration state, JSON-LD),
:mod:`.policy` (which of the browser's requests may go out), :mod:`.page` (one page's
routes and waits, on Playwright's objects), :mod:`.availability`, :mod:`.standalone` (one
page without a crawl). Scrapy glue: :mod:`.config` (``RENDER_*``), :mod:`.handler` (the
download handler) and :mod:`.browser` (scrapy-playwright's, made with the first render,
bounded), :mod:`.renderer` (the extraction pipeline's side).
"""

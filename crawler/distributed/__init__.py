"""One crawl across many processes and machines, on scrapy-redis.

``-s REDIS_URL=redis://host:port/db`` turns a ``scrapy crawl sitemap|feed`` process into one
worker of a shared crawl (the add-on switches these components on):

- :mod:`.scheduler`: scrapy-redis's scheduler, with per-site queues, leases that a killed
  worker's peers take back, and local discovery requests;
- :mod:`.worker`: claims each site's discovery once per crawl, acknowledges a page only once
  its item is exported, and decides when the whole crawl is finished;
- :mod:`scrapy_maintext.politeness.shared`: a site's next allowed request time,
  reserved in Redis by a Lua script;
- :mod:`.fingerprints`: near-duplicate fingerprints shared by every worker.

Every Redis structure and script lives in :mod:`.state`.
"""

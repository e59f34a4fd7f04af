"""The crawl state kept in Redis, for the workers of a distributed crawl (``REDIS_URL`` with
``CRAWL_STATE=NAME``): the same rows as the SQLite file (:mod:`.state`), the keys and their
checks (:mod:`.keys`), the Lua scripts that write rows (:mod:`.scripts`), ``maintext state``
on it (:mod:`.overview`) and the move from an older layout (:mod:`.upgrade`)."""

"""The Lua scripts that write a crawl state kept in Redis: each reads, changes and writes
one row inside Redis (:mod:`~scrapy_maintext.state.redis_state` runs them in one
``MULTI``/``EXEC``)."""

from __future__ import annotations

#: Lua helpers: a row read and written, a field set or deleted (``''`` is none), a URL
#: moved to the sitemap that lists it now. A listing key that is no set (damaged by hand)
#: is replaced, and its name returned: the store counts it, and writes it again from the
#: rows (each names the sitemap that listed it).
_LIB = """
local function load(k)
  local v = redis.pcall('GET', k)
  if type(v) ~= 'string' then return {}, type(v) == 'table' end
  local ok, r = pcall(cjson.decode, v)
  if not ok or type(r) ~= 'table' then return {}, true end
  for _, x in pairs(r) do if type(x) ~= 'string' then return {}, true end end
  return r, false
end
local function save(k, r) redis.call('SET', k, cjson.encode(r)) end
local function put(r, f, v) if v == '' then r[f] = nil else r[f] = v end end
local function listing(k)
  local t = redis.call('TYPE', k).ok
  if t == 'set' or t == 'none' then return false end
  redis.call('DEL', k)
  return k
end
local function source(r, key, new, prefix)
  if new == '' then return false end
  local bad = false
  if r.s and r.s ~= new then
    bad = listing(prefix .. r.s)
    redis.call('SREM', prefix .. r.s, key)
  end
  r.s = new
  bad = listing(prefix .. new) or bad
  redis.call('SADD', prefix .. new, key)
  return bad
end
"""


def _on_row(change: str) -> str:
    """A script that reads the row ``KEYS[1]`` as ``r``, runs ``change`` and writes it back
    (a ``change`` that returns writes nothing); ``damaged``: the key held no row (a row
    damaged by hand, counted in ``pages`` before, is not counted again). It returns
    ``bad``: a damaged listing it replaced, or false."""
    return (
        f"{_LIB}\nlocal r, damaged = load(KEYS[1])\nlocal bad = false\n{change}\n"
        "save(KEYS[1], r)\nreturn bad\n"
    )


#: KEYS: the URL's row, the page count. ARGV: key, url, etag, last-modified, listed, text
#: hash, now, source, fingerprint, sitemap-set prefix.
EXPORT = _on_row("""
if (not r.u and not damaged) or r.d then redis.call('INCR', KEYS[2]) end
r.u = ARGV[2]; r.h = ARGV[6]; r.x = ARGV[7]; r.g = nil; r.d = nil
put(r, 'e', ARGV[3]); put(r, 'm', ARGV[4]); put(r, 'l', ARGV[5]); put(r, 'p', ARGV[9])
if not r.f then r.f = ARGV[7] end
r.r = tostring((tonumber(r.r) or 0) + 1)
bad = source(r, ARGV[1], ARGV[8], ARGV[10])""")
#: KEYS: the URL's row, the page count. ARGV: key, url, etag, last-modified, listed, '1' =
#: a document, source, sitemap-set prefix. Keeps what is not given (``coalesce``).
SEEN = _on_row("""
if not r.u then
  r.u = ARGV[2]; r.r = '0'
  if ARGV[6] == '1' then r.d = '1' elseif not damaged then redis.call('INCR', KEYS[2]) end
end
for i, f in ipairs({'e', 'm', 'l'}) do if ARGV[i + 2] ~= '' then r[f] = ARGV[i + 2] end end
r.g = nil
bad = source(r, ARGV[1], ARGV[7], ARGV[8])""")
#: KEYS: the URL's row (a URL not remembered stays so).
GONE = _on_row("if not r.u then return false end\nr.g = '1'")
#: KEYS: a sitemap's row: its validators and listed date are forgotten (read again).
REREAD = _on_row("if not r.u then return false end\nr.e = nil; r.m = nil; r.l = nil")
#: KEYS: the URL's row. ARGV: due, interval, checked, changed, digest (replaced).
VISIT = _on_row("""
r.du = ARGV[1]; r.iv = ARGV[2]; r.ck = ARGV[3]
put(r, 'ch', ARGV[4]); put(r, 'dg', ARGV[5])""")
#: KEYS: rows. ARGV: sitemap-set prefix, then the rows' keys.
UNLIST = (
    _LIB
    + """
local bad = false
for i, k in ipairs(KEYS) do
  local r = load(k)
  if r.s then
    bad = listing(ARGV[1] .. r.s) or bad
    redis.call('SREM', ARGV[1] .. r.s, ARGV[i + 1])
    r.s = nil
    save(k, r)
  end
end
return bad
"""
)
#: KEYS: a damaged listing: dropped (then written again from the rows, :data:`RELIST`).
DROP = "redis.call('DEL', KEYS[1])\nreturn false"
#: KEYS: a listing. ARGV: keys of rows it lists.
RELIST = "redis.call('SADD', KEYS[1], unpack(ARGV))\nreturn false"

#: KEYS: a site's kept robots.txt. ARGV: field, value, field, value... The hash holds
#: those and no more. Returns nothing (the commit reads what each write returns).
ROBOTS = """
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV))
return false
"""

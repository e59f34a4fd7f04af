"""The Lua scripts that write a crawl state kept in Redis: each reads, changes and writes
one row inside Redis (:mod:`~scrapy_maintext.state.redis.state` runs them in one
``MULTI``/``EXEC``)."""

from __future__ import annotations

#: Lua helpers: a row read and written (schema 2, :func:`~scrapy_maintext.state.redis.keys.encode`
#: writes the same; ``cjson``'s escaped ``/`` taken out), a field set or deleted (``''`` is
#: none), a sitemap's number (given at its first listing: ``P:src`` and ``P:srcid``), a URL
#: moved to the sitemap that lists it now. A listing key that is no set (damaged by hand)
#: is replaced, and its name returned: the store counts it, and writes it again from the
#: rows (each names the sitemap that listed it).
_LIB = """
local F = {'u','e','m','l','h','f','x','r','g','d','s','p','du','iv','ck','ch','dg'}
local N = {m=1, l=1, f=1, x=1, r=1, g=1, d=1, s=1, du=1, iv=1, ck=1, ch=1}
local function load(k)
  local v = redis.pcall('GET', k)
  if type(v) ~= 'string' then return {}, type(v) == 'table' end
  local ok, a = pcall(cjson.decode, v)
  if not ok or type(a) ~= 'table' or a[1] == nil then return {}, true end
  local r = {}
  for i, x in pairs(a) do
    local f = F[i]
    local t = type(x)
    if not f or (t ~= 'string' and t ~= 'number') then return {}, true end
    if t == 'number' then r[f] = tostring(x) elseif x ~= '' then r[f] = x end
  end
  return r, false
end
local function save(k, r)
  local a, n = {}, 1
  for i, f in ipairs(F) do
    local v = r[f]
    if v == nil then a[i] = ''
    else
      n = i
      if N[f] and #v <= 14 and string.find(v, '^%-?%d+$') then a[i] = tonumber(v) else a[i] = v end
    end
  end
  for i = n + 1, #F do a[i] = nil end
  local text = string.gsub(cjson.encode(a), '\\\\/', '/')
  redis.call('SET', k, text)
end
local function put(r, f, v) if v == '' then r[f] = nil else r[f] = v end end
local function listing(k)
  local t = redis.call('TYPE', k).ok
  if t == 'set' or t == 'none' then return false end
  redis.call('DEL', k)
  return k
end
local function number(P, url)
  local id = redis.call('HGET', P .. ':src', url)
  if id then return id end
  id = tostring(redis.call('HINCRBY', P .. ':meta', 'sources', 1))
  redis.call('HSET', P .. ':src', url, id)
  redis.call('HSET', P .. ':srcid', id, url)
  return id
end
local function source(r, key, url, P)
  if url == '' then return false end
  local new = number(P, url)
  local bad = false
  if r.s and r.s ~= new then
    bad = listing(P .. ':src:' .. r.s)
    redis.call('SREM', P .. ':src:' .. r.s, key)
  end
  r.s = new
  bad = listing(P .. ':src:' .. new) or bad
  redis.call('SADD', P .. ':src:' .. new, key)
  return bad
end
"""


def _on_row(change: str) -> str:
    """A function of ``(KEYS, ARGV)`` that reads the row ``KEYS[1]`` as ``r``, runs
    ``change`` and writes it back (a ``change`` that returns writes nothing); ``damaged``:
    the key held no row (a row damaged by hand, counted in ``pages`` before, is not counted
    again). It returns ``bad``: a damaged listing it replaced, or false."""
    return (
        "function(KEYS, ARGV)\nlocal r, damaged = load(KEYS[1])\nlocal bad = false\n"
        f"{change}\nsave(KEYS[1], r)\nreturn bad\nend"
    )


#: The writes of rows, by name; each a function of ``(KEYS, ARGV)`` as a script of its own
#: would be.
_WRITES = {
    #: KEYS: the URL's row, the page count. ARGV: key, url, etag, last-modified, listed,
    #: text hash, now, source, fingerprint, the state's prefix.
    "export": _on_row("""
if (not r.u and not damaged) or r.d then redis.call('INCR', KEYS[2]) end
r.u = ARGV[2]; r.h = ARGV[6]; r.x = ARGV[7]; r.g = nil; r.d = nil
put(r, 'e', ARGV[3]); put(r, 'm', ARGV[4]); put(r, 'l', ARGV[5]); put(r, 'p', ARGV[9])
if not r.f then r.f = ARGV[7] end
r.r = tostring((tonumber(r.r) or 0) + 1)
bad = source(r, ARGV[1], ARGV[8], ARGV[10])"""),
    #: KEYS: the URL's row, the page count. ARGV: key, url, etag, last-modified, listed,
    #: '1' = a document, source, the state's prefix. Keeps what is not given (``coalesce``).
    "seen": _on_row("""
if not r.u then
  r.u = ARGV[2]; r.r = '0'
  if ARGV[6] == '1' then r.d = '1' elseif not damaged then redis.call('INCR', KEYS[2]) end
end
for i, f in ipairs({'e', 'm', 'l'}) do if ARGV[i + 2] ~= '' then r[f] = ARGV[i + 2] end end
r.g = nil
bad = source(r, ARGV[1], ARGV[7], ARGV[8])"""),
    #: KEYS: the URL's row (a URL not remembered stays so).
    "gone": _on_row("if not r.u then return false end\nr.g = '1'"),
    #: KEYS: a sitemap's row: its validators and listed date are forgotten (read again).
    "reread": _on_row("if not r.u then return false end\nr.e = nil; r.m = nil; r.l = nil"),
    #: KEYS: the URL's row. ARGV: due, interval, checked, changed, digest (replaced).
    "visit": _on_row("""
r.du = ARGV[1]; r.iv = ARGV[2]; r.ck = ARGV[3]
put(r, 'ch', ARGV[4]); put(r, 'dg', ARGV[5])"""),
    #: KEYS: rows. ARGV: the state's prefix, then the rows' keys.
    "unlist": """function(KEYS, ARGV)
local bad = false
for i, k in ipairs(KEYS) do
  local r = load(k)
  if r.s then
    bad = listing(ARGV[1] .. ':src:' .. r.s) or bad
    redis.call('SREM', ARGV[1] .. ':src:' .. r.s, ARGV[i + 1])
    r.s = nil
    save(k, r)
  end
end
return bad
end""",
}
#: Names of the writes :data:`WRITES` applies.
WRITE_NAMES = frozenset(_WRITES)

#: ARGV[1]: a JSON array of writes, each ``[name, KEYS, ARGV]`` (a name of
#: :data:`WRITE_NAMES`, two arrays of text), applied in order: a commit's writes of rows in
#: one call instead of one script call each (a call's arguments are most of its cost to
#: the crawl process). Returns the damaged listings they replaced.
WRITES = (
    _LIB
    + "local W = {}\n"
    + "".join(f"W['{name}'] = {function}\n" for name, function in _WRITES.items())
    + """
local bad = {}
for _, w in ipairs(cjson.decode(ARGV[1])) do
  local replaced = W[w[1]](w[2], w[3])
  if replaced then bad[#bad + 1] = replaced end
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

"""The Lua scripts of a shared crawl: each runs atomically inside Redis.

Request queues: one list per site (``<prefix>:q:<site>``) and a ring of the sites that have
requests (a list, rotated by every pop, plus a set to keep each site in it once), so that
workers take turns between sites and each site's requests leave in the order they came.
New sites enter the ring at its head; a pop rotates the ring's tail to its head, so sites
are served in the order they arrived, in turns. A popped request is *leased*: it stays in
its worker's lease hash until the worker acknowledges it or dies, when it goes back to the
front of its site's queue.
"""

from __future__ import annotations

#: KEYS: seen set, ring, ring set, site queue, the worker's leases.
#: ARGV: fingerprint ('' = no duplicate check), request, site, '1' = front, lease ('' = none).
#: A request carrying the lease of the request it replaces (redirect, retry) ends that lease.
ENQUEUE = """
if ARGV[5] ~= '' then redis.call('HDEL', KEYS[5], ARGV[5]) end
if ARGV[1] ~= '' and redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[4] == '1' then
  redis.call('LPUSH', KEYS[4], ARGV[2])
else
  redis.call('RPUSH', KEYS[4], ARGV[2])
end
if redis.call('SADD', KEYS[3], ARGV[3]) == 1 then redis.call('LPUSH', KEYS[2], ARGV[3]) end
return 1
"""

#: KEYS: ring, ring set, the worker's leases, lease counter.
#: ARGV: site queue prefix, how many requests at most (each of another site), the number n
#: of leases this worker finished since its last pop (acknowledged here: one round trip a
#: page less), those n leases, then the sites to skip (this worker holds enough of them).
#: Returns {lease id, request, site, lease id, request, site, ...} (the ring's order) or nil.
POP = """
local acks = tonumber(ARGV[3])
for i = 4, acks + 3 do redis.call('HDEL', KEYS[3], ARGV[i]) end
local skip = {}
for i = acks + 4, #ARGV do skip[ARGV[i]] = true end
local want = 3 * tonumber(ARGV[2])
local out = {}
local n = redis.call('LLEN', KEYS[1])
for _ = 1, n do
  if #out >= want then break end
  local site = redis.call('RPOPLPUSH', KEYS[1], KEYS[1])
  if not site then break end
  if not skip[site] then
    skip[site] = true
    local q = ARGV[1] .. site
    local data = redis.call('LPOP', q)
    if redis.call('LLEN', q) == 0 then
      redis.call('LREM', KEYS[1], 0, site)
      redis.call('SREM', KEYS[2], site)
    end
    if data then
      local id = redis.call('INCR', KEYS[4])
      redis.call('HSET', KEYS[3], id, site .. '\\n' .. data)
      out[#out + 1] = id
      out[#out + 1] = data
      out[#out + 1] = site
    end
  end
end
if #out == 0 then return false end
return out
"""

#: KEYS: the worker's leases, ring, ring set, worker set, the worker's heartbeat.
#: ARGV: site queue prefix, worker id, '1' = even if alive (its own clean shutdown).
#: Puts every leased request back at the front of its site's queue; -1 if the worker lives.
REQUEUE = """
if ARGV[3] ~= '1' and redis.call('EXISTS', KEYS[5]) == 1 then return -1 end
local all = redis.call('HGETALL', KEYS[1])
local count = 0
for i = 2, #all, 2 do
  local v = all[i]
  local cut = string.find(v, '\\n', 1, true)
  local site = string.sub(v, 1, cut - 1)
  redis.call('LPUSH', ARGV[1] .. site, string.sub(v, cut + 1))
  if redis.call('SADD', KEYS[3], site) == 1 then redis.call('LPUSH', KEYS[2], site) end
  count = count + 1
end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[4], ARGV[2])
return count
"""

#: KEYS: discovery hash (site -> worker id, or 'done').
#: ARGV: site, worker id, heartbeat key prefix.
#: 1: claimed, 2: taken over from a dead worker, 0: done or claimed by a live worker.
CLAIM = """
local owner = redis.call('HGET', KEYS[1], ARGV[1])
if owner == 'done' then return 0 end
if owner == ARGV[2] then return 1 end
if owner and redis.call('EXISTS', ARGV[3] .. owner) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if owner then return 2 end
return 1
"""

#: KEYS: the run's crawl state (its owner), run id, finished marker, then the other keys of
#: one run (cleared for the next). ARGV: proposed run id, '1' = a finished run is cleared and
#: the next begins, this worker's crawl state ('' for none).
#: Returns {the crawl's run id, 1 when this call began a new run}, or {the owner, -1} when
#: the run belongs to another crawl state (nothing is changed). A run without an owner (of
#: an older version) is this worker's.
START_RUN = """
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[3] then return {owner, -1} end
redis.call('SET', KEYS[1], ARGV[3])
local renewed = 0
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('DEL', unpack(KEYS, 2))
  renewed = 1
end
redis.call('SET', KEYS[2], ARGV[1], 'NX')
return {redis.call('GET', KEYS[2]), renewed}
"""

#: KEYS: run id, finished marker. ARGV: the run this worker saw finish.
#: Marks it finished unless another run began meanwhile.
FINISH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[2], ARGV[1]) end
"""

NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

#: KEYS: the site's next-allowed-time key, its Crawl-delay floor key.
#: ARGV: this worker's delay for the site (ms), its robots.txt floor (ms), key lifetime (ms),
#: the earliest this worker can send (ms from now).
#: Reserves the site's next slot: returns {how long to wait (ms) before sending, the
#: reserved start (ms, Redis's clock)}. The floor is
#: the largest any worker has seen, so a worker that has not read robots.txt yet honours
#: it. Times are Redis's clock, so workers on machines with skewed clocks agree.
_RESERVE_FUNCTION = """
local function reserve(next_key, floor_key, delay, floor, lifetime, earliest)
  floor = math.max(floor, tonumber(redis.call('GET', floor_key) or '0'))
  redis.call('SET', floor_key, floor, 'PX', lifetime)
  delay = math.max(delay, floor)
  local nxt = tonumber(redis.call('GET', next_key) or '0')
  local start = math.max(now + earliest, nxt)
  redis.call('SET', next_key, start + delay, 'PX', lifetime)
  return start - now, start
end
"""
RESERVE = (
    NOW_MS
    + _RESERVE_FUNCTION
    + """
local wait, start = reserve(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3],
  tonumber(ARGV[4]))
return {wait, start}
"""
)

#: KEYS: the site's next-allowed-time key, its last-sent key, its Crawl-delay floor key,
#: its "request in flight" key, its "whose turn" key, its Retry-After pause key.
#: ARGV: this worker's delay for the site (ms), key lifetime (ms), the longest a request may
#: stay in flight (ms: its download timeout and more), the shortest wait while another
#: worker's request is in flight (ms), this request's token, its reserved start (ms). While
#: another request is in flight, the earliest reservation waiting keeps the next turn ("whose
#: turn", renewed at each look): a worker that reserved later does not take it from one
#: that waits for the answer (which would starve a slower worker). While one is, the wait is
#: nearly the delay: the answer can come at any moment, and the delay after it is waited
#: out on the next look, so a longer wait would lose time and a shorter one asks Redis
#: more often for nothing.
#: One request of a site in flight at a time, all workers together (see ANSWERED).
#: Right before sending, after the wait a reservation asked for: 0 and the send is recorded
#: when no request of any worker went out within the delay; else how long to wait more (ms).
#: A worker that woke up late (a loaded machine) thus never squeezes the gap to the next
#: worker's request; later reservations start no earlier than this send plus the delay.
#: A Retry-After pause under way (another worker's 429): what is left of it, negative (ms):
#: the reservation is void, and the worker reserves again after the pause. Looked for here,
#: atomically with the send, not in a call of its own before it (a round trip less a page,
#: and no 429 can come in between).
_DISPATCH_FUNCTION = """
local function dispatch(K, delay, lifetime, lease, poll, token, start)
  local paused = redis.call('PTTL', K[6])
  if paused > 0 then return -paused end
  delay = math.max(delay, tonumber(redis.call('GET', K[3]) or '0'))
  local turn = tonumber(redis.call('GET', K[5]) or '-1')
  if redis.call('EXISTS', K[4]) == 1 then
    if turn < 0 or start < turn then
      redis.call('SET', K[5], start, 'PX', 2 * delay + 1000)
    elseif start == turn then
      redis.call('PEXPIRE', K[5], 2 * delay + 1000)
    end
    return math.max(poll, math.floor(delay * 0.9))
  end
  if turn >= 0 and start > turn then return poll end
  local last = redis.call('GET', K[2])
  if last and now - tonumber(last) < delay then return delay - (now - tonumber(last)) end
  if turn >= 0 then redis.call('DEL', K[5]) end
  redis.call('SET', K[4], token, 'PX', lease)
  redis.call('SET', K[2], now, 'PX', lifetime)
  if tonumber(redis.call('GET', K[1]) or '0') < now + delay then
    redis.call('SET', K[1], now + delay, 'PX', lifetime)
  end
  return 0
end
"""
DISPATCH = (
    NOW_MS
    + _DISPATCH_FUNCTION
    + """
return dispatch(KEYS, tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5],
  tonumber(ARGV[6]))
"""
)

#: KEYS: the site's next-allowed-time key, its last-sent key, its Crawl-delay floor key, its
#: "request in flight" key. ARGV: this worker's delay for the site (ms), key lifetime (ms),
#: the request's token, how long ago the answer came (ms, optional: 0).
#: The request's answer came (or it failed): the site's next request leaves no earlier than
#: the delay after the answer. The server saw the request at some moment between its
#: dispatch and the answer: counting from the answer, no two requests reach it closer than
#: the delay, however long one took on its way (a worker's first connection, a loaded
#: machine). The answer's moment is now less the time the worker held it (measured on its
#: monotonic clock: a moment later than the true one by this call's way to Redis, never
#: earlier), so a worker may send its answers together with its next call.
ANSWERED_FUNCTION = """
local function answered(K, delay, lifetime, token, elapsed)
  local at = now - math.max(0, elapsed or 0)
  delay = math.max(delay, tonumber(redis.call('GET', K[3]) or '0'))
  if redis.call('GET', K[4]) == token then redis.call('DEL', K[4]) end
  if tonumber(redis.call('GET', K[2]) or '0') < at then
    redis.call('SET', K[2], at, 'PX', lifetime)
  end
  if tonumber(redis.call('GET', K[1]) or '0') < at + delay then
    redis.call('SET', K[1], at + delay, 'PX', lifetime)
  end
end
local function answer_all(first_key, last_key, first_arg, lifetime)
  for i = first_key, last_key, 4 do
    local j = first_arg + (i - first_key) / 4 * 3
    answered({KEYS[i], KEYS[i + 1], KEYS[i + 2], KEYS[i + 3]}, tonumber(ARGV[j + 1]), lifetime,
      ARGV[j], tonumber(ARGV[j + 2]))
  end
end
"""
ANSWERED = (
    NOW_MS
    + ANSWERED_FUNCTION
    + """
answered(KEYS, tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4] or '0'))
return 0
"""
)

#: KEYS: four of :data:`ANSWERED`'s for each site. ARGV: key lifetime (ms), then for each
#: site the answered request's token, the site's delay (ms) and how long ago the answer came
#: (ms). :data:`ANSWERED` for each
#: (the answers a worker's next reservation did not take in time), in one call.
ANSWERS = (
    NOW_MS
    + ANSWERED_FUNCTION
    + """
answer_all(1, #KEYS, 2, ARGV[1])
return 0
"""
)

#: KEYS: as :data:`DISPATCH`'s, then four of :data:`ANSWERED`'s for each site (this one's or
#: another's) whose request this worker had answered since its last call. ARGV: this
#: worker's delay for the site (ms), its robots.txt floor (ms), key lifetime (ms), the
#: earliest this worker can send (ms from now), the longest a request may stay in flight
#: (ms), the shortest wait while another worker's request is in flight (ms), this request's
#: token; then, for each answered request, its token, its site's delay (ms) and how long
#: ago the answer came (ms).
#: :data:`ANSWERED` for those requests, :data:`RESERVE`, then, when no wait is due,
#: :data:`DISPATCH` at once (one round trip a request, not three): {wait (ms), reserved
#: start} when a wait is due (then DISPATCH after it, as before); else {0, reserved start,
#: what DISPATCH answers}. Nothing can come between them here that could not come between
#: separate calls.
RESERVE_DISPATCH = (
    NOW_MS
    + ANSWERED_FUNCTION
    + _RESERVE_FUNCTION
    + _DISPATCH_FUNCTION
    + """
answer_all(7, #KEYS, 8, ARGV[3])
local delay = tonumber(ARGV[1])
local wait, start = reserve(KEYS[1], KEYS[3], delay, tonumber(ARGV[2]), ARGV[3],
  tonumber(ARGV[4]))
if wait > 0 then return {wait, start} end
return {0, start, dispatch(KEYS, delay, ARGV[3], ARGV[5], tonumber(ARGV[6]), ARGV[7], start)}
"""
)

#: KEYS: the site's next-allowed-time key, its pause key. ARGV: pause (ms), lifetime (ms).
#: A Retry-After pause: nobody reserves a time before now + pause, and the pause key tells
#: workers already waiting for an earlier reservation to reserve again after it.
PAUSE = (
    NOW_MS
    + """
local until_ms = now + tonumber(ARGV[1])
if until_ms > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('SET', KEYS[1], until_ms, 'PX', math.max(tonumber(ARGV[2]), tonumber(ARGV[1])))
end
redis.call('SET', KEYS[2], until_ms, 'PX', ARGV[1])
return until_ms - now
"""
)

#: KEYS: the fingerprint's band buckets (hashes), then the counter of kept fingerprints.
#: ARGV: fingerprint (16 hex digits), its entry (12 bytes: the fingerprint's 8 bytes, then
#: the URL's tag, 4 bytes), maximum distance (bits), '1' to count an added fingerprint (''
#: not: a migration), then each band's field. A field holds the entries of its band value.
#: Returns {the near-duplicate's fingerprint (16 hex digits), or '' when the document is
#: kept (and added), how many damaged keys and fields were dropped}: a bucket that is no
#: hash, or a field that is no run of entries, is dropped (counted), never an error.
#: A page never duplicates itself: a page fetched again after its worker died is kept.
FINGERPRINT = """
local function popcount(x)
  local c = 0
  while x ~= 0 do
    c = c + bit.band(x, 1)
    x = bit.rshift(x, 1)
  end
  return c
end
local function word(s, p)
  local a, b, c, d = string.byte(s, p, p + 3)
  return ((a * 256 + b) * 256 + c) * 256 + d
end
local damaged = 0
local function entries(k, f)
  local t = redis.call('TYPE', k).ok
  if t == 'none' then return '' end
  if t ~= 'hash' then
    redis.call('DEL', k)
    damaged = damaged + 1
    return ''
  end
  local v = redis.call('HGET', k, f)
  if not v then return '' end
  if #v % 12 ~= 0 then
    redis.call('HDEL', k, f)
    damaged = damaged + 1
    return ''
  end
  return v
end
local hi = word(ARGV[2], 1)
local lo = word(ARGV[2], 5)
local tag = string.sub(ARGV[2], 9, 12)
local limit = tonumber(ARGV[3])
local nbands = #KEYS - 1
local held = {}
for i = 1, nbands do
  local v = entries(KEYS[i], ARGV[4 + i])
  held[i] = v
  for p = 1, #v, 12 do
    if popcount(bit.bxor(hi, word(v, p))) + popcount(bit.bxor(lo, word(v, p + 4))) <= limit then
      if string.sub(v, p + 8, p + 11) == tag then return {'', damaged} end
      return {string.format('%08x%08x', word(v, p), word(v, p + 4)), damaged}
    end
  end
end
for i = 1, nbands do redis.call('HSET', KEYS[i], ARGV[4 + i], held[i] .. ARGV[2]) end
if ARGV[4] == '1' then redis.call('INCR', KEYS[#KEYS]) end
return {'', damaged}
"""

#: KEYS: the site's "robots.txt read" key, its "robots.txt being fetched" key.
#: ARGV: worker id, fetch lease (ms).
#: 1: fetch robots.txt now (its Crawl-delay is known, or this worker fetches it first);
#: 0: another worker is fetching it: wait, so that no request goes out before the site's
#: Crawl-delay is known to every worker.
ROBOTS_GATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[2]) == ARGV[1] then return 1 end
return 0
"""

#: KEYS: the site's Crawl-delay floor key, its "robots.txt read" key.
#: ARGV: floor (ms), key lifetime (ms), the answer ("<status>\n<body>").
#: The answer is kept for the other workers, which take it instead of asking the site.
ROBOTS_READ = """
local floor = math.max(tonumber(ARGV[1]), tonumber(redis.call('GET', KEYS[1]) or '0'))
redis.call('SET', KEYS[1], floor, 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
return floor
"""

#: KEYS: the site's "robots.txt read" key, its "robots.txt being fetched" key.
#: ARGV: worker id, fetch lease (ms).
#: {1, answer}: another worker read it (take it); {0}: fetch it now (this worker holds the
#: lease); {2}: another worker is fetching it: wait.
ROBOTS_SHARED = """
local answer = redis.call('GET', KEYS[1])
if answer then return {1, answer} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0} end
if redis.call('GET', KEYS[2]) == ARGV[1] then return {0} end
return {2}
"""

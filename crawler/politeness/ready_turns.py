"""Turns taken with a batch of requests from the shared queue (a shared crawl).

A worker takes up to eight requests of as many sites from the shared queue at once
(``DistributedScheduler``). Their sites' turns are taken then too, in the same round trip
for all of them, for each site that is free at that moment: nothing of it in flight, no
turn kept by a worker waiting for it, no Retry-After pause, its next reserved time passed
and its delay passed since its last request. Such a request then leaves without a
reservation of its own (``SharedPolitenessMiddleware`` otherwise reserves, waits and
dispatches per request: one round trip a page, most of a shared crawl's extra cost). A site
that is not free goes the usual way. The turn is the same as the dispatch's: the site's
"in flight" key holds the request's token until its answer comes, and the next request,
any worker's, leaves its delay after that answer; a turn taken early only holds the site a
little longer than needed.

Left the usual way:

- a site whose robots.txt this worker has not read: the robots.txt fetch waits for its
  site's turn, and a turn held for a page that waits on that robots.txt would hold the site
  until its lease ran out;
- pages the extraction backpressure would hold (``EXTRACT_MAX_PENDING``), and requests this
  worker's own download slot would still hold;
- a request that reaches the downloader more than :data:`READY_MAX_AGE` after its turn was
  taken: the turn is given back (as an answer) and the request reserves again (a Retry-After
  pause may have begun meanwhile).

A turn whose request never reaches the downloader (refused by robots.txt, answered by an
earlier middleware) is given back by the request's answer or failure; those of requests
still waiting in the scheduler when the crawl closes, at its close; any other not claimed
within :data:`READY_MAX_AGE`, with the next batch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy.utils.httpobj import urlparse_cached
from scrapy_maintext.distributed.lua import ANSWERED_FUNCTION, NOW_MS
from scrapy_maintext.politeness.slots import planned_slot
from scrapy_maintext.vocabulary.names import Stat

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy_maintext.politeness.shared import SharedPolitenessMiddleware

#: How long after its turn was taken a request may still use it (s).
READY_MAX_AGE = 2.0

#: KEYS: four of ``ANSWERED``'s for each answer this worker holds, then the six keys of
#: ``DISPATCH`` for each site to take. ARGV: key lifetime (ms), the longest a request may
#: stay in flight (ms), how many answers, each answer's token, delay (ms) and age (ms), then
#: for each site this worker's delay (ms), its robots.txt floor (ms) and the request's token.
#: The answers first (this worker's own answer may free a site of the batch), then each
#: site: 1 and its turn taken (what ``RESERVE`` and ``DISPATCH`` write when no wait is due)
#: when it is free, else 0 and nothing written.
TAKE_TURNS = (
    NOW_MS
    + ANSWERED_FUNCTION
    + """
local function take(K, delay, floor, lifetime, lease, token)
  if redis.call('EXISTS', K[4]) == 1 or redis.call('EXISTS', K[5]) == 1 then return 0 end
  if redis.call('PTTL', K[6]) > 0 then return 0 end
  floor = math.max(floor, tonumber(redis.call('GET', K[3]) or '0'))
  delay = math.max(delay, floor)
  if tonumber(redis.call('GET', K[1]) or '0') > now then return 0 end
  local last = redis.call('GET', K[2])
  if last and now - tonumber(last) < delay then return 0 end
  redis.call('SET', K[3], floor, 'PX', lifetime)
  redis.call('SET', K[4], token, 'PX', lease)
  redis.call('SET', K[2], now, 'PX', lifetime)
  redis.call('SET', K[1], now + delay, 'PX', lifetime)
  return 1
end
local answers = tonumber(ARGV[3])
answer_all(1, 4 * answers, 4, ARGV[1])
local taken = {}
local first_key, first_arg = 4 * answers, 3 + 3 * answers
for i = 1, (#KEYS - first_key) / 6 do
  local k, a = first_key + (i - 1) * 6, first_arg + (i - 1) * 3
  taken[i] = take({KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[k + 6]},
    tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), ARGV[1], ARGV[2], ARGV[a + 3])
end
return taken
"""
)


@dataclass(frozen=True, slots=True)
class Turn:
    site: str
    token: str
    taken: float  # monotonic


class ReadyTurns:
    """The turns taken for requests not at the downloader yet, by request."""

    def __init__(self, pace: SharedPolitenessMiddleware) -> None:
        self.pace = pace
        self._script = pace.server.register_script(TAKE_TURNS)
        self._turns: dict[Request, Turn] = {}
        #: Hosts (with their port) whose robots.txt this worker has read (fetched, kept or
        #: another worker's).
        self.robots_known: set[str] = set()

    def take(self, requests: list[Request], room: int) -> None:
        """The turns of the sites of ``requests`` that are free, in one round trip; at most
        ``room`` (the pages the extraction backpressure lets through now)."""
        self._give_back_stale()
        pace = self.pace
        candidates: list[tuple[Request, str]] = []
        sites: set[str] = set()
        for request in requests:
            if len(candidates) >= room:
                break
            site = planned_slot(pace.crawler, request)
            if site in sites or pace.local_wait(site) > 0:
                continue
            if urlparse_cached(request).netloc not in self.robots_known:
                continue
            sites.add(site)
            candidates.append((request, site))
        if not candidates:
            return
        keys, args = pace.held_answers()
        answers = len(args) // 3
        head: list[int | str] = [pace.key_lifetime_ms, pace.inflight_lease_ms, answers]
        tokens = []
        for _request, site in candidates:
            delay, floor = pace.delays(site)
            token = pace.token()
            tokens.append(token)
            keys += pace.dispatch_keys(site)
            args += [int(delay * 1000), int(floor * 1000), token]
        taken = self._script(keys, head + args)
        now = time.monotonic()
        for (request, site), token, took in zip(candidates, tokens, taken, strict=True):
            if int(took):
                self._turns[request] = Turn(site, token, now)

    def claim(self, request: Request, site: str) -> str | None:
        """The token of the turn taken for ``request`` when it is still fresh and of its
        site (``site``: its slot at the downloader); another is given back (as an answer,
        with the next call)."""
        turn = self._turns.pop(request, None)
        if turn is None:
            return None
        if turn.site == site and time.monotonic() - turn.taken <= READY_MAX_AGE:
            self.pace.inc(Stat.SHARED_READY_TURNS)
            return turn.token
        self.pace.hold_answer(turn.site, turn.token)
        self.pace.inc(Stat.SHARED_READY_STALE)
        return None

    def give_back(self, request: Request) -> bool:
        """The turn of a request that never reached the downloader, given back: whether
        it had one."""
        turn = self._turns.pop(request, None)
        if turn is None:
            return False
        self.pace.hold_answer(turn.site, turn.token)
        return True

    def _give_back_stale(self) -> None:
        """Turns whose requests never came (dropped on their way by something that told
        no middleware), given back rather than held until their lease runs out."""
        now = time.monotonic()
        for request, turn in list(self._turns.items()):
            if now - turn.taken > READY_MAX_AGE:
                self.give_back(request)
                self.pace.inc(Stat.SHARED_READY_STALE)

    def give_back_all(self) -> None:
        for request in list(self._turns):
            self.give_back(request)

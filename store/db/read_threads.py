"""How many of a server's reads run at once, each in a worker thread of its own.

A read is mostly Python holding the GIL (SQLAlchemy's execution, the rows, the page), and
SQLite releases the GIL at every row it steps to. So in one process more reads at once add
no throughput, only GIL handoffs between their threads. `bench/query.py --read-threads N`
on a 1M store, 8 clients of a 100-row page: every read in a thread of its own (anyio's
default, up to 40 at once) answered 177-182 requests a second at 6.8 ms of CPU each; three
at once, 236-403 at 3.0-5.1 ms; one at a time, 383 at 2.5 ms. But one at a time leaves
every request queued behind a slow read (a filter no index serves, up to the time limit):
beside one, 7 clients got 33 requests a second, against 183-195 with 40 and 242-366 with
three (docs/benchmarks.md, "Reads at once"). Three is the default; `core-audit serve
--read-threads` sets it, and `--workers` adds processes, each with its own threads and GIL.
A quick read on SQLite first tries on the event loop's thread (FIRST_TRY_SECONDS below) and
takes a read thread only if that try is cut short.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from weakref import WeakKeyDictionary

import anyio

from store.db.queries import QueryTimeout

DEFAULT_READ_THREADS = 3
# A quick read (AuditStore.run_quick: a page, a record: Python work bounded by the page size)
# on a SQLite reader first runs on the event loop's own thread, cut short after this long by
# SQLite's progress handler (as a time limit is), and only then in a read thread. Most such
# reads end well within it and skip the hand-off to a thread and back and the GIL passing
# between threads; a slow one (a filter no index serves) loses this much and holds the loop
# no longer than this and one step of SQLite's.
FIRST_TRY_SECONDS = 0.004


class ReadsBusy(QueryTimeout):
    """A read never started: every read thread stayed busy until its deadline (the server was
    loaded, not the query slow)."""


class ReadThreads:
    """At most `count` reads at once per event loop; a read waits for its turn until its
    deadline, then fails as a query past its time limit does (ReadsBusy)."""

    def __init__(self, count: int = DEFAULT_READ_THREADS) -> None:
        if count < 1:
            raise ValueError(f"read threads: must be 1 or more, got {count}")
        self.count = count
        # A limiter belongs to the event loop it was made in (tests and the CLI run several).
        self._limiters: WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = \
            WeakKeyDictionary()

    def _limiter(self) -> anyio.CapacityLimiter:
        loop = asyncio.get_running_loop()
        limiter = self._limiters.get(loop)
        if limiter is None:
            limiter = self._limiters[loop] = anyio.CapacityLimiter(self.count)
        return limiter

    @property
    def busy(self) -> int:
        """The reads running now in this event loop."""
        return int(self._limiter().borrowed_tokens)

    @asynccontextmanager
    async def turn(self, deadline: float) -> AsyncIterator[None]:
        """Within: one of the `count` reads (waited for until `deadline`, time.monotonic)."""
        limiter = self._limiter()
        try:
            limiter.acquire_nowait()  # a free thread: the query's own time limit applies
        except anyio.WouldBlock:
            with anyio.move_on_after(deadline - time.monotonic()) as waiting:
                await limiter.acquire()
            if waiting.cancelled_caught:
                raise ReadsBusy(f"query not started: the server's {self.count} read "
                                "thread(s) stayed busy past the request's time limit"
                                ) from None
        try:
            yield
        finally:
            limiter.release()

"""GET /events: server-sent events saying a new tree head exists.

One watcher per server process reads the newest tree head (db.probe: its own connection,
outside the request pool, within the time limit) every `interval` seconds while at least one
client listens, and hands each new head to every client's one-slot mailbox: the database is
read once per interval whatever the number of clients, and not at all with none. A client
that reads slowly misses intermediate heads, never the newest. At most `max_clients` streams
at once (503 beyond, with Retry-After); a comment line every `heartbeat` seconds keeps
proxies from closing an idle stream and lets the server notice a client that left.

Each event: `event: tree-head`, `id:` the tree size, `data:` {"tree_size", "root_hash"} as
JSON. The first is the head when the client connects; a client reconnecting with
Last-Event-ID gets the head at once only if it grew since.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import anyio
import anyio.to_thread
import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from store.db.audit_store import AuditStore
from store.db.queries.records import LedgerStatus

logger = logging.getLogger(__name__)

DEFAULT_INTERVAL = 0.5  # seconds between two reads of the newest tree head
DEFAULT_HEARTBEAT = 15.0
DEFAULT_MAX_CLIENTS = 64
RETRY_MS = 3000  # how long an EventSource waits before reconnecting


def event_text(head: LedgerStatus) -> bytes:
    data = orjson.dumps({"tree_size": head.tree_size, "root_hash": head.root_hash})
    return b"event: tree-head\nid: %d\ndata: %s\n\n" % (head.tree_size, data)


class TreeHeadWatcher:
    """The one reader of the newest tree head in this process, and its listeners."""

    def __init__(self, db: AuditStore, *, interval: float = DEFAULT_INTERVAL,
                 max_clients: int = DEFAULT_MAX_CLIENTS) -> None:
        self.db = db
        self.interval = interval
        self.max_clients = max_clients
        self.head: LedgerStatus | None = None
        self._mailboxes: set[asyncio.Queue[LedgerStatus]] = set()
        self._task: asyncio.Task[None] | None = None
        self._limiter = anyio.CapacityLimiter(1)

    @property
    def clients(self) -> int:
        return len(self._mailboxes)

    async def read_head(self) -> LedgerStatus:
        with anyio.fail_after(self.db.time_limit):
            return await anyio.to_thread.run_sync(self.db.probe, abandon_on_cancel=True,
                                                  limiter=self._limiter)

    @contextlib.asynccontextmanager
    async def listening(self) -> AsyncIterator[asyncio.Queue[LedgerStatus]]:
        mailbox: asyncio.Queue[LedgerStatus] = asyncio.Queue(maxsize=1)
        if self.head is not None:  # the newest head known: a first event at once
            mailbox.put_nowait(self.head)
        self._mailboxes.add(mailbox)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._watch())
        try:
            yield mailbox
        finally:
            self._mailboxes.discard(mailbox)
            if not self._mailboxes and self._task is not None:
                self._task.cancel()
                self._task = None

    def _publish(self, head: LedgerStatus) -> None:
        self.head = head
        for mailbox in self._mailboxes:
            if mailbox.full():  # only the newest head matters to a client
                mailbox.get_nowait()
            mailbox.put_nowait(head)

    async def _watch(self) -> None:
        while self._mailboxes:
            try:
                head = await self.read_head()
            except Exception as exc:  # the store unreadable for now: said once a round, kept on
                logger.warning("events: cannot read the newest tree head: %s",
                               type(exc).__name__)
            else:
                if self.head is None or head.tree_size != self.head.tree_size:
                    self._publish(head)
            await asyncio.sleep(self.interval)


def events_endpoint(watcher: TreeHeadWatcher, *, heartbeat: float = DEFAULT_HEARTBEAT
                    ) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    async def events(request: Request) -> Response:
        if watcher.clients >= watcher.max_clients:
            return JSONResponse({"error": f"too many event streams (at most "
                                 f"{watcher.max_clients}); retry later"},
                                status_code=503, headers={"retry-after": "5"})
        last_seen = _last_event_id(request)

        async def stream() -> AsyncIterator[bytes]:
            async with watcher.listening() as mailbox:
                yield b"retry: %d\n\n" % RETRY_MS
                shown = last_seen
                while True:
                    try:
                        head = await asyncio.wait_for(mailbox.get(), timeout=heartbeat)
                    except TimeoutError:
                        yield b": heartbeat\n\n"
                        continue
                    if shown is None or head.tree_size > shown:
                        shown = head.tree_size
                        yield event_text(head)

        # The content type set by hand: Starlette would add "; charset=utf-8" to a text/*.
        return StreamingResponse(stream(), headers={
            "content-type": "text/event-stream", "cache-control": "no-store",
            "x-accel-buffering": "no"})

    return events


def _last_event_id(request: Request) -> int | None:
    value = request.headers.get("last-event-id", "")
    return int(value) if value.isdigit() and len(value) <= 20 else None

"""A store's read threads held by another task while a test asks for something
(store/db/read_threads.py): what a loaded server's next request meets."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from store.db.read_threads import ReadThreads

T = TypeVar("T")


async def while_held(reads: ReadThreads, call: Callable[[], Awaitable[T]]) -> T:
    """`call()` awaited while another task holds one of `reads` (a store's `reads`; all of
    them, when there is one), released once `call` returns."""
    holding, release = anyio.Event(), anyio.Event()

    async def hold() -> None:
        async with reads.turn(time.monotonic() + 30):
            holding.set()
            await release.wait()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(hold)
        await holding.wait()
        try:
            return await call()
        finally:
            release.set()

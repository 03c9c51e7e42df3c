"""The reads a store runs at once (store/db/read_threads.py): at most its count, the rest
waiting their turn until their deadline, then refused as past the time limit."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from held_reads import while_held

from store.db.audit_store import AuditStore
from store.db.queries import QueryTimeout
from store.db.read_threads import DEFAULT_READ_THREADS, ReadThreads

BUSY = "query not started: the server's 1 read thread(s) stayed busy past the request's time limit"


def test_no_more_reads_at_once_than_its_count() -> None:
    reads = ReadThreads(2)
    inside: list[int] = []
    now = [0]

    async def read() -> None:
        async with reads.turn(time.monotonic() + 30):
            now[0] += 1
            inside.append(now[0])
            await anyio.sleep(0.05)
            now[0] -= 1

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            for _ in range(6):
                tasks.start_soon(read)

    anyio.run(main)
    assert len(inside) == 6 and max(inside) == 2


def test_a_read_that_waits_past_its_deadline_is_refused_and_the_turn_stays_sound() -> None:
    reads = ReadThreads(1)
    seen: list[str] = []

    async def main() -> None:
        holding, release = anyio.Event(), anyio.Event()

        async def hold() -> None:
            async with reads.turn(time.monotonic() + 30):
                holding.set()
                await release.wait()
            seen.append("held, then let go")

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(hold)
            await holding.wait()
            with pytest.raises(QueryTimeout) as refused, anyio.fail_after(10):
                async with reads.turn(time.monotonic() + 0.1):
                    seen.append("ran without a turn")
            seen.append(str(refused.value))
            release.set()
        async with reads.turn(time.monotonic() + 1):  # the refused wait took no turn away
            seen.append(f"{reads.busy} busy")

    anyio.run(main)
    assert seen == [BUSY, "held, then let go", "1 busy"]


def test_a_read_cancelled_while_it_waits_takes_no_turn_with_it() -> None:
    # A client that goes away while its request waits: the turns it waited for stay whole.
    reads = ReadThreads(1)
    seen: list[str] = []

    async def main() -> None:
        async def wait_then_run() -> None:
            async with reads.turn(time.monotonic() + 30):
                seen.append("ran after its client left")

        async def cancelled_while_waiting() -> None:
            async with anyio.create_task_group() as waiting:
                waiting.start_soon(wait_then_run)
                await anyio.sleep(0.05)
                waiting.cancel_scope.cancel()

        await while_held(reads, cancelled_while_waiting)
        with anyio.fail_after(1):
            async with reads.turn(time.monotonic() + 1):
                seen.append(f"{reads.busy} of {reads.count} busy")

    anyio.run(main)
    assert seen == ["1 of 1 busy"]


@pytest.mark.parametrize("count", [0, -1])
def test_a_count_below_one_is_refused(count: int, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"read threads: must be 1 or more, got {count}"):
        ReadThreads(count)
    with pytest.raises(ValueError, match="read threads: must be 1 or more"):
        AuditStore.open(tmp_path / "audit.db", read_threads=count)
    assert not (tmp_path / "audit.db").exists()  # refused before any store was made


def test_a_store_runs_its_queries_in_at_most_its_read_threads(tmp_path: Path) -> None:
    db = str(tmp_path / "audit.db")
    AuditStore.open(db).close()  # made, then served read-only
    with AuditStore.open(db, read_only=True) as default:
        assert default.reads.count == DEFAULT_READ_THREADS == 3
    with AuditStore.open(db, read_only=True, read_threads=2) as store:
        lock = threading.Lock()
        running, most, threads = [0], [0], set()

        def query(_connection: Any) -> None:
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
                threads.add(threading.get_ident())
            time.sleep(0.05)
            with lock:
                running[0] -= 1

        async def main() -> None:
            async with anyio.create_task_group() as tasks:
                for _ in range(6):
                    tasks.start_soon(store.run, store.deadline(), query)

        anyio.run(main)
    assert most == [2]
    assert threading.get_ident() not in threads  # worker threads, never the event loop's

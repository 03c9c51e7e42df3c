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


# A statement SQLite steps through for as long as it is let: far past FIRST_TRY_SECONDS.
COUNT_TO = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) " \
           "SELECT count(*) FROM n"


def _served(tmp_path: Path, **options: Any) -> AuditStore:
    db = str(tmp_path / "audit.db")
    AuditStore.open(db).close()  # made, then served read-only
    return AuditStore.open(db, read_only=True, **options)


def test_a_quick_read_answers_while_every_read_thread_is_held(tmp_path: Path) -> None:
    # Held by slow reads, the server's one read thread would keep a page waiting until its
    # deadline (ReadsBusy); the page runs on the event loop's thread and answers.
    with _served(tmp_path, read_threads=1) as store:
        threads: list[int] = []

        def query(connection: Any) -> int:
            threads.append(threading.get_ident())
            return int(connection.exec_driver_sql("SELECT 7").scalar_one())

        async def quick() -> int:
            return await store.run_quick(time.monotonic() + 0.5, query)

        async def main() -> int:
            return await while_held(store.reads, quick)

        assert anyio.run(main) == 7
        assert threads == [threading.get_ident()]  # the loop's own thread


def test_a_quick_read_that_is_slow_ends_in_a_read_thread_and_the_loop_runs_meanwhile(
        tmp_path: Path) -> None:
    with _served(tmp_path) as store:
        threads: list[int] = []
        ticks_before_the_answer: list[int] = []
        ticks = [0]

        def slow(connection: Any) -> int:
            threads.append(threading.get_ident())
            return int(connection.exec_driver_sql(COUNT_TO, (3_000_000,)).scalar_one())

        async def ticker(done: anyio.Event) -> None:
            while not done.is_set():
                ticks[0] += 1
                await anyio.sleep(0.001)

        async def main() -> int:
            done = anyio.Event()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(ticker, done)
                await anyio.sleep(0)
                answer = await store.run_quick(store.deadline(), slow)
                ticks_before_the_answer.append(ticks[0])
                done.set()
            return answer

        assert anyio.run(main) == 3_000_000  # the whole answer, not the first try's part
        loop = threading.get_ident()
        assert threads[0] == loop and len(threads) == 2 and threads[1] != loop
        assert ticks_before_the_answer[0] > 1  # the loop went on while the thread read


def test_a_quick_read_past_its_deadline_is_refused_as_any_read_is(tmp_path: Path) -> None:
    with _served(tmp_path) as store:
        def slow(connection: Any) -> int:
            return int(connection.exec_driver_sql(COUNT_TO, (10**12,)).scalar_one())

        async def main() -> None:
            await store.run_quick(time.monotonic() + 0.2, slow)

        with pytest.raises(QueryTimeout):
            anyio.run(main)

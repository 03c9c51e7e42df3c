"""`verify`'s O(n) checks in worker processes, one connection each, on every core.

Each check (the log recompute, each table's content ids, integrity_check, foreign keys,
tallies) runs whole in a worker and sends back its problems, in its own order, and the error
that stopped it, if any. verify_store reads them in the one order it reads them in-process,
so the report is byte-identical whichever worker finishes first. Each worker reads in a
transaction of its own: the store only grows, so a worker that began later sees a superset.

Workers come from a fork server (multiprocessing "forkserver"): forking this process could
carry its open SQLite connections into the child, which SQLite forbids.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import DatabaseError

from store.db.log.stored_log import TreeHead
from store.db.schema.engine import create_store_engine, sqlite_path
from store.db.verify.problems import Problem
from store.db.verify.store_checks import HEAVY_CAPS, HEAVY_CHECKS, Scope, VerifyReport
from store.errors import StoreError


def unreadable_store(url: str, exc: DatabaseError | UnicodeDecodeError) -> StoreError:
    """The error for a store a read could not get through (a malformed page, say)."""
    where = sqlite_path(url) or url
    if isinstance(exc, UnicodeDecodeError):
        return StoreError(f"{where}: cannot be read: text that is not UTF-8 "
                          f"({exc.reason} at byte {exc.start}): damaged")
    return StoreError(f"{where}: cannot be read: {exc.orig}")


@dataclass(frozen=True)
class CheckOutcome:
    problems: list[Problem] = field(default_factory=list)
    error: str | None = None  # the StoreError that stopped the check after `problems`
    rows: int = 0
    tip: TreeHead | None = None  # the recomputed tree head, once the leaves check finished


def run_check(url: str, name: str, scope: Scope, immutable: bool = False) -> CheckOutcome:
    """One heavy check on a read-only connection of its own (in a worker process), opened
    immutable exactly when verify's own open was: the fork server's environment (its
    CORE_AUDIT_IMMUTABLE) may be older or newer than this verify's."""
    engine = create_store_engine(url, read_only=True, pooled=False, immutable=immutable,
                                 scan=True)
    report = VerifyReport()
    problems: list[Problem] = []
    cap = HEAVY_CAPS.get(name)
    # No cycle collection while a check runs: its rows and hashes are millions of short-lived
    # tuples and bytes, freed as they go, that made the collector scan again and again.
    gc.disable()
    try:
        with engine.connect() as connection:
            for problem in HEAVY_CHECKS[name](connection, scope, report):
                problems.append(problem)
                if cap is not None and len(problems) >= cap:
                    break  # the report takes no more of this check's problems
    except StoreError as exc:
        return CheckOutcome(problems, str(exc))
    except (DatabaseError, UnicodeDecodeError) as exc:
        return CheckOutcome(problems, str(unreadable_store(url, exc)))
    finally:
        gc.enable()
        engine.dispose()
    return CheckOutcome(problems, None, report.rows, report.tip)


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count() or 1


class CheckProcesses:
    """The heavy checks in `jobs` worker processes; use as a context manager (the workers end
    with it, also when verify stops early)."""

    def __init__(self, url: str, jobs: int,
                 check: Callable[[str, str, Scope, bool], Any] = run_check, *,
                 immutable: bool = False) -> None:
        self.url = url
        self.immutable = immutable
        self.jobs = jobs
        self.check = check
        self._futures: dict[str, Future[CheckOutcome]] = {}
        self._executor: ProcessPoolExecutor | None = None

    def __enter__(self) -> CheckProcesses:
        return self

    def __exit__(self, *_exc: object) -> None:
        executor, self._executor = self._executor, None
        if executor is None:
            return
        if all(future.done() for future in self._futures.values()):
            executor.shutdown()
            return
        # A check still running is no longer wanted: end its process now, not when it is done.
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join()

    def start(self, names: list[str], scope: Scope) -> None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        self._executor = ProcessPoolExecutor(self.jobs, mp_context=context)
        for name in names:
            self._futures[name] = self._executor.submit(self.check, self.url, name, scope,
                                                         self.immutable)

    def problems(self, name: str, report: VerifyReport) -> Iterator[Problem]:
        """The check's problems as if it ran here: then its error, or the tree head."""
        try:
            outcome = self._futures[name].result()
        except BrokenProcessPool as exc:
            raise StoreError("a verify worker process ended before its checks were done "
                             "(killed, or out of memory?): the store was not verified") from exc
        yield from outcome.problems
        if outcome.error is not None:
            raise StoreError(outcome.error)
        if outcome.tip is not None:
            report.rows, report.tip = outcome.rows, outcome.tip

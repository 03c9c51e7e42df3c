"""thread_reads.py on its own: a field's read runs only inside a worker thread's read (a
ReadScope), on that read's connection; outside one, or when it fails, the compiled closure
hands the value to graphql-core (the exception the compiler gives)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from store.api.thread_reads import ReadScope, known_read, reading_in


class Handed(Exception):
    """The compiler's exception: graphql-core completes the value."""


def scope(connection: Any) -> ReadScope:
    return ReadScope(connection, None, lambda definition, arguments: arguments)  # type: ignore[arg-type]


def test_a_known_value_is_read_as_it_is_and_none_is_handed_on() -> None:
    read = known_read(lambda source: source, Handed)
    assert read(7) == 7
    with pytest.raises(Handed):
        read(None)


def test_a_value_read_on_a_connection_needs_a_scope_and_uses_its_connection() -> None:
    read = known_read(lambda source: lambda connection: f"{source} on {connection}", Handed)
    with pytest.raises(Handed):  # outside a worker thread's read
        read("count")
    with reading_in(scope("the read's connection")):
        assert read("count") == "count on the read's connection"
    with pytest.raises(Handed):  # the scope ends with the read
        read("count")


def test_a_scope_belongs_to_its_thread_and_a_failure_is_handed_on() -> None:
    read = known_read(lambda source: lambda connection: 1 // 0, Handed)
    seen: list[str] = []

    def elsewhere() -> None:
        try:
            known_read(lambda source: lambda connection: connection, Handed)(1)
        except Handed:
            seen.append("handed")

    with reading_in(scope("mine")):
        with pytest.raises(Handed):  # ZeroDivisionError: graphql-core answers its error
            read(1)
        other = threading.Thread(target=elsewhere)
        other.start()
        other.join()
    assert seen == ["handed"]

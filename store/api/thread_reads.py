"""Fields that read the database inside one worker thread's read, for compiled completion.

A resolver marked `read_in_thread(reader)` gives the value `reader(connection, source,
**arguments)` gives (it calls the reader through the request's context); one marked
`known_with_source(read)` gives a value known with its source, or read on a connection when
asked (a connection's count). A compiled closure (compiled_completion.py) running inside
`reading_in(ReadScope(...))` calls them on the scope's connection, with the arguments
graphql-core coerces and strawberry converts, so a record and the fields below it are read
in one transaction (prepared_operations.py). Outside a scope, or when a read fails (an
argument, a cursor, the time limit), the closure raises the compiler's `failed` exception:
graphql-core then runs the resolver and gives its value or its error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from graphql import FieldNode
from graphql.execution.values import VariableValues, get_argument_values
from strawberry.types.field import StrawberryField

V = TypeVar("V")
ThreadReader = Callable[..., Any]  # (connection, source, **arguments) -> the resolver's value


def read_in_thread(reader: ThreadReader) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Marks a resolver whose value is `reader(connection, source, **arguments)` (its Python
    arguments, as strawberry gives them): read on a worker thread's connection, so a compiled
    closure running inside one read (ReadScope) may call it. The resolver must give the same
    value (it calls the reader through the request's context)."""
    def marked(resolver: Callable[..., Any]) -> Callable[..., Any]:
        resolver.thread_reader = reader  # type: ignore[attr-defined]
        return resolver
    return marked


def known_with_source(read: Callable[[Any], Any]) -> Callable[[Callable[..., Any]], Any]:
    """Marks an asynchronous resolver of `self` whose value `read(self)` gives when it is not
    None: the value itself (a connection's count fetched with its page) or a function reading
    it on a connection (a count read only when selected). Compiled as a read of that value,
    for callers that run closures inside a read (None: graphql-core completes the whole value)."""
    def marked(resolver: Callable[..., Any]) -> Callable[..., Any]:
        resolver.known_read = read  # type: ignore[attr-defined]
        return resolver
    return marked


@dataclass(frozen=True, slots=True)
class ReadScope:
    """One worker thread's read: its connection, the request's coerced variables, how
    strawberry converts a field's arguments for its resolver, and what its readers keep
    (`kept_in_read`)."""
    connection: Any
    variables: VariableValues
    convert: Callable[[StrawberryField, dict[str, Any]], dict[str, Any]]
    kept: dict[Any, Any] = field(default_factory=dict)


_scopes = threading.local()  # the read a worker thread is running, if any


@contextmanager
def reading_in(scope: ReadScope) -> Iterator[None]:
    """Runs the closures called within on `scope`'s connection (this thread only)."""
    before = getattr(_scopes, "scope", None)
    _scopes.scope = scope
    try:
        yield
    finally:
        _scopes.scope = before


def kept_in_read(key: Hashable, read: Callable[[], V]) -> V:
    """`read()`, once per `key` within the read this thread runs (ReadScope): several fields
    below a record that read the same thing (a turn's construction, where the usual path
    shares it through a loader) read it once. Outside a read, every call reads."""
    scope: ReadScope | None = getattr(_scopes, "scope", None)
    if scope is None:
        return read()
    if key not in scope.kept:
        scope.kept[key] = read()
    found: V = scope.kept[key]
    return found


def _on_scope(read: Callable[[ReadScope], Any], failed: type[Exception]) -> Any:
    """`read(scope)` on this thread's scope; `failed` outside one or when it raises."""
    scope: ReadScope | None = getattr(_scopes, "scope", None)
    if scope is None:
        raise failed
    try:
        return read(scope)
    except Exception:
        raise failed from None


def thread_read(field_def: Any, definition: StrawberryField, node: FieldNode,
                reader: ThreadReader, failed: type[Exception]) -> Callable[[Any], Any]:
    """A field read by its resolver's reader on the scope's connection, with the arguments its
    resolver gets: graphql-core's (`get_argument_values`, of the field's first node, as
    graphql-core reads them) converted as strawberry converts them."""
    def read(source: Any) -> Any:
        return _on_scope(lambda scope: reader(scope.connection, source, **scope.convert(
            definition, get_argument_values(field_def, node, scope.variables))), failed)

    return read


def known_read(known: Callable[[Any], Any], failed: type[Exception]) -> Callable[[Any], Any]:
    """A value known with its source, or read by the function it gives on the scope's
    connection (a count asked for only when selected); `failed` when neither."""
    def read(source: Any) -> Any:
        value = known(source)
        if value is None:  # not known with the source: its resolver reads it
            raise failed
        if callable(value):
            return _on_scope(lambda scope: value(scope.connection), failed)
        return value

    return read

"""Row records: how a query-layer record is read off a result row, declared, not written out.

A `RowRecord` names the record type and, per field, how it is read: by default the column of
the field's name as it is; a converter (a callable) applied to that column; or another
`RowRecord`, a record nested in it and read from the same row (its columns named with its
prefix, e.g. a turn's surface from `surface_*`). Its builder is written out once per
declaration, as the hand-written one would be, so it costs as little.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import orjson

R = TypeVar("R")
Convert = Callable[[Any], Any]  # a column's value -> the field's


@dataclasses.dataclass(frozen=True, slots=True)
class RowRecord(Generic[R]):
    """A record read off a row's columns by field name (see the module)."""

    record_type: type[R]
    read: tuple[tuple[str, Convert | RowRecord[Any]], ...] = ()  # (field, how), in any order
    prefix: str = ""  # its columns are named prefix + field
    _build: Callable[[Any], R] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        namespace: dict[str, Any] = {}
        body = _expression(self, self.prefix, namespace)
        # Field names are Python identifiers and column names are repr()'d: nothing else is
        # written into the source.
        exec(f"def build(row):\n    m = row._mapping\n    return {body}\n", namespace)
        object.__setattr__(self, "_build", namespace["build"])

    def __call__(self, row: Any) -> R:
        return self._build(row)

    def at(self, prefix: str) -> RowRecord[R]:
        """The same record, read from columns named `prefix` + field."""
        return RowRecord(self.record_type, self.read, prefix)


def _expression(record: RowRecord[Any], prefix: str, namespace: dict[str, Any]) -> str:
    """Python source building `record` from the mapping `m`, its columns prefixed `prefix`."""
    how = dict(record.read)
    names = {field.name for field in dataclasses.fields(record.record_type)}
    if not how.keys() <= names:
        raise TypeError(f"{record.record_type.__name__} has no field "
                        f"{', '.join(sorted(how.keys() - names))} to read")
    arguments = []
    for name in (field.name for field in dataclasses.fields(record.record_type)):
        read = how.get(name)
        column = f"m[{prefix + name!r}]"
        if read is None:
            arguments.append(f"{name}={column}")
        elif isinstance(read, RowRecord):
            arguments.append(f"{name}={_expression(read, prefix + read.prefix, namespace)}")
        else:
            converter = f"convert_{len(namespace)}"
            namespace[converter] = read
            arguments.append(f"{name}={converter}({column})")
    made = f"record_{len(namespace)}"
    namespace[made] = record.record_type
    return f"{made}({', '.join(arguments)})"


def flat_record(record_type: type[R], /, **read: Convert | RowRecord[Any]) -> RowRecord[R]:
    """The row builder of a record whose fields are its row's columns, by name; a field
    named in `read` is converted (or nested) as it says."""
    return RowRecord(record_type, tuple(read.items()))


# Converters of stored columns.

def optional(convert: Convert, *, blank_is_null: bool = False) -> Convert:
    """`convert` for a nullable column: null (and, `blank_is_null`, '') stays None."""
    if blank_is_null:
        return lambda value: convert(value) if value else None
    return lambda value: None if value is None else convert(value)


def json_tuple(text: str | None) -> tuple[Any, ...]:
    """A JSON array as a tuple; null: ()."""
    return () if text is None else tuple(orjson.loads(text))


def json_tuple_or_null(text: str | None) -> tuple[Any, ...] | None:
    """A JSON array as a tuple; null stays None."""
    return None if text is None else tuple(orjson.loads(text))


def json_records(record_type: Callable[..., Any]) -> Convert:
    """A JSON array of objects as a tuple of `record_type`s (by key); null: ()."""
    return lambda text: () if text is None else tuple(
        record_type(**item) for item in orjson.loads(text))

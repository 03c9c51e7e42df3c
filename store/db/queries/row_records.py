"""Row records: how a query-layer record is read off a result row, declared, not written out.

A `RowRecord` names the record type and, per field, how it is read: by default the column of
the field's name as it is; a converter (a callable) applied to that column; or another
`RowRecord`, a record nested in it and read from the same row (its columns named with its
prefix, e.g. a turn's surface from `surface_*`). Its builder is written out once per
declaration, as the hand-written one would be, so it costs as little. For a statement built
once, `by_position` writes one out per column list that reads each column by its place and
fills each record's slots directly (a frozen dataclass's __init__ sets each field through
object.__setattr__: most of a wide record's cost).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
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
    _by_position: dict[tuple[str, ...], Callable[[Sequence[Any]], R]] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        namespace: dict[str, Any] = {}
        body = _expression(self, self.prefix, namespace, _by_name)
        # Field names are Python identifiers and column names are repr()'d: nothing else is
        # written into the source.
        exec(f"def build(row):\n    m = row._mapping\n    return {body}\n", namespace)
        object.__setattr__(self, "_build", namespace["build"])

    def __call__(self, row: Any) -> R:
        return self._build(row)

    def at(self, prefix: str) -> RowRecord[R]:
        """The same record, read from columns named `prefix` + field."""
        return RowRecord(self.record_type, self.read, prefix)

    def _how(self, name: str) -> Convert | RowRecord[Any] | None:
        """How its field `name` is read (None: its column as it is); KeyError for a field the
        record does not have."""
        record_type: Any = self.record_type  # a dataclass (RowRecord's records are)
        if name not in {field.name for field in dataclasses.fields(record_type)}:
            raise KeyError(name)
        return dict(self.read).get(name)

    def column_of(self, path: Sequence[str]) -> tuple[str, Convert | None]:
        """The column a field of the record (or of a record nested in it, `path` its field
        names in turn) is read from, and its converter (None: as it is); KeyError when the
        path does not end at a column (a nested record as a whole, a property)."""
        name, rest = path[0], path[1:]
        read = self._how(name)
        if isinstance(read, RowRecord):
            if not rest:
                raise KeyError(name)
            column, convert = read.column_of(rest)
            return self.prefix + column, convert
        if rest:
            raise KeyError(name)
        return self.prefix + name, read

    def nested_at(self, path: Sequence[str]) -> RowRecord[Any] | None:
        """The record nested at `path` (field names in turn), read from its prefixed columns;
        None when the path ends at a column; KeyError for a field the record does not have."""
        name, rest = path[0], path[1:]
        read = self._how(name)
        if not isinstance(read, RowRecord):
            if rest:
                raise KeyError(name)
            return None
        return read if not rest else read.nested_at(rest)

    def by_position(self, columns: Sequence[str]) -> Callable[[Sequence[Any]], R]:
        """The builder of rows whose columns are `columns`, in that order (a result's keys):
        the same record, each column read by its place. Written once per column list."""
        key = tuple(columns)
        built = self._by_position.get(key)
        if built is None:
            places = {name: index for index, name in enumerate(key)}
            namespace: dict[str, Any] = {}
            body = _expression(self, self.prefix, namespace,
                               lambda column: f"r[{places[column]}]", _slot_filler)
            exec(f"def build(r):\n    return {body}\n", namespace)
            built = self._by_position.setdefault(key, namespace["build"])
        return built


def _by_name(column: str) -> str:
    return f"m[{column!r}]"


def _slot_filler(record_type: type[Any]) -> Callable[..., Any]:
    """A function of the record's fields, in order, that makes the record by filling its
    slots (no __init__, so no object.__setattr__ per field); the class itself when it has no
    slots or does more at construction (__post_init__)."""
    names = [field.name for field in dataclasses.fields(record_type)]
    if not hasattr(record_type, "__slots__") or hasattr(record_type, "__post_init__"):
        return record_type
    namespace: dict[str, Any] = {"new": object.__new__, "record_type": record_type}
    lines = ["    made = new(record_type)"]
    for index, name in enumerate(names):
        namespace[f"set_{index}"] = getattr(record_type, name).__set__
        lines.append(f"    set_{index}(made, v{index})")
    arguments = ", ".join(f"v{index}" for index in range(len(names)))
    exec(f"def fill({arguments}):\n" + "\n".join(lines) + "\n    return made\n", namespace)
    filler: Callable[..., Any] = namespace["fill"]
    return filler


def _expression(record: RowRecord[Any], prefix: str, namespace: dict[str, Any],
                column_of: Callable[[str], str],
                maker: Callable[[type[Any]], Callable[..., Any]] | None = None) -> str:
    """Python source building `record` from a row, its columns prefixed `prefix` and read as
    `column_of` writes them; `maker`: what makes the record from its fields in order (None:
    its class, by keyword)."""
    how = dict(record.read)
    names = {field.name for field in dataclasses.fields(record.record_type)}
    if not how.keys() <= names:
        raise TypeError(f"{record.record_type.__name__} has no field "
                        f"{', '.join(sorted(how.keys() - names))} to read")
    arguments = []
    for name in (field.name for field in dataclasses.fields(record.record_type)):
        read = how.get(name)
        if read is None:
            value = column_of(prefix + name)
        elif isinstance(read, RowRecord):
            value = _expression(read, prefix + read.prefix, namespace, column_of, maker)
        else:
            converter = f"convert_{len(namespace)}"
            namespace[converter] = read
            value = f"{converter}({column_of(prefix + name)})"
        arguments.append(value if maker is not None else f"{name}={value}")
    made = f"record_{len(namespace)}"
    namespace[made] = record.record_type if maker is None else maker(record.record_type)
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

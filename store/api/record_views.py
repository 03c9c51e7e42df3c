"""GraphQL views of the query layer's records, converted by field name: derived, not written out.

A view (a strawberry type that subclasses `RecordView`) gets `of(record, as_of)`: each field
takes the record's attribute of the same name, or that of a record it holds (a
StoredResidual's `residual`), converted to the field's GraphQL type: an enum from its stored
value, a tuple to a list, a nested record to its view. `as_of` is the tree size the record was
read as of. A field computed otherwise names its conversion in `_computed`. The conversion
of a view is worked out once per record type.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, TypeVar

import strawberry
from strawberry.types.base import StrawberryList, StrawberryOptional
from strawberry.types.enum import StrawberryEnumDefinition

from store.api.log_index import LogIndex

V = TypeVar("V")
Convert = Callable[[Any, int | None], Any]  # (value, as_of) -> the field's value
_AS_OF = "as_of"


class RecordView:
    """Mixin of a strawberry type built from a query-layer record by field name."""

    # Fields not read by name: field -> its value from the record.
    _computed: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}

    @classmethod
    def of(cls, record: Any, as_of: int | None = None) -> Self:
        built: Self = _conversion(cls, type(record))(record, as_of)  # type: ignore[arg-type]
        return built


@dataclasses.dataclass(frozen=True, slots=True)
class FromValue:
    """A computed field (a `_computed` entry) that is a function of one value the record
    holds, at `path` (its field names in turn): so a page built from rows
    (store/api/prepared_pages.py) computes it from that value's column alone."""

    path: tuple[str, ...]
    compute: Callable[[Any], Any]

    def __call__(self, record: Any) -> Any:
        value = record
        for name in self.path:
            value = getattr(value, name)
        return self.compute(value)


@dataclasses.dataclass(frozen=True, slots=True)
class FromValues:
    """A computed field (a `_computed` entry) that is an object made by `make` from values
    the record holds, each of its fields' at its path (field names in turn): so a page built
    from rows builds it from those values' columns alone (a turn's verdicts)."""

    make: Callable[..., Any]
    paths: Mapping[str, tuple[str, ...]]  # the object's field -> where the record holds it

    def __call__(self, record: Any) -> Any:
        values = {}
        for name, path in self.paths.items():
            value = record
            for step in path:
                value = getattr(value, step)
            values[name] = value
        return self.make(**values)


def record_path(record_type: type[Any], name: str, view: type[Any]) -> tuple[str, ...]:
    """Where the record keeps `name`: its attribute, or that of a dataclass it holds."""
    if hasattr(record_type, name) or name in _field_names(record_type):  # or a property
        return (name,)
    if dataclasses.is_dataclass(record_type):
        hints = typing.get_type_hints(record_type)
        for field in dataclasses.fields(record_type):
            inner = hints.get(field.name)
            if isinstance(inner, type) and (hasattr(inner, name) or name in _field_names(inner)):
                return (field.name, name)
    raise TypeError(f"{view.__name__}.{name}: {record_type.__name__} has no {name} "
                    "(nor a record holding one); name its conversion in _computed")


def _path(record_type: type[Any], name: str, view: type[Any]) -> str:
    return ".".join(("record", *record_path(record_type, name, view)))


def _field_names(record_type: type[Any]) -> set[str]:
    if not dataclasses.is_dataclass(record_type):
        return set()
    return {field.name for field in dataclasses.fields(record_type)}


def view_converter(field_type: Any) -> Convert | None:
    """From a record's value to `field_type`'s; None: the value as it is."""
    if isinstance(field_type, StrawberryOptional):
        inner = view_converter(field_type.of_type)
        if inner is None:
            return None
        optional = inner
        return lambda value, as_of: None if value is None else optional(value, as_of)
    if isinstance(field_type, StrawberryList):
        item = view_converter(field_type.of_type)
        if item is None:
            return lambda value, as_of: list(value)
        each = item
        return lambda value, as_of: [each(v, as_of) for v in value]
    if isinstance(field_type, StrawberryEnumDefinition):
        enum = field_type.wrapped_cls
        return lambda value, as_of: value if isinstance(value, enum) else enum(value)
    if isinstance(field_type, type) and issubclass(field_type, RecordView):
        return field_type.of
    return None


@functools.cache
def _conversion(view: type[Any], record_type: type[Any]) -> Callable[[Any, int | None], Any]:
    """One function that calls `view` with every field read off the record: written out as
    the hand-written conversion would be (as dataclasses write __init__), so it costs as
    little."""
    arguments: list[str] = []
    namespace: dict[str, Any] = {"view": view}
    for field in view.__strawberry_definition__.fields:
        name = field.python_name
        if field.base_resolver is not None:
            continue
        if name == _AS_OF:  # a private field (strawberry lists it when annotated as text)
            continue
        if name in view._computed:
            namespace[f"computed_{name}"] = view._computed[name]
            arguments.append(f"{name}=computed_{name}(record)")
        else:
            path, convert = _path(record_type, name, view), view_converter(field.type)
            if convert is None:
                arguments.append(f"{name}={path}")
            else:
                namespace[f"convert_{name}"] = convert
                arguments.append(f"{name}=convert_{name}({path}, as_of)")
    if _AS_OF in _field_names(view):
        arguments.append(f"{_AS_OF}=as_of")
    source = f"def build(record, as_of):\n    return view({', '.join(arguments)})\n"
    exec(source, namespace)  # field names are Python identifiers: nothing else is written
    build: Callable[[Any, int | None], Any] = namespace["build"]
    return build


def fields_of_record(record_type: type[Any], *, description: str,
                     fields: tuple[str, ...] | None = None, key: str | None = None,
                     views: Mapping[type[Any], type[Any]] | None = None,
                     **described: str) -> Callable[[type[V]], type[V]]:
    """A class decorator making a view (a strawberry type) of a query record: a field per
    name in `fields` (default: the record's fields), in that order, of the record's type (its
    `key` an ID, a tuple a list, a record in `views` as its view) unless the class annotates
    it otherwise; each described as `described` says. What the class annotates and `fields`
    does not name follows (private fields, resolvers), as the class has them."""
    hints = typing.get_type_hints(record_type)
    known = views or {}
    names = fields or tuple(field.name for field in dataclasses.fields(record_type))

    def view_type(python_type: Any) -> Any:
        if typing.get_origin(python_type) in (types.UnionType, typing.Union):
            return functools.reduce(operator.or_, map(view_type, typing.get_args(python_type)))
        if typing.get_origin(python_type) in (list, tuple):
            item = typing.get_args(python_type)[0]
            return list[view_type(item)]  # type: ignore[misc]
        return known.get(python_type, python_type)

    def make(view: type[V]) -> type[V]:
        own = dict(inspect.get_annotations(view))
        unknown = [name for name in (*names, *described)
                   if name not in own and name not in hints]
        if unknown:
            raise TypeError(f"{view.__name__}: {record_type.__name__} has no field "
                            f"{', '.join(unknown)}, nor does the view annotate it")
        annotations = {name: own[name] if name in own else strawberry.ID if name == key
                       else LogIndex if name == "seq"  # a leaf's position: past 2^31 too
                       else view_type(hints[name]) for name in names}
        view.__annotations__ = annotations | {n: t for n, t in own.items() if n not in names}
        for name, text in described.items():
            setattr(view, name, strawberry.field(description=text))
        made: type[V] = strawberry.type(view, description=description)
        return made

    return make

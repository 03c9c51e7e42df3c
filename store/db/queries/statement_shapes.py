"""Statements built once per shape, run with each request's values as parameters.

A page's statements are the same for every request that differs only in its values: the
same list, order, direction, filter fields and cursors given. Building one (SQLAlchemy
constructs, its cache key) cost more than running it: about 0.5 of a 100-row page's 1.0 ms
of reading, where a statement kept and run again costs its SQL and ~30 µs. So a request's
values go into `Slot`s, named bind parameters, and the statements built with the slots are
kept by shape (`Shapes`); the values travel beside them as the parameters (`Shaped.params`).
A listing's facet counts are kept the same way (RecordListing.facet_counts): building their
statement cost three times what running it does.

Only what a shape fixes is built into a statement: which filter fields are given (and
whether a list holds a null, which adds `IS NULL`), never a value. What the store decides
(whether a column has nulls, whether few rows meet a filter) is asked per request and is
part of the shape. Reads as of a tree head, searches, and filters whose conditions are
computed from their values in Python (a family's organs, CORE's time) are built per request,
as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import BigInteger, Boolean, ColumnElement, Integer, Text, bindparam
from sqlalchemy.sql.elements import BindParameter

__all__ = ["LIMIT", "KeySlot", "Shaped", "Shapes", "Slot", "SlotList", "key_params",
           "key_slots", "limit_slot"]

T = TypeVar("T")

# The parameter every page's LIMIT is bound to.
LIMIT = "slot_limit"


@dataclass(frozen=True, slots=True)
class Slot:
    """One value of a request, as the bind parameter `name` in a statement of its shape."""

    name: str

    def bind(self, type_: Any = None) -> BindParameter[Any]:
        return bindparam(self.name, type_=type_)


@dataclass(frozen=True, slots=True)
class SlotList(Sequence[Any]):
    """An any-of list of a filter field, as the expanding parameter `name`: `given`, the
    list holds a value (not null) that can be stored; `null`, it holds None (the rows where
    the column is null). Its length is the list's, so a check of it reads as for the list."""

    name: str
    given: bool
    null: bool
    length: int

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: Any) -> Any:
        raise TypeError(f"{self.name}: a list's values are the statement's parameter, "
                        "never read while it is built")

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(f"{self.name}: a list's values are the statement's parameter, "
                        "never read while it is built")

    def bind(self) -> BindParameter[Any]:
        return bindparam(self.name, expanding=True)


@dataclass(frozen=True, slots=True)
class KeySlot:
    """One value of a cursor's key, as the parameter `name`: `text`, it is a text (else an
    integer, or 0/1 where a boolean column is compared)."""

    name: str
    text: bool

    def bind(self, like: ColumnElement[Any] | None) -> BindParameter[Any]:
        # As orders.bound binds a value: a text as text, a number as a bigint, or a boolean
        # where the key's column is one (its own parameter: the value bound is a bool).
        if self.text:
            return bindparam(self.name, type_=Text())
        if like is not None and isinstance(like.type, Boolean):
            return bindparam(f"{self.name}_bool", type_=Boolean())
        return bindparam(self.name, type_=BigInteger())


def key_slots(prefix: str, texts: Sequence[bool] | None) -> tuple[KeySlot, ...] | None:
    """A cursor's key as slots (`prefix`_0, _1, ...), one per key of its list: a text where
    `texts` says that key's column is one. None: no cursor."""
    if texts is None:
        return None
    return tuple(KeySlot(f"slot_{prefix}_{i}", text) for i, text in enumerate(texts))


def key_params(prefix: str, key: Sequence[int | str] | None) -> dict[str, Any]:
    """The parameters of `key_slots(prefix, ...)` for `key`: each value, and as a bool
    beside it."""
    params: dict[str, Any] = {}
    for i, value in enumerate(key or ()):
        name = f"slot_{prefix}_{i}"
        params[name] = value
        if not isinstance(value, str):
            params[f"{name}_bool"] = bool(value)
    return params


def limit_slot() -> BindParameter[Any]:
    return bindparam(LIMIT, type_=Integer())


@dataclass(frozen=True, slots=True)
class Shaped:
    """A filter with its values in slots: `key` names its shape (equal keys, equal
    statements), `where` builds them, `params` are this request's values."""

    key: Hashable
    where: Any
    params: dict[str, Any]


class Shapes(Generic[T]):
    """What is built for each shape, built on first use; at most `limit` shapes are kept
    (past it, each is built per request: shapes come from a closed set of fields and
    orders, but a forged cursor may name a key of another kind)."""

    def __init__(self, limit: int = 512) -> None:
        self._built: dict[Hashable, T] = {}
        self._limit = limit
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        found = self._built.get(key)
        if found is not None:
            return found
        made = build()
        with self._lock:
            if len(self._built) < self._limit:
                return self._built.setdefault(key, made)
        return made

    def __len__(self) -> int:
        return len(self._built)
